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
int grant_command(int argc, const char* const* argv);
int resources_command(int argc, const char* const* argv);
int prompts_command(int argc, const char* const* argv);
int serve_command(int argc, const char* const* argv);

[[nodiscard]] std::vector<OptionSpec> add_options();

// What a server run for an operator's command gave, or die with its error's line, followed on
// stderr by `words` (the last lines the server wrote to its standard error, indented) and a line
// for each variable of yours they name that the server was not given:
//   "BRAVE_API_KEY is set in your environment but not given to the server: add --env BRAVE_API_KEY"
// (`on_shelf`: "remove it and add it again with --env …").
[[nodiscard]] Json served_or_die(Result<Json> served, std::string_view name,
                                 const mcpd::ServerConfig& config,
                                 const std::vector<std::string>& words, bool on_shelf);
// "at most 1000 tokens a completion and 5 completions a run, written by the session's first model"
[[nodiscard]] std::string describe_sampling(const mcpd::Sampling& sampling);

} // namespace sion::mcp_cmd
