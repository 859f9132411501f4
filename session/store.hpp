// SPDX-License-Identifier: MIT
// Sessions as sion.db keeps them (lib/db_schema.hpp): the session's row, its conversation
// (messages) and its calls. Every change is its own transaction, committed before the function
// returns, so a session killed at any instant leaves what it finished and nothing half-written.
//
// A session is continued by one process at a time: claim() records the process as its owner, in
// the same transaction that checks that no live process owns it.
#pragma once

#include "lib/db.hpp"
#include "lib/json.hpp"
#include "lib/models/model.hpp"
#include "lib/processes.hpp"
#include "lib/result.hpp"

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace sion::session {

struct SessionRow {
    std::string id;    // 16 hex digits
    std::string agent; // 64 hex digits
    std::string profile;
    std::string task;  // the first task
    Json settings;     // how it was run: models, workspace, shell, autonomy …
    std::string state; // running, done, failed, stopped, interrupted
    bool tainted = false;
    std::string owner;   // "pid:start:boot" of the process running it, while it runs
    models::Usage usage; // of all its runs: what its models read (cached or not) and wrote
    int64_t started = 0;
    int64_t ended = 0;
    std::string ended_why; // how the last run ended, when not done
};

struct CallRow {
    int64_t seq = 0; // from 1 within the session
    std::string call_id;
    std::string parent; // the run_code call whose program made it; "" for the model's
    std::string tool;
    Json input;
    std::string effect;   // "" when the tool is unknown
    std::string decision; // run, ask, refuse; "" when the tool is unknown
    std::string why;
    std::string state;    // running, ok, error, refused, uncertain, interrupted
    std::string result;   // what the model was shown
    Json detail;          // the tool's structured result (the shell's result object), if any
    Json images;          // the pictures it returned (lib/picture.hpp), if any
    bool tainted = false; // this call's result tainted the session
    int64_t started_ms = 0; // when its tool began to run; when it was asked for, if it did not
    int64_t wall_ms = 0;    // how long its tool ran
};

// What identifies a process while it lives, for SessionRow::owner: "pid:start:boot", its pid, its
// start time and the boot's id, so a pid reused later is not taken for it.
[[nodiscard]] std::string process_name(const ProcessId& who);
// This process's name.
[[nodiscard]] std::string this_process();
// The process `name` names, if it still runs.
[[nodiscard]] std::optional<ProcessId> named_process(std::string_view name);
// Whether the process `owner` names still runs.
[[nodiscard]] bool process_alive(std::string_view owner);

// A new session id: 16 random hex digits.
[[nodiscard]] Result<std::string> new_session_id();

[[nodiscard]] Status insert_session(Db& db, const SessionRow& row);
[[nodiscard]] Result<std::optional<SessionRow>> find_session_row(Db& db, std::string_view id);
// The session `name` names: its whole id or a unique prefix of at least 4 hex digits, in either
// case. Exit::no_input "no session 'abcd'"; Exit::data "session 'ab12' is ambiguous: …".
[[nodiscard]] Result<SessionRow> find_session(Db& db, std::string_view name);
// Sessions, newest first; of one agent when given.
[[nodiscard]] Result<std::vector<SessionRow>> list_sessions(Db& db,
                                                            std::optional<std::string_view> agent);

// Exit::temp_fail when a live process runs the session: "session af88d6083cc5587b is running
// (pid 1234)".
[[nodiscard]] Status check_not_running(const SessionRow& row);
// Makes this process the session's owner and its state "running". Exit::temp_fail when a live
// process owns it: "session af88d6083cc5587b is running (pid 1234)".
[[nodiscard]] Status claim(Db& db, std::string_view id);
// Ends a run: its state, the owner cleared, the end time.
[[nodiscard]] Status end_run(Db& db, std::string_view id, std::string_view state,
                             std::string_view why);
// Replaces the settings a continued session runs with.
[[nodiscard]] Status set_settings(Db& db, std::string_view id, JsonView settings);
[[nodiscard]] Status set_tainted(Db& db, std::string_view id);
// Adds what a model used to the session's tokens.
[[nodiscard]] Status add_usage(Db& db, std::string_view id, const models::Usage& used);
// `more` added to `to`, member by member.
void add_to(models::Usage& to, const models::Usage& more);

// The conversation, in order.
[[nodiscard]] Result<std::vector<Json>> load_messages(Db& db, std::string_view session);
[[nodiscard]] Status append_message(Db& db, std::string_view session, JsonView message);

[[nodiscard]] Result<std::vector<CallRow>> load_calls(Db& db, std::string_view session);
// Records a call as it starts (state "running", or "refused" with its result), numbering it.
[[nodiscard]] Result<int64_t> insert_call(Db& db, std::string_view session, const CallRow& row);
// Records how a call ended and adds its result (`message`) to the conversation, in one transaction;
// an empty `message` (a program's call) adds nothing.
[[nodiscard]] Status finish_call(Db& db, std::string_view session, const CallRow& row,
                                 JsonView message);

} // namespace sion::session
