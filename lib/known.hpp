// SPDX-License-Identifier: MIT
// What sion knows by name, for shell completions (`PROGRAM __complete`, lib/cli.hpp): the model
// providers, and the agents, sessions, profiles, routes, MCP servers and credentials of
// $SION_HOME.
// Reading never makes the home, the database or the store, and what cannot be read is simply
// not offered: this runs under a shell's prompt.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace sion {

// The names of `kind`, each "name" or "name<TAB>description" (lib/cli.hpp's KnownValues):
//   "agent"       the first 8 digits of each id, with its profile ("d85ed254\tprofile coder"):
//                 the agents of the profile the operand before names, when one does
//   "session"     the 100 latest sessions' ids, with their state and agent
//   "profile"     the profiles' names
//   "route"       the routes' names, with their profile: those of the profile the operand before
//                 names, when one does
//   "mcp-server"  the MCP servers' names on the shelf
//   "credential"  the names of the credentials kept sealed
//   "provider"    the model providers, each with its colon ("anthropic:")
// Nothing for another kind.
[[nodiscard]] std::vector<std::string> known_names(std::string_view kind,
                                                   const std::vector<std::string>& operands);

} // namespace sion
