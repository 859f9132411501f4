// SPDX-License-Identifier: MIT
// sion-hooks fire and check: run the hooks an event matches and print the verdict; say whether the
// hooks file may be used at all.
#include "cmd/sion-hooks/commands.hpp"
#include "hooks/event.hpp"
#include "hooks/fire.hpp"
#include "hooks/hooks_file.hpp"
#include "hooks/hooks_log.hpp"
#include "lib/child.hpp"
#include "lib/cli.hpp"
#include "lib/fd.hpp"
#include "lib/home.hpp"
#include "lib/log.hpp"
#include "lib/text.hpp"

#include <unistd.h>

#include <cstdio>

namespace sion::hooks_cmd {

namespace {

using namespace sion::hooks;

// The event JSON: a tool's whole input is in it, and a write_file's content may be large.
constexpr size_t k_event_max = size_t{16} << 20;

std::string directory_of(const std::string& path) {
    return path.substr(0, path.rfind('/'));
}

} // namespace

int fire_command(int argc, const char* const* argv) {
    const CommandSpec spec{
        "sion-hooks fire",
        "sion-hooks fire EVENT < EVENT.json",
        "Run the hooks for EVENT (before-tool, after-tool, run-start or run-end) that match the\n"
        "event JSON on stdin, one after another, and print the verdict as one line of JSON:\n"
        "whether a before-tool call may run and why not, what after-tool and run-start hooks\n"
        "added, and which hooks failed (also written to $SION_HOME/agents/hooks.log). Exit 0\n"
        "whenever the verdict is printed, whatever it says.",
        {},
        false,
        {"before-tool after-tool run-start run-end"},
    };
    Args args = parse_args_or_exit(spec, argc, argv);
    check_operands(args, 1, 1,
                   "give the event: sion-hooks fire before-tool|after-tool|run-start|run-end "
                   "< EVENT.json");
    auto event = parse_event_name(args.operands()[0]);
    if (!event)
        die(usage_error(event.error().message()));
    // The file first: an unsafe one refuses every event, whatever the input.
    std::string path = hooks_file_or_die(false);
    std::vector<Hook> hooks = or_die(load_hooks(path));
    auto text = read_all(STDIN_FILENO, k_event_max);
    if (!text)
        die(text.error().exit() == Exit::data
                ? make_error(Exit::data, "invalid event: larger than %zu bytes", k_event_max)
                : text.error().context("cannot read the event"));
    EventInput input = or_die(parse_event_input(*text, *event));
    Verdict verdict = fire(hooks, input, FireOptions{own_environment(), k_output_limit});
    if (Status logged = append_hooks_log(directory_of(path) + "/hooks.log", verdict.failures,
                                         verdict.event, input.session);
        !logged)
        report(logged.error());
    std::printf("%s\n", verdict_json(verdict).c_str());
    return 0;
}

int check_command(int argc, const char* const* argv) {
    const CommandSpec spec{
        "sion-hooks check",
        "sion-hooks check",
        "Check that the hooks file may be used: that nobody but you (or root) can change it or\n"
        "its directory, and that it is well formed. One line on stdout when it may; exit 65 when\n"
        "it is malformed, 77 when others may change it. sion-run checks so before a session.",
        {},
    };
    Args args = parse_args_or_exit(spec, argc, argv);
    check_operands(args, 0, 0);
    std::string path = hooks_file_or_die(false);
    std::vector<Hook> hooks = or_die(load_hooks(path));
    if (hooks.empty() && ::access(path.c_str(), F_OK) != 0)
        std::printf("ok: no hooks ('%s' does not exist)\n", path.c_str());
    else
        std::printf("ok: %zu hook%s in '%s'\n", hooks.size(), hooks.size() == 1 ? "" : "s",
                    path.c_str());
    return 0;
}

} // namespace sion::hooks_cmd
