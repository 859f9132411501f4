// SPDX-License-Identifier: MIT
// GNU-style option parsing without getopt's global state, so subcommands can parse again.
#include "lib/cli.hpp"

#include "lib/log.hpp"
#include "lib/utf8.hpp"
#include "lib/version.hpp"

#include <algorithm>
#include <cstdio>
#include <cstdlib>

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

} // namespace

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

} // namespace

int run_program(const Program& program, int argc, const char* const* argv) {
    guard_standard_fds();
    set_program_name(program.name);
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

std::string_view pick_command(const Args& args, const std::vector<const char*>& names) {
    if (args.operands().empty())
        refuse_command(names, nullptr);
    for (const char* name : names)
        if (args.operands()[0] == name)
            return name;
    refuse_command(names, &args.operands()[0]);
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
