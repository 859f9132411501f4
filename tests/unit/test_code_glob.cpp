// SPDX-License-Identifier: MIT
// Tests for session/code/glob: the syntax find_files documents, anchoring, pruning, the literal prefix
// a walk starts from, the patterns refused, and that no pattern makes matching slow.
#include "session/code/glob.hpp"

#include <gtest/gtest.h>

#include <chrono>
#include <string>
#include <vector>

namespace sion::code {
namespace {

bool m(std::string_view pattern, std::string_view path) {
    auto g = Glob::compile(pattern);
    EXPECT_TRUE(g) << pattern << ": " << g.error().message();
    return g && g->matches(path);
}

struct Case {
    const char* pattern;
    const char* path;
    bool want;
};

TEST(Glob, TheSyntax) {
    const Case cases[] = {
        // A pattern without '/' matches a name at any depth.
        {"*.rs", "main.rs", true},
        {"*.rs", "src/a/b/main.rs", true},
        {"*.rs", "main.rsx", false},
        {"*.rs", "src.rs/main.c", false},
        {"Cargo.toml", "crates/x/Cargo.toml", true},
        {"*", ".hidden", true},
        // With '/', anchored where the search starts.
        {"src/*.rs", "src/main.rs", true},
        {"src/*.rs", "src/a/main.rs", false},
        {"src/*.rs", "x/src/main.rs", false},
        {"./*.rs", "main.rs", true},
        {"./*.rs", "src/main.rs", false},
        {"/*.rs", "main.rs", true},
        {"/*.rs", "src/main.rs", false},
        // ** as a whole name.
        {"src/**/*.rs", "src/main.rs", true},
        {"src/**/*.rs", "src/a/b/c.rs", true},
        {"src/**/*.rs", "lib/a.rs", false},
        {"**/test_*.cpp", "test_a.cpp", true},
        {"**/test_*.cpp", "tests/unit/test_a.cpp", true},
        {"**", "a/b/c", true},
        {"src/**", "src/a/b", true},
        {"src/**", "src", false},
        {"src/", "src/a", true},
        {"a/**/b/**/c", "a/b/c", true},
        {"a/**/b/**/c", "a/x/b/y/z/c", true},
        {"a/**/b/**/c", "a/x/y/c", false},
        {"a**b", "axxb", true},
        {"a**b", "ax/xb", false},
        // ?, classes, escapes.
        {"?.c", "a.c", true},
        {"?.c", "ab.c", false},
        {"?.c", "é.c", true},
        {"[abc].txt", "b.txt", true},
        {"[abc].txt", "d.txt", false},
        {"[a-c].txt", "b.txt", true},
        {"[!a-c].txt", "b.txt", false},
        {"[^a-c].txt", "d.txt", true},
        {"[]x].txt", "].txt", true},
        {"[α-ω]", "β", true},
        {"[α-ω]", "b", false},
        {"\\*.txt", "*.txt", true},
        {"\\*.txt", "a.txt", false},
        {"a\\[b", "a[b", true},
        // Braces.
        {"*.{ts,tsx}", "src/app.ts", true},
        {"*.{ts,tsx}", "src/app.tsx", true},
        {"*.{ts,tsx}", "src/app.js", false},
        {"{src,lib}/**/*.rs", "lib/x/y.rs", true},
        {"{src,lib}/**/*.rs", "bin/y.rs", false},
        {"{a,b{c,d}}.txt", "bd.txt", true},
        {"{a,b{c,d}}.txt", "b.txt", false},
        {"{x}.txt", "x.txt", true},
        {"[{].txt", "{.txt", true},
        // '*' backtracks across several tries.
        {"*a*b*c", "xaxbxbxc", true},
        {"*a*b*c", "xaxbxbx", false},
        {"*.tar.gz", "x.tar.tar.gz", true},
    };
    for (const Case& c : cases)
        EXPECT_EQ(m(c.pattern, c.path), c.want) << "'" << c.pattern << "' on '" << c.path << "'";
}

TEST(Glob, MatchName) {
    EXPECT_TRUE(match_name("*", ""));
    EXPECT_TRUE(match_name("", ""));
    EXPECT_FALSE(match_name("", "a"));
    EXPECT_TRUE(match_name("a*", "a"));
    EXPECT_TRUE(match_name("**", "abc"));
    EXPECT_FALSE(match_name("?", ""));
    EXPECT_TRUE(match_name("x\\", "x\\")); // a '\' at the end is itself
}

TEST(Glob, PruningSaysWhichDirectoriesCouldHoldAMatch) {
    auto g = Glob::compile("src/**/*.rs");
    ASSERT_TRUE(g);
    EXPECT_TRUE(g->may_match_below(""));
    EXPECT_TRUE(g->may_match_below("src"));
    EXPECT_TRUE(g->may_match_below("src/a/b"));
    EXPECT_FALSE(g->may_match_below("docs"));
    EXPECT_FALSE(g->may_match_below("docs/src"));
    auto top = Glob::compile("./*.md");
    ASSERT_TRUE(top);
    EXPECT_TRUE(top->may_match_below(""));
    EXPECT_FALSE(top->may_match_below("docs"));
    auto any = Glob::compile("*.md");
    ASSERT_TRUE(any);
    EXPECT_TRUE(any->may_match_below("a/b/c"));
    auto fixed = Glob::compile("a/b");
    ASSERT_TRUE(fixed);
    EXPECT_TRUE(fixed->may_match_below("a"));
    EXPECT_FALSE(fixed->may_match_below("a/b"));
}

TEST(Glob, RefusesWhatCannotBeRead) {
    struct Bad {
        const char* pattern;
        const char* message;
    };

    const Bad bad[] = {
        {"", "the pattern is empty"},
        {"a/[bc", "unclosed '[' in pattern 'a/[bc'"},
        {"{a,b", "unclosed '{' in pattern '{a,b'"},
        {"a/../b", "the pattern 'a/../b' has a '..': name the directory to search instead"},
        {"../*.rs", "the pattern '../*.rs' has a '..': name the directory to search instead"},
        {"{a,b}{a,b}{a,b}{a,b}{a,b}{a,b}{a,b}{a,b}{a,b}{a,b}{a,b}",
         "the pattern '{a,b}{a,b}{a,b}{a,b}{a,b}{a,b}{a,b}{a,b}{a,b}{a,b}{a,b}' has more than 1024 "
         "alternatives"},
    };
    for (const Bad& b : bad) {
        auto g = Glob::compile(b.pattern);
        ASSERT_FALSE(g) << b.pattern;
        EXPECT_EQ(g.error().exit(), Exit::data);
        EXPECT_EQ(g.error().message(), b.message);
    }
    EXPECT_TRUE(Glob::compile("{a,b}{a,b}{a,b}{a,b}{a,b}{a,b}{a,b}{a,b}{a,b}{a,b}"));
    std::string groups;
    for (int i = 0; i < 1365; ++i)
        groups += "{a}";
    EXPECT_TRUE(Glob::compile(groups)) << "a group of one alternative is that alternative";
    auto longer = Glob::compile(groups + "{b}");
    ASSERT_FALSE(longer);
    EXPECT_EQ(longer.error().message(), "the pattern is longer than 4096 bytes");
}

TEST(Glob, SplitLiteralPrefix) {
    using P = std::pair<std::string, std::string>;
    EXPECT_EQ(split_literal_prefix("src/app/**/*.ts"), P("src/app", "**/*.ts"));
    EXPECT_EQ(split_literal_prefix("src/main.rs"), P("src", "main.rs"));
    EXPECT_EQ(split_literal_prefix("main.rs"), P("", "main.rs"));
    EXPECT_EQ(split_literal_prefix("*.rs"), P("", "*.rs"));
    EXPECT_EQ(split_literal_prefix("{a,b}/c"), P("", "{a,b}/c"));
    EXPECT_EQ(split_literal_prefix("src/"), P("src", "**"));
    EXPECT_EQ(split_literal_prefix("/workspace/src/*.rs"), P("/workspace/src", "*.rs"));
    EXPECT_EQ(split_literal_prefix("/*.rs"), P("/", "*.rs"));
    EXPECT_EQ(split_literal_prefix("a/b\\*c/d"), P("a", "b\\*c/d"));
}

// Many stars and many "**" against a long path that almost matches: memoised and backtracking on
// one star only, it is quick.
TEST(Glob, NoPatternIsSlow) {
    std::string path, name(5000, 'a');
    for (int i = 0; i < 200; ++i)
        path += "a/";
    path += "b";
    auto start = std::chrono::steady_clock::now();
    auto deep = Glob::compile("**/a/**/a/**/a/**/a/**/a/**/a/**/c");
    ASSERT_TRUE(deep);
    EXPECT_FALSE(deep->matches(path));
    EXPECT_FALSE(match_name("*a*a*a*a*a*a*a*a*a*a*b", name));
    auto took = std::chrono::steady_clock::now() - start;
    EXPECT_LT(took, std::chrono::milliseconds(500));
}

} // namespace
} // namespace sion::code
