// SPDX-License-Identifier: MIT
// sion-run credential add|list|remove: the sealed credentials (lib/secrets.hpp) that providers,
// tools and servers look their variables up in when the environment does not set them; and
// sion-run setup, which asks for the common ones in turn.
#include "cmd/sion-run/commands.hpp"
#include "lib/home.hpp"
#include "lib/listing.hpp"
#include "lib/log.hpp"
#include "lib/secret_bytes.hpp"
#include "lib/secrets.hpp"
#include "lib/text.hpp"

#include <termios.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <cstdio>
#include <cstdlib>

namespace sion::run_cmd {

namespace {

// The most read of a value: one byte more than the store keeps, so a longer one is told apart.
constexpr size_t k_max_read = (size_t{64} << 10) + 1;

// One line from fd 0, without its end; "" at once at the end of input.
Result<std::string> read_line() {
    std::string line;
    char c = 0;
    while (line.size() <= k_max_read) {
        ssize_t n = ::read(STDIN_FILENO, &c, 1);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0)
            return sys_error(Exit::io, errno, "cannot read the value");
        if (n == 0 || c == '\n')
            break;
        line += c;
    }
    if (!line.empty() && line.back() == '\r')
        line.pop_back();
    return line;
}

// The value typed on the terminal, not shown as it is typed. Echo goes off before the prompt is
// shown, so nothing typed after it can be echoed, and nothing typed is thrown away.
Result<std::string> read_hidden(const std::string& prompt) {
    termios before{};
    bool hidden = ::tcgetattr(STDIN_FILENO, &before) == 0;
    if (hidden) {
        termios quiet = before;
        quiet.c_lflag &= ~static_cast<tcflag_t>(ECHO);
        quiet.c_lflag |= ECHONL;
        hidden = ::tcsetattr(STDIN_FILENO, TCSANOW, &quiet) == 0;
    }
    std::fprintf(stderr, "%s: ", prompt.c_str());
    std::fflush(stderr);
    auto line = read_line();
    if (hidden)
        (void)::tcsetattr(STDIN_FILENO, TCSANOW, &before);
    return line;
}

std::string check_name(const std::string& name) {
    if (!secrets::valid_name(name))
        die(usage_error("invalid credential name '" + name
                        + "': use uppercase letters, digits and '_', as a variable's name"));
    return name;
}

bool set_in_environment(const std::string& name) {
    const char* env = std::getenv(name.c_str());
    return env != nullptr && *env != '\0';
}

// Seals `value` for `name`, and wipes it.
void keep(const std::string& name, std::string& value, const secrets::Store& store) {
    if (!secrets::valid_value(value)) {
        wipe(value);
        die(make_error(Exit::data, "the value for '%s' is not one line of text of at most 64 KiB",
                       name.c_str()));
    }
    Status kept = store.set(name, value);
    wipe(value);
    or_die(kept);
    if (set_in_environment(name))
        log_error("note: %s is set in the environment too, and its value is the one used",
                  name.c_str());
}

int add(const std::string& name, const secrets::Store& store) {
    std::string value = or_die(::isatty(STDIN_FILENO) ? read_hidden(name) : read_line());
    if (value.empty())
        die(make_error(Exit::data, "no value given for '%s'", name.c_str()));
    keep(name, value, store);
    return 0;
}

// What setup asks for: the keys of the providers most used, and whom each is for.
struct Common {
    const char* name;
    const char* providers;
};
constexpr std::array<Common, 4> k_common{{
    {"ANTHROPIC_API_KEY", "anthropic:"},
    {"OPENAI_API_KEY", "openai: and openai-responses:"},
    {"GEMINI_API_KEY", "gemini:"},
    {"OPENROUTER_API_KEY", "openrouter:"},
}};

} // namespace

int setup_command(int argc, const char* const* argv) {
    const CommandSpec spec{
        "sion-run setup",
        "sion-run setup",
        "Ask for the keys of the common model providers in turn (ANTHROPIC_API_KEY,\n"
        "OPENAI_API_KEY, GEMINI_API_KEY, OPENROUTER_API_KEY) and keep each one given sealed on\n"
        "this machine, as credential add does. An empty answer leaves a key as it is. At a\n"
        "terminal the keys are not shown as they are typed; otherwise one line of standard\n"
        "input answers each.",
        {},
    };
    Args args = parse_args_or_exit(spec, argc, argv);
    check_operands(args, 0, 0);
    std::string home = or_die(prepare_home());
    secrets::Store store = or_die(secrets::Store::open(home, true));
    std::vector<std::string> kept_before = or_die(store.names());
    bool terminal = ::isatty(STDIN_FILENO) == 1;
    std::fprintf(stderr, "The keys of the model providers, kept sealed on this machine. Press "
                         "Enter to leave one as it is.\n");
    for (const Common& c : k_common) {
        std::string name = c.name;
        bool kept = std::find(kept_before.begin(), kept_before.end(), name) != kept_before.end();
        std::string prompt = format("%s, for %s (%s)", c.name, c.providers,
                                    set_in_environment(name) ? "set in the environment, which wins"
                                    : kept                   ? "kept"
                                                             : "not kept");
        std::string value;
        if (terminal) {
            value = or_die(read_hidden(prompt));
        } else {
            std::fprintf(stderr, "%s: ", prompt.c_str());
            std::fflush(stderr);
            value = or_die(read_line());
            std::fputc('\n', stderr);
        }
        if (value.empty())
            continue;
        keep(name, value, store);
        std::printf("kept %s\n", c.name);
    }
    return 0;
}

int credential_command(int argc, const char* const* argv) {
    const CommandSpec spec{
        "sion-run credential",
        "sion-run credential add NAME\n"
        "sion-run credential list [--json]\n"
        "sion-run credential remove NAME",
        "Keep a credential sealed on this machine, for the variable NAME: add reads its value\n"
        "from the terminal without showing it (or one line of standard input), list prints the\n"
        "names kept, never their values (with --json one JSON object a line,\n"
        "schemas/run.credential-list.json), and remove forgets one. A variable set in the\n"
        "environment wins over the value kept.",
        {json_lines_option()},
        false,
        {"add list remove", ":credential"},
    };
    Args args = parse_args_or_exit(spec, argc, argv);
    const auto& ops = args.operands();
    std::string what(pick_command(args, spec));
    if (args.has("json") && what != "list")
        die(usage_error("--json goes with list: sion-run credential list --json"));
    size_t want = what == "list" ? 1 : 2;
    check_operands(args, want, want,
                   "give the credential's name: sion-run credential " + what + " NAME");
    std::string home = or_die(prepare_home());
    if (what == "list") {
        secrets::Store store = or_die(secrets::Store::open(home, false));
        const Listing listing(args.has("json"));
        for (const auto& name : or_die(store.names())) {
            Json entry = Json::object();
            entry.set("name", name);
            entry.set("in_environment", set_in_environment(name));
            listing.print(entry, name);
        }
        return 0;
    }
    std::string name = check_name(ops[1]);
    secrets::Store store = or_die(secrets::Store::open(home, what == "add"));
    if (what == "add")
        return add(name, store);
    if (!or_die(store.remove(name)))
        die(make_error(Exit::no_input, "no credential '%s'", name.c_str()));
    return 0;
}

} // namespace sion::run_cmd
