// SPDX-License-Identifier: MIT
// mcpd/last_words: what a failing server last wrote to its standard error, bounded in lines and
// bytes, escaped for a terminal; the variables its words name that it was not given, never the
// machine's or sion's own.
#include "mcpd/last_words.hpp"

#include <gtest/gtest.h>

#include <cstdlib>
#include <optional>
#include <string>
#include <utility>
#include <vector>

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
    ::setenv("MCPD_TEST_KEY_A", "secret", 1);
    ::setenv("MCPD_TEST_KEY_B", "secret", 1);
    ::unsetenv("MCPD_TEST_NOT_SET");
    std::vector<std::string> lines = {
        "Error: MCPD_TEST_KEY_A is required (or MCPD_TEST_NOT_SET), mcpd_test_key_b is not",
        "set $MCPD_TEST_KEY_B, or MCPD_TEST_KEY_A again; HOME and ABC_def",
    };
    EXPECT_EQ(ungiven_variables(lines, {"HOME"}),
              (std::vector<std::string>{"MCPD_TEST_KEY_A", "MCPD_TEST_KEY_B"}));
    EXPECT_EQ(ungiven_variables(lines, {"HOME", "MCPD_TEST_KEY_A"}),
              (std::vector<std::string>{"MCPD_TEST_KEY_B"}));
    ::unsetenv("MCPD_TEST_KEY_A");
    ::unsetenv("MCPD_TEST_KEY_B");
}

// Set for a test, and as it was after.
class Variables {
public:
    explicit Variables(const std::vector<std::string>& names) {
        for (const std::string& name : names) {
            const char* was = std::getenv(name.c_str()); // NOLINT(concurrency-mt-unsafe)
            m_was.emplace_back(name, was ? std::optional<std::string>(was) : std::nullopt);
            ::setenv(name.c_str(), "set", 1);
        }
    }

    Variables(const Variables&) = delete;
    Variables& operator=(const Variables&) = delete;

    ~Variables() {
        for (const auto& [name, was] : m_was)
            if (was)
                ::setenv(name.c_str(), was->c_str(), 1);
            else
                ::unsetenv(name.c_str());
    }

private:
    std::vector<std::pair<std::string, std::optional<std::string>>> m_was;
};

TEST(McpdLastWords, NeverNamesTheMachinesOrSionsVariables) {
    const std::vector<std::string> standard = {
        "PATH",           "HOME",          "LANG",           "TMPDIR",
        "USER",           "LOGNAME",       "SHELL",          "PWD",
        "OLDPWD",         "TERM",          "SHLVL",          "MAIL",
        "HOSTNAME",       "LC_ALL",        "LC_MCPD_TEST",   "XDG_RUNTIME_DIR",
        "XDG_MCPD_TEST",  "SSH_AUTH_SOCK", "SSH_MCPD_TEST",  "SUDO_USER",
        "SUDO_MCPD_TEST", "TERM_PROGRAM",  "TERM_MCPD_TEST", "SION_HOME",
        "SION_MCPD_TEST"};
    Variables set(standard);
    std::vector<std::string> words;
    for (const std::string& name : standard)
        words.push_back("Error: " + name + " is wrong, or $" + name + " is not");
    EXPECT_EQ(ungiven_variables(words, {}), std::vector<std::string>{});
    // The plausible ones among them are named still, and their families need the '_': a
    // TERMINAL_KEY or a SIONX_KEY is not the machine's.
    Variables plausible({"MCPD_TEST_KEY", "TERMINAL_KEY", "SIONX_KEY", "LCX_KEY", "HOMEDIR_KEY"});
    words.emplace_back("need MCPD_TEST_KEY, TERMINAL_KEY, SIONX_KEY");
    EXPECT_EQ(ungiven_variables(words, {}),
              (std::vector<std::string>{"MCPD_TEST_KEY", "TERMINAL_KEY", "SIONX_KEY"}));
    EXPECT_EQ(ungiven_variables({"LCX_KEY or HOMEDIR_KEY"}, {}),
              (std::vector<std::string>{"LCX_KEY", "HOMEDIR_KEY"}));
}

} // namespace
} // namespace sion::mcpd
