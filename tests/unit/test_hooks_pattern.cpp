// SPDX-License-Identifier: MIT
// hooks/pattern: `*` and nothing else is a wildcard, a pattern matches a whole tool name, no
// pattern is every tool, and patterns that no tool could have are refused.
#include "hooks/pattern.hpp"

#include <gtest/gtest.h>

#include <string>

namespace sion::hooks {
namespace {

TEST(Pattern, ALiteralMatchesItselfOnly) {
    EXPECT_TRUE(pattern_matches("shell", "shell"));
    EXPECT_FALSE(pattern_matches("shell", "shell2"));
    EXPECT_FALSE(pattern_matches("shell", "myshell"));
    EXPECT_FALSE(pattern_matches("shell", "Shell"));
    EXPECT_FALSE(pattern_matches("shell", ""));
}

TEST(Pattern, TheSeedsPrefix) {
    EXPECT_TRUE(pattern_matches("github_*", "github_create_issue"));
    EXPECT_TRUE(pattern_matches("github_*", "github_"));
    EXPECT_FALSE(pattern_matches("github_*", "github"));
    EXPECT_FALSE(pattern_matches("github_*", "my_github_tool"));
}

TEST(Pattern, StarsAnywhere) {
    EXPECT_TRUE(pattern_matches("*", ""));
    EXPECT_TRUE(pattern_matches("*", "anything at all"));
    EXPECT_TRUE(pattern_matches("*_file", "read_file"));
    EXPECT_FALSE(pattern_matches("*_file", "read_files"));
    EXPECT_TRUE(pattern_matches("a*b*c", "abc"));
    EXPECT_TRUE(pattern_matches("a*b*c", "aXbYbZc"));
    EXPECT_FALSE(pattern_matches("a*b*c", "aXbYbZ"));
    EXPECT_TRUE(pattern_matches("**x**", "x"));
    EXPECT_TRUE(pattern_matches("mcp__*__search", "mcp__docs__search"));
    EXPECT_FALSE(pattern_matches("mcp__*__search", "mcp__docs__search_all"));
}

TEST(Pattern, OtherGlobCharactersAreLiteral) {
    EXPECT_TRUE(pattern_matches("a?c", "a?c"));
    EXPECT_FALSE(pattern_matches("a?c", "abc"));
    EXPECT_TRUE(pattern_matches("[ab]", "[ab]"));
    EXPECT_FALSE(pattern_matches("[ab]", "a"));
    EXPECT_TRUE(pattern_matches("a\\*", "a\\xyz"));
}

TEST(Pattern, ManyStarsStayFast) {
    std::string name(5000, 'a');
    std::string pattern;
    for (int i = 0; i < 100; ++i)
        pattern += "*a";
    pattern += "b";
    EXPECT_FALSE(pattern_matches(pattern, name)); // quadratic at worst, never exponential
}

TEST(Pattern, NoPatternIsEveryTool) {
    EXPECT_TRUE(patterns_match({}, "shell"));
    EXPECT_TRUE(patterns_match({"read_*", "shell"}, "shell"));
    EXPECT_TRUE(patterns_match({"read_*", "shell"}, "read_file"));
    EXPECT_FALSE(patterns_match({"read_*", "shell"}, "write_file"));
}

TEST(Pattern, ChecksWhatAToolNameCouldBe) {
    EXPECT_TRUE(check_pattern("github_*"));
    EXPECT_TRUE(check_pattern("mcp/notes:list.all-1"));
    EXPECT_TRUE(check_pattern(std::string(256, 'x')));
    auto message = [](const std::string& p) {
        Status s = check_pattern(p);
        EXPECT_FALSE(s) << p;
        if (s)
            return std::string();
        EXPECT_EQ(s.error().exit(), Exit::data);
        return s.error().message();
    };
    EXPECT_EQ(message(""), "invalid pattern '': it is empty");
    EXPECT_EQ(message("read file"), "invalid pattern 'read file': it has a space");
    EXPECT_EQ(message("a,b"),
              "invalid pattern 'a,b': it has a ',' (give --tool once for each pattern)");
    EXPECT_EQ(message("tab\there"), "invalid pattern: it has a control character");
    EXPECT_EQ(message("caf\xc3\xa9"),
              "invalid pattern 'caf\xc3\xa9': tool names are printable ASCII");
    EXPECT_EQ(message(std::string(257, 'x')), "invalid pattern: it is longer than 256 characters");
}

} // namespace
} // namespace sion::hooks
