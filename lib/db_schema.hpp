// SPDX-License-Identifier: MIT
// sion.db: the one SQLite database under $SION_HOME, and its schema. Every program's tables are
// created by the one list of migrations here, so programs of different versions agree on what the
// file holds and a newer file is refused by an older program (Exit::config, "upgrade sion").
//
// Tables (version 1):
//   profiles  name, models (a JSON array of "provider:model"), autonomy (0-6), created
//   agents    id (64 hex digits), profile, created
//   sessions  id (16 hex digits), agent, profile, task, settings (JSON), state, tainted, owner,
//             input_tokens, output_tokens, started, ended, ended_why
//   messages  session, seq, content (JSON: the conversation as models are sent it), created
//   calls     session, seq, call_id, parent (the run_code call that made it), tool, input
//   (canonical JSON), effect, decision, why, state,
//             result, detail (JSON), tainted, started_ms, wall_ms
//   journal   id, session, tool, input (canonical JSON), state, result, is_error, started, ended
// Tables (version 2): the MCP shelf
//   mcp_servers  name, config (JSON: how it is started or reached, mcpd/config.hpp), protocol (what
//                it spoke at its last review), server (its serverInfo, JSON), sampling (JSON, or
//                NULL: not allowed), created, reviewed
//   mcp_pins     server, tool, digest (of its definition as reviewed), definition (JSON)
//   profile_mcp  profile, server: a profile's standing servers
// Version 3: sessions.cache_read_tokens and cache_write_tokens, the input tokens a provider read
// from its cache and wrote to it (counted in input_tokens too).
// Version 4: routes, profiles.sorter (lib/routes.hpp).
// Version 5: skills  profile, name, description, dir (its folder), origin (installed, added,
//            written), files (installed: JSON of path -> SHA-256), source (the bundle), created
//            (lib/skills.hpp).
// Version 6: spans  session, trace, span, parent, name, kind, start_ns, end_ns (Unix
//            nanoseconds), attributes (JSON), error (the status message of a span that failed),
//            links (JSON): the runs' traces (session/trace.hpp).
// Times are Unix milliseconds but where the column says otherwise.
#pragma once

#include "lib/db.hpp"
#include "lib/result.hpp"

#include <cstdint>
#include <string>

namespace sion {

// Opens (creating it if need be) `home`/sion.db and brings its schema up to date. `home` must be
// ready (ensure_home()).
[[nodiscard]] Result<Db> open_state(const std::string& home);

// Brings an open database's schema up to date: for tests on ":memory:".
[[nodiscard]] Status migrate_state(Db& db);

// The wall clock in Unix milliseconds, as the tables keep times.
[[nodiscard]] int64_t now_ms();

} // namespace sion
