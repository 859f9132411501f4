// SPDX-License-Identifier: MIT
// $SION_HOME/agents/hooks.log: one line for each hook that failed, so that a hook that does not
// block still cannot fail unseen.
#pragma once

#include "hooks/event.hpp"
#include "hooks/fire.hpp"
#include "lib/result.hpp"

#include <ctime>
#include <string>
#include <vector>

namespace sion::hooks {

// $SION_HOME/agents/hooks.log, for the home `home`.
[[nodiscard]] std::string hooks_log_path(const std::string& home);

// The log's line for `failure` (no newline): the time in UTC, the session, the event, the failure
// and the first line of what the hook wrote to stderr, cut at 200 bytes, control characters made
// spaces:
//   2026-12-01T07:31:02Z session 0123456789abcdef after-tool: hook 2 (/home/me/log-call.sh) exited
//   with status 1: cannot reach the log server
[[nodiscard]] std::string log_line(const Failure& failure, Event event, const std::string& session,
                                   std::time_t when);

// Appends a line for each of `failures` to the log at `path` (created with mode 0600, never through
// a link), with one write(2), so lines of hooks fired at once do not interleave. Errors: Exit::os
// or Exit::io "cannot write 'P': <errno text>".
[[nodiscard]] Status append_hooks_log(const std::string& path, const std::vector<Failure>& failures,
                                      Event event, const std::string& session);

} // namespace sion::hooks
