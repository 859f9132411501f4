// SPDX-License-Identifier: MIT
// lib/models/model: the spec grammar provider:model#effort, the effort table (levels, budgets,
// the room they give, the cap on an answer), and whose kept reasoning a message holds.
#include "lib/models/model.hpp"

#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>

namespace sion::models {
namespace {

namespace fs = std::filesystem;

TEST(Effort, Levels) {
    const char* names[] = {"none", "minimal", "low", "medium", "high", "xhigh", "max"};
    const int64_t rooms[] = {0, 1024, 4096, 8192, 16384, 32768, 60000};
    for (size_t i = 0; i < 7; ++i) {
        auto e = parse_effort(names[i]);
        ASSERT_TRUE(e) << names[i];
        ASSERT_TRUE(e->level);
        EXPECT_FALSE(e->budget);
        EXPECT_EQ(effort_name(*e->level), names[i]);
        EXPECT_EQ(thinking_room(*e), rooms[i]) << names[i];
    }
}

TEST(Effort, Budgets) {
    for (int64_t n : {0, 1, 1024, 8000, 60000}) {
        auto e = parse_effort(std::to_string(n));
        ASSERT_TRUE(e) << n;
        EXPECT_EQ(e->budget, n);
        EXPECT_FALSE(e->level);
        EXPECT_EQ(thinking_room(*e), n);
    }
    EXPECT_EQ(thinking_room(Effort{}), 0);
    EXPECT_FALSE(Effort{}.given());
}

TEST(Effort, Refused) {
    for (const char* bad :
         {"", "High", "60001", "-1", "8k", " 8000", "1e3", "99999999999999999999"}) {
        auto e = parse_effort(bad);
        ASSERT_FALSE(e) << bad;
        EXPECT_EQ(e.error().exit(), Exit::usage);
        EXPECT_EQ(e.error().message(), std::string("invalid effort '#") + bad
                                           + "': give none, minimal, low, medium, high, xhigh, "
                                             "max or a budget of 0 to 60000 tokens");
    }
}

TEST(Effort, AnAnswerAndItsThinkingAreAtMost64000) {
    EXPECT_EQ(answer_room(16000, 0), 16000);
    EXPECT_EQ(answer_room(16000, 16384), 32384);
    EXPECT_EQ(answer_room(16000, 60000), 64000);
    EXPECT_EQ(answer_room(1000, 8000), 9000);
}

class Spec : public ::testing::Test {
protected:
    void SetUp() override {
        m_dir = fs::temp_directory_path() / ("sion-effort-" + std::to_string(::getpid()));
        fs::create_directories(m_dir);
        m_script = (m_dir / "s.json").string();
        std::ofstream(m_script) << R"({"turns": [{"text": "hi"}]})";
    }

    void TearDown() override { fs::remove_all(m_dir); }

    fs::path m_dir;
    std::string m_script;
};

TEST_F(Spec, TheEffortFollowsAHash) {
    auto m = open_model("script:" + m_script + "#high");
    ASSERT_TRUE(m) << m.error().message();
    EXPECT_EQ((*m)->name(), "script:" + m_script + "#high");
    EXPECT_EQ((*m)->effort().level, EffortLevel::high);
    EXPECT_EQ((*m)->thinking_room(), 16384);
    m = open_model("script:" + m_script + "#8000");
    ASSERT_TRUE(m);
    EXPECT_EQ((*m)->effort().budget, 8000);
    EXPECT_EQ((*m)->thinking_room(), 8000);
    m = open_model("script:" + m_script);
    ASSERT_TRUE(m);
    EXPECT_FALSE((*m)->effort().given());
    EXPECT_EQ((*m)->thinking_room(), 0);
}

TEST_F(Spec, ABudgetAProviderDoesNotTakeGivesNoRoom) {
    ::setenv("OPENAI_BASE_URL", "http://127.0.0.1:9/v1", 1);
    auto m = open_model("openai:gpt-5#8000");
    ASSERT_TRUE(m) << m.error().message();
    EXPECT_EQ((*m)->effort().budget, 8000);
    EXPECT_EQ((*m)->thinking_room(), 0);
    m = open_model("openai:gpt-5#max");
    ASSERT_TRUE(m);
    EXPECT_EQ((*m)->thinking_room(), 60000);
    ::unsetenv("OPENAI_BASE_URL");
}

TEST_F(Spec, BadEffortsAndSpecs) {
    auto m = open_model("script:" + m_script + "#hard");
    ASSERT_FALSE(m);
    EXPECT_EQ(m.error().exit(), Exit::usage);
    EXPECT_EQ(m.error().message(),
              "invalid model 'script:" + m_script
                  + "#hard': invalid effort '#hard': give none, minimal, low, "
                    "medium, high, xhigh, max or a budget of 0 to 60000 tokens");
    m = open_model("anthropic:#high");
    ASSERT_FALSE(m);
    EXPECT_EQ(m.error().message(), "invalid model 'anthropic:#high': give provider:model");
}

TEST_F(Spec, KeptSpecsKeepTheirEffort) {
    fs::path here = fs::current_path();
    fs::current_path(m_dir);
    auto kept = kept_model_spec("script:s.json#xhigh");
    fs::current_path(here);
    ASSERT_TRUE(kept) << kept.error().message();
    EXPECT_EQ(*kept, "script:" + fs::canonical(m_dir).string() + "/s.json#xhigh");
    EXPECT_EQ(*kept_model_spec("anthropic:claude-opus-5-5#8000"), "anthropic:claude-opus-5-5#8000");
    // No key is needed to keep a spec; a provider that does not exist is refused.
    auto unknown = kept_model_spec("anthropc:claude-opus-5-5");
    ASSERT_FALSE(unknown);
    EXPECT_EQ(unknown.error().exit(), Exit::usage);
    EXPECT_EQ(unknown.error().message(),
              "unknown model provider 'anthropc' in 'anthropc:claude-opus-5-5'");
}

TEST_F(Spec, KeysAreNeededWhereTheProviderNeedsThem) {
    ::unsetenv("ANTHROPIC_API_KEY");
    ::unsetenv("DEEPSEEK_API_KEY");
    ::setenv("SION_HOME", m_dir.c_str(), 1);
    auto m = open_model("anthropic:claude-opus-5-5");
    ASSERT_FALSE(m);
    EXPECT_EQ(m.error().exit(), Exit::config);
    EXPECT_EQ(m.error().message(),
              "anthropic:claude-opus-5-5 needs a key: set ANTHROPIC_API_KEY, or keep it with 'sion "
              "agent credential add ANTHROPIC_API_KEY'");
    m = open_model("deepseek:deepseek-chat");
    ASSERT_FALSE(m);
    EXPECT_EQ(m.error().message(),
              "deepseek:deepseek-chat needs a key: set DEEPSEEK_API_KEY, or keep it with 'sion "
              "agent credential add DEEPSEEK_API_KEY'");
    // local: and openai: go without one when the server needs none.
    EXPECT_TRUE(open_model("local:llama3"));
    ::unsetenv("SION_HOME");
}

TEST(Kept, OnlyForTheSameKindBaseUrlAndModel) {
    Origin origin{"anthropic", "https://api.anthropic.com", "claude-opus-5-5"};
    Json message = Json::object();
    message.set("role", "assistant");
    Json member = Json::object();
    member.set("by", origin.to_json());
    member.set("blocks", Json::array());
    message.set("anthropic", std::move(member));
    EXPECT_TRUE(kept_for(message, "anthropic", origin).exists());
    EXPECT_FALSE(kept_for(message, "chat", origin).exists());
    for (Origin other : {Origin{"chat", origin.base_url, origin.model},
                         Origin{"anthropic", "http://127.0.0.1:9", origin.model},
                         Origin{"anthropic", origin.base_url, "claude-haiku-5-5"}})
        EXPECT_FALSE(kept_for(message, "anthropic", other).exists())
            << other.kind << other.base_url << other.model;
    std::vector<Json> conversation;
    conversation.push_back(Json::copy_of(message));
    EXPECT_TRUE(keeps_any(conversation, "anthropic", origin));
    EXPECT_FALSE(keeps_any(conversation, "anthropic", Origin{"anthropic", "x", "y"}));
}

TEST(HttpStatus, ExitCodes) {
    EXPECT_EQ(exit_for_http_status(400), Exit::data);
    for (int s : {401, 402, 403})
        EXPECT_EQ(exit_for_http_status(s), Exit::no_perm);
    for (int s : {404, 408, 429, 500, 502, 503, 504, 529})
        EXPECT_EQ(exit_for_http_status(s), Exit::unavailable);
}

} // namespace
} // namespace sion::models
