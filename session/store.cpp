// SPDX-License-Identifier: MIT
// Sessions, their messages and calls in sion.db, each change one transaction.
#include "session/store.hpp"

#include "lib/db_schema.hpp"
#include "lib/hash.hpp"
#include "lib/processes.hpp"
#include "lib/secret_bytes.hpp"
#include "lib/text.hpp"

#include <unistd.h>

#include <cctype>
#include <cstdlib>

namespace sion::session {

namespace {

bool is_hex_prefix(std::string_view s) {
    if (s.empty())
        return false;
    for (char c : s)
        if (std::isxdigit(static_cast<unsigned char>(c)) == 0
            || std::isupper(static_cast<unsigned char>(c)) != 0)
            return false;
    return true;
}

// The first column of every row the statement gives.
Result<std::vector<std::string>> first_column(Stmt& st) {
    std::vector<std::string> out;
    while (true) {
        SION_TRY(bool row, st.step());
        if (!row)
            return out;
        out.push_back(st.column_text(0));
    }
}

Result<Json> parse_column(const std::string& text) {
    if (text.empty())
        return Json();
    return Json::parse(text);
}

constexpr Sql k_session_columns_select =
    "SELECT id, agent, profile, task, settings, state, tainted, coalesce(owner, ''), input_tokens, "
    "output_tokens, cache_read_tokens, cache_write_tokens, started, coalesce(ended, 0), "
    "coalesce(ended_why, '') FROM sessions WHERE id = ?1";

Result<SessionRow> read_session(Stmt& st) {
    SessionRow row;
    row.id = st.column_text(0);
    row.agent = st.column_text(1);
    row.profile = st.column_text(2);
    row.task = st.column_text(3);
    SION_TRY(row.settings, parse_column(st.column_text(4)));
    row.state = st.column_text(5);
    row.tainted = st.column_int(6) != 0;
    row.owner = st.column_text(7);
    row.usage.input_tokens = st.column_int(8);
    row.usage.output_tokens = st.column_int(9);
    row.usage.cache_read_tokens = st.column_int(10);
    row.usage.cache_write_tokens = st.column_int(11);
    row.started = st.column_int(12);
    row.ended = st.column_int(13);
    row.ended_why = st.column_text(14);
    return row;
}

Status next_message_seq_and_insert(Db& db, std::string_view session, JsonView message) {
    SION_TRY(
        Stmt st,
        db.prepare("INSERT INTO messages (session, seq, content, created) VALUES (?1, "
                   "(SELECT coalesce(max(seq), 0) + 1 FROM messages WHERE session = ?1), ?2, ?3)"));
    SION_CHECK(st.bind_all(session, std::string_view(message.dump()), now_ms()));
    return st.run();
}

} // namespace

std::string process_name(const ProcessId& who) {
    return format("%ld:%llu:%s", static_cast<long>(who.pid),
                  static_cast<unsigned long long>(who.start), boot_id().c_str());
}

std::string this_process() {
    return process_name(process_id(::getpid()).value_or(ProcessId{::getpid(), 0}));
}

std::optional<ProcessId> named_process(std::string_view name) {
    size_t colon = name.find(':');
    if (colon == std::string_view::npos)
        return std::nullopt;
    long pid = std::strtol(std::string(name.substr(0, colon)).c_str(), nullptr, 10);
    auto who = process_id(static_cast<pid_t>(pid));
    if (!who || process_name(*who) != name)
        return std::nullopt;
    return who;
}

bool process_alive(std::string_view owner) { return named_process(owner).has_value(); }

Result<std::string> new_session_id() {
    SION_TRY(std::string bytes, random_bytes(8));
    return to_hex(bytes);
}

Status insert_session(Db& db, const SessionRow& row) {
    SION_TRY(Stmt st,
             db.prepare("INSERT INTO sessions (id, agent, profile, task, settings, state, "
                        "tainted, owner, started) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9)"));
    SION_CHECK(st.bind_all(std::string_view(row.id), std::string_view(row.agent),
                           std::string_view(row.profile), std::string_view(row.task),
                           std::string_view(row.settings.dump()), std::string_view(row.state),
                           row.tainted, std::string_view(row.owner), row.started));
    return st.run();
}

Result<std::optional<SessionRow>> find_session_row(Db& db, std::string_view id) {
    SION_TRY(Stmt st, db.prepare(k_session_columns_select));
    SION_CHECK(st.bind(1, id));
    SION_TRY(bool row, st.step());
    if (!row)
        return std::optional<SessionRow>();
    SION_TRY(SessionRow found, read_session(st));
    st.reset();
    return std::optional<SessionRow>(std::move(found));
}

Result<SessionRow> find_session(Db& db, std::string_view given) {
    std::string lower = ascii_lower(given);
    std::string_view name = lower;
    if (!is_hex_prefix(name) || name.size() > 16 || (name.size() < 4))
        return make_error(Exit::usage,
                          "invalid session '%.*s': give its id or a prefix of 4 hex digits",
                          static_cast<int>(given.size()), given.data());
    SION_TRY(Stmt st, db.prepare("SELECT id FROM sessions WHERE substr(id, 1, length(?1)) = ?1 "
                                 "ORDER BY id LIMIT 4"));
    SION_CHECK(st.bind(1, name));
    SION_TRY(std::vector<std::string> ids, first_column(st));
    if (ids.empty())
        return make_error(Exit::no_input, "no session '%.*s'", static_cast<int>(given.size()),
                          given.data());
    if (ids.size() > 1) {
        std::string list;
        for (size_t i = 0; i < ids.size() && i < 3; ++i)
            list += (i ? ", " : "") + ids[i];
        if (ids.size() > 3)
            list += ", …";
        return make_error(Exit::data, "session '%.*s' is ambiguous: %s",
                          static_cast<int>(given.size()), given.data(), list.c_str());
    }
    SION_TRY(auto row, find_session_row(db, ids.front()));
    return std::move(*row);
}

Result<std::vector<SessionRow>> list_sessions(Db& db, std::optional<std::string_view> agent) {
    SION_TRY(Stmt st, db.prepare("SELECT id FROM sessions WHERE ?1 IS NULL OR agent = ?1 "
                                 "ORDER BY started DESC, rowid DESC"));
    SION_CHECK(st.bind(1, agent));
    SION_TRY(std::vector<std::string> ids, first_column(st));
    std::vector<SessionRow> rows;
    for (const auto& id : ids) {
        SION_TRY(auto row, find_session_row(db, id));
        if (row)
            rows.push_back(std::move(*row));
    }
    return rows;
}

Status check_not_running(const SessionRow& row) {
    if (process_alive(row.owner))
        return make_error(Exit::temp_fail, "session %s is running (pid %s)", row.id.c_str(),
                          row.owner.substr(0, row.owner.find(':')).c_str());
    return {};
}

Status claim(Db& db, std::string_view id) {
    SION_TRY(Txn txn, Txn::begin(db));
    SION_TRY(auto row, find_session_row(db, id));
    if (!row)
        return make_error(Exit::no_input, "no session '%.*s'", static_cast<int>(id.size()),
                          id.data());
    SION_CHECK(check_not_running(*row));
    SION_TRY(
        Stmt st,
        db.prepare(
            "UPDATE sessions SET owner = ?2, state = 'running', ended = NULL, ended_why = NULL "
            "WHERE id = ?1"));
    SION_CHECK(st.bind_all(id, std::string_view(this_process())));
    SION_CHECK(st.run());
    return txn.commit();
}

Status end_run(Db& db, std::string_view id, std::string_view state, std::string_view why) {
    SION_TRY(Stmt st, db.prepare("UPDATE sessions SET state = ?2, owner = NULL, ended = ?3, "
                                 "ended_why = nullif(?4, '') WHERE id = ?1"));
    SION_CHECK(st.bind_all(id, state, now_ms(), why));
    return st.run();
}

Status set_settings(Db& db, std::string_view id, JsonView settings) {
    SION_TRY(Stmt st, db.prepare("UPDATE sessions SET settings = ?2 WHERE id = ?1"));
    SION_CHECK(st.bind_all(id, std::string_view(settings.dump())));
    return st.run();
}

Status set_tainted(Db& db, std::string_view id) {
    SION_TRY(Stmt st, db.prepare("UPDATE sessions SET tainted = 1 WHERE id = ?1"));
    SION_CHECK(st.bind(1, id));
    return st.run();
}

Status add_usage(Db& db, std::string_view id, const models::Usage& used) {
    SION_TRY(Stmt st, db.prepare("UPDATE sessions SET input_tokens = input_tokens + ?2, "
                                 "output_tokens = output_tokens + ?3, "
                                 "cache_read_tokens = cache_read_tokens + ?4, "
                                 "cache_write_tokens = cache_write_tokens + ?5 WHERE id = ?1"));
    SION_CHECK(st.bind_all(id, used.input_tokens, used.output_tokens, used.cache_read_tokens,
                           used.cache_write_tokens));
    return st.run();
}

void add_to(models::Usage& to, const models::Usage& more) {
    to.input_tokens += more.input_tokens;
    to.output_tokens += more.output_tokens;
    to.cache_read_tokens += more.cache_read_tokens;
    to.cache_write_tokens += more.cache_write_tokens;
}

Result<std::vector<Json>> load_messages(Db& db, std::string_view session) {
    SION_TRY(Stmt st, db.prepare("SELECT content FROM messages WHERE session = ?1 ORDER BY seq"));
    SION_CHECK(st.bind(1, session));
    std::vector<Json> out;
    while (true) {
        SION_TRY(bool row, st.step());
        if (!row)
            break;
        SION_TRY(Json message, Json::parse(st.column_text(0)));
        out.push_back(std::move(message));
    }
    return out;
}

Status append_message(Db& db, std::string_view session, JsonView message) {
    return next_message_seq_and_insert(db, session, message);
}

Result<std::vector<CallRow>> load_calls(Db& db, std::string_view session) {
    SION_TRY(Stmt st,
             db.prepare("SELECT seq, call_id, tool, input, coalesce(effect, ''), "
                        "coalesce(decision, ''), coalesce(why, ''), state, coalesce(result, ''), "
                        "coalesce(detail, ''), tainted, started_ms, coalesce(wall_ms, 0), "
                        "coalesce(parent, '') FROM calls WHERE session = ?1 ORDER BY seq"));
    SION_CHECK(st.bind(1, session));
    std::vector<CallRow> out;
    while (true) {
        SION_TRY(bool more, st.step());
        if (!more)
            break;
        CallRow row;
        row.seq = st.column_int(0);
        row.call_id = st.column_text(1);
        row.tool = st.column_text(2);
        SION_TRY(row.input, parse_column(st.column_text(3)));
        row.effect = st.column_text(4);
        row.decision = st.column_text(5);
        row.why = st.column_text(6);
        row.state = st.column_text(7);
        row.result = st.column_text(8);
        SION_TRY(row.detail, parse_column(st.column_text(9)));
        row.tainted = st.column_int(10) != 0;
        row.started_ms = st.column_int(11);
        row.wall_ms = st.column_int(12);
        row.parent = st.column_text(13);
        out.push_back(std::move(row));
    }
    return out;
}

Result<int64_t> insert_call(Db& db, std::string_view session, const CallRow& row) {
    SION_TRY(
        Stmt st,
        db.prepare("INSERT INTO calls (session, seq, call_id, tool, input, effect, decision, "
                   "why, state, started_ms, parent) VALUES (?1, (SELECT coalesce(max(seq), 0) + 1 "
                   "FROM calls WHERE session = ?1), ?2, ?3, ?4, nullif(?5, ''), "
                   "nullif(?6, ''), nullif(?7, ''), ?8, ?9, nullif(?10, '')) RETURNING seq"));
    SION_CHECK(st.bind_all(session, std::string_view(row.call_id), std::string_view(row.tool),
                           std::string_view(canonical_json(row.input)),
                           std::string_view(row.effect), std::string_view(row.decision),
                           std::string_view(row.why), std::string_view(row.state), row.started_ms,
                           std::string_view(row.parent)));
    SION_TRY(bool got, st.step());
    if (!got)
        return make_error(Exit::software, "inserting a call returned no row");
    int64_t seq = st.column_int(0);
    st.reset();
    return seq;
}

Status finish_call(Db& db, std::string_view session, const CallRow& row, JsonView message) {
    SION_TRY(Txn txn, Txn::begin(db));
    SION_TRY(Stmt st,
             db.prepare("UPDATE calls SET state = ?3, result = ?4, detail = nullif(?5, ''), "
                        "tainted = ?6, wall_ms = ?7, started_ms = ?8 WHERE session = ?1 AND "
                        "seq = ?2"));
    SION_CHECK(st.bind_all(session, row.seq, std::string_view(row.state),
                           std::string_view(row.result), std::string_view(row.detail.dump()),
                           row.tainted, row.wall_ms, row.started_ms));
    SION_CHECK(st.run());
    if (row.tainted)
        SION_CHECK(set_tainted(db, session));
    if (message.exists())
        SION_CHECK(next_message_seq_and_insert(db, session, message));
    return txn.commit();
}

} // namespace sion::session
