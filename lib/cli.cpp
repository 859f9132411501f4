// SPDX-License-Identifier: MIT
// GNU-style option parsing without getopt's global state, so subcommands can parse again.
#include "lib/cli.hpp"

#include "lib/log.hpp"
#include "lib/utf8.hpp"
#include "lib/version.hpp"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <optional>
#include <utility>

namespace sion {

namespace {

const OptionSpec k_help{"help", 'h', nullptr, "print this help and exit"};
const OptionSpec k_version{"version", 0, nullptr, "print the version and exit"};

const OptionSpec* find_long(const CommandSpec& spec, std::string_view name) {
    if (name == k_help.name)
        return &k_help;
    if (name == k_version.name)
        return &k_version;
    for (const auto& o : spec.options)
        if (name == o.name)
            return &o;
    return nullptr;
}

const OptionSpec* find_short(const CommandSpec& spec, char c) {
    if (c == k_help.short_name)
        return &k_help;
    for (const auto& o : spec.options)
        if (o.short_name != 0 && o.short_name == c)
            return &o;
    return nullptr;
}

// "add list remove" as its words.
std::vector<std::string_view> words_of(std::string_view text) {
    std::vector<std::string_view> out;
    while (!text.empty()) {
        size_t sp = std::min(text.find(' '), text.size());
        if (sp > 0)
            out.push_back(text.substr(0, sp));
        text.remove_prefix(std::min(sp + 1, text.size()));
    }
    return out;
}

// Set by run_program() for `PROGRAM __complete`: the words after the command's name, the current
// one last, and the program's known values. parse_args_or_exit() completes them and exits.
struct Completing {
    std::vector<std::string> words;
    KnownValues known;
};

std::optional<Completing>& completing() {
    static std::optional<Completing> c;
    return c;
}

// The options' names ("--workspace<TAB>stage the workspace") that begin with `current`.
void complete_options(const CommandSpec& spec, std::string_view current) {
    std::fputs("words\n", stdout);
    auto offer = [&](const OptionSpec& o) {
        std::string name = std::string("--") + o.name;
        if (name.starts_with(current))
            std::printf("%s\t%s\n", name.c_str(), o.help);
    };
    for (const OptionSpec& o : spec.options)
        offer(o);
    offer(k_help);
    offer(k_version);
}

// What `words` (the current one last) may go on with, for a command parsed by `spec`: the
// options' names, an option's values, or the operand's. The words before the current one are
// taken apart as parse_args() would, counting the operands.
void complete_words(const CommandSpec& spec, const Completing& c) {
    const std::vector<std::string>& w = c.words;
    std::string_view current = w.empty() ? std::string_view() : std::string_view(w.back());
    std::vector<std::string> given; // the operands before the current word
    bool ended = false;                // after "--", or past the operand a stop_at_operand stops at
    const OptionSpec* pending = nullptr; // an option whose value the current word may be
    for (size_t i = 0; i + 1 < w.size(); ++i) {
        std::string_view a = w[i];
        if (pending != nullptr) {
            const OptionSpec* o = std::exchange(pending, nullptr);
            if (o->optional_prefix == nullptr || a.starts_with(o->optional_prefix))
                continue;
        }
        if (!ended && a == "--") {
            ended = true;
        } else if (!ended && a.size() > 2 && a.starts_with("--")) {
            const OptionSpec* o = find_long(spec, a.substr(2, a.find('=') - 2));
            if (o != nullptr && o->arg != nullptr && a.find('=') == std::string_view::npos)
                pending = o;
        } else if (!ended && a.size() > 1 && a[0] == '-') {
            for (size_t j = 1; j < a.size(); ++j) {
                const OptionSpec* o = find_short(spec, a[j]);
                if (o != nullptr && o->arg != nullptr) {
                    if (j + 1 == a.size())
                        pending = o;
                    break;
                }
            }
        } else {
            given.emplace_back(a);
            ended = ended || spec.stop_at_operand;
        }
    }
    if (pending != nullptr
        && (pending->optional_prefix == nullptr || current.starts_with(pending->optional_prefix)))
        return print_completions(pending->values, current, "", c.known, given);
    if (!ended && current.starts_with("--") && current.find('=') != std::string_view::npos) {
        size_t eq = current.find('=');
        const OptionSpec* o = find_long(spec, current.substr(2, eq - 2));
        return print_completions(o != nullptr ? o->values : nullptr, current.substr(eq + 1),
                                 current.substr(0, eq + 1), c.known, given);
    }
    if (!ended && current.starts_with("-"))
        return complete_options(spec, current);
    const char* values = nullptr;
    if (given.size() < spec.operands.size())
        values = spec.operands[given.size()];
    else if (!spec.operands.empty() && std::string_view(spec.operands.back()).ends_with("..."))
        values = spec.operands.back();
    print_completions(values, current, "", c.known, given);
}

} // namespace

void print_completions(const char* values, std::string_view current, std::string_view lead,
                       KnownValues known, const std::vector<std::string>& operands) {
    std::string_view v = values != nullptr ? values : "";
    if (v.ends_with("..."))
        v.remove_suffix(3);
    std::vector<std::string> candidates;
    if (v.starts_with(":")) {
        std::string_view kind = v.substr(1);
        // The kinds the shell finds itself, and the first line that tells it so.
        constexpr std::pair<std::string_view, const char*> k_shells[] = {
            {"file", "files"}, {"directory", "directories"}, {"command", "commands"}};
        for (const auto& [shell_kind, line] : k_shells)
            if (kind == shell_kind) {
                std::printf("%s%s%.*s\n", line, lead.empty() ? "" : "\t",
                            static_cast<int>(lead.size()), lead.data());
                return;
            }
        if (known != nullptr)
            candidates = known(kind, operands);
    } else {
        for (std::string_view word : words_of(v))
            candidates.emplace_back(word);
    }
    std::fputs("words\n", stdout);
    for (const std::string& candidate : candidates) {
        // One line each: a value holding a line break could not be offered whole.
        if (!candidate.starts_with(current) || candidate.find('\n') != std::string::npos)
            continue;
        std::printf("%.*s%s\n", static_cast<int>(lead.size()), lead.data(), candidate.c_str());
    }
}

bool Args::has(std::string_view name) const {
    for (const auto& [k, v] : m_given)
        if (k == name)
            return true;
    return false;
}

std::optional<std::string> Args::value(std::string_view name) const {
    std::optional<std::string> out;
    for (const auto& [k, v] : m_given)
        if (k == name)
            out = v;
    return out;
}

std::vector<std::string> Args::values(std::string_view name) const {
    std::vector<std::string> out;
    for (const auto& [k, v] : m_given)
        if (k == name)
            out.push_back(v);
    return out;
}

std::optional<int64_t> parse_number(std::string_view text, int64_t min, int64_t max) {
    if (text.empty() || text.size() > 18 || text.find_first_not_of("0123456789") != text.npos)
        return std::nullopt;
    int64_t n = 0;
    for (char c : text)
        n = n * 10 + (c - '0');
    if (n < min || n > max)
        return std::nullopt;
    return n;
}

Error usage_error(const std::string& what) { return {Exit::usage, what}; }

Result<Args> parse_args(const CommandSpec& spec, int argc, const char* const* argv) {
    Args args;
    auto note = [&args](const OptionSpec* o, std::string v) {
        if (o == &k_help)
            args.help = true;
        else if (o == &k_version)
            args.version = true;
        else
            args.m_given.emplace_back(o->name, std::move(v));
    };
    int i = 1;
    for (; i < argc; ++i) {
        std::string_view a = argv[i];
        if (a == "--") {
            ++i;
            break;
        }
        if (a.size() > 2 && a.substr(0, 2) == "--") {
            std::string_view body = a.substr(2);
            size_t eq = body.find('=');
            std::string_view name = body.substr(0, eq);
            const OptionSpec* o = find_long(spec, name);
            if (o == nullptr)
                return usage_error("unknown option '--" + std::string(name) + "'");
            if (o->arg == nullptr) {
                if (eq != std::string_view::npos)
                    return usage_error("option '--" + std::string(name) + "' takes no argument");
                note(o, {});
            } else if (eq != std::string_view::npos) {
                note(o, std::string(body.substr(eq + 1)));
            } else if (o->optional_prefix != nullptr) {
                bool follows = i + 1 < argc && std::string_view(argv[i + 1]).rfind(o->optional_prefix, 0) == 0;
                note(o, follows ? std::string(argv[++i]) : std::string());
            } else if (i + 1 < argc) {
                note(o, argv[++i]);
            } else {
                return usage_error("option '--" + std::string(name) + "' needs an argument");
            }
            continue;
        }
        if (a.size() > 1 && a[0] == '-') {
            for (size_t j = 1; j < a.size(); ++j) {
                const OptionSpec* o = find_short(spec, a[j]);
                if (o == nullptr)
                    return usage_error("unknown option '-" + std::string(1, a[j]) + "'");
                if (o->arg == nullptr) {
                    note(o, {});
                    continue;
                }
                if (j + 1 < a.size())
                    note(o, std::string(a.substr(j + 1)));
                else if (i + 1 < argc)
                    note(o, argv[++i]);
                else
                    return usage_error("option '-" + std::string(1, a[j]) + "' needs an argument");
                break;
            }
            continue;
        }
        if (spec.stop_at_operand)
            break;
        args.m_operands.emplace_back(a);
    }
    for (; i < argc; ++i)
        args.m_operands.emplace_back(argv[i]);
    return args;
}

std::string help_text(const CommandSpec& spec) {
    std::string out;
    std::string_view usage = spec.usage;
    bool first = true;
    while (!usage.empty()) {
        size_t nl = usage.find('\n');
        std::string_view line = usage.substr(0, nl);
        out += first ? "usage: " : "       ";
        out += line;
        out += '\n';
        first = false;
        usage = nl == std::string_view::npos ? std::string_view{} : usage.substr(nl + 1);
    }
    out += '\n';
    out += spec.summary;
    out += "\n\nOptions:\n";
    std::vector<const OptionSpec*> all;
    for (const auto& o : spec.options)
        all.push_back(&o);
    all.push_back(&k_help);
    all.push_back(&k_version);
    for (const OptionSpec* o : all) {
        std::string left = o->short_name != 0 ? std::string("  -") + o->short_name + ", " : "      ";
        left += "--";
        left += o->name;
        if (o->arg != nullptr) {
            left += o->optional_prefix != nullptr ? " [" : " ";
            left += o->arg;
            if (o->optional_prefix != nullptr)
                left += ']';
        }
        if (left.size() < 28)
            left.resize(28, ' ');
        else
            left += "  ";
        out += left + o->help + "\n";
    }
    return out;
}

Args parse_args_or_exit(const CommandSpec& spec, int argc, const char* const* argv) {
    if (completing()) {
        complete_words(spec, *completing());
        std::exit(finish_stdout(0)); // NOLINT(concurrency-mt-unsafe): single-threaded at start
    }
    auto parsed = parse_args(spec, argc, argv);
    if (!parsed)
        die(parsed.error());
    if (parsed->help) {
        std::fputs(help_text(spec).c_str(), stdout);
        std::exit(finish_stdout(0)); // NOLINT(concurrency-mt-unsafe): single-threaded at start
    }
    if (parsed->version) {
        std::printf("%s %s\n", program_name(), version());
        std::exit(finish_stdout(0)); // NOLINT(concurrency-mt-unsafe): single-threaded at start
    }
    return std::move(*parsed);
}

void complete_or_return(const CommandSpec& spec, int argc, const char* const* argv) {
    if (argc < 2 || std::string_view(argv[1]) != "__complete")
        return;
    completing() = Completing{{argv + 2, argv + argc}, nullptr};
    (void)parse_args_or_exit(spec, 1, argv); // completes and exits
    std::exit(finish_stdout(0));            // NOLINT(concurrency-mt-unsafe): single-threaded at start
}

void check_operands(const Args& args, size_t least, size_t most, const std::string& missing) {
    const std::vector<std::string>& ops = args.operands();
    if (ops.size() < least)
        die(usage_error(missing));
    if (ops.size() > most)
        die(usage_error("unexpected operand '" + ops[most] + "'"));
}

namespace {

// "run, create or list", or with `separator` "|": "run|create|list".
std::string listed(const std::vector<const char*>& names, const char* separator = nullptr) {
    std::string out;
    for (size_t i = 0; i < names.size(); ++i) {
        if (i > 0)
            out += separator != nullptr ? separator : i + 1 == names.size() ? " or " : ", ";
        out += names[i];
    }
    return out;
}

std::vector<const char*> public_names(const Program& program) {
    std::vector<const char*> names;
    for (const Command& c : program.commands)
        if (c.usage != nullptr)
            names.push_back(c.name);
    return names;
}

[[noreturn]] void refuse_command(const std::vector<const char*>& names, const std::string* given) {
    if (given == nullptr)
        die(usage_error("a command is needed: " + listed(names) + " (see --help)"));
    die(usage_error("unknown command '" + *given + "': give " + listed(names) + " (see --help)"));
}

// `PROGRAM __complete WORD... CURRENT`: the commands, or what the command's parse completes.
int complete_program(const Program& program, int argc, const char* const* argv) {
    std::vector<std::string> words(argv + 2, argv + argc);
    if (words.size() <= 1) {
        std::string current = words.empty() ? "" : words[0];
        std::fputs("words\n", stdout);
        for (const char* option : {"--help", "--version"})
            if (current.starts_with("-") && std::string_view(option).starts_with(current))
                std::printf("%s\n", option);
        for (const char* name : public_names(program))
            if (!current.starts_with("-") && std::string_view(name).starts_with(current))
                std::printf("%s\n", name);
        return finish_stdout(0);
    }
    for (const Command& c : program.commands) {
        if (words[0] != c.name || c.usage == nullptr)
            continue;
        completing() = Completing{{words.begin() + 1, words.end()}, program.values};
        // The command's parse_args_or_exit() completes and exits; "--help" keeps one that would
        // not from acting.
        const char* const help[] = {c.name, "--help", nullptr};
        return finish_stdout(c.run(2, help));
    }
    std::fputs("words\n", stdout);
    return finish_stdout(0);
}

} // namespace

int run_program(const Program& program, int argc, const char* const* argv) {
    guard_standard_fds();
    set_program_name(program.name);
    if (argc >= 2 && std::string_view(argv[1]) == "__complete")
        return complete_program(program, argc, argv);
    if (program.utf8_arguments)
        if (Status utf8 = check_utf8_arguments(argc, argv); !utf8)
            die(utf8.error());
    std::string usage;
    for (const Command& c : program.commands) {
        if (c.usage == nullptr)
            continue;
        for (std::string_view lines = c.usage; !lines.empty();) {
            size_t end = std::min(lines.find('\n'), lines.size());
            usage += std::string(usage.empty() ? "" : "\n") + program.name + " "
                     + std::string(lines.substr(0, end));
            lines.remove_prefix(std::min(end + 1, lines.size()));
        }
    }
    const CommandSpec spec{program.name, usage.c_str(), program.summary, program.options, true};
    Args args = parse_args_or_exit(spec, argc, argv);
    std::vector<const char*> names = public_names(program);
    if (args.operands().empty())
        refuse_command(names, nullptr);
    int at = argc - static_cast<int>(args.operands().size());
    for (int i = 1; i < at; ++i)
        if (argv[i][0] == '-')
            die(usage_error(std::string("option '") + argv[i] + "' goes after the command: "
                            + program.name + " " + listed(names, "|")));
    for (const Command& c : program.commands)
        if (args.operands()[0] == c.name)
            return finish_stdout(c.run(argc - at, argv + at));
    refuse_command(names, &args.operands()[0]);
}

std::string_view pick_command(const Args& args, const CommandSpec& spec) {
    // Views into the spec's own text, which outlives the call.
    std::vector<std::string_view> words = words_of(spec.operands.at(0));
    for (std::string_view w : words)
        if (!args.operands().empty() && args.operands()[0] == w)
            return w;
    std::vector<std::string> copies(words.begin(), words.end());
    std::vector<const char*> names;
    for (const std::string& w : copies)
        names.push_back(w.c_str());
    refuse_command(names, args.operands().empty() ? nullptr : &args.operands()[0]);
}

Status check_utf8_arguments(int argc, const char* const* argv) {
    for (int i = 1; i < argc; ++i)
        if (invalid_utf8_at(argv[i]) != std::string_view::npos)
            return make_error(Exit::data,
                              "argument %d is not UTF-8 text: sion keeps what it is given as UTF-8",
                              i);
    return {};
}

} // namespace sion
