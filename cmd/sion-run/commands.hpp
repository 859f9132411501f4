// SPDX-License-Identifier: MIT
// sion-run's commands; each takes the argv that follows the program's name (argv[0] is the
// command's word) and returns the exit status.
#pragma once

#include "lib/cli.hpp"

#include <vector>

namespace sion::run_cmd {

[[nodiscard]] int run_command(int argc, const char* const* argv);
[[nodiscard]] int chat_command(int argc, const char* const* argv);
[[nodiscard]] int create_command(int argc, const char* const* argv);
[[nodiscard]] int list_command(int argc, const char* const* argv);
[[nodiscard]] int sessions_command(int argc, const char* const* argv);
[[nodiscard]] int show_command(int argc, const char* const* argv);

// The options of `run`, for its --help and the program's.
[[nodiscard]] std::vector<OptionSpec> run_options();

// Reports a refusal that keeps a session from starting as the seeds show it ("error: …", exit 1)
// and exits.
[[noreturn]] void refuse_session(const Error& error);

} // namespace sion::run_cmd
