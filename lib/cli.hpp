// SPDX-License-Identifier: MIT
// Command-line parsing shared by every program: GNU long options (--name value, --name=value), short
// options (-x value, -xvalue, -abc), "--" ending options, --help and --version built in.
//
// A program describes its command once (CommandSpec); the same text is printed for --help, and a test
// checks that the man page lists exactly the long options --help lists.
#pragma once

#include "lib/result.hpp"

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace sion {

// What a program knows of a kind of value ("agent" for ":agent"), for shell completions: each a
// line "value" or "value<TAB>description". `operands` are the command's operands before the word
// being completed, which may narrow it (the agents of the profile `run PROFILE AGENT` names).
using KnownValues = std::vector<std::string> (*)(std::string_view kind,
                                                 const std::vector<std::string>& operands);

struct OptionSpec {
    const char* name;            // long name without the dashes: "workspace"
    char short_name = 0;         // 0 for none
    const char* arg = nullptr;   // the argument's name for --help ("DIR"); nullptr for a flag
    const char* help = "";       // one line for --help
    // With `arg`, the argument is optional: given with '=', or as the next argument when that
    // begins with this prefix ("docker:" for `--shell docker:IMAGE`); otherwise the value is "".
    const char* optional_prefix = nullptr;
    // What its argument may be, for shell completions (sion completion): words separated by
    // spaces ("auto always never"), or a kind after a colon: ":file", ":directory", ":command",
    // or one the program knows (Program::values: ":agent", ":mcp-server"…). nullptr: no offer.
    const char* values = nullptr;
};

struct CommandSpec {
    const char* program;         // as in messages: "sion", "sion-sandbox exec"
    const char* usage;           // the lines after "usage: ", separated by '\n'
    const char* summary;         // one paragraph for --help
    std::vector<OptionSpec> options;
    // Stop at the first operand: what follows is another command's (front doors, subcommands).
    bool stop_at_operand = false;
    // What each operand may be, for shell completions, as OptionSpec::values says; the last
    // stands for the operands after it too when it ends with "..." (":file...").
    std::vector<const char*> operands = {};
};

class Args {
public:
    [[nodiscard]] bool has(std::string_view name) const;
    // The last value given for an option, if any.
    [[nodiscard]] std::optional<std::string> value(std::string_view name) const;
    // Every value given for a repeatable option, in order.
    [[nodiscard]] std::vector<std::string> values(std::string_view name) const;
    [[nodiscard]] const std::vector<std::string>& operands() const { return m_operands; }

    bool help = false;
    bool version = false;

private:
    friend Result<Args> parse_args(const CommandSpec&, int, const char* const*);
    std::vector<std::pair<std::string, std::string>> m_given;
    std::vector<std::string> m_operands;
};

// Parses argv[1..argc). Errors are usage errors (Exit::usage) with one line naming the bad
// option: "unknown option '--frob'", "option '--workspace' needs an argument",
// "option '--shell' takes no argument".
[[nodiscard]] Result<Args> parse_args(const CommandSpec& spec, int argc, const char* const* argv);

// The --help text: usage lines, summary, options.
[[nodiscard]] std::string help_text(const CommandSpec& spec);

// For mains: parses, prints --help (stdout, exit 0) or --version (stdout, exit 0) and exits, or
// reports a usage error and exits 64; otherwise returns the arguments.
[[nodiscard]] Args parse_args_or_exit(const CommandSpec& spec, int argc, const char* const* argv);

// For a program of one command, without commands of its own (sion-documents), first thing in its
// main: `PROGRAM __complete WORD... CURRENT` prints what CURRENT may become among `spec`'s options
// and their values (print_completions()) and exits 0; anything else returns at once.
void complete_or_return(const CommandSpec& spec, int argc, const char* const* argv);

// For mains, after parsing: reports a usage error and exits 64 when fewer than `least` operands
// were given (`missing`, which says what to give) or more than `most` ("unexpected operand 'x'",
// the first one too many).
void check_operands(const Args& args, size_t least, size_t most, const std::string& missing = "");

// An option's whole number: decimal digits alone (no sign, no space: strtol would take " 5" and
// "+5"), from `min` to `max`; nothing otherwise, for the caller to say what it takes.
[[nodiscard]] std::optional<int64_t> parse_number(std::string_view text, int64_t min, int64_t max);

// A usage error: "<what>" and exit 64, for checks mains make after parsing.
[[nodiscard]] Error usage_error(const std::string& what);

// For programs that keep what they are given as JSON text, which holds only UTF-8: Exit::data for
// the first of argv[1..argc) that is not well-formed UTF-8, "argument 2 is not UTF-8 text: sion
// keeps what it is given as UTF-8".
[[nodiscard]] Status check_utf8_arguments(int argc, const char* const* argv);

// A program of commands, described once (as git's table of builtins): the table gives --help's
// usage lines, the messages for a missing or unknown command and for an option given before it,
// and run_program() is the program's whole main.
struct Command {
    const char* name;
    int (*run)(int argc, const char* const* argv); // argv[0] is the command's name
    // Its usage lines, '\n' between them, each without the program's name ("run PROFILE AGENT
    // --task TEXT [options]"); nullptr for a command that is internal: neither listed nor named.
    const char* usage;
};

struct Program {
    const char* name;    // "sion-run"
    const char* summary; // one paragraph for --help
    std::vector<Command> commands;
    // What --help lists besides --help and --version: the commands' own options, for reference.
    std::vector<OptionSpec> options;
    // Refuse arguments that are not UTF-8 (check_utf8_arguments()): every program that keeps
    // what it is given as JSON text. Not sion-sandbox, whose command's arguments are bytes.
    bool utf8_arguments = true;
    // The values of the kinds the program knows; nullptr when it knows none.
    KnownValues values = nullptr;
};

// A program's main: guards the standard descriptors, names the program in messages, checks the
// arguments are UTF-8 (when the program asks), parses --help and --version, runs the command the
// first operand names with the arguments from it on, and returns its status through
// finish_stdout(). `PROGRAM __complete WORD... CURRENT`, which shells' completion scripts run,
// prints what CURRENT may become (print_completions()) instead: the commands, or through the
// command's own parse_args_or_exit(), which prints and exits before the command acts, its
// options and their values. Every command must therefore parse with parse_args_or_exit() before
// it does anything. Usage errors (64): "a command is needed: run, create or list (see --help)",
// "unknown command 'frob': give run, create or list (see --help)", "option '--task' goes after
// the command: sion-run run|create|list".
[[nodiscard]] int run_program(const Program& program, int argc, const char* const* argv);

// What shells' completion scripts read from `__complete`: a first line saying how to complete,
// "words", or "files", "directories" or "commands" for the shell to find, followed by a tab and
// what the current word keeps before them ("--workspace=") when there is that; then for words,
// one candidate a line, "candidate" or "candidate<TAB>description". `values` is as
// OptionSpec::values; `lead` goes before each candidate, which must begin with `current`;
// `known` and `operands` as for KnownValues.
void print_completions(const char* values, std::string_view current, std::string_view lead,
                       KnownValues known, const std::vector<std::string>& operands = {});

// For a command with commands of its own (`sion-run credential add|list|remove`): the one of the
// words its spec's first operand offers ({"add list remove", …}) its first operand is, or a usage
// error that exits 64, in run_program()'s words.
[[nodiscard]] std::string_view pick_command(const Args& args, const CommandSpec& spec);

} // namespace sion
