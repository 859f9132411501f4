// SPDX-License-Identifier: MIT
// Firing an event: the hooks that match it run one after another, in file order, each reading the
// event on its standard input, and their statuses and output make one verdict (sion-hooks(1)).
//
// A hook runs as the caller, outside any sandbox, in the event's workspace when it has one (else in
// the caller's directory), with the caller's environment plus SION_HOOK_EVENT and SION_SESSION, in
// its own process group, which is killed when its timeout runs out. Its program is an absolute
// path, or a bare name looked up in the absolute directories of PATH (a relative PATH entry would
// be the workspace). A hook whose program lies in the event's workspace, which the agent can
// change, is not run: it fails.
//
// before-tool: exit 0 lets the call run; exit 2 blocks it, and what the hook wrote to stderr (else
// stdout) is the reason; any other end (another status, a signal, no start, out of time) blocks it
// too. The first hook that blocks is the last to run. after-tool and run-start: what each hook
// prints on exit 0 is added, marked as that hook's; every other end is a failure. run-end: every
// end but exit 0 is a failure. Failures are in the verdict, for the caller to log.
//
// Nothing here prints or exits. Threads: fire() waits for children by pid only.
#pragma once

#include "hooks/event.hpp"
#include "hooks/hooks_file.hpp"
#include "hooks/output.hpp"

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace sion::hooks {

// A hook that did not end well.
struct Failure {
    size_t hook = 0;     // its number in the hooks file, from 1
    std::string command; // command_text() of its command
    std::string why;     // "exited with status 1", "ran out of time (30 s) and was killed", ...
    std::string err;     // what it wrote to stderr, as shown_output() makes it
};

// A hook that was run (or tried), when, for the caller's trace.
struct Run {
    size_t hook = 0;      // its number in the hooks file, from 1
    std::string command;  // command_text() of its command
    int64_t start_ns = 0; // Unix nanoseconds
    int64_t end_ns = 0;
    std::string failed; // how it failed ("exited with status 1"), "" when it did not
};

struct Verdict {
    Event event = Event::before_tool;
    bool allow = true; // false only for before-tool
    size_t ran = 0;    // how many hooks matched and were run (or tried)
    // When !allow: why, for the model, and which hook blocked.
    std::string reason;
    size_t hook = 0;
    std::string command;
    // after-tool and run-start: what the hooks printed on exit 0, each marked
    // "[hook 2: /home/me/log-call.sh] ...", one after another on lines of their own.
    std::string added;
    std::vector<Failure> failures;
    std::vector<Run> runs; // each hook run, in order
};

struct FireOptions {
    std::vector<std::string> env; // the environment each hook starts from: "NAME=value"
    size_t output_limit = k_output_limit;
};

// Runs the hooks of `hooks` that are for `event` and makes the verdict. Every way a hook can fail
// is part of the verdict; fire() itself does not fail.
[[nodiscard]] Verdict fire(const std::vector<Hook>& hooks, const EventInput& event,
                           const FireOptions& options);

// "hook 2 (/home/me/log-call.sh) exited with status 1".
[[nodiscard]] std::string failure_text(const Failure& failure);

// The verdict as one line of JSON, without the newline (schemas/hooks-verdict.schema.json).
[[nodiscard]] std::string verdict_json(const Verdict& verdict);

// The program a command's first word names: an absolute path as it is; a bare name, the first
// executable regular file of that name in the absolute directories of `env`'s PATH
// ("/bin:/usr/bin" when it has none). Errors: Exit::not_found "'x' is not on PATH".
[[nodiscard]] Result<std::string> find_hook_program(const std::string& word,
                                                    const std::vector<std::string>& env);

} // namespace sion::hooks
