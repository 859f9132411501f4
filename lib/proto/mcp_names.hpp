// SPDX-License-Identifier: MIT
// The names of MCP servers, as every program that takes one checks it: sion-mcp's shelf, and
// sion-run's --mcp and --prompt SERVER:PROMPT.
#pragma once

#include "lib/result.hpp"

#include <string_view>

namespace sion::proto {

// A server's name on the shelf: lowercase letters, digits and hyphens, 1 to 32, starting with a
// letter or a digit (a tool is offered as <server>_<tool>, so '_' would make the split ambiguous).
// Exit::usage: "invalid server name 'a B': give 1 to 32 lowercase letters, digits and hyphens".
[[nodiscard]] Status check_server_name(std::string_view name);

} // namespace sion::proto
