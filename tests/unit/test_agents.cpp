// SPDX-License-Identifier: MIT
// Tests for lib/agents: profile names, profiles made on first use, agents' random ids, and every
// way of naming an agent (whole id, short form, prefix) with the errors a wrong name gets.
#include "lib/agents.hpp"
#include "lib/db_schema.hpp"

#include <gtest/gtest.h>

#include <set>
#include <string>
#include <utility>
#include <vector>

namespace sion {
namespace {

#define ASSERT_OK(r) ASSERT_TRUE(r) << (r).error().message()
#define EXPECT_OK(r) EXPECT_TRUE(r) << (r).error().message()

// Ids chosen so that prefixes and short forms collide on purpose.
const std::string k_id_a = "d85ed254" + std::string(52, '0') + "a248";
const std::string k_id_b = "d85e1111" + std::string(52, '1') + "77f0";
const std::string k_id_c = "d8a01c3e" + std::string(52, '2') + "77f0";
const std::string k_id_d = "0123abcd" + std::string(52, '3') + "beef";

class AgentsTest : public testing::Test {
protected:
    void SetUp() override {
        auto db = Db::open(":memory:");
        ASSERT_OK(db);
        m_db = std::move(*db);
        ASSERT_OK(migrate_state(*m_db));
    }

    Db& db() { return *m_db; }

    // An agent with a chosen id, made directly in the table.
    void add_agent(const std::string& id, std::string_view profile, int64_t created) {
        auto stmt = db().prepare("INSERT INTO agents (id, profile, created) VALUES (?1, ?2, ?3)");
        ASSERT_OK(stmt);
        ASSERT_OK(stmt->bind_all(std::string_view(id), profile, created));
        ASSERT_OK(stmt->run());
    }

    void add_profiles() {
        ASSERT_OK(ensure_profile(db(), "coder", {}, std::nullopt));
        ASSERT_OK(ensure_profile(db(), "lead", {}, std::nullopt));
    }

    std::string models_column(std::string_view name) {
        auto stmt = db().prepare("SELECT models FROM profiles WHERE name = ?1");
        EXPECT_TRUE(stmt);
        if (!stmt)
            return {};
        EXPECT_TRUE(stmt->bind(1, name));
        auto row = stmt->step();
        return row && *row ? stmt->column_text(0) : "no row";
    }

    // find_agent's error for `name`: its exit code and message.
    std::pair<Exit, std::string>
    find_error(std::string_view name, std::optional<std::string_view> profile = std::nullopt) {
        auto got = find_agent(db(), name, profile);
        if (got)
            return {Exit::ok, "found " + got->id};
        return {got.error().exit(), got.error().message()};
    }

    std::optional<Db> m_db;
};

TEST(ProfileName, GoodNames) {
    for (const char* name : {"coder", "a", "7", "0x", "my-profile_2", "lead-dev", "a_b-c"})
        EXPECT_TRUE(check_profile_name(name)) << name;
    EXPECT_TRUE(check_profile_name(std::string(64, 'p')));
}

TEST(ProfileName, BadNamesAreUsageErrors) {
    for (const std::string& name :
         std::vector<std::string>{"", "Bad Name", "Coder", "-x", "_x", "a.b", "a/b", "a b",
                                  "caf\xc3\xa9", "x\n", std::string(65, 'p')}) {
        auto st = check_profile_name(name);
        ASSERT_FALSE(st) << name;
        EXPECT_EQ(st.error().exit(), Exit::usage);
        EXPECT_EQ(st.error().message(), "invalid profile name '" + name
                                            + "': use lowercase letters, digits, '-' and '_'");
    }
    EXPECT_EQ(check_profile_name("Bad Name").error().message(),
              "invalid profile name 'Bad Name': use lowercase letters, digits, '-' and '_'");
}

TEST_F(AgentsTest, AProfileIsCreatedOnFirstUseWithTheDefaults) {
    auto none = find_profile(db(), "coder");
    ASSERT_OK(none);
    EXPECT_FALSE(none->has_value());

    int64_t before = now_ms();
    auto made = ensure_profile(db(), "coder", {}, std::nullopt);
    ASSERT_OK(made);
    EXPECT_EQ(made->name, "coder");
    EXPECT_TRUE(made->models.empty());
    EXPECT_EQ(made->autonomy, k_default_autonomy);
    EXPECT_GE(made->created, before);
    EXPECT_EQ(models_column("coder"), "[]");

    auto found = find_profile(db(), "coder");
    ASSERT_OK(found);
    ASSERT_TRUE(found->has_value());
    EXPECT_EQ((*found)->name, "coder");
    EXPECT_EQ((*found)->autonomy, k_default_autonomy);
    EXPECT_EQ((*found)->created, made->created);
}

TEST_F(AgentsTest, ModelsAreKeptAsAJsonArrayInOrder) {
    std::vector<std::string> models = {"anthropic:claude-sonnet", "openai:gpt-5", "script:a \"b\""};
    auto made = ensure_profile(db(), "coder", models, 4);
    ASSERT_OK(made);
    EXPECT_EQ(made->models, models);
    EXPECT_EQ(made->autonomy, 4);
    EXPECT_EQ(models_column("coder"),
              R"(["anthropic:claude-sonnet","openai:gpt-5","script:a \"b\""])");
    auto found = find_profile(db(), "coder");
    ASSERT_OK(found);
    ASSERT_TRUE(found->has_value());
    EXPECT_EQ((*found)->models, models);
    EXPECT_EQ((*found)->autonomy, 4);
}

TEST_F(AgentsTest, AnExistingProfileKeepsWhatIsNotGiven) {
    auto made = ensure_profile(db(), "coder", {"anthropic:a"}, 3);
    ASSERT_OK(made);

    auto same = ensure_profile(db(), "coder", {}, std::nullopt);
    ASSERT_OK(same);
    EXPECT_EQ(same->models, std::vector<std::string>{"anthropic:a"});
    EXPECT_EQ(same->autonomy, 3);
    EXPECT_EQ(same->created, made->created);

    auto models = ensure_profile(db(), "coder", {"openai:b", "anthropic:a"}, std::nullopt);
    ASSERT_OK(models);
    EXPECT_EQ(models->models, (std::vector<std::string>{"openai:b", "anthropic:a"}));
    EXPECT_EQ(models->autonomy, 3);

    auto level = ensure_profile(db(), "coder", {}, 0);
    ASSERT_OK(level);
    EXPECT_EQ(level->models, (std::vector<std::string>{"openai:b", "anthropic:a"}));
    EXPECT_EQ(level->autonomy, 0);
    EXPECT_EQ(level->created, made->created);

    auto found = find_profile(db(), "coder");
    ASSERT_OK(found);
    EXPECT_EQ((*found)->models, (std::vector<std::string>{"openai:b", "anthropic:a"}));
    EXPECT_EQ((*found)->autonomy, 0);
}

TEST_F(AgentsTest, EnsureProfileRefusesBadInputAndMakesNothing) {
    auto bad_name = ensure_profile(db(), "Bad Name", {}, std::nullopt);
    ASSERT_FALSE(bad_name);
    EXPECT_EQ(bad_name.error().exit(), Exit::usage);
    EXPECT_EQ(bad_name.error().message(),
              "invalid profile name 'Bad Name': use lowercase letters, digits, '-' and '_'");

    for (int level : {-1, 7}) {
        auto bad_level = ensure_profile(db(), "coder", {}, level);
        ASSERT_FALSE(bad_level);
        EXPECT_EQ(bad_level.error().exit(), Exit::usage);
        EXPECT_EQ(bad_level.error().message(),
                  "unknown autonomy level 'L" + std::to_string(level) + "': give L0 to L6");
    }
    auto empty_model = ensure_profile(db(), "coder", {"anthropic:a", ""}, std::nullopt);
    ASSERT_FALSE(empty_model);
    EXPECT_EQ(empty_model.error().exit(), Exit::usage);

    auto none = find_profile(db(), "coder");
    ASSERT_OK(none);
    EXPECT_FALSE(none->has_value());
    EXPECT_FALSE(db().in_transaction());

    ASSERT_OK(ensure_profile(db(), "coder", {"anthropic:a"}, 6));
    auto changed = ensure_profile(db(), "coder", {}, 9);
    ASSERT_FALSE(changed);
    auto found = find_profile(db(), "coder");
    ASSERT_OK(found);
    EXPECT_EQ((*found)->autonomy, 6);
}

TEST_F(AgentsTest, DamagedModelsAreBadData) {
    for (const char* models : {"not json", "{}", R"(["a:b",3])"}) {
        auto stmt = db().prepare("INSERT OR REPLACE INTO profiles (name, models, autonomy, "
                                 "created) VALUES ('x', ?1, 2, 1)");
        ASSERT_OK(stmt);
        ASSERT_OK(stmt->bind(1, std::string_view(models)));
        ASSERT_OK(stmt->run());
        auto found = find_profile(db(), "x");
        ASSERT_FALSE(found) << models;
        EXPECT_EQ(found.error().exit(), Exit::data);
        EXPECT_EQ(found.error().message().rfind("profile 'x' has damaged models: ", 0), 0U)
            << found.error().message();
    }
}

TEST_F(AgentsTest, AnAgentGetsAFreshRandomId) {
    ASSERT_OK(ensure_profile(db(), "coder", {}, std::nullopt));
    std::set<std::string> ids;
    int64_t before = now_ms();
    for (int i = 0; i < 20; ++i) {
        auto agent = create_agent(db(), "coder");
        ASSERT_OK(agent);
        ASSERT_EQ(agent->id.size(), 64U);
        EXPECT_EQ(agent->id.find_first_not_of("0123456789abcdef"), std::string::npos) << agent->id;
        EXPECT_EQ(agent->profile, "coder");
        EXPECT_GE(agent->created, before);
        ids.insert(agent->id);
    }
    EXPECT_EQ(ids.size(), 20U);
    auto all = list_agents(db(), std::nullopt);
    ASSERT_OK(all);
    EXPECT_EQ(all->size(), 20U);
}

TEST_F(AgentsTest, AnAgentNeedsAnExistingProfile) {
    auto none = create_agent(db(), "ghost");
    ASSERT_FALSE(none);
    EXPECT_EQ(none.error().exit(), Exit::no_input);
    EXPECT_EQ(none.error().message(), "no profile 'ghost'");

    auto bad = create_agent(db(), "Ghost Town");
    ASSERT_FALSE(bad);
    EXPECT_EQ(bad.error().exit(), Exit::usage);

    auto all = list_agents(db(), std::nullopt);
    ASSERT_OK(all);
    EXPECT_TRUE(all->empty());
    EXPECT_FALSE(db().in_transaction());
}

TEST_F(AgentsTest, ListsAreOldestFirstAndByProfile) {
    add_profiles();
    add_agent(k_id_c, "coder", 300);
    add_agent(k_id_a, "coder", 100);
    add_agent(k_id_b, "lead", 200);
    add_agent(k_id_d, "coder", 100); // the same millisecond as a: made after it

    auto all = list_agents(db(), std::nullopt);
    ASSERT_OK(all);
    ASSERT_EQ(all->size(), 4U);
    EXPECT_EQ((*all)[0].id, k_id_a);
    EXPECT_EQ((*all)[1].id, k_id_d);
    EXPECT_EQ((*all)[2].id, k_id_b);
    EXPECT_EQ((*all)[3].id, k_id_c);
    EXPECT_EQ((*all)[2].profile, "lead");
    EXPECT_EQ((*all)[2].created, 200);

    auto coder = list_agents(db(), "coder");
    ASSERT_OK(coder);
    ASSERT_EQ(coder->size(), 3U);
    EXPECT_EQ((*coder)[0].id, k_id_a);
    EXPECT_EQ((*coder)[1].id, k_id_d);
    EXPECT_EQ((*coder)[2].id, k_id_c);

    auto lead = list_agents(db(), "lead");
    ASSERT_OK(lead);
    ASSERT_EQ(lead->size(), 1U);
    EXPECT_EQ((*lead)[0].id, k_id_b);

    auto nobody = list_agents(db(), "nobody");
    ASSERT_OK(nobody);
    EXPECT_TRUE(nobody->empty());
}

TEST(ShortAgentId, FirstEightAndLastFourDigits) {
    EXPECT_EQ(short_agent_id(k_id_a), "d85ed254\u2026a248");
    EXPECT_EQ(short_agent_id(k_id_a), "d85ed254\xe2\x80\xa6"
                                      "a248");
    EXPECT_EQ(short_agent_id(k_id_d), "0123abcd\u2026beef");
}

TEST_F(AgentsTest, AnAgentIsFoundByItsWholeIdShortFormOrPrefix) {
    add_profiles();
    add_agent(k_id_a, "coder", 100);
    add_agent(k_id_d, "lead", 200);

    for (std::string name : {k_id_a, std::string("d85ed254\u2026a248"),
                             std::string("d85ed254...a248"), std::string("d85e"),
                             std::string("d85ed"), std::string("D85ED254"), k_id_a.substr(0, 63)}) {
        auto found = find_agent(db(), name, std::nullopt);
        ASSERT_OK(found) << name;
        EXPECT_EQ(found->id, k_id_a) << name;
        EXPECT_EQ(found->profile, "coder");
        EXPECT_EQ(found->created, 100);
        auto in_profile = find_agent(db(), name, "coder");
        ASSERT_OK(in_profile) << name;
        EXPECT_EQ(in_profile->id, k_id_a);
    }
    auto other = find_agent(db(), "0123", "lead");
    ASSERT_OK(other);
    EXPECT_EQ(other->id, k_id_d);
}

TEST_F(AgentsTest, NamesThatAreNotIdsAreUsageErrors) {
    add_profiles();
    add_agent(k_id_a, "coder", 100);
    const std::string why = "': give its id, its short form or a prefix of 4 hex digits";
    for (std::string name :
         {std::string("xyz"), std::string(""), std::string("d85"), std::string("d8"),
          std::string("d85g"), std::string("coder"), k_id_a + "0", std::string("d85ed254\u2026a24"),
          std::string("d85ed25\u2026a248"), std::string("d85ed254..a248"),
          std::string("d85ed254\u2026\u2026a248"), std::string("d85ed254 a248"),
          std::string("d85e*"), std::string("d85e?"), std::string("d85e%"),
          std::string("[d]85e")}) {
        auto [exit, message] = find_error(name);
        EXPECT_EQ(exit, Exit::usage) << name << ": " << message;
        EXPECT_EQ(message, "invalid agent '" + name + why);
    }
    EXPECT_EQ(find_error("xyz").second,
              "invalid agent 'xyz': give its id, its short form or a prefix of 4 hex digits");
}

TEST_F(AgentsTest, ANameThatMatchesNoAgentIsNoInput) {
    add_profiles();
    add_agent(k_id_a, "coder", 100);
    EXPECT_EQ(find_error("ffff"), std::make_pair(Exit::no_input, std::string("no agent 'ffff'")));
    EXPECT_EQ(find_error("ffff", "coder"),
              std::make_pair(Exit::no_input, std::string("no agent 'ffff' in profile 'coder'")));
    EXPECT_EQ(find_error("d85ed254\u2026a249"),
              std::make_pair(Exit::no_input, std::string("no agent 'd85ed254\u2026a249'")));
    // Same head and tail, but a different middle digit is a different id.
    std::string near = k_id_a;
    near[30] = '9';
    EXPECT_EQ(find_error(near), std::make_pair(Exit::no_input, "no agent '" + near + "'"));
}

TEST_F(AgentsTest, AnAgentOfAnotherProfileIsNamedAsSuch) {
    add_profiles();
    add_agent(k_id_a, "lead", 100);
    for (std::string name : {k_id_a, std::string("d85ed254\u2026a248"), std::string("d85e")}) {
        EXPECT_EQ(find_error(name, "coder"),
                  std::make_pair(Exit::data, std::string("agent d85ed254\u2026a248 is of profile "
                                                         "'lead', not 'coder'")))
            << name;
    }
    EXPECT_EQ(find_error("d85e", "nobody").second,
              "agent d85ed254\u2026a248 is of profile 'lead', not 'nobody'");
}

TEST_F(AgentsTest, AnAmbiguousPrefixListsTheAgentsItMatches) {
    add_profiles();
    add_agent(k_id_a, "coder", 100);
    add_agent(k_id_b, "coder", 200);
    add_agent(k_id_c, "lead", 300);

    EXPECT_EQ(
        find_error("d85e"),
        std::make_pair(Exit::data, std::string("agent 'd85e' is ambiguous: d85ed254\u2026a248, "
                                               "d85e1111\u2026"
                                               "77f0")));
    // Longer prefixes tell them apart.
    auto a = find_agent(db(), "d85ed", std::nullopt);
    ASSERT_OK(a);
    EXPECT_EQ(a->id, k_id_a);
    auto b = find_agent(db(), "d85e1", std::nullopt);
    ASSERT_OK(b);
    EXPECT_EQ(b->id, k_id_b);

    // Within a profile only that profile's agents count.
    add_agent("d85e2222" + std::string(52, '4') + "0000", "lead", 400);
    auto in_coder = find_error("d85e", "coder");
    EXPECT_EQ(in_coder.first, Exit::data);
    auto in_lead = find_agent(db(), "d85e", "lead");
    ASSERT_OK(in_lead);
    EXPECT_EQ(in_lead->id, "d85e2222" + std::string(52, '4') + "0000");
    auto only_lead = find_agent(db(), "d8a0", "lead");
    ASSERT_OK(only_lead);
    EXPECT_EQ(only_lead->id, k_id_c);
}

TEST_F(AgentsTest, AnAmbiguousPrefixShowsTheFirstFew) {
    add_profiles();
    for (int i = 0; i < 6; ++i) {
        std::string id = "abcd" + std::string(1, static_cast<char>('0' + i)) + std::string(55, '5')
                         + "000" + std::string(1, static_cast<char>('0' + i));
        add_agent(id, "coder", 100 + i);
    }
    EXPECT_EQ(find_error("abcd"),
              std::make_pair(Exit::data, std::string("agent 'abcd' is ambiguous: abcd0555\u2026"
                                                     "0000, "
                                                     "abcd1555\u2026"
                                                     "0001, abcd2555\u2026"
                                                     "0002, and 3 more")));
}

TEST_F(AgentsTest, AShortFormMatchingTwoIdsIsAmbiguous) {
    add_profiles();
    std::string twin = k_id_a;
    twin[20] = 'f';
    add_agent(k_id_a, "coder", 100);
    add_agent(twin, "coder", 200);
    auto [exit, message] = find_error("d85ed254...a248");
    EXPECT_EQ(exit, Exit::data);
    EXPECT_EQ(message,
              "agent 'd85ed254...a248' is ambiguous: d85ed254\u2026a248, d85ed254\u2026a248");
    auto whole = find_agent(db(), twin, std::nullopt);
    ASSERT_OK(whole);
    EXPECT_EQ(whole->id, twin);
}

TEST_F(AgentsTest, CreatedAgentsAreFoundByTheirShortForm) {
    ASSERT_OK(ensure_profile(db(), "coder", {}, std::nullopt));
    auto agent = create_agent(db(), "coder");
    ASSERT_OK(agent);
    auto found = find_agent(db(), short_agent_id(agent->id), "coder");
    ASSERT_OK(found);
    EXPECT_EQ(found->id, agent->id);
    auto by_prefix = find_agent(db(), agent->id.substr(0, 12), std::nullopt);
    ASSERT_OK(by_prefix);
    EXPECT_EQ(by_prefix->id, agent->id);
}

TEST(Agents, ADatabaseWithoutTheSchemaIsAProgramError) {
    auto db = Db::open(":memory:");
    ASSERT_OK(db);
    auto profile = ensure_profile(*db, "coder", {}, std::nullopt);
    ASSERT_FALSE(profile);
    EXPECT_EQ(profile.error().exit(), Exit::software);
    EXPECT_NE(profile.error().message().find("no such table: profiles"), std::string::npos)
        << profile.error().message();
    EXPECT_FALSE(db->in_transaction());
    auto found = find_agent(*db, "d85e", std::nullopt);
    ASSERT_FALSE(found);
    EXPECT_EQ(found.error().exit(), Exit::software);
    auto listed = list_agents(*db, std::nullopt);
    ASSERT_FALSE(listed);
}

} // namespace
} // namespace sion
