// SPDX-License-Identifier: MIT
// Tests for session/code/search: grep -n's lines with context and "--", matches within a line only,
// long and non-UTF-8 lines, the caps and what the report says of them, linear time on patterns that
// backtracking engines take exponential time on, and searching a tree beneath a Confined root.
#include "session/code/search.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

namespace sion::code {
namespace {

#define ASSERT_OK(r) ASSERT_TRUE(r) << (r).error().message()

namespace fs = std::filesystem;

SearchOptions no_context() {
    SearchOptions o;
    o.context = 0;
    return o;
}

std::string grep(std::string_view pattern, std::string_view text, SearchOptions options = {}) {
    auto s = Searcher::compile(pattern, options);
    EXPECT_TRUE(s) << s.error().message();
    if (!s)
        return {};
    SearchReport r;
    s->search_text("f.txt", text, r);
    return s->render(r);
}

const char* k_ten = "one\ntwo\nthree\nfour\nfive\nsix\nseven\neight\nnine\nten\n";

TEST(Search, LinesAndContextAsGrepShowsThem) {
    EXPECT_EQ(grep("four", k_ten),
              "f.txt-2-two\nf.txt-3-three\nf.txt:4:four\nf.txt-5-five\nf.txt-6-six");
    EXPECT_EQ(grep("^t", k_ten), "f.txt-1-one\n"
                                 "f.txt:2:two\n"
                                 "f.txt:3:three\n"
                                 "f.txt-4-four\n"
                                 "f.txt-5-five\n"
                                 "--\n"
                                 "f.txt-8-eight\n"
                                 "f.txt-9-nine\n"
                                 "f.txt:10:ten");
    // Groups that touch are one group.
    EXPECT_EQ(grep("two|six", k_ten),
              "f.txt-1-one\nf.txt:2:two\nf.txt-3-three\nf.txt-4-four\nf.txt-5-five\nf.txt:6:six\n"
              "f.txt-7-seven\nf.txt-8-eight");
    SearchOptions none;
    none.context = 0;
    EXPECT_EQ(grep("e$", k_ten, none), "f.txt:1:one\nf.txt:3:three\nf.txt:5:five\nf.txt:9:nine");
    EXPECT_EQ(grep("zzz", k_ten), "no line matches 'zzz'");
}

TEST(Search, WithinALineNeverAcrossOne) {
    SearchOptions none;
    none.context = 0;
    EXPECT_EQ(grep("a\\sb", "a\nb\na b\n", none), "f.txt:3:a b");
    EXPECT_EQ(grep("a[^x]*b", "a\nb\n", none), "no line matches 'a[^x]*b'");
    EXPECT_EQ(grep("(?s)a.b", "a\nb\naxb", none), "f.txt:3:axb");
    EXPECT_EQ(grep("^b$", "a\nb\nbb\n", none), "f.txt:2:b");
    // Every line matches an empty match, and no line is made up after the last newline.
    EXPECT_EQ(grep("x*", "a\n\nb\n", none), "f.txt:1:a\nf.txt:2:\nf.txt:3:b");
    EXPECT_EQ(grep("^", "", none), "no line matches '^'");
    EXPECT_EQ(grep("b", "a\nb", none), "f.txt:2:b") << "a last line without a newline";
    EXPECT_EQ(grep("a", "a\r\nb\r\n", none), "f.txt:1:a") << "no \\r shown";
}

// Plain text is found with a Needle, anything else with RE2: both find the same lines.
TEST(Search, LiteralsAndRegularExpressionsAgree) {
    SearchOptions o;
    o.context = 0;
    std::string text = "a.b\naxb\nfoo bar\nfoo  bar\n€uro\n";
    EXPECT_EQ(grep("foo bar", text, o), "f.txt:3:foo bar");
    EXPECT_EQ(grep("foo\\s+bar", text, o), "f.txt:3:foo bar\nf.txt:4:foo  bar");
    EXPECT_EQ(grep("a.b", text, o), "f.txt:1:a.b\nf.txt:2:axb");
    EXPECT_EQ(grep("a\\.b", text, o), "f.txt:1:a.b");
    EXPECT_EQ(grep("€u", text, o), "f.txt:5:€uro");
    EXPECT_EQ(grep("b\nfoo", text, o), "no line matches 'b\nfoo'") << "no match across lines";
}

TEST(Search, IgnoreCase) {
    SearchOptions o;
    o.context = 0;
    EXPECT_EQ(grep("HELLO", "Hello\nhello\n", o), "no line matches 'HELLO'");
    o.ignore_case = true;
    EXPECT_EQ(grep("HELLO", "Hello\nhello\n", o), "f.txt:1:Hello\nf.txt:2:hello");
    EXPECT_EQ(grep("ÉTÉ", "été\n", o), "f.txt:1:été");
}

// Plain text and the literal a regular expression's matches hold are found without RE2 (or before
// it, and RE2 looks at their lines alone); "(?:...)" around a pattern leaves it to RE2 alone.
// Both report the same, on texts made to trip a fast path up.
TEST(Search, FastPathsAgreeWithRe2Alone) {
    std::string long_line = std::string(600, 'x') + " fn  ab_handler( " + std::string(600, 'y');
    const std::vector<std::string> texts = {
        "needle at the start\nand needle at the end: needle",
        "no newline at the end needle",
        "needle\n",
        "a\r\nneedle\r\nb\r\n\r\nNEEDLE\r\n",
        "caf\xe9 needle \xff\n\xc3\n\xc3needle\xa9\n",
        "TODO todo ToDo tOdO\nt0do\n",
        "kelvin KELVIN \xe2\x84\xaa"
        "elvin\nsun SUN \xc5\xbfun\n",
        "fn  some_handler(x)\nneedle_handler(&mut s);\n  fn\tb_handler(\nfn x_handler\n",
        long_line + "\n" + long_line,
        "\n\n\nneedle\n\n",
        "",
    };
    const std::vector<std::string> patterns = {
        "needle",      "NEEDLE",      "needle$", "^needle",      "todo",
        "kelvin",      "sun",         "KELVIN",  "\xe2\x84\xaa", "fn\\s+[a-z]+_handler\\(",
        "_handler\\(", "needle|todo", "a|b",     "ne+dle",       "x*",
        "needle\\b",   "\\bneedle",   "edl",     "e\\r",         "\xc3\xa9",
        "caf.",
    };
    for (bool fold : {false, true}) {
        for (size_t context : {size_t{0}, size_t{2}}) {
            SearchOptions o;
            o.ignore_case = fold;
            o.context = context;
            o.max_line = 100;
            for (const std::string& p : patterns) {
                auto fast = Searcher::compile(p, o);
                auto slow = Searcher::compile("(?:" + p + ")", o);
                ASSERT_OK(fast);
                ASSERT_OK(slow);
                for (const std::string& text : texts) {
                    SearchReport a, b;
                    fast->search_text("f", text, a);
                    slow->search_text("f", text, b);
                    EXPECT_EQ(a.text, b.text) << p << " fold " << fold << " in '" << text << "'";
                    EXPECT_EQ(a.matched_lines, b.matched_lines) << p << " in '" << text << "'";
                    EXPECT_EQ(a.shown_lines, b.shown_lines) << p << " in '" << text << "'";
                }
            }
        }
    }
}

TEST(Search, LongLinesAreCutAroundTheMatch) {
    SearchOptions o;
    o.context = 0;
    o.max_line = 50;
    std::string line = std::string(1000, 'x') + "NEEDLE" + std::string(1000, 'y');
    std::string got = grep("NEEDLE", line, o);
    EXPECT_EQ(got,
              "f.txt:1:[… 990 characters cut] xxxxxxxxxxNEEDLEyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyy"
              " [… 966 more characters cut]");
    std::string start = "NEEDLE" + std::string(100, 'z');
    EXPECT_EQ(grep("NEEDLE", start, o),
              "f.txt:1:NEEDLE" + std::string(44, 'z') + " [… 56 more characters cut]");
    // A cut never splits a UTF-8 character.
    std::string wide;
    for (int i = 0; i < 100; ++i)
        wide += "é";
    std::string cut = grep("é", wide, o);
    EXPECT_EQ(cut, "f.txt:1:" + wide.substr(0, 50) + " [… 150 more characters cut]");
}

TEST(Search, TextThatIsNotUtf8IsShownWithReplacements) {
    SearchOptions o;
    o.context = 0;
    EXPECT_EQ(grep("caf", "caf\xe9 \xff!\n", o), "f.txt:1:caf\xEF\xBF\xBD \xEF\xBF\xBD!");
    std::string out;
    append_utf8(out, "ok \xc3\xa9 \xc3");
    EXPECT_EQ(out, "ok é \xEF\xBF\xBD");
}

TEST(Search, CapsStopShowingButKeepCounting) {
    std::string text;
    for (int i = 1; i <= 1000; ++i)
        text += "match " + std::to_string(i) + "\n";
    SearchOptions o;
    o.context = 0;
    o.max_lines = 3;
    auto s = Searcher::compile("match", o);
    ASSERT_OK(s);
    SearchReport r;
    s->search_text("a.txt", text, r);
    s->search_text("b.txt", text, r);
    EXPECT_EQ(r.matched_lines, 2000U);
    EXPECT_EQ(r.shown_lines, 3U);
    EXPECT_EQ(r.matched_files, 2U);
    EXPECT_EQ(r.shown_files, 1U);
    EXPECT_TRUE(r.full);
    EXPECT_EQ(s->render(r), "a.txt:1:match 1\na.txt:2:match 2\na.txt:3:match 3\n"
                            "[3 of 2000 matching lines shown, from 1 of 2 files: narrow the "
                            "pattern, the path or the glob]");

    o.max_lines = 1000000;
    o.max_bytes = 100;
    auto b = Searcher::compile("match", o);
    ASSERT_OK(b);
    SearchReport rb;
    b->search_text("a.txt", text, rb);
    EXPECT_LE(rb.text.size(), 100U);
    EXPECT_EQ(rb.shown_lines, 6U); // "a.txt:N:match N\n" is 16 or 17 bytes
    EXPECT_EQ(rb.matched_lines, 1000U);
}

TEST(Search, PatternsRefused) {
    auto bad = Searcher::compile("(", {});
    ASSERT_FALSE(bad);
    EXPECT_EQ(bad.error().exit(), Exit::data);
    EXPECT_EQ(bad.error().message(), "invalid regular expression '(': missing ): (");
    auto back = Searcher::compile("(a)\\1", {});
    ASSERT_FALSE(back) << "back references are not RE2's";
    EXPECT_EQ(back.error().message(),
              "invalid regular expression '(a)\\1': invalid escape sequence: \\1");
    auto empty = Searcher::compile("", {});
    ASSERT_FALSE(empty);
    EXPECT_EQ(empty.error().message(), "the pattern is empty");
}

// Patterns that take a backtracking engine exponential time take RE2 time linear in the text.
TEST(Search, LinearTimeOnPathologicalPatterns) {
    std::string line = std::string(100000, 'a') + "b\n";
    std::string text;
    for (int i = 0; i < 10; ++i)
        text += line;
    auto start = std::chrono::steady_clock::now();
    for (const char* p : {"(a+)+$", "(a|a)*c", "(a*)*c", "(x+x+)+y", "^(a|aa)+$"}) {
        auto s = Searcher::compile(p, {});
        ASSERT_OK(s);
        SearchReport r;
        s->search_text("f", text, r);
        EXPECT_EQ(r.matched_lines, 0U) << p;
    }
    auto took = std::chrono::steady_clock::now() - start;
    EXPECT_LT(took, std::chrono::seconds(2)) << "5 patterns over 1 MB";
}

class SearchTree : public testing::Test {
protected:
    void SetUp() override {
        const char* tmp = std::getenv("TMPDIR");
        std::string dir =
            std::string(tmp != nullptr && *tmp != '\0' ? tmp : "/tmp") + "/sion-search.XXXXXX";
        ASSERT_NE(::mkdtemp(dir.data()), nullptr);
        m_base = fs::canonical(dir).string();
        m_ws = m_base + "/ws";
        fs::create_directories(m_ws + "/src/deep");
        fs::create_directories(m_ws + "/node_modules/dep");
        fs::create_directories(m_ws + "/.git");
        fs::create_directories(m_base + "/out");
        put("src/a.rs", "fn main() {\n    needle();\n}\n");
        put("src/deep/b.rs", "// needle in deep\n");
        put("src/c.py", "needle = 1\n");
        put("README.md", "no match here\n");
        put("node_modules/dep/index.js", "needle\n");
        put(".git/config", "needle\n");
        put("data.bin", std::string("needle\0\x01\x02", 9));
        std::ofstream(m_base + "/out/secret.rs") << "needle outside\n";
        fs::create_symlink("../../out", m_ws + "/src/out");
        fs::create_symlink("../../out/secret.rs", m_ws + "/src/secret.rs");
        fs::create_symlink("a.rs", m_ws + "/src/alias.rs");
        auto c = Confined::open(m_ws);
        ASSERT_OK(c);
        m_c = std::make_unique<Confined>(std::move(*c));
    }

    void TearDown() override { fs::remove_all(m_base); }

    void put(const std::string& rel, const std::string& text) {
        std::ofstream(m_ws + "/" + rel, std::ios::binary) << text;
    }

    std::string search(std::string_view pattern, std::string_view path, const char* glob = nullptr,
                       SearchOptions o = no_context()) {
        auto s = Searcher::compile(pattern, o);
        EXPECT_TRUE(s);
        std::optional<Glob> g;
        if (glob != nullptr)
            g.emplace(std::move(*Glob::compile(glob)));
        SearchReport r;
        Status ok = s->search(*m_c, path, g ? &*g : nullptr, r);
        if (!ok)
            return "error: " + ok.error().message();
        return s->render(r);
    }

    std::string m_base, m_ws;
    std::unique_ptr<Confined> m_c;
};

TEST_F(SearchTree, SearchesRegularFilesPassingOverWhatTheWalkDoes) {
    // No link followed (alias.rs, secret.rs, out/), no .git, no node_modules, data.bin counted.
    EXPECT_EQ(search("needle", "."), "src/a.rs:2:    needle();\n"
                                     "src/c.py:1:needle = 1\n"
                                     "src/deep/b.rs:1:// needle in deep\n"
                                     "[passed over: 1 binary file]");
    EXPECT_EQ(search("needle", ".", "*.rs"),
              "src/a.rs:2:    needle();\nsrc/deep/b.rs:1:// needle in deep");
    EXPECT_EQ(search("needle", "src", "./*.rs"), "src/a.rs:2:    needle();");
    EXPECT_EQ(search("needle", "/workspace/src/deep"), "src/deep/b.rs:1:// needle in deep");
    EXPECT_EQ(search("needle", "src/c.py", "*.rs"), "src/c.py:1:needle = 1")
        << "a file, any glob aside";
    EXPECT_EQ(search("needle", "src/alias.rs"), "src/alias.rs:2:    needle();")
        << "a link named as the path, inside, is followed";
    EXPECT_EQ(search("needle", "node_modules"), "node_modules/dep/index.js:1:needle")
        << "asked for, a passed-over directory is searched";
    EXPECT_EQ(search("needle", "data.bin"),
              "no line matches 'needle': no file was searched\n[passed over: 1 binary file]");
    EXPECT_EQ(search("needle", ".", "*.go"), "no line matches 'needle': no file was searched");
}

TEST_F(SearchTree, ContextAndSeparatorsAcrossFiles) {
    EXPECT_EQ(search("needle|main", "src", "*.rs", SearchOptions{}),
              "src/a.rs:1:fn main() {\nsrc/a.rs:2:    needle();\nsrc/a.rs-3-}\n--\n"
              "src/deep/b.rs:1:// needle in deep");
}

TEST_F(SearchTree, NothingOutsideIsSearched) {
    for (const char* out :
         {"..", "../out", "src/out", "src/secret.rs", "/etc", "src/out/secret.rs"}) {
        std::string got = search("needle", out);
        EXPECT_EQ(got.rfind("error: cannot open '", 0), 0U) << out << ": " << got;
        EXPECT_NE(got.find("is outside the workspace"), std::string::npos) << got;
    }
    EXPECT_EQ(search("needle", "none"), "error: cannot open 'none': No such file or directory");
}

TEST_F(SearchTree, LargeFilesAndTheWalkLimitAreSaid) {
    SearchOptions o = no_context();
    o.max_file = 20;
    EXPECT_EQ(search("needle", "src", nullptr, o),
              "src/c.py:1:needle = 1\nsrc/deep/b.rs:1:// needle in deep\n"
              "[passed over: 1 file larger than 20 bytes]");
    SearchOptions few = no_context();
    few.max_entries = 2;
    std::string got = search("needle", ".", nullptr, few);
    EXPECT_NE(got.find("[the search stopped after 2 entries: search a smaller directory]"),
              std::string::npos)
        << got;
}

// A tree large enough to be searched on several threads reports what one thread would, in the
// same order, whether everything fits or a cap cuts it in the middle of a file.
TEST_F(SearchTree, ThreadsReportWhatOneThreadWould) {
    std::vector<std::string> paths;
    for (int i = 0; i < 400; ++i) {
        std::string dir = "many/d" + std::to_string(i / 40);
        fs::create_directories(m_ws + "/" + dir);
        std::string text;
        for (int line = 0; line < 30; ++line)
            text += (line * 7 + i) % 11 == 0 ? "hit " + std::to_string(line) + "\n" : "miss\n";
        if (i % 50 == 7)
            text += std::string("bin\0", 4);
        paths.push_back(dir + "/f" + std::to_string(i) + ".txt");
        put(paths.back(), text);
    }
    std::sort(paths.begin(), paths.end(), [](const std::string& a, const std::string& b) {
        return a < b; // the walk's order: paths sorted bytewise
    });
    for (size_t lines : {size_t{100000}, size_t{50}, size_t{3}}) {
        for (size_t bytes : {size_t{1000000}, size_t{2000}}) {
            SearchOptions o;
            o.max_lines = lines;
            o.max_bytes = bytes;
            auto s = Searcher::compile("hit", o);
            ASSERT_OK(s);
            SearchReport one; // each file in order, into one report, as one thread does
            for (const std::string& p : paths) {
                std::ifstream in(m_ws + "/" + p, std::ios::binary);
                std::string text((std::istreambuf_iterator<char>(in)),
                                 std::istreambuf_iterator<char>());
                if (text.find('\0') != std::string::npos)
                    ++one.binary;
                else
                    s->search_text(p, text, one);
            }
            SearchReport many;
            ASSERT_OK(s->search(*m_c, "many", nullptr, many));
            EXPECT_EQ(s->render(many), s->render(one)) << lines << " lines, " << bytes << " bytes";
            EXPECT_EQ(many.matched_lines, one.matched_lines);
            EXPECT_EQ(many.shown_lines, one.shown_lines);
            EXPECT_EQ(many.searched, 392U);
            EXPECT_EQ(many.binary, 8U);
        }
    }
}

} // namespace
} // namespace sion::code
