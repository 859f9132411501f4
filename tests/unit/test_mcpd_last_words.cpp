// SPDX-License-Identifier: MIT
// mcpd/last_words: what a failing server last wrote to its standard error, bounded in lines and
// bytes, escaped for a terminal; the variables its words name that it was not given.
#include "mcpd/last_words.hpp"

#include <gtest/gtest.h>

#include <cstdlib>
#include <string>

namespace sion::mcpd {
namespace {

TEST(McpdLastWords, KeepsTheLastTenLinesEscapedWithoutBlankOnes) {
    LastWords w;
    for (int i = 1; i <= 12; ++i)
        w.add("line " + std::to_string(i) + "\n");
    w.add("\n   \n\x1b[31mred\x1b[0m\tand a bell \x07\r\n");
    std::vector<std::string> lines = w.lines();
    ASSERT_EQ(lines.size(), 10U);
    EXPECT_EQ(lines.front(), "line 4");
    EXPECT_EQ(lines.back(), "\\e[31mred\\e[0m and a bell \\x07");
}

TEST(McpdLastWords, KeepsTheLast2KiBAndMarksALineCut) {
    LastWords w;
    w.add(std::string(3000, 'a') + "\n" + "end");
    std::vector<std::string> lines = w.lines();
    ASSERT_EQ(lines.size(), 2U);
    EXPECT_EQ(lines[0], "\u2026" + std::string(k_words_bytes - 4, 'a'));
    EXPECT_EQ(lines[1], "end");
    LastWords cut_in_a_character;
    cut_in_a_character.add("\u00e9" + std::string(k_words_bytes - 1, 'b'));
    EXPECT_EQ(cut_in_a_character.lines().front(), "\u2026" + std::string(k_words_bytes - 1, 'b'));
    EXPECT_TRUE(LastWords().lines().empty());
}

TEST(McpdLastWords, ShownLineIsEscapedAndCutInCharacters) {
    EXPECT_EQ(shown_line("caf\u00e9 \x1b[1m", 80), "caf\u00e9 \\e[1m");
    EXPECT_EQ(shown_line("\u00e9\u00e9\u00e9", 2), "\u00e9\u00e9\u2026");
}

TEST(McpdLastWords, NamesVariablesSetHereAndNotGiven) {
    ::setenv("SION_TEST_KEY_A", "secret", 1);
    ::setenv("SION_TEST_KEY_B", "secret", 1);
    ::unsetenv("SION_TEST_NOT_SET");
    std::vector<std::string> lines = {
        "Error: SION_TEST_KEY_A is required (or SION_TEST_NOT_SET), sion_test_key_b is not",
        "set $SION_TEST_KEY_B, or SION_TEST_KEY_A again; HOME and ABC_def",
    };
    EXPECT_EQ(ungiven_variables(lines, {"HOME"}),
              (std::vector<std::string>{"SION_TEST_KEY_A", "SION_TEST_KEY_B"}));
    EXPECT_EQ(ungiven_variables(lines, {"HOME", "SION_TEST_KEY_A"}),
              (std::vector<std::string>{"SION_TEST_KEY_B"}));
    ::unsetenv("SION_TEST_KEY_A");
    ::unsetenv("SION_TEST_KEY_B");
}

} // namespace
} // namespace sion::mcpd
