// SPDX-License-Identifier: MIT
// sion-hooks add: one more hook at the end of the hooks file.
#include "cmd/sion-hooks/commands.hpp"
#include "hooks/describe.hpp"
#include "hooks/fire.hpp"
#include "hooks/hooks_file.hpp"
#include "hooks/pattern.hpp"
#include "lib/child.hpp"
#include "lib/cli.hpp"
#include "lib/log.hpp"
#include "lib/private_file.hpp"
#include "lib/text.hpp"

#include <unistd.h>

#include <cctype>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>

namespace sion::hooks_cmd {

namespace {

using namespace sion::hooks;

CommandSpec add_spec() {
    return {
        "sion-hooks add",
        "sion-hooks add --event EVENT [--tool PATTERN]... [--timeout S] [--] COMMAND [ARGS...]",
        "Add a hook: COMMAND runs at each EVENT (before-tool, after-tool, run-start or run-end),\n"
        "after the hooks already there. --tool says which tools a tool hook is for (* for any\n"
        "characters; without it, every tool). COMMAND is run as it is, without a shell; a\n"
        "relative path is made absolute here, and a bare name is looked up on PATH when the\n"
        "hook runs.",
        {
            {"event", 0, "EVENT", "before-tool, after-tool, run-start or run-end", nullptr,
             "before-tool after-tool run-start run-end"},
            {"tool", 0, "PATTERN", "a tool hook's tools, * for any characters (repeatable)"},
            {"timeout", 0, "S", "seconds before the hook is stopped, 1 to 3600 (30)"},
        },
        true, // COMMAND's own options are its own
        {":command", ":file..."},
    };
}

int parse_timeout(const std::string& text) {
    auto v = parse_number(text, 1, k_max_timeout_s);
    if (!v)
        die(usage_error(
            format("invalid --timeout '%s': give 1 to %d seconds", text.c_str(), k_max_timeout_s)));
    return static_cast<int>(*v);
}

// `path` (relative, with a slash) made absolute against the current directory, by name: "." and
// ".." are resolved, links are not (the hook runs what that name names when it runs).
std::string absolute(const std::string& path) {
    std::string cwd;
    if (char* here = ::getcwd(nullptr, 0)) {
        cwd = here;
        std::free(here); // NOLINT(cppcoreguidelines-no-malloc): getcwd's buffer
    } else {
        die(sys_error(Exit::os, errno, "cannot find the current directory for '%s'", path.c_str()));
    }
    std::vector<std::string> parts;
    auto take = [&](const std::string& s) {
        size_t start = 0;
        while (start <= s.size()) {
            size_t slash = s.find('/', start);
            std::string part = s.substr(start, slash == std::string::npos ? slash : slash - start);
            if (part == "..") {
                if (!parts.empty())
                    parts.pop_back();
            } else if (!part.empty() && part != ".") {
                parts.push_back(part);
            }
            if (slash == std::string::npos)
                break;
            start = slash + 1;
        }
    };
    take(cwd);
    take(path);
    std::string out;
    for (const auto& p : parts)
        out += "/" + p;
    return out.empty() ? "/" : out;
}

Hook hook_from_args(const Args& args) {
    Hook hook;
    auto event = args.value("event");
    if (!event)
        die(usage_error("give the event: --event before-tool|after-tool|run-start|run-end"));
    auto e = parse_event_name(*event);
    if (!e)
        die(usage_error(e.error().message()));
    hook.event = *e;
    hook.tools = args.values("tool");
    if (!hook.tools.empty() && !is_tool_event(hook.event))
        die(usage_error(format("--tool is for before-tool and after-tool hooks, not %s",
                               event_name(hook.event))));
    for (const auto& p : hook.tools)
        if (Status valid = check_pattern(p); !valid)
            die(usage_error(valid.error().message()));
    if (auto t = args.value("timeout"))
        hook.timeout_s = parse_timeout(*t);
    hook.command = args.operands();
    if (hook.command.empty())
        die(usage_error("give the hook's command: sion-hooks add --event EVENT [--] COMMAND "
                        "[ARGS...]"));
    std::string& program = hook.command.front();
    if (program.empty())
        die(usage_error("the hook's command is empty"));
    if (program.front() != '/' && program.find('/') != std::string::npos)
        program = absolute(program);
    if (Status valid = check_hook(hook); !valid)
        die(usage_error(valid.error().message()));
    return hook;
}

// A hook that cannot run fails, and a before-tool hook that fails blocks its calls: say so now,
// while it is being added, rather than at the first call.
void note_if_not_runnable(const Hook& hook) {
    std::vector<std::string> env = env_keep({"PATH"});
    auto program = find_hook_program(hook.command.front(), env);
    if (!program) {
        log_error("note: %s now; until it is, the hook fails%s", program.error().message().c_str(),
                  hook.event == Event::before_tool ? " and blocks the calls it is for" : "");
        return;
    }
    if (::access(program->c_str(), X_OK) != 0)
        log_error("note: cannot run '%s' now: %s; until it can, the hook fails%s", program->c_str(),
                  std::strerror(errno), // NOLINT(concurrency-mt-unsafe): one thread
                  hook.event == Event::before_tool ? " and blocks the calls it is for" : "");
}

} // namespace

int add_command(int argc, const char* const* argv) {
    Args args = parse_args_or_exit(add_spec(), argc, argv);
    Hook hook = hook_from_args(args);
    std::string path = hooks_file_or_die(true);
    std::string dir = path.substr(0, path.rfind('/'));
    Fd lock = or_die(lock_directory(dir));
    std::vector<Hook> hooks = or_die(load_hooks(path));
    hooks.push_back(hook);
    or_die(save_hooks(path, hooks));
    std::printf("added hook %s\n", hook_line(hook, hooks.size()).c_str());
    note_if_not_runnable(hook);
    return 0;
}

} // namespace sion::hooks_cmd
