// SPDX-License-Identifier: MIT
// sion-mcp's commands, one function each: argv[0] is the command's name.
#pragma once

#include "mcpd/shelf.hpp"

#include "lib/cli.hpp"

#include <string>
#include <vector>

namespace sion::mcp_cmd {

int add_command(int argc, const char* const* argv);
int list_command(int argc, const char* const* argv);
int review_command(int argc, const char* const* argv);
int remove_command(int argc, const char* const* argv);
int login_command(int argc, const char* const* argv);
int logout_command(int argc, const char* const* argv);
// give (true) or drop (false).
int give_command(int argc, const char* const* argv, bool give);
int sampling_command(int argc, const char* const* argv);
int resources_command(int argc, const char* const* argv);
int prompts_command(int argc, const char* const* argv);
int serve_command(int argc, const char* const* argv);

[[nodiscard]] std::vector<OptionSpec> add_options();
// "at most 1000 tokens a completion and 5 completions a run, written by the session's first model"
[[nodiscard]] std::string describe_sampling(const mcpd::Sampling& sampling);

} // namespace sion::mcp_cmd
