// SPDX-License-Identifier: MIT
// The journal of calls that must not run twice, kept in sion.db's journal table.
#include "lib/journal.hpp"

#include "lib/db_schema.hpp"

namespace sion {

namespace {

constexpr const char* k_pending = "pending";
constexpr const char* k_done = "done";
constexpr const char* k_uncertain = "uncertain";

// The entry's state, read inside the caller's transaction so that the check and the update that
// follows it see the same row; nullopt when there is no such entry.
Result<std::optional<std::string>> state_of(Db& db, int64_t entry) {
    SION_TRY(Stmt stmt, db.prepare("SELECT state FROM journal WHERE id = ?1"));
    SION_CHECK(stmt.bind(1, entry));
    SION_TRY(bool row, stmt.step());
    if (!row)
        return std::optional<std::string>();
    std::optional<std::string> state = stmt.column_text(0);
    stmt.reset();
    return state;
}

// Ends a pending entry as `state` with `result`. Anything but a pending entry is a mistake of the
// caller's (an answer recorded twice, or for a call it was told not to make), and the record that
// is there already wins.
Status end_entry(Db& db, const char* verb, int64_t entry, const char* state,
                 std::string_view result, bool is_error) {
    SION_TRY(Txn txn, Txn::begin(db));
    SION_TRY(std::optional<std::string> now, state_of(db, entry));
    if (!now)
        return make_error(Exit::software, "cannot %s journal entry %lld: there is no such entry",
                          verb, static_cast<long long>(entry));
    if (*now != k_pending)
        return make_error(Exit::software, "cannot %s journal entry %lld: it is %s, not pending",
                          verb, static_cast<long long>(entry), now->c_str());
    SION_TRY(Stmt update,
             db.prepare("UPDATE journal SET state = ?1, result = ?2, is_error = ?3, ended = ?4 "
                        "WHERE id = ?5"));
    SION_CHECK(update.bind_all(std::string_view(state), result, is_error, now_ms(), entry));
    SION_CHECK(update.run());
    return txn.commit();
}

} // namespace

// The look-up and the insert share one write transaction (BEGIN IMMEDIATE): two processes that
// begin the same call cannot both find no entry, and the UNIQUE key would refuse the second
// insert anyway. A call found recorded or unfinished changes nothing, so its transaction is
// simply rolled back.
Result<Begun> Journal::begin(std::string_view session, std::string_view tool, JsonView input) {
    std::string key = canonical_json(input);
    SION_TRY(Txn txn, Txn::begin(*m_db));
    SION_TRY(Stmt find, m_db->prepare("SELECT id, state, result, is_error FROM journal "
                                      "WHERE session = ?1 AND tool = ?2 AND input = ?3"));
    SION_CHECK(find.bind_all(session, tool, std::string_view(key)));
    SION_TRY(bool found, find.step());
    Begun begun;
    if (found) {
        begun.entry = find.column_int(0);
        if (find.column_text(1) == k_done) {
            begun.kind = Begun::Kind::recorded;
            begun.result = find.column_text(2);
            begun.is_error = find.column_int(3) != 0;
        } else {
            begun.kind = Begun::Kind::uncertain;
            JournalEntry entry;
            entry.result = find.column_text(1) == k_uncertain ? find.column_text(2) : std::string();
            begun.result = uncertain_message(entry);
        }
        find.reset();
        return begun;
    }
    SION_TRY(Stmt insert,
             m_db->prepare("INSERT INTO journal (session, tool, input, state, started) "
                           "VALUES (?1, ?2, ?3, ?4, ?5)"));
    SION_CHECK(insert.bind_all(session, tool, std::string_view(key), std::string_view(k_pending),
                               now_ms()));
    SION_CHECK(insert.run());
    begun.entry = m_db->last_insert_rowid();
    // Only once the pending entry is durable may the caller make the call.
    SION_CHECK(txn.commit());
    begun.kind = Begun::Kind::proceed;
    return begun;
}

Status Journal::finish(int64_t entry, std::string_view result, bool is_error) {
    return end_entry(*m_db, "finish", entry, k_done, result, is_error);
}

Status Journal::mark_uncertain(int64_t entry, std::string_view why) {
    return end_entry(*m_db, "mark uncertain", entry, k_uncertain, why, false);
}

Status Journal::forget(int64_t entry) {
    SION_TRY(Txn txn, Txn::begin(*m_db));
    SION_TRY(std::optional<std::string> now, state_of(*m_db, entry));
    if (!now || *now != k_pending)
        return make_error(Exit::software, "cannot forget journal entry %lld: it is %s",
                          static_cast<long long>(entry), now ? now->c_str() : "not there");
    SION_TRY(Stmt del, m_db->prepare("DELETE FROM journal WHERE id = ?1"));
    SION_CHECK(del.bind(1, entry));
    SION_CHECK(del.run());
    return txn.commit();
}

Result<std::vector<JournalEntry>> Journal::entries(std::string_view session) {
    SION_TRY(
        Stmt stmt,
        m_db->prepare("SELECT id, session, tool, input, state, result, is_error, started, ended "
                      "FROM journal WHERE session = ?1 ORDER BY id"));
    SION_CHECK(stmt.bind(1, session));
    std::vector<JournalEntry> out;
    for (;;) {
        SION_TRY(bool row, stmt.step());
        if (!row)
            return out;
        JournalEntry& e = out.emplace_back();
        e.id = stmt.column_int(0);
        e.session = stmt.column_text(1);
        e.tool = stmt.column_text(2);
        e.input = stmt.column_text(3);
        e.state = stmt.column_text(4);
        e.result = stmt.column_text(5); // NULL while pending reads as ""
        e.is_error = stmt.column_int(6) != 0;
        e.started = stmt.column_int(7);
        e.ended = stmt.column_optional_int(8).value_or(0);
    }
}

// A pending entry has no reason recorded (its process died before it could give one), so the
// message then says only that no answer came.
std::string Journal::uncertain_message(const JournalEntry& entry) {
    std::string why = entry.result.empty() ? std::string() : " (" + entry.result + ")";
    return "this call was made before and got no answer" + why
           + ": it may have taken effect, so it is not made again";
}

} // namespace sion
