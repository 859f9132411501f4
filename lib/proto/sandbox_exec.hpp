// SPDX-License-Identifier: MIT
// The contract of sandbox/exec, the pipe between a session and sion-sandbox serve: one command to
// run in a sandbox, and what came of it, as structs and as the JSON
// schemas/sandbox.exec.params.json and schemas/sandbox.exec.result.json describe.
#pragma once

#include "lib/json.hpp"
#include "lib/result.hpp"

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace sion::proto {

struct ExecRequest {
    // Exactly one of: a shell string, run as /bin/sh -c; or an argv.
    std::string command;
    std::vector<std::string> argv;
    std::string input;                                    // bytes for its stdin; else /dev/null
    std::vector<std::pair<std::string, std::string>> env; // added to the sandbox's environment
    std::optional<std::chrono::milliseconds> timeout;     // within the session's limit
    // A skill's script: the skill's folder (absolute), bound read-only at /skill in a sandbox of
    // the command's own, and the hosts its skill names, which alone it reaches when the session's
    // sandbox has a network. Empty: a command of the session's sandbox.
    std::string skill;
    std::vector<std::string> skill_hosts;
};

struct ExecResult {
    int exit = 0; // the shell's $?: the code, or 128+signal
    std::optional<int> signal;
    bool timed_out = false;
    // The sandbox's memory cgroup was full and the kernel killed a process of the command (SIGKILL;
    // the command itself, or a process it waited for, as a shell does).
    bool out_of_memory = false;
    std::string stdout_text; // each cut at the output cap, with a line saying how much was cut
    std::string stderr_text;
    bool truncated = false;
    int64_t wall_ms = 0;
    int64_t cpu_ms = 0;
    int64_t max_rss_kib = 0;
};

// sandbox/exec's params (schemas/sandbox.exec.params.json): {"command": "..."} or {"argv": [...]},
// optional "stdin", "env" (object of strings), "timeout" (seconds, a number). Exit::data on errors:
//   "give either 'command' or 'argv'", "member 'argv' is empty", "member 'timeout' must be more
//   than 0 seconds", "environment variable name 'A=B' is not a name".
// Unknown members are ignored.
[[nodiscard]] Result<ExecRequest> exec_request_from_json(JsonView params);
[[nodiscard]] Json exec_request_to_json(const ExecRequest& request);

// sandbox/exec's result (schemas/sandbox.exec.result.json): exit, signal (null or a number),
// timed_out, stdout, stderr, truncated, wall_ms, cpu_ms, max_rss_kib; out_of_memory only when true.
[[nodiscard]] Json exec_result_to_json(const ExecResult& result);
[[nodiscard]] Result<ExecResult> exec_result_from_json(JsonView json);

// The argv a request runs: its argv, or /bin/sh -c COMMAND.
[[nodiscard]] std::vector<std::string> request_argv(const ExecRequest& request);

} // namespace sion::proto
