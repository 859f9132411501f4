// SPDX-License-Identifier: MIT
// tools_search (session/tool_tools.cpp): what it answers, and the window of loaded tools: the 24
// found last, the oldest leaving first, a tool found again kept where it is.
#include "session/tools.hpp"

#include <gtest/gtest.h>

namespace sion::session {
namespace {

class Named final : public Tool {
public:
    explicit Named(std::string name) : m_name(std::move(name)) {}
    models::ToolSpec spec() const override {
        return {m_name, "frobnicate the " + m_name, Json::object()};
    }
    Effect effect(JsonView) const override { return Effect::read; }
    bool idempotent() const override { return true; }
    Result<ToolResult> run(JsonView, ToolContext&) override { return ToolResult{"ran", false, false, {}}; }

private:
    std::string m_name;
};

class ToolSearch : public testing::Test {
protected:
    void SetUp() override {
        for (int i = 0; i < 40; ++i) {
            m_tools.push_back(std::make_unique<Named>("t" + std::to_string(i)));
            models::ToolSpec spec = m_tools.back()->spec();
            m_found.index.add(spec.name, spec.description, spec.input_schema.view());
            m_found.tools.push_back(m_tools.back().get());
        }
        m_search = make_tools_search_tool(m_found);
    }

    ToolResult search(const std::string& input) {
        auto json = Json::parse(input);
        EXPECT_TRUE(json);
        ToolContext context;
        auto result = m_search->run(json->view(), context);
        EXPECT_TRUE(result);
        return result ? std::move(*result) : ToolResult{};
    }

    // "select:tA,tB,…" for tools from..to-1.
    static std::string select(int from, int to) {
        std::string q = "select:";
        for (int i = from; i < to; ++i)
            q += (i > from ? "," : "") + std::string("t") + std::to_string(i);
        return R"({"query": ")" + q + R"(", "limit": 10})";
    }

    static std::vector<std::string> names(int from, int to) {
        std::vector<std::string> out;
        for (int i = from; i < to; ++i)
            out.push_back("t" + std::to_string(i));
        return out;
    }

    std::vector<std::unique_ptr<Tool>> m_tools;
    FoundTools m_found;
    std::unique_ptr<Tool> m_search;
};

TEST_F(ToolSearch, AnswersEachToolWithItsSchemaAndLoadsIt) {
    ToolResult r = search(R"({"query": "select:t3,t1"})");
    EXPECT_FALSE(r.is_error);
    EXPECT_EQ(r.text, "2 tools found and loaded: call them by name from now on.\n"
                      "\nt3: frobnicate the t3\n  input schema: {}\n"
                      "\nt1: frobnicate the t1\n  input schema: {}\n");
    EXPECT_EQ(m_found.loaded, (std::vector<std::string>{"t3", "t1"}));
    EXPECT_TRUE(m_found.changed);
}

TEST_F(ToolSearch, KeepsTheTwentyFourFoundLast) {
    (void)search(select(0, 10));
    (void)search(select(10, 20));
    EXPECT_EQ(m_found.loaded, names(0, 20));
    (void)search(select(20, 30));
    EXPECT_EQ(m_found.loaded, names(6, 30));
    // Found again: kept where it is, nothing leaves, nothing changes.
    m_found.changed = false;
    (void)search(R"({"query": "select:t8,t29"})");
    EXPECT_EQ(m_found.loaded, names(6, 30));
    EXPECT_FALSE(m_found.changed);
    (void)search(R"({"query": "select:t31"})");
    EXPECT_EQ(m_found.loaded.front(), "t7");
    EXPECT_EQ(m_found.loaded.back(), "t31");
    EXPECT_EQ(m_found.loaded.size(), k_tools_loaded);
}

TEST_F(ToolSearch, FindsNothingAndSaysSo) {
    ToolResult r = search(R"({"query": "xyzzy"})");
    EXPECT_FALSE(r.is_error);
    EXPECT_EQ(r.text, "no tool matches 'xyzzy': try other words, or select:NAME,NAME");
    EXPECT_EQ(search(R"({"query": "select:nosuch"})").text,
              "no tool of those names: tools_search finds names by what the tools do");
    EXPECT_TRUE(m_found.loaded.empty());
}

TEST_F(ToolSearch, RefusesBadInput) {
    EXPECT_TRUE(search(R"({})").is_error);
    EXPECT_TRUE(search(R"({"query": 3})").is_error);
    EXPECT_EQ(search(R"({"query": "t1", "limit": 11})").text,
              "tools_search's 'limit' is a whole number from 1 to 10");
    EXPECT_TRUE(search(R"({"query": "t1", "limit": 0})").is_error);
    EXPECT_TRUE(search(R"({"query": "t1", "limit": "5"})").is_error);
}

TEST_F(ToolSearch, FiveUnlessAskedForMore) {
    EXPECT_EQ(search(R"({"query": "frobnicate"})").text.substr(0, 7), "5 tools");
    EXPECT_EQ(search(R"({"query": "frobnicate", "limit": 10})").text.substr(0, 8), "10 tools");
}

TEST(ToolsCall, OnlyAnswersACallThatNamesNoTool) {
    auto call = make_tools_call_tool();
    ToolContext context;
    auto r = call->run(Json::parse(R"({"arguments": {}})")->view(), context);
    ASSERT_TRUE(r);
    EXPECT_TRUE(r->is_error);
    EXPECT_EQ(r->text, "tools_call needs 'name', a string, and 'arguments', an object: the tool's "
                       "name and its input");
    r = call->run(Json::parse(R"({"name": "tools_search", "arguments": {}})")->view(), context);
    ASSERT_TRUE(r);
    EXPECT_EQ(r->text, "tools_call calls the MCP servers' tools, not tools_search");
}

} // namespace
} // namespace sion::session
