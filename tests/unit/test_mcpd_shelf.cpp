// SPDX-License-Identifier: MIT
// mcpd/shelf on sion.db's schema (":memory:" with migrate_state): servers added with their pins,
// pins replaced at a review, profiles' standing servers, sampling allowed and taken back, removal
// from the shelf and every profile, and a damaged entry named as such.
#include "mcpd/shelf.hpp"

#include "lib/agents.hpp"
#include "lib/db_schema.hpp"

#include <gtest/gtest.h>

namespace sion::mcpd {
namespace {

#define ASSERT_OK(r) ASSERT_TRUE(r) << (r).error().message()

Db memory_state() {
    auto db = Db::open(":memory:");
    EXPECT_TRUE(db) << db.error().message();
    EXPECT_TRUE(migrate_state(*db));
    return std::move(*db);
}

std::vector<ToolDef> tools(std::string_view json) {
    auto parsed = Json::parse(json);
    EXPECT_TRUE(parsed) << json;
    return tool_defs(parsed->view(), {}, "notes");
}

ShelfEntry notes_entry() {
    ShelfEntry e;
    e.name = "notes";
    e.config.command = {"python3", "/x/notes-server.py"};
    e.config.shown = {"python3", "notes-server.py"};
    e.config.dir = "/x/notes";
    e.protocol = "2026-07-28";
    e.server_name = "notes";
    e.server_version = "1.0";
    return e;
}

class ShelfTest : public testing::Test {
protected:
    ShelfTest() : m_db(memory_state()), m_shelf(m_db) {}

    int64_t count(Sql sql) {
        auto q = m_db.prepare(sql);
        EXPECT_TRUE(q);
        auto row = q->step();
        EXPECT_TRUE(row && *row);
        return q->column_int(0);
    }

    Db m_db;
    Shelf m_shelf;
};

TEST_F(ShelfTest, AServerIsAddedWithItsUsableToolsPinned) {
    ASSERT_OK(m_shelf.add(notes_entry(), tools(R"([{"name":"list_notes","description":"List."},
        {"name":"bad name"},{"name":"add_note","description":"Keep."}])")));
    auto e = m_shelf.get("notes");
    ASSERT_OK(e);
    EXPECT_EQ(e->config.command, notes_entry().config.command);
    EXPECT_EQ(e->config.shown, notes_entry().config.shown);
    EXPECT_EQ(e->config.dir, "/x/notes");
    EXPECT_EQ(e->protocol, "2026-07-28");
    EXPECT_EQ(e->server_name, "notes");
    EXPECT_EQ(e->server_version, "1.0");
    EXPECT_FALSE(e->sampling);
    auto pins = m_shelf.pins("notes");
    ASSERT_OK(pins);
    ASSERT_EQ(pins->size(), 2U); // the unusable one is not pinned
    EXPECT_EQ((*pins)[0].tool, "list_notes");
    EXPECT_EQ((*pins)[1].tool, "add_note");
    EXPECT_EQ((*pins)[0].digest, tools(R"([{"name":"list_notes","description":"List."}])")[0].digest);
    EXPECT_EQ((*pins)[1].definition.view().string("description").value_or(""), "Keep.");
}

TEST_F(ShelfTest, ANameIsOnTheShelfOnce) {
    ASSERT_OK(m_shelf.add(notes_entry(), {}));
    auto again = m_shelf.add(notes_entry(), tools(R"([{"name":"x"}])"));
    ASSERT_FALSE(again);
    EXPECT_EQ(again.error().exit(), Exit::usage);
    EXPECT_EQ(again.error().message(), "MCP server notes is on the shelf already: review it (`sion "
                                       "agent mcp review notes`) or remove it first");
    EXPECT_EQ(count("SELECT count(*) FROM mcp_pins"), 0);
}

TEST_F(ShelfTest, AServerNotOnTheShelf) {
    auto found = m_shelf.find("nope");
    ASSERT_OK(found);
    EXPECT_FALSE(*found);
    auto e = m_shelf.get("nope");
    ASSERT_FALSE(e);
    EXPECT_EQ(e.error().message(), "there is no MCP server nope on the shelf (`sion agent mcp list`)");
    for (const Status& s : {m_shelf.remove("nope"), m_shelf.pin("nope", {}, {}),
                            m_shelf.set_sampling("nope", Sampling{})})
        EXPECT_FALSE(s);
}

TEST_F(ShelfTest, AReviewReplacesThePinsAndHowTheServerIntroducedItself) {
    ASSERT_OK(m_shelf.add(notes_entry(), tools(R"([{"name":"a"},{"name":"b"}])")));
    ASSERT_OK(m_shelf.pin("notes", {"2025-11-25", "notes2", "2.0", ""},
                          tools(R"([{"name":"c"},{"name":"a","description":"new"}])")));
    auto pins = m_shelf.pins("notes");
    ASSERT_OK(pins);
    ASSERT_EQ(pins->size(), 2U);
    EXPECT_EQ((*pins)[0].tool, "c");
    EXPECT_EQ((*pins)[1].tool, "a");
    auto e = m_shelf.get("notes");
    ASSERT_OK(e);
    EXPECT_EQ(e->protocol, "2025-11-25");
    EXPECT_EQ(e->server_name, "notes2");
    EXPECT_EQ(e->server_version, "2.0");
}

TEST_F(ShelfTest, ListIsByName) {
    ShelfEntry b = notes_entry();
    b.name = "b-server";
    ShelfEntry a = notes_entry();
    a.name = "a-server";
    ASSERT_OK(m_shelf.add(b, {}));
    ASSERT_OK(m_shelf.add(a, {}));
    auto all = m_shelf.list();
    ASSERT_OK(all);
    ASSERT_EQ(all->size(), 2U);
    EXPECT_EQ((*all)[0].name, "a-server");
    EXPECT_EQ((*all)[1].name, "b-server");
}

TEST_F(ShelfTest, ProfilesHaveStandingServers) {
    ASSERT_OK(m_shelf.add(notes_entry(), {}));
    ShelfEntry mail = notes_entry();
    mail.name = "mail";
    ASSERT_OK(m_shelf.add(mail, {}));
    ASSERT_OK(ensure_profile(m_db, "coder", {}, std::nullopt));
    auto no_profile = m_shelf.give("nobody", "notes");
    ASSERT_FALSE(no_profile);
    EXPECT_EQ(no_profile.error().message(), "no profile 'nobody'");
    EXPECT_FALSE(m_shelf.give("coder", "nope"));
    ASSERT_OK(m_shelf.give("coder", "notes"));
    ASSERT_OK(m_shelf.give("coder", "notes")); // once is enough
    ASSERT_OK(m_shelf.give("coder", "mail"));
    auto servers = profile_servers(m_db, "coder");
    ASSERT_OK(servers);
    EXPECT_EQ(*servers, (std::vector<std::string>{"mail", "notes"}));
    ASSERT_OK(m_shelf.drop("coder", "mail"));
    auto dropped = m_shelf.drop("coder", "mail");
    ASSERT_FALSE(dropped);
    EXPECT_EQ(dropped.error().message(), "profile 'coder' does not have MCP server mail");
    servers = profile_servers(m_db, "coder");
    ASSERT_OK(servers);
    EXPECT_EQ(*servers, (std::vector<std::string>{"notes"}));
    // Dropped from a profile, it stays on the shelf.
    EXPECT_TRUE(*m_shelf.find("mail"));
}

TEST_F(ShelfTest, RemoveTakesItOffTheShelfItsPinsAndEveryProfile) {
    ASSERT_OK(m_shelf.add(notes_entry(), tools(R"([{"name":"a"}])")));
    ASSERT_OK(ensure_profile(m_db, "coder", {}, std::nullopt));
    ASSERT_OK(ensure_profile(m_db, "lead", {}, std::nullopt));
    ASSERT_OK(m_shelf.give("coder", "notes"));
    ASSERT_OK(m_shelf.give("lead", "notes"));
    ASSERT_OK(m_shelf.remove("notes"));
    EXPECT_FALSE(*m_shelf.find("notes"));
    EXPECT_EQ(count("SELECT count(*) FROM mcp_pins"), 0);
    EXPECT_EQ(count("SELECT count(*) FROM profile_mcp"), 0);
    // The name can be used again.
    ASSERT_OK(m_shelf.add(notes_entry(), {}));
}

TEST_F(ShelfTest, SamplingIsOffUntilAllowed) {
    ASSERT_OK(m_shelf.add(notes_entry(), {}));
    EXPECT_FALSE(m_shelf.get("notes")->sampling);
    ASSERT_OK(m_shelf.set_sampling("notes", Sampling{200, 2, "anthropic:claude-haiku-4-5"}));
    auto e = m_shelf.get("notes");
    ASSERT_OK(e);
    ASSERT_TRUE(e->sampling);
    EXPECT_EQ(e->sampling->max_tokens, 200);
    EXPECT_EQ(e->sampling->per_run, 2);
    EXPECT_EQ(e->sampling->model, "anthropic:claude-haiku-4-5");
    ASSERT_OK(m_shelf.set_sampling("notes", Sampling{}));
    e = m_shelf.get("notes");
    ASSERT_TRUE(e->sampling);
    EXPECT_EQ(e->sampling->max_tokens, k_default_sampling_tokens);
    EXPECT_EQ(e->sampling->per_run, k_default_sampling_per_run);
    EXPECT_EQ(e->sampling->model, "");
    ASSERT_OK(m_shelf.set_sampling("notes", std::nullopt));
    EXPECT_FALSE(m_shelf.get("notes")->sampling);
}

TEST_F(ShelfTest, ADamagedEntryIsNamed) {
    ASSERT_OK(m_shelf.add(notes_entry(), {}));
    ASSERT_TRUE(m_db.exec("UPDATE mcp_servers SET config = '{\"command\":[]}'"));
    auto e = m_shelf.get("notes");
    ASSERT_FALSE(e);
    EXPECT_EQ(e.error().exit(), Exit::data);
    EXPECT_EQ(e.error().message(),
              "the shelf's entry for MCP server notes is damaged: member 'command' is empty");
    ASSERT_TRUE(m_db.exec("UPDATE mcp_servers SET config = 'not json'"));
    EXPECT_FALSE(m_shelf.list());
}

} // namespace
} // namespace sion::mcpd
