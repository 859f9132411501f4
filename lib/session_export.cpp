// SPDX-License-Identifier: MIT
// Sessions exported and imported with SQLite's JSON functions, table by table. The columns are
// named here, as the schema has them since its migration 3 (lib/db_schema.cpp): a migration that
// adds a column to one of these tables adds it here too.
#include "lib/session_export.hpp"

namespace sion {

namespace {

struct Table {
    const char* name;
    Sql rows;   // ?1: the session's id; one row, a JSON array of objects
    Sql insert; // ?1: that array
};

const Table k_tables[] = {
    {"sessions",
     "SELECT json_group_array(json_object('id', id, 'agent', agent, 'profile', profile, 'task', "
     "task, 'settings', settings, 'state', state, 'tainted', tainted, 'owner', owner, "
     "'input_tokens', input_tokens, 'output_tokens', output_tokens, 'started', started, 'ended', "
     "ended, 'ended_why', ended_why, 'cache_read_tokens', cache_read_tokens, "
     "'cache_write_tokens', cache_write_tokens)) FROM sessions WHERE id = ?1",
     "INSERT INTO sessions (id, agent, profile, task, settings, state, tainted, owner, "
     "input_tokens, output_tokens, started, ended, ended_why, cache_read_tokens, "
     "cache_write_tokens) SELECT value->>'id', value->>'agent', value->>'profile', "
     "value->>'task', value->>'settings', value->>'state', value->>'tainted', value->>'owner', "
     "value->>'input_tokens', value->>'output_tokens', value->>'started', value->>'ended', "
     "value->>'ended_why', value->>'cache_read_tokens', value->>'cache_write_tokens' "
     "FROM json_each(?1)"},
    {"messages",
     "SELECT json_group_array(json_object('session', session, 'seq', seq, 'content', content, "
     "'created', created)) FROM (SELECT * FROM messages WHERE session = ?1 ORDER BY seq)",
     "INSERT INTO messages (session, seq, content, created) SELECT value->>'session', "
     "value->>'seq', value->>'content', value->>'created' FROM json_each(?1)"},
    {"calls",
     "SELECT json_group_array(json_object('session', session, 'seq', seq, 'call_id', call_id, "
     "'parent', parent, 'tool', tool, 'input', input, 'effect', effect, 'decision', decision, "
     "'why', why, 'state', state, 'result', result, 'detail', detail, 'tainted', tainted, "
     "'started_ms', started_ms, 'wall_ms', wall_ms)) FROM (SELECT * FROM calls WHERE session = "
     "?1 ORDER BY seq)",
     "INSERT INTO calls (session, seq, call_id, parent, tool, input, effect, decision, why, "
     "state, result, detail, tainted, started_ms, wall_ms) SELECT value->>'session', "
     "value->>'seq', value->>'call_id', value->>'parent', value->>'tool', value->>'input', "
     "value->>'effect', value->>'decision', value->>'why', value->>'state', value->>'result', "
     "value->>'detail', value->>'tainted', value->>'started_ms', value->>'wall_ms' "
     "FROM json_each(?1)"},
    {"journal",
     "SELECT json_group_array(json_object('session', session, 'tool', tool, 'input', input, "
     "'state', state, 'result', result, 'is_error', is_error, 'started', started, 'ended', "
     "ended)) FROM (SELECT * FROM journal WHERE session = ?1 ORDER BY id)",
     "INSERT INTO journal (session, tool, input, state, result, is_error, started, ended) "
     "SELECT value->>'session', value->>'tool', value->>'input', value->>'state', "
     "value->>'result', value->>'is_error', value->>'started', value->>'ended' "
     "FROM json_each(?1)"},
    {"spans",
     "SELECT json_group_array(json_object('session', session, 'trace', trace, 'span', span, "
     "'parent', parent, 'name', name, 'kind', kind, 'start_ns', CAST(start_ns AS TEXT), "
     "'end_ns', CAST(end_ns AS TEXT), 'attributes', attributes, 'error', error, 'links', "
     "links)) FROM (SELECT * FROM spans "
     "WHERE session = ?1 ORDER BY start_ns, span)",
     "INSERT INTO spans (session, trace, span, parent, name, kind, start_ns, end_ns, attributes, "
     "error, links) SELECT value->>'session', value->>'trace', value->>'span', value->>'parent', "
     "value->>'name', value->>'kind', CAST(value->>'start_ns' AS INTEGER), "
     "CAST(value->>'end_ns' AS INTEGER), "
     "value->>'attributes', value->>'error', value->>'links' FROM json_each(?1)"},
};

// Every row of `rows` is of the session `id`: an import adds nothing to another.
Status of_session(JsonView rows, const char* table, std::string_view id) {
    if (!rows.is_array())
        return make_error(Exit::data, "%s is %s, not an array", table, rows.type_name());
    const char* key = std::string_view(table) == "sessions" ? "id" : "session";
    for (JsonView row : rows)
        if (!row.is_object() || row.string_or(key, "").value_or("") != id)
            return make_error(Exit::data, "a row of %s is not of session %.*s", table,
                              static_cast<int>(id.size()), id.data());
    return {};
}

} // namespace

Result<Json> export_session(Db& db, std::string_view id) {
    Json tables = Json::object();
    for (const Table& t : k_tables) {
        SION_TRY(Stmt q, db.prepare(t.rows));
        SION_CHECK(q.bind(1, id));
        SION_TRY(bool row, q.step());
        std::string text = row ? q.column_text(0) : "[]";
        q.reset();
        SION_TRY(Json rows, Json::parse(text));
        if (std::string_view(t.name) == "sessions" && rows.view().size() == 0)
            return make_error(Exit::no_input, "no session '%.*s'", static_cast<int>(id.size()),
                              id.data());
        tables.set(t.name, std::move(rows));
    }
    Json out = Json::object();
    out.set("session", id);
    out.set("tables", std::move(tables));
    return out;
}

Result<bool> import_session(Db& db, JsonView exported) {
    if (!exported.is_object())
        return make_error(Exit::data, "an exported session is an object, not %s",
                          exported.type_name());
    SION_TRY(std::string_view id, exported.string("session"));
    SION_TRY(JsonView tables, exported.object("tables"));
    for (JsonView t : tables) {
        bool known = false;
        for (const Table& k : k_tables)
            known = known || t.key() == k.name;
        if (!known)
            return make_error(Exit::data, "an exported session has no table '%.*s'",
                              static_cast<int>(t.key().size()), t.key().data());
    }
    for (const Table& t : k_tables) {
        JsonView rows = tables.get(t.name);
        if (!rows.exists() && std::string_view(t.name) == "spans")
            continue; // exported before sion kept traces
        if (!rows.exists())
            return make_error(Exit::data, "an exported session has no %s", t.name);
        SION_CHECK(of_session(rows, t.name, id));
    }
    if (tables.get("sessions").size() != 1)
        return make_error(Exit::data, "an exported session has %zu rows of sessions, not 1",
                          tables.get("sessions").size());
    SION_TRY(Txn txn, Txn::begin(db));
    SION_TRY(Stmt there, db.prepare("SELECT 1 FROM sessions WHERE id = ?1"));
    SION_CHECK(there.bind(1, id));
    SION_TRY(bool exists, there.step());
    there.reset();
    if (exists)
        return false;
    for (const Table& t : k_tables) {
        if (!tables.get(t.name).exists())
            continue;
        SION_TRY(Stmt insert, db.prepare(t.insert));
        SION_CHECK(insert.bind(1, std::string_view(tables.get(t.name).dump())));
        SION_CHECK(insert.run());
    }
    SION_CHECK(txn.commit());
    return true;
}

} // namespace sion
