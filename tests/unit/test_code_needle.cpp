// SPDX-License-Identifier: MIT
// Tests for session/code/needle: a needle is found where string_view::find finds it (folded, where
// it finds it in lowered text), at any place around the sixteen-byte steps; which strings ASCII
// folding is RE2's folding for; and the literal a pattern's every match holds, or none.
#include "session/code/needle.hpp"

#include <gtest/gtest.h>

#include <random>
#include <string>

namespace sion::code {
namespace {

std::string lowered(std::string s) {
    for (char& c : s)
        if (c >= 'A' && c <= 'Z')
            c = static_cast<char>(c - 'A' + 'a');
    return s;
}

TEST(Needle, FoundWhereFindFindsIt) {
    std::mt19937 rng(7);
    const std::string alphabet = "abAB\n\xC3\xA9_(";
    auto pick = [&](size_t n) {
        std::string s;
        for (size_t i = 0; i < n; ++i)
            s += alphabet[rng() % alphabet.size()];
        return s;
    };
    for (int round = 0; round < 3000; ++round) {
        std::string text = pick(rng() % 70);
        std::string needle = pick(1 + rng() % 5);
        for (bool fold : {false, true}) {
            Needle n(needle, fold);
            std::string hay = fold ? lowered(text) : text;
            std::string want = fold ? lowered(needle) : needle;
            for (size_t from = 0; from <= text.size(); ++from)
                ASSERT_EQ(n.find(text, from), std::string_view(hay).find(want, from))
                    << "'" << text << "' '" << needle << "' from " << from << " fold " << fold;
        }
    }
}

TEST(Needle, AtTheEdgesOfTheText) {
    std::string text = "needle" + std::string(40, '.') + "needle";
    Needle n("needle", false);
    EXPECT_EQ(n.find(text, 0), 0U);
    EXPECT_EQ(n.find(text, 1), 46U);
    EXPECT_EQ(n.find(text, 47), std::string_view::npos);
    EXPECT_EQ(n.find(text, text.size()), std::string_view::npos);
    EXPECT_EQ(n.find("needl", 0), std::string_view::npos);
    Needle folded("ToDo", true);
    EXPECT_EQ(folded.find("x tODO", 0), 2U);
    EXPECT_EQ(folded.find("x t0do T@DO", 0), std::string_view::npos) << "'@' is not 'o'";
}

TEST(Needle, AsciiFoldingIsRe2sFoldingWithoutKAndS) {
    EXPECT_TRUE(ascii_fold_exact("todo"));
    EXPECT_TRUE(ascii_fold_exact("FIXME: (x)"));
    EXPECT_FALSE(ascii_fold_exact("kelvin")) << "K is U+212A KELVIN SIGN folded";
    EXPECT_FALSE(ascii_fold_exact("SUN")) << "S is U+017F LONG S folded";
    EXPECT_FALSE(ascii_fold_exact("\xC3\xA9t\xC3\xA9"));
}

TEST(Needle, RequiredLiterals) {
    struct Case {
        const char* pattern;
        const char* literal;
    };

    for (auto [pattern, literal] : std::initializer_list<Case>{
             {"needle_handler", "needle_handler"},
             {"fn\\s+[a-z]+_handler\\(", "_handler("},
             {"a|b", ""},
             {"foo|barbaz", ""},
             {"(foo|bar)bazz", "bazz"},
             {"(?:ab)cdef", "cdef"},
             {"abcd?", "abc"},
             {"abcd*", "abc"},
             {"abcd+", "abcd"},
             {"abcd{2}", "abc"},
             {"ab{0,1}cde", "cde"},
             {"abc*?de", "ab"},
             {"x*", ""},
             {"(?i)hello", ""},
             {"(?P<n>a)hello", ""},
             {"\\Qa.b\\E", ""},
             {"\\x41BCD", ""},
             {"\\101BCD", ""},
             {"\\pLabcd", ""},
             {"[abc]xyz[d-f]", "xyz"},
             {"[]xyz]abc", "abc"},
             {"[^]x]abc", "abc"},
             {"[[:alpha:]]+word", "word"},
             {"[(|)]word", "word"},
             {"a\\.b\\(c", "a.b(c"},
             {"\\bword\\b", "word"},
             {"a\\d+bcd", "bcd"},
             {"\xC3\xA9"
              "abc?",
              "ab"},
             {"ab\xC3\xA9?", "ab"},
             {"a{,2}bcd", ""},
             {"^abc$", "abc"},
             {"(a(b|c)d)efg", "efg"},
         })
        EXPECT_EQ(required_literal(pattern), literal) << pattern;
}

} // namespace
} // namespace sion::code
