// SPDX-License-Identifier: MIT
// Option parsing shared by every program: GNU long and short options, operands, usage errors.
#include "lib/cli.hpp"

#include "lib/log.hpp"

#include <gtest/gtest.h>

#include <cstdint>
#include <string_view>

namespace sion {
namespace {

const CommandSpec k_spec{
    "prog",
    "prog [options] FILE...",
    "Does a thing.",
    {
        {"workspace", 'w', "DIR", "the workspace"},
        {"shell", 0, nullptr, "give a shell"},
        {"sandbox-read", 0, "DIR", "readable directory (repeatable)"},
        {"verbose", 'v', nullptr, "say more"},
    },
};

Result<Args> parse(std::vector<const char*> argv, const CommandSpec& spec = k_spec) {
    argv.insert(argv.begin(), "prog");
    return parse_args(spec, static_cast<int>(argv.size()), argv.data());
}

TEST(Cli, LongOptionsWithSeparateAndAttachedValues) {
    auto a = parse({"--workspace", "w1", "--workspace=w2", "--shell", "file"});
    ASSERT_TRUE(a) << a.error().message();
    EXPECT_EQ(a->value("workspace"), "w2");
    EXPECT_EQ(a->values("workspace"), (std::vector<std::string>{"w1", "w2"}));
    EXPECT_TRUE(a->has("shell"));
    EXPECT_FALSE(a->has("verbose"));
    EXPECT_EQ(a->operands(), std::vector<std::string>{"file"});
}

TEST(Cli, ShortOptionsBundledAndAttached) {
    auto a = parse({"-vwdir", "-v", "-w", "d2"});
    ASSERT_TRUE(a) << a.error().message();
    EXPECT_EQ(a->values("workspace"), (std::vector<std::string>{"dir", "d2"}));
    EXPECT_EQ(a->values("verbose").size(), 2U);
}

TEST(Cli, EmptyValueIsAValue) {
    auto a = parse({"--workspace=", "--sandbox-read", ""});
    ASSERT_TRUE(a);
    EXPECT_EQ(a->value("workspace"), "");
    EXPECT_EQ(a->value("sandbox-read"), "");
}

TEST(Cli, OptionalArgumentTakesTheNextOnlyWithItsPrefix) {
    const CommandSpec spec{"prog", "prog", "", {{"shell", 0, "docker:IMAGE", "a shell", "docker:"}}};
    auto a = parse({"--shell", "docker:alpine@sha256:ab", "coder"}, spec);
    ASSERT_TRUE(a) << a.error().message();
    EXPECT_EQ(a->value("shell"), "docker:alpine@sha256:ab");
    EXPECT_EQ(a->operands(), std::vector<std::string>{"coder"});
    a = parse({"--shell", "coder"}, spec);
    ASSERT_TRUE(a);
    EXPECT_EQ(a->value("shell"), "");
    EXPECT_EQ(a->operands(), std::vector<std::string>{"coder"});
    a = parse({"coder", "--shell"}, spec);
    ASSERT_TRUE(a);
    EXPECT_TRUE(a->has("shell"));
    a = parse({"--shell=bwrap"}, spec);
    ASSERT_TRUE(a);
    EXPECT_EQ(a->value("shell"), "bwrap");
    EXPECT_NE(help_text(spec).find("--shell [docker:IMAGE]"), std::string::npos);
}

TEST(Cli, OperandsAnywhereAndAfterDoubleDash) {
    auto a = parse({"one", "--shell", "two", "--", "--workspace", "-v", "-"});
    ASSERT_TRUE(a);
    EXPECT_EQ(a->operands(), (std::vector<std::string>{"one", "two", "--workspace", "-v", "-"}));
    EXPECT_FALSE(a->has("workspace"));
}

TEST(Cli, StopAtOperandLeavesTheRestToTheSubcommand) {
    CommandSpec spec = k_spec;
    spec.stop_at_operand = true;
    auto a = parse({"-v", "exec", "--workspace", "x", "--unknown"}, spec);
    ASSERT_TRUE(a) << a.error().message();
    EXPECT_TRUE(a->has("verbose"));
    EXPECT_EQ(a->operands(), (std::vector<std::string>{"exec", "--workspace", "x", "--unknown"}));
}

TEST(Cli, UsageErrorsNameTheOptionAndExit64) {
    struct Case {
        std::vector<const char*> argv;
        const char* message;
    };
    const Case cases[] = {
        {{"--frob"}, "unknown option '--frob'"},
        {{"--frob=1"}, "unknown option '--frob'"},
        {{"-x"}, "unknown option '-x'"},
        {{"-vx"}, "unknown option '-x'"},
        {{"--workspace"}, "option '--workspace' needs an argument"},
        {{"-w"}, "option '-w' needs an argument"},
        {{"--shell=yes"}, "option '--shell' takes no argument"},
        {{"--work"}, "unknown option '--work'"}, // no abbreviations: they break when options are added
    };
    for (const auto& c : cases) {
        auto a = parse(c.argv);
        ASSERT_FALSE(a) << c.message;
        EXPECT_EQ(a.error().exit(), Exit::usage);
        EXPECT_EQ(a.error().message(), c.message);
    }
}

TEST(Cli, ArgumentsThatAreNotUtf8AreBadInput) {
    const char* good[] = {"prog", "caf\xc3\xa9", "--task", ""};
    EXPECT_TRUE(check_utf8_arguments(4, good));
    const char* bad[] = {"prog", "ok", "caf\xe9", "\xff"};
    auto checked = check_utf8_arguments(4, bad);
    ASSERT_FALSE(checked);
    EXPECT_EQ(checked.error().exit(), Exit::data);
    EXPECT_EQ(checked.error().message(),
              "argument 2 is not UTF-8 text: sion keeps what it is given as UTF-8");
}

TEST(Cli, HelpAndVersionAreBuiltIn) {
    auto a = parse({"--help", "-h", "--version"});
    ASSERT_TRUE(a);
    EXPECT_TRUE(a->help);
    EXPECT_TRUE(a->version);
}

TEST(Cli, HelpTextListsEveryOption) {
    std::string help = help_text(k_spec);
    EXPECT_EQ(help.rfind("usage: prog [options] FILE...\n", 0), 0U) << help;
    for (const char* opt : {"  -w, --workspace DIR", "      --shell", "      --sandbox-read DIR",
                            "  -v, --verbose", "  -h, --help", "      --version"})
        EXPECT_NE(help.find(opt), std::string::npos) << opt << "\n" << help;
}

// Digits alone, within the bounds: no sign, no space, no fraction, nothing strtol would let by.
TEST(Cli, NumbersAreDigitsAloneWithinTheirBounds) {
    EXPECT_EQ(parse_number("5", 1, 10), 5);
    EXPECT_EQ(parse_number("010", 1, 10), 10);
    EXPECT_EQ(parse_number("86400", 1, 86400), 86400);
    EXPECT_EQ(parse_number("999999999999999999", 0, INT64_MAX), 999999999999999999);
    for (const char* bad : {"", " 5", "5 ", "+5", "-5", "5.0", "1e3", "0x5", "\t5", "5\n", "٥",
                            "9999999999999999999"})
        EXPECT_FALSE(parse_number(bad, 0, INT64_MAX)) << bad;
    EXPECT_FALSE(parse_number("0", 1, 10));
    EXPECT_FALSE(parse_number("11", 1, 10));
}

// Too few operands say what to give; too many name the first one too many; each exits 64.
TEST(Cli, OperandsAreCountedOnceParsed) {
    set_program_name("prog");
    auto a = parse({"one", "two", "three"});
    ASSERT_TRUE(a) << a.error().message();
    check_operands(*a, 3, 3, "unused"); // returns
    check_operands(*a, 0, SIZE_MAX);
    EXPECT_EXIT(check_operands(*a, 4, 5, "give four files"), testing::ExitedWithCode(64),
                "^prog: give four files\n$");
    EXPECT_EXIT(check_operands(*a, 1, 1), testing::ExitedWithCode(64),
                "^prog: unexpected operand 'two'\n$");
    EXPECT_EXIT(check_operands(*a, 0, 0), testing::ExitedWithCode(64),
                "^prog: unexpected operand 'one'\n$");
}

int g_ran = 0;
int run_a(int argc, const char* const* argv) {
    g_ran = argc * 10 + (std::string_view(argv[0]) == "alpha" ? 1 : 2);
    return 3;
}
int run_b(int, const char* const*) {
    return 4;
}

const Program k_program{
    "prog",
    "Does things.",
    {{"alpha", run_a, "alpha FILE\nalpha --all"}, {"beta", run_b, "beta"}, {"inner", run_b, nullptr}},
    {{"all", 0, nullptr, "everything"}},
};

int run(std::vector<const char*> argv) {
    argv.insert(argv.begin(), "prog");
    return run_program(k_program, static_cast<int>(argv.size()), argv.data());
}

// The table runs the command the first operand names with the arguments from it on; its --help,
// and the messages for a missing or unknown command or an option before it, come from the table,
// where an internal command is neither listed nor named but runs.
TEST(Cli, AProgramsTableRunsItsCommands) {
    EXPECT_EQ(run({"alpha", "x", "--all"}), 3);
    EXPECT_EQ(g_ran, 31);
    EXPECT_EQ(run({"beta"}), 4);
    EXPECT_EQ(run({"inner"}), 4);
    EXPECT_EXIT(run({}), testing::ExitedWithCode(64),
                "^prog: a command is needed: alpha or beta \\(see --help\\)\n$");
    EXPECT_EXIT(run({"gamma"}), testing::ExitedWithCode(64),
                "^prog: unknown command 'gamma': give alpha or beta \\(see --help\\)\n$");
    EXPECT_EXIT(run({"--all", "alpha"}), testing::ExitedWithCode(64),
                "^prog: option '--all' goes after the command: prog alpha\\|beta\n$");
    EXPECT_EXIT(run({"alpha", "\xff"}), testing::ExitedWithCode(65), "argument 2 is not UTF-8");
    testing::internal::CaptureStdout();
    EXPECT_EXIT(run({"--help"}), testing::ExitedWithCode(0), "");
    (void)testing::internal::GetCapturedStdout();
}

// A command's own commands, the words its first operand offers, in run_program()'s words.
TEST(Cli, PickCommandNamesTheChoices) {
    set_program_name("prog");
    auto a = parse({"list", "x"});
    ASSERT_TRUE(a);
    auto offering = [](const char* words) {
        return CommandSpec{"prog", "prog", "", {}, false, {words, ":file"}};
    };
    EXPECT_EQ(pick_command(*a, offering("add list remove")), "list");
    EXPECT_EXIT((void)pick_command(*a, offering("add remove")), testing::ExitedWithCode(64),
                "^prog: unknown command 'list': give add or remove \\(see --help\\)\n$");
    auto none = parse({});
    ASSERT_TRUE(none);
    EXPECT_EXIT((void)pick_command(*none, offering("add")), testing::ExitedWithCode(64),
                "^prog: a command is needed: add \\(see --help\\)\n$");
}

} // namespace
} // namespace sion
