// SPDX-License-Identifier: MIT
// Tests for lib/session_export: a session taken whole out of one store and put into another, every
// column of its rows kept (nulls, numbers, text); one already there left as it is; what is not an
// export refused with nothing written.
#include "lib/agents.hpp"
#include "lib/db_schema.hpp"
#include "lib/session_export.hpp"

#include <gtest/gtest.h>

#include <string>

namespace sion {
namespace {

#define ASSERT_OK(r) ASSERT_TRUE(r) << (r).error().message()

const std::string k_agent = "d85ed254" + std::string(52, '0') + "a248";
const std::string k_session = "0123456789abcdef";

Db store() {
    auto db = Db::open(":memory:");
    EXPECT_TRUE(db);
    EXPECT_TRUE(migrate_state(*db));
    EXPECT_TRUE(ensure_profile(*db, "lead", {"script:a.json"}, std::nullopt));
    EXPECT_TRUE(add_agent(*db, Agent{k_agent, "lead", 1765000000000}));
    return std::move(*db);
}

// Every row of the session's tables, as text, for comparing two stores.
std::string dump(Db& db) {
    auto q = db.prepare(
        "SELECT json_array((SELECT json_group_array(json_array(id, agent, profile, task, settings, "
        "state, tainted, owner, input_tokens, output_tokens, started, ended, ended_why, "
        "cache_read_tokens, cache_write_tokens)) FROM sessions), (SELECT json_group_array("
        "json_array(session, seq, content, created)) FROM messages), (SELECT json_group_array("
        "json_array(session, seq, call_id, parent, tool, input, effect, decision, why, state, "
        "result, detail, tainted, started_ms, wall_ms)) FROM calls), (SELECT json_group_array("
        "json_array(session, tool, input, state, result, is_error, started, ended)) FROM "
        "journal), (SELECT json_group_array(json_array(session, trace, span, parent, name, kind, "
        "start_ns, end_ns, attributes, error, links)) FROM spans))");
    EXPECT_TRUE(q);
    auto row = q->step();
    EXPECT_TRUE(row && *row);
    return q->column_text(0);
}

void fill(Db& db) {
    ASSERT_OK(db.exec(
        "INSERT INTO sessions (id, agent, profile, task, settings, state, tainted, owner, "
        "input_tokens, output_tokens, started, ended, ended_why, cache_read_tokens, "
        "cache_write_tokens) VALUES ('0123456789abcdef', 'd85ed254000000000000000000000000000000"
        "0000000000000000000000a248', 'lead', 'Fix it \"now\"\nplease', '{\"models\":[\"a:b\"]}', "
        "'done', 1, NULL, 1200, 34, 1765000000000, 1765000001000, NULL, 100, 0);"
        "INSERT INTO messages VALUES ('0123456789abcdef', 1, '{\"role\":\"user\",\"text\":\"é\"}', "
        "1765000000001);"
        "INSERT INTO messages VALUES ('0123456789abcdef', 2, '{\"role\":\"assistant\"}', "
        "1765000000002);"
        "INSERT INTO calls (session, seq, call_id, parent, tool, input, effect, decision, why, "
        "state, result, detail, tainted, started_ms, wall_ms) VALUES ('0123456789abcdef', 1, "
        "'call_1_1', NULL, 'write_file', '{}', 'write', 'run', 'L3', 'done', 'ok', NULL, 0, 5, "
        "NULL);"
        "INSERT INTO journal (session, tool, input, state, result, is_error, started, ended) "
        "VALUES ('0123456789abcdef', 'write_file', '{}', 'done', 'ok', 0, 5, 6);"
        "INSERT INTO spans VALUES ('0123456789abcdef', '4bf92f3577b34da6a3ce929d0e0e4736', "
        "'00f067aa0ba902b7', NULL, 'invoke_agent sion', 1, 1765000000000000000, "
        "1765000001000000000, '{\"gen_ai.operation.name\":\"invoke_agent\"}', NULL, NULL);"
        "INSERT INTO spans VALUES ('0123456789abcdef', '4bf92f3577b34da6a3ce929d0e0e4736', "
        "'00f067aa0ba902b8', '00f067aa0ba902b7', 'chat a', 3, 1765000000000000001, "
        "1765000000500000000, '{}', 'HTTP 529: Overloaded', "
        "'[{\"trace\":\"4bf92f3577b34da6a3ce929d0e0e4737\",\"span\":\"00f067aa0ba902b9\"}]');"));
}

TEST(SessionExport, TakenOutAndPutBackWhole) {
    Db from = store();
    fill(from);
    auto exported = export_session(from, k_session);
    ASSERT_OK(exported);
    // As a file carries it: text, parsed again.
    auto text = Json::parse(exported->dump());
    ASSERT_OK(text);
    Db to = store();
    auto imported = import_session(to, text->view());
    ASSERT_OK(imported);
    EXPECT_TRUE(*imported);
    EXPECT_EQ(dump(to), dump(from));
    EXPECT_NE(dump(to).find("\"Fix it \\\"now\\\"\\nplease\""), std::string::npos) << dump(to);
    // Again: the session is there, and stays as it was.
    imported = import_session(to, text->view());
    ASSERT_OK(imported);
    EXPECT_FALSE(*imported);
    EXPECT_EQ(dump(to), dump(from));
}

TEST(SessionExport, NoSuchSession) {
    Db db = store();
    auto none = export_session(db, "ffffffffffffffff");
    ASSERT_FALSE(none);
    EXPECT_EQ(none.error().exit(), Exit::no_input);
    EXPECT_EQ(none.error().message(), "no session 'ffffffffffffffff'");
}

TEST(SessionExport, WhatIsNotAnExportWritesNothing) {
    Db from = store();
    fill(from);
    Json good = *export_session(from, k_session);
    std::string text = good.dump();

    struct Case {
        std::string text;
        const char* message;
    };

    auto replaced = [&](const std::string& from_text, const std::string& to_text) {
        std::string s = text;
        s.replace(s.find(from_text), from_text.size(), to_text);
        return s;
    };
    const Case cases[] = {
        {"[]", "an exported session is an object, not an array"},
        {R"({"session": "0123456789abcdef"})", "member 'tables' is missing"},
        {replaced("\"journal\"", "\"secrets\""), "an exported session has no table 'secrets'"},
        {replaced("\"session\":\"0123456789abcdef\",\"seq\":2",
                  "\"session\":\"ffffffffffffffff\",\"seq\":2"),
         "a row of messages is not of session 0123456789abcdef"},
        {replaced("\"calls\":[", "\"calls\":7,\"x\":["), "an exported session has no table 'x'"},
    };
    for (const Case& c : cases) {
        Db to = store();
        auto parsed = Json::parse(c.text);
        ASSERT_OK(parsed);
        auto r = import_session(to, parsed->view());
        ASSERT_FALSE(r) << c.text;
        EXPECT_EQ(r.error().exit(), Exit::data) << c.text;
        EXPECT_EQ(r.error().message(), c.message) << c.text;
        EXPECT_EQ(dump(to), R"([[],[],[],[],[]])");
    }
    // An agent that is not in the store: refused by its key, nothing written.
    Db other = *Db::open(":memory:");
    ASSERT_OK(migrate_state(other));
    auto r = import_session(other, good.view());
    ASSERT_FALSE(r);
    EXPECT_EQ(dump(other), R"([[],[],[],[],[]])");
}

TEST(SessionExport, AnExportFromBeforeTracesHasNoSpans) {
    Db from = store();
    fill(from);
    Json exported = *export_session(from, k_session);
    Json tables = exported.take("tables");
    (void)tables.take("spans");
    exported.set("tables", std::move(tables));
    Db to = store();
    auto imported = import_session(to, exported.view());
    ASSERT_OK(imported);
    EXPECT_TRUE(*imported);
    auto q = to.prepare("SELECT (SELECT count(*) FROM spans), (SELECT count(*) FROM calls)");
    ASSERT_OK(q);
    ASSERT_TRUE(*q->step());
    EXPECT_EQ(q->column_int(0), 0);
    EXPECT_EQ(q->column_int(1), 1);
}

} // namespace
} // namespace sion
