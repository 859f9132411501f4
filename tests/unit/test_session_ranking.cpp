// SPDX-License-Identifier: MIT
// session/ranking: the words tools are indexed by, and the ranking of real servers' tools
// (tests/fixtures/tool-lists: the tools/list of server-everything, server-filesystem,
// server-memory, server-github, the Notion and Playwright servers, 111 tools) for queries whose
// right answer a person would give.
#include "session/ranking.hpp"

#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

namespace sion::session {
namespace {

namespace fs = std::filesystem;

using Words = std::vector<std::string>;

TEST(SearchWords, SplitsCaseAndSeparatorsAndMakesPluralsOne) {
    EXPECT_EQ(search_words("readFile"), (Words{"read", "file"}));
    EXPECT_EQ(search_words("HTTPServer getURL"), (Words{"http", "server", "get", "url"}));
    EXPECT_EQ(search_words("list_directory_with_sizes"), (Words{"list", "directory", "size"}));
    EXPECT_EQ(search_words("API-post-search"), (Words{"api", "post", "search"}));
    EXPECT_EQ(search_words("Get the files of a directories' matches"),
              (Words{"get", "file", "directory", "match"}));
    EXPECT_EQ(search_words("status class this utf8 x 42"), (Words{"status", "class", "utf8", "42"}));
    EXPECT_EQ(search_words("café crème"), (Words{"café", "crème"}));
    EXPECT_TRUE(search_words("").empty());
    EXPECT_TRUE(search_words("  -- , a I").empty());
}

TEST(SchemaText, ReadsPropertiesNamesAndDescriptionsNested) {
    auto schema = Json::parse(R"({"type": "object", "properties": {
        "path": {"type": "string", "description": "Where it goes"},
        "edits": {"type": "array", "items": {"type": "object", "properties": {
            "oldText": {"type": "string", "description": "Text to find"}}}}}})");
    ASSERT_TRUE(schema);
    EXPECT_EQ(schema_text(schema->view()), "path Where it goes edits oldText Text to find ");
    EXPECT_EQ(schema_text(JsonView()), "");
}

class Ranking : public testing::Test {
protected:
    static void SetUpTestSuite() {
        const char* dir = std::getenv("SION_TEST_SOURCE_DIR"); // NOLINT(concurrency-mt-unsafe)
        fs::path lists = fs::path(dir != nullptr ? dir : ".") / "tests/fixtures/tool-lists";
        s_index = new ToolIndex();
        for (const char* server :
             {"everything", "filesystem", "memory", "github", "notion", "playwright"}) {
            std::ifstream in(lists / (std::string(server) + ".json"));
            std::stringstream text;
            text << in.rdbuf();
            auto list = Json::parse(text.str());
            ASSERT_TRUE(list) << server;
            for (JsonView tool : list->view().get("tools"))
                s_index->add(*tool.string("name"), tool.string_or("description", "").value_or(""),
                             tool.get("inputSchema"));
        }
    }

    static void TearDownTestSuite() {
        delete s_index;
        s_index = nullptr;
    }

    // The names of the best `limit` tools for `query`.
    static Words names(std::string_view query, size_t limit = 5) {
        Words out;
        for (size_t tool : s_index->search(query, limit))
            out.push_back(s_index->name(tool));
        return out;
    }

    static std::string first(std::string_view query) {
        Words n = names(query, 1);
        return n.empty() ? "(none)" : n[0];
    }

    static ToolIndex* s_index;
};

ToolIndex* Ranking::s_index = nullptr;

TEST_F(Ranking, EveryServersToolsAreThere) {
    EXPECT_EQ(s_index->size(), 111U);
}

TEST_F(Ranking, FindsTheToolAPersonWouldPick) {
    EXPECT_EQ(first("move or rename a file"), "move_file");
    EXPECT_EQ(first("create a new directory"), "create_directory");
    EXPECT_EQ(first("take a screenshot of the page"), "browser_take_screenshot");
    EXPECT_EQ(first("click on an element"), "browser_click");
    // BM25 weighs a rare word above two common ones: "open a pull request" goes to open_nodes
    // (its name has "open" three times), as it would with any index of these words.
    EXPECT_EQ(first("create a pull request"), "create_pull_request");
    EXPECT_EQ(first("merge a pull request"), "merge_pull_request");
    EXPECT_EQ(first("fork a repository"), "fork_repository");
    EXPECT_EQ(first("add observations to entities"), "add_observations");
    EXPECT_EQ(first("environment variables"), "get-env");
    EXPECT_EQ(first("sum of two numbers"), "get-sum");
    EXPECT_EQ(first("visit a URL in the browser"), "browser_navigate");
    EXPECT_EQ(first("list the files in a folder"), "list_directory");
    EXPECT_EQ(first("run javascript in the page"), "browser_run_code_unsafe");
    EXPECT_EQ(first("write text into a file"), "write_file");
    EXPECT_EQ(first("search the web pages of notion"), "API-post-search");
    EXPECT_EQ(first("comment on an issue"), "add_issue_comment");
    EXPECT_EQ(first("compress a file with gzip"), "gzip-file-as-resource");
    EXPECT_EQ(first("upload files"), "browser_file_upload");
    EXPECT_EQ(first("delete a block"), "API-delete-a-block");
}

TEST_F(Ranking, AToolTheQueryNamesComesFirst) {
    EXPECT_EQ(first("read_graph"), "read_graph");
    // Named among other words, in any case, ahead of better matches of those words.
    Words found = names("pull requests, and BROWSER_CLOSE");
    ASSERT_FALSE(found.empty());
    EXPECT_EQ(found[0], "browser_close");
    EXPECT_EQ(found.size(), 5U);
}

TEST_F(Ranking, SelectAsksForThoseToolsAlone) {
    EXPECT_EQ(names("select:echo,write_file"), (Words{"echo", "write_file"}));
    EXPECT_EQ(names("select:nosuch, echo ,echo"), (Words{"echo"}));
    EXPECT_EQ(names("select:"), Words{});
    EXPECT_EQ(names("select:browser_click,browser_drag,browser_hover", 2),
              (Words{"browser_click", "browser_drag"}));
}

TEST_F(Ranking, FiveUnlessAskedForMoreAndNothingForNoMatch) {
    EXPECT_EQ(names("file").size(), 5U);
    EXPECT_EQ(names("file", 10).size(), 10U);
    EXPECT_EQ(names("xyzzy plugh"), Words{});
    EXPECT_EQ(names("the of and"), Words{});
    EXPECT_EQ(names(""), Words{});
}

TEST(RankingEmpty, AnEmptyIndexFindsNothing) {
    ToolIndex index;
    EXPECT_TRUE(index.search("anything", 5).empty());
    EXPECT_TRUE(index.search("select:a", 5).empty());
}

TEST(RankingTies, EqualScoresKeepTheOrderAdded) {
    ToolIndex index;
    index.add("alpha", "frobnicate widgets", JsonView());
    index.add("beta", "frobnicate widgets", JsonView());
    index.add("gamma", "something else", JsonView());
    std::vector<size_t> found = index.search("widgets", 5);
    EXPECT_EQ(found, (std::vector<size_t>{0, 1}));
}

} // namespace
} // namespace sion::session
