// SPDX-License-Identifier: MIT
// A session taken whole out of one sion.db and put into another: its row of sessions and its rows
// of messages, calls, journal and spans, each a JSON object of column and value. `sion-route eval
// --on slurm` runs each session in a store of its own on a node's local disk (SQLite's write-ahead
// log does not work over a network file system) and brings it home, so that `sion agent show` works
// for it.
#pragma once

#include "lib/db.hpp"
#include "lib/json.hpp"
#include "lib/result.hpp"

#include <string_view>

namespace sion {

// {"session": ID, "tables": {"sessions": [row], "messages": [...], "calls": [...],
// "journal": [...], "spans": [...]}} (spans' nanosecond times as decimal strings: JSON's
// numbers do not hold them exactly). Exit::no_input when there is no such session.
[[nodiscard]] Result<Json> export_session(Db& db, std::string_view id);

// Puts an exported session into `db`, in one transaction; its agent must be there already (an
// export without spans, made before sion kept traces, has none). A
// session of that id already there is left as it is, and false returned. Exit::data for what is
// not an export: an unknown table or column, a value that is not null, a number or text.
[[nodiscard]] Result<bool> import_session(Db& db, JsonView exported);

} // namespace sion
