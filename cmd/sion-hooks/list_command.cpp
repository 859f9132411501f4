// SPDX-License-Identifier: MIT
// sion-hooks list and remove: the hooks by their numbers, and taking one out.
#include "cmd/sion-hooks/commands.hpp"
#include "hooks/describe.hpp"
#include "hooks/hooks_file.hpp"
#include "lib/cli.hpp"
#include "lib/listing.hpp"
#include "lib/log.hpp"
#include "lib/private_file.hpp"
#include "lib/text.hpp"

#include <cstdio>

namespace sion::hooks_cmd {

namespace {

using namespace sion::hooks;

// N as given to remove: 1, 2, ... in decimal, nothing else.
size_t parse_number(const std::string& text) {
    size_t n = 0;
    bool valid = !text.empty() && text.size() <= 9 && text.front() != '0';
    for (char c : text) {
        valid = valid && c >= '0' && c <= '9';
        n = n * 10 + static_cast<size_t>(c - '0');
    }
    if (!valid)
        die(usage_error("invalid hook number '" + text
                        + "': give the number list shows (1, 2, ...)"));
    return n;
}

// A hook as `list --json` prints it: what hook_line() shows, member by member.
Json hook_entry(const Hook& hook, size_t number) {
    Json entry = Json::object();
    entry.set("number", static_cast<int64_t>(number));
    entry.set("event", event_name(hook.event));
    if (is_tool_event(hook.event)) {
        Json tools = Json::array();
        for (const auto& p : hook.tools)
            tools.push(Json::string(p));
        entry.set("tools", std::move(tools));
    }
    entry.set("timeout", hook.timeout_s);
    Json command = Json::array();
    for (const auto& word : hook.command)
        command.push(Json::string(word));
    entry.set("command", std::move(command));
    return entry;
}

} // namespace

int list_command(int argc, const char* const* argv) {
    const CommandSpec spec{
        "sion-hooks list",
        "sion-hooks list [--json]",
        "List the hooks, one a line, in the order they run: the number remove takes, the event,\n"
        "a tool hook's patterns (* when it is for every tool), the timeout when it is not 30 s,\n"
        "and the command; or with --json one JSON object a line (schemas/hooks.list.json).",
        {json_lines_option()},
    };
    Args args = parse_args_or_exit(spec, argc, argv);
    check_operands(args, 0, 0);
    std::vector<Hook> hooks = or_die(load_hooks(hooks_file_or_die(false)));
    const Listing listing(args.has("json"));
    for (size_t i = 0; i < hooks.size(); ++i)
        listing.print(hook_entry(hooks[i], i + 1), hook_line(hooks[i], i + 1));
    return 0;
}

int remove_command(int argc, const char* const* argv) {
    const CommandSpec spec{
        "sion-hooks remove",
        "sion-hooks remove N",
        "Remove hook N, as list numbers them; the hooks after it move up by one.",
        {},
        false,
        {":hook"},
    };
    Args args = parse_args_or_exit(spec, argc, argv);
    check_operands(args, 1, 1, "give the hook's number: sion-hooks remove N");
    size_t number = parse_number(args.operands()[0]);
    std::string path = hooks_file_or_die(false);
    std::vector<Hook> hooks = or_die(load_hooks(path));
    if (hooks.empty())
        die(make_error(Exit::no, "no hook %zu: there are no hooks", number));
    Fd lock = or_die(lock_directory(path.substr(0, path.rfind('/'))));
    // Read again under the lock: another add or remove may have landed since.
    hooks = or_die(load_hooks(path));
    if (number > hooks.size())
        die(make_error(Exit::no, "no hook %zu: there %s %zu (sion-hooks list)", number,
                       hooks.size() == 1 ? "is" : "are", hooks.size()));
    std::string line = hook_line(hooks[number - 1], number);
    hooks.erase(hooks.begin() + static_cast<std::ptrdiff_t>(number - 1));
    or_die(save_hooks(path, hooks));
    std::printf("removed hook %s\n", line.c_str());
    return 0;
}

} // namespace sion::hooks_cmd
