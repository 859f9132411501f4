// SPDX-License-Identifier: MIT
// sion-sandbox's commands; each takes the argv that follows the program's name (argv[0] is the
// command's word) and returns the exit status.
#pragma once

#include "lib/cli.hpp"
#include "lib/proto/sandbox_exec.hpp"
#include "sandboxd/config.hpp"

#include <chrono>
#include <vector>

namespace sion::sandbox_cmd {

using sandboxd::sandbox_options;

[[nodiscard]] int exec_command(int argc, const char* const* argv);
[[nodiscard]] int run_command(int argc, const char* const* argv);
[[nodiscard]] int serve_command(int argc, const char* const* argv);
[[nodiscard]] int check_command(int argc, const char* const* argv);
[[nodiscard]] int describe_command(int argc, const char* const* argv);
// Hidden: what runs inside the sandbox, and the switch to the workspace's owner.
[[nodiscard]] int init_command(int argc, const char* const* argv);
[[nodiscard]] int become_command(int argc, const char* const* argv);

// A line on stderr saying how a command ended, when its output cannot say it: out of time (its
// `limit`), or killed by a signal (exec and run).
void say_how_it_ended(const proto::ExecResult& result, std::chrono::milliseconds limit,
                      uint64_t memory);

} // namespace sion::sandbox_cmd
