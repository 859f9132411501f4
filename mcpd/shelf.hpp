// SPDX-License-Identifier: MIT
// The shelf: the MCP servers found once and given to sessions by name, their pins, which profiles
// have them standing, and whether they may ask for sampling — all in sion.db
// (lib/db_schema.hpp, version 2). Every change is one transaction.
#pragma once

#include "mcpd/config.hpp"
#include "mcpd/review.hpp"

#include "lib/db.hpp"
#include "lib/result.hpp"

#include <optional>
#include <string>
#include <vector>

namespace sion::mcpd {

inline constexpr int k_default_sampling_tokens = 1000;
inline constexpr int k_default_sampling_per_run = 5;

struct Sampling {
    int max_tokens = k_default_sampling_tokens; // a completion
    int per_run = k_default_sampling_per_run;   // completions a run
    std::string model;                          // empty: the session's first
};

struct ShelfEntry {
    std::string name;
    ServerConfig config;
    std::string protocol; // what it spoke at its last review
    std::string server_name;
    std::string server_version;
    std::optional<Sampling> sampling; // nullopt: not allowed
};

// What a review found, to pin: the server as it introduced itself and its tools as listed.
struct Introduced {
    std::string protocol;
    std::string server_name;
    std::string server_version;
    std::string transport{}; // over HTTP, "http" or "sse": kept in its config, tried first next time
};

class Shelf {
public:
    explicit Shelf(Db& db) : m_db(db) {}

    // Exit::no_input: "there is no MCP server notes on the shelf (`sion agent mcp list`)".
    [[nodiscard]] Result<ShelfEntry> get(std::string_view name);
    [[nodiscard]] Result<std::optional<ShelfEntry>> find(std::string_view name);
    [[nodiscard]] Result<std::vector<ShelfEntry>> list();

    // Puts a new server on the shelf with its tools pinned. Exit::usage when the name is taken.
    [[nodiscard]] Status add(const ShelfEntry& entry, const std::vector<ToolDef>& tools);
    // Replaces a server's pins with `tools` and records how it introduced itself (and, over HTTP,
    // the transport it spoke); with `said`, the effects and local tools it gives replace the
    // server's.
    [[nodiscard]] Status pin(std::string_view name, const Introduced& introduced,
                             const std::vector<ToolDef>& tools,
                             const ServerConfig* said = nullptr);
    [[nodiscard]] Result<std::vector<Pin>> pins(std::string_view name);
    // Off the shelf, its pins and every profile's list.
    [[nodiscard]] Status remove(std::string_view name);

    // A profile's standing servers (lib/agents.hpp's profile_servers() lists them), given when the
    // profile and the server exist. Dropping one the profile does not have is Exit::no.
    [[nodiscard]] Status give(std::string_view profile, std::string_view name);
    [[nodiscard]] Status drop(std::string_view profile, std::string_view name);

    [[nodiscard]] Status set_sampling(std::string_view name, const std::optional<Sampling>& sampling);
    // Replaces the server's grants (its config's).
    [[nodiscard]] Status set_grants(std::string_view name, const std::vector<GrantConfig>& grants);

private:
    Db& m_db;
};

} // namespace sion::mcpd
