// SPDX-License-Identifier: MIT
// The journal: calls that are neither read-only nor idempotent are recorded in sion.db before they
// run, so that none is ever made twice (DESIGN.md, "A tool call, end to end").
//
// An entry is keyed by session, tool and the call's canonical input (canonical_json(): keys sorted,
// compact). begin() looks the key up in the same write transaction that records a new entry:
//   - no entry: one is recorded as pending, and the caller makes the call (Begun::proceed);
//   - an entry with an answer: the call is answered from the record, not made (Begun::recorded);
//   - an entry without an answer — pending (the process that made it died before it was answered,
//     or it is being made now) or uncertain (no answer came): the call may have taken effect, and
//     is never repeated (Begun::uncertain).
// finish() records the answer; mark_uncertain() records that none came (the tool's process died,
// or its time ran out). Each is its own transaction, committed before it returns, so a process
// killed at any instant leaves either no entry, a pending one, or a finished one.
//
// One session is continued by one process at a time (sion-run holds the session's lock); the
// journal itself only relies on SQLite's transactions. Errors are the database's (lib/db.hpp).
#pragma once

#include "lib/db.hpp"
#include "lib/json.hpp"
#include "lib/result.hpp"

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace sion {

struct Begun {
    enum class Kind { proceed, recorded, uncertain };
    Kind kind = Kind::proceed;
    int64_t entry = 0;     // the entry's id, for finish() and mark_uncertain()
    std::string result;    // recorded: the answer as it was recorded; uncertain: what the model
                           // is told (uncertain_message())
    bool is_error = false; // recorded: the answer was the tool's error
};

struct JournalEntry {
    int64_t id = 0;
    std::string session;
    std::string tool;
    std::string input;  // canonical JSON
    std::string state;  // "pending", "done" or "uncertain"
    std::string result; // done: the answer; uncertain: why no answer came
    bool is_error = false;
    int64_t started = 0; // Unix ms
    int64_t ended = 0;   // Unix ms; 0 while pending
};

class Journal {
public:
    // The journal's table is created by open_state()'s migrations; `db` must outlive the Journal.
    explicit Journal(Db& db) : m_db(&db) {}

    [[nodiscard]] Result<Begun> begin(std::string_view session, std::string_view tool,
                                      JsonView input);
    // Records the answer of a call begin() let proceed. An entry that is not pending is left as it
    // is and Exit::software returned.
    [[nodiscard]] Status finish(int64_t entry, std::string_view result, bool is_error);
    // Records that the call got no answer: `why` ("the tool's process died", "no answer in 30 s").
    [[nodiscard]] Status mark_uncertain(int64_t entry, std::string_view why);
    // Removes a pending entry, for a call that failed without changing anything (an edit or a
    // patch that did not fit): made again, it runs again. Exit::software for an entry that is not
    // pending.
    [[nodiscard]] Status forget(int64_t entry);

    // A session's entries, oldest first.
    [[nodiscard]] Result<std::vector<JournalEntry>> entries(std::string_view session);

    // What the model is told of a call that is never repeated:
    //   "this call was made before and got no answer (<why>): it may have taken effect, so it is
    //   not
    //    made again"
    [[nodiscard]] static std::string uncertain_message(const JournalEntry& entry);

private:
    Db* m_db;
};

} // namespace sion
