// SPDX-License-Identifier: MIT
// Profiles and agents, as sion.db keeps them (lib/db_schema.hpp). A profile holds the defaults of
// the agents made from it (their models and autonomy level) and is created on first use; an agent
// is a random 256-bit id, printed whole when it is made and shortened to "d85ed254…a248" (its
// first 8 and last 4 hex digits) in lists. An agent is named by its whole id, that short form, or any
// prefix of at least 4 hex digits that only it has.
#pragma once

#include "lib/db.hpp"
#include "lib/result.hpp"

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace sion {

inline constexpr int k_default_autonomy = 2;

struct Profile {
    std::string name;
    std::vector<std::string> models; // "provider:model", first first
    int autonomy = k_default_autonomy;
    int64_t created = 0;
};

struct Agent {
    std::string id; // 64 lowercase hex digits
    std::string profile;
    int64_t created = 0;
};

// Models as sion.db keeps them (a profile's, a route's): a JSON array of "provider:model" specs.
// `owner` names whose in the message, Exit::data: "profile 'lead' has damaged models: an element
// is a number, not a string".
[[nodiscard]] Result<std::vector<std::string>> parse_kept_models(std::string_view owner,
                                                                 std::string_view text);

// A profile name: 1 to 64 of lowercase letters, digits, '-' and '_', starting with a letter or
// digit. Exit::usage: "invalid profile name 'Bad Name': use lowercase letters, digits, '-' and
// '_'".
[[nodiscard]] Status check_profile_name(std::string_view name);

// The profile, if there is one of that name.
[[nodiscard]] Result<std::optional<Profile>> find_profile(Db& db, std::string_view name);

// The profile `name`, created with `models` and `autonomy` if there is none. For one that exists,
// non-empty `models` and a given `autonomy` replace what it holds. In one transaction.
[[nodiscard]] Result<Profile> ensure_profile(Db& db, std::string_view name,
                                             const std::vector<std::string>& models,
                                             std::optional<int> autonomy);

// A new agent of the profile (which must exist), with a fresh random id.
[[nodiscard]] Result<Agent> create_agent(Db& db, std::string_view profile);

// The agent as it is, id and all, made in this store when it is not there (its profile must be):
// a store of its own on another machine, made for an agent's session (sion-route eval --on slurm).
[[nodiscard]] Status add_agent(Db& db, const Agent& agent);

// Agents, oldest first; of one profile when `profile` is given.
[[nodiscard]] Result<std::vector<Agent>> list_agents(Db& db,
                                                     std::optional<std::string_view> profile);

// The agent `name` names, within `profile` when given. Errors:
//   Exit::no_input  "no agent 'd85e' in profile 'coder'" (or "no agent 'd85e'")
//   Exit::data      "agent 'd8' is ambiguous: d85ed254…a248, d8a01c3e…77f0" (the first few)
//   Exit::usage     "invalid agent 'xyz': give its id, its short form or a prefix of 4 hex digits"
// An agent of another profile is named as such: "agent d85ed254…a248 is of profile 'lead', not
// 'coder'" (Exit::data).
[[nodiscard]] Result<Agent> find_agent(Db& db, std::string_view name,
                                       std::optional<std::string_view> profile);

// "d85ed254…a248".
[[nodiscard]] std::string short_agent_id(std::string_view id);

// A profile's standing MCP servers, by name (sion.db's profile_mcp): the one place that reads and
// writes the table. The callers check that the profile and the server exist (sion-mcp's shelf).
// Adding one the profile has already is no change; removing says whether it was there.
[[nodiscard]] Result<std::vector<std::string>> profile_servers(Db& db, std::string_view profile);
[[nodiscard]] Status add_profile_server(Db& db, std::string_view profile, std::string_view server);
[[nodiscard]] Result<bool> remove_profile_server(Db& db, std::string_view profile,
                                                 std::string_view server);
// The server off every profile's list, as it leaves the shelf.
[[nodiscard]] Status remove_server_from_profiles(Db& db, std::string_view server);

} // namespace sion
