// SPDX-License-Identifier: MIT
// Tests for lib/journal: a call is recorded before it runs, answered from the record once finished,
// never repeated while unanswered, and keyed by its canonical input.
#include "lib/db_schema.hpp"
#include "lib/journal.hpp"

#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <string>
#include <utility>
#include <vector>

namespace sion {
namespace {

#define ASSERT_OK(r) ASSERT_TRUE(r) << (r).error().message()
#define EXPECT_OK(r) EXPECT_TRUE(r) << (r).error().message()

Json parse(std::string_view text) {
    auto json = Json::parse(text);
    EXPECT_TRUE(json) << text;
    return json ? std::move(*json) : Json();
}

Db memory_state() {
    auto db = Db::open(":memory:");
    EXPECT_TRUE(db) << db.error().message();
    EXPECT_TRUE(migrate_state(*db));
    return std::move(*db);
}

class JournalTest : public testing::Test {
protected:
    JournalTest() : m_db(memory_state()), m_journal(m_db) {}

    // begin() of `input` (JSON text) as session s1's call of "shell".
    Result<Begun> begin(std::string_view input, std::string_view session = "s1",
                        std::string_view tool = "shell") {
        Json json = parse(input);
        return m_journal.begin(session, tool, json);
    }

    std::vector<JournalEntry> entries(std::string_view session = "s1") {
        auto got = m_journal.entries(session);
        EXPECT_TRUE(got) << got.error().message();
        return got ? std::move(*got) : std::vector<JournalEntry>();
    }

    Db m_db;
    Journal m_journal;
};

TEST_F(JournalTest, AFirstCallProceedsAndIsRecordedAsPending) {
    int64_t before = now_ms();
    auto begun = begin(R"({"command":"make test"})");
    ASSERT_OK(begun);
    EXPECT_EQ(begun->kind, Begun::Kind::proceed);
    EXPECT_GT(begun->entry, 0);
    EXPECT_EQ(begun->result, "");
    EXPECT_FALSE(begun->is_error);

    auto all = entries();
    ASSERT_EQ(all.size(), 1U);
    EXPECT_EQ(all[0].id, begun->entry);
    EXPECT_EQ(all[0].session, "s1");
    EXPECT_EQ(all[0].tool, "shell");
    EXPECT_EQ(all[0].input, R"({"command":"make test"})");
    EXPECT_EQ(all[0].state, "pending");
    EXPECT_EQ(all[0].result, "");
    EXPECT_FALSE(all[0].is_error);
    EXPECT_GE(all[0].started, before);
    EXPECT_LE(all[0].started, now_ms());
    EXPECT_EQ(all[0].ended, 0);
}

TEST_F(JournalTest, AFinishedCallIsAnsweredFromTheRecord) {
    auto first = begin(R"({"command":"make"})");
    ASSERT_OK(first);
    ASSERT_EQ(first->kind, Begun::Kind::proceed);
    ASSERT_OK(m_journal.finish(first->entry, "built 3 targets", false));

    auto again = begin(R"({"command":"make"})");
    ASSERT_OK(again);
    EXPECT_EQ(again->kind, Begun::Kind::recorded);
    EXPECT_EQ(again->entry, first->entry);
    EXPECT_EQ(again->result, "built 3 targets");
    EXPECT_FALSE(again->is_error);

    auto all = entries();
    ASSERT_EQ(all.size(), 1U);
    EXPECT_EQ(all[0].state, "done");
    EXPECT_EQ(all[0].result, "built 3 targets");
    EXPECT_GE(all[0].ended, all[0].started);
}

TEST_F(JournalTest, AToolsErrorIsRecordedAsAnError) {
    auto first = begin(R"({"command":"false"})");
    ASSERT_OK(first);
    ASSERT_OK(m_journal.finish(first->entry, "exit 1", true));
    auto again = begin(R"({"command":"false"})");
    ASSERT_OK(again);
    EXPECT_EQ(again->kind, Begun::Kind::recorded);
    EXPECT_EQ(again->result, "exit 1");
    EXPECT_TRUE(again->is_error);
    EXPECT_TRUE(entries()[0].is_error);
}

TEST_F(JournalTest, AnEmptyAnswerIsStillAnAnswer) {
    auto first = begin(R"({"command":"true"})");
    ASSERT_OK(first);
    ASSERT_OK(m_journal.finish(first->entry, "", false));
    auto again = begin(R"({"command":"true"})");
    ASSERT_OK(again);
    EXPECT_EQ(again->kind, Begun::Kind::recorded);
    EXPECT_EQ(again->result, "");
}

TEST_F(JournalTest, APendingCallIsUncertainAndNotRecordedAgain) {
    auto first = begin(R"({"command":"deploy"})");
    ASSERT_OK(first);
    ASSERT_EQ(first->kind, Begun::Kind::proceed);

    for (int i = 0; i < 2; ++i) {
        auto again = begin(R"({"command":"deploy"})");
        ASSERT_OK(again);
        EXPECT_EQ(again->kind, Begun::Kind::uncertain);
        EXPECT_EQ(again->entry, first->entry);
        EXPECT_EQ(again->result, "this call was made before and got no answer: it may have taken "
                                 "effect, so it is not made again");
    }
    auto all = entries();
    ASSERT_EQ(all.size(), 1U);
    EXPECT_EQ(all[0].state, "pending"); // begin() only looks; it changes nothing
    EXPECT_EQ(all[0].ended, 0);
}

TEST_F(JournalTest, MarkUncertainRecordsWhyAndTheCallIsNeverRepeated) {
    auto first = begin(R"({"command":"deploy"})");
    ASSERT_OK(first);
    ASSERT_OK(m_journal.mark_uncertain(first->entry, "no answer in 30 s"));

    auto all = entries();
    ASSERT_EQ(all.size(), 1U);
    EXPECT_EQ(all[0].state, "uncertain");
    EXPECT_EQ(all[0].result, "no answer in 30 s");
    EXPECT_FALSE(all[0].is_error);
    EXPECT_GE(all[0].ended, all[0].started);

    auto again = begin(R"({"command":"deploy"})");
    ASSERT_OK(again);
    EXPECT_EQ(again->kind, Begun::Kind::uncertain);
    EXPECT_EQ(again->entry, first->entry);
    EXPECT_EQ(again->result, Journal::uncertain_message(all[0]));
    EXPECT_EQ(Journal::uncertain_message(all[0]),
              "this call was made before and got no answer (no answer in 30 s): it may have "
              "taken effect, so it is not made again");
}

TEST_F(JournalTest, UncertainMessageOfAPendingEntryGivesNoReason) {
    JournalEntry pending;
    pending.state = "pending";
    EXPECT_EQ(Journal::uncertain_message(pending),
              "this call was made before and got no answer: it may have taken effect, so it is "
              "not made again");
    JournalEntry died;
    died.state = "uncertain";
    died.result = "the tool's process died";
    EXPECT_EQ(Journal::uncertain_message(died),
              "this call was made before and got no answer (the tool's process died): it may have "
              "taken effect, so it is not made again");
}

TEST_F(JournalTest, FinishingTwiceIsRefusedAndTheFirstAnswerKept) {
    auto first = begin(R"({"command":"make"})");
    ASSERT_OK(first);
    ASSERT_OK(m_journal.finish(first->entry, "first", false));

    auto twice = m_journal.finish(first->entry, "second", true);
    ASSERT_FALSE(twice);
    EXPECT_EQ(twice.error().exit(), Exit::software);
    EXPECT_EQ(twice.error().message(), "cannot finish journal entry " + std::to_string(first->entry)
                                           + ": it is done, not pending");

    auto late = m_journal.mark_uncertain(first->entry, "too late");
    ASSERT_FALSE(late);
    EXPECT_EQ(late.error().exit(), Exit::software);
    EXPECT_EQ(late.error().message(), "cannot mark uncertain journal entry "
                                          + std::to_string(first->entry)
                                          + ": it is done, not pending");

    auto all = entries();
    ASSERT_EQ(all.size(), 1U);
    EXPECT_EQ(all[0].state, "done");
    EXPECT_EQ(all[0].result, "first");
    EXPECT_FALSE(all[0].is_error);
    EXPECT_FALSE(m_db.in_transaction());
}

TEST_F(JournalTest, AnUncertainEntryTakesNoLateAnswer) {
    auto first = begin(R"({"command":"deploy"})");
    ASSERT_OK(first);
    ASSERT_OK(m_journal.mark_uncertain(first->entry, "the tool's process died"));

    auto late = m_journal.finish(first->entry, "deployed", false);
    ASSERT_FALSE(late);
    EXPECT_EQ(late.error().exit(), Exit::software);
    EXPECT_EQ(late.error().message(), "cannot finish journal entry " + std::to_string(first->entry)
                                          + ": it is uncertain, not pending");
    auto again = m_journal.mark_uncertain(first->entry, "again");
    ASSERT_FALSE(again);
    EXPECT_EQ(again.error().exit(), Exit::software);

    auto all = entries();
    ASSERT_EQ(all.size(), 1U);
    EXPECT_EQ(all[0].state, "uncertain");
    EXPECT_EQ(all[0].result, "the tool's process died");
}

TEST_F(JournalTest, AnEntryThatDoesNotExistIsRefused) {
    auto none = m_journal.finish(42, "x", false);
    ASSERT_FALSE(none);
    EXPECT_EQ(none.error().exit(), Exit::software);
    EXPECT_EQ(none.error().message(), "cannot finish journal entry 42: there is no such entry");
    auto also = m_journal.mark_uncertain(42, "x");
    ASSERT_FALSE(also);
    EXPECT_EQ(also.error().message(),
              "cannot mark uncertain journal entry 42: there is no such entry");
    EXPECT_TRUE(entries().empty());
}

TEST_F(JournalTest, EntriesAreASessionsOwnOldestFirst) {
    std::vector<int64_t> ids;
    for (const char* input : {R"({"n":3})", R"({"n":1})", R"({"n":2})"}) {
        auto begun = begin(input);
        ASSERT_OK(begun);
        ids.push_back(begun->entry);
    }
    ASSERT_OK(begin(R"({"n":1})", "s2"));
    ASSERT_OK(m_journal.finish(ids[1], "one", false));
    ASSERT_OK(m_journal.mark_uncertain(ids[2], "why"));

    auto all = entries();
    ASSERT_EQ(all.size(), 3U);
    EXPECT_EQ(all[0].id, ids[0]);
    EXPECT_EQ(all[0].input, R"({"n":3})");
    EXPECT_EQ(all[0].state, "pending");
    EXPECT_EQ(all[1].id, ids[1]);
    EXPECT_EQ(all[1].input, R"({"n":1})");
    EXPECT_EQ(all[1].state, "done");
    EXPECT_EQ(all[2].id, ids[2]);
    EXPECT_EQ(all[2].input, R"({"n":2})");
    EXPECT_EQ(all[2].state, "uncertain");
    EXPECT_LE(all[0].started, all[1].started);
    EXPECT_LE(all[1].started, all[2].started);
    EXPECT_LT(all[0].id, all[1].id);
    EXPECT_LT(all[1].id, all[2].id);

    auto other = entries("s2");
    ASSERT_EQ(other.size(), 1U);
    EXPECT_EQ(other[0].session, "s2");
    EXPECT_TRUE(entries("nobody").empty());
}

TEST_F(JournalTest, KeysAreSortedSoMemberOrderMakesTheSameCall) {
    auto first = begin(R"({"a":1,"b":2})");
    ASSERT_OK(first);
    ASSERT_EQ(first->kind, Begun::Kind::proceed);
    ASSERT_OK(m_journal.finish(first->entry, "once", false));

    auto swapped = begin(R"({"b":2,"a":1})");
    ASSERT_OK(swapped);
    EXPECT_EQ(swapped->kind, Begun::Kind::recorded);
    EXPECT_EQ(swapped->entry, first->entry);
    EXPECT_EQ(swapped->result, "once");

    // Spacing does not matter either, nor does 1 against 1.0.
    auto spaced = begin(" { \"b\" : 2.0 ,\n \"a\" : 1 } ");
    ASSERT_OK(spaced);
    EXPECT_EQ(spaced->kind, Begun::Kind::recorded);

    auto all = entries();
    ASSERT_EQ(all.size(), 1U);
    EXPECT_EQ(all[0].input, R"({"a":1,"b":2})");
}

TEST_F(JournalTest, NestedObjectsAreSortedButArraysKeepTheirOrder) {
    auto first = begin(R"({"z":{"y":[1,2],"x":{"q":1,"p":2}},"a":"s"})");
    ASSERT_OK(first);
    ASSERT_EQ(first->kind, Begun::Kind::proceed);
    EXPECT_EQ(entries()[0].input, R"({"a":"s","z":{"x":{"p":2,"q":1},"y":[1,2]}})");

    auto same = begin(R"({"a":"s","z":{"x":{"p":2,"q":1},"y":[1,2]}})");
    ASSERT_OK(same);
    EXPECT_EQ(same->kind, Begun::Kind::uncertain);

    auto reordered = begin(R"({"a":"s","z":{"x":{"p":2,"q":1},"y":[2,1]}})");
    ASSERT_OK(reordered);
    EXPECT_EQ(reordered->kind, Begun::Kind::proceed);
    EXPECT_EQ(entries().size(), 2U);
}

TEST_F(JournalTest, DifferentValuesAreDifferentCalls) {
    for (const char* input : {R"({"a":1})", R"({"a":"1"})", R"({"a":[1]})", R"({"a":null})",
                              R"({"A":1})", R"({})", R"([])", R"("a")"}) {
        auto begun = begin(input);
        ASSERT_OK(begun);
        EXPECT_EQ(begun->kind, Begun::Kind::proceed) << input;
    }
    EXPECT_EQ(entries().size(), 8U);
}

TEST_F(JournalTest, SessionsAndToolsAreIndependent) {
    const char* input = R"({"path":"notes.txt"})";
    auto a = begin(input, "s1", "write_file");
    ASSERT_OK(a);
    ASSERT_OK(m_journal.finish(a->entry, "written", false));

    auto other_session = begin(input, "s2", "write_file");
    ASSERT_OK(other_session);
    EXPECT_EQ(other_session->kind, Begun::Kind::proceed);
    EXPECT_NE(other_session->entry, a->entry);

    auto other_tool = begin(input, "s1", "delete_file");
    ASSERT_OK(other_tool);
    EXPECT_EQ(other_tool->kind, Begun::Kind::proceed);
    EXPECT_NE(other_tool->entry, a->entry);
    EXPECT_NE(other_tool->entry, other_session->entry);

    // Finishing one leaves the others as they were.
    ASSERT_OK(m_journal.finish(other_tool->entry, "deleted", false));
    auto s2 = entries("s2");
    ASSERT_EQ(s2.size(), 1U);
    EXPECT_EQ(s2[0].state, "pending");

    auto again = begin(input, "s1", "write_file");
    ASSERT_OK(again);
    EXPECT_EQ(again->kind, Begun::Kind::recorded);
    EXPECT_EQ(again->result, "written");
    auto deleted = begin(input, "s1", "delete_file");
    ASSERT_OK(deleted);
    EXPECT_EQ(deleted->kind, Begun::Kind::recorded);
    EXPECT_EQ(deleted->result, "deleted");
}

TEST_F(JournalTest, ALongAndUnusualInputIsKeptAsItIs) {
    std::string big(100000, 'x');
    Json input = Json::object();
    input.set("data", std::string_view(big));
    input.set("text", "quote \" backslash \\ newline \n tab \t caf\xc3\xa9 \xe2\x80\xa6");
    auto first = m_journal.begin("s1", "write_file", input);
    ASSERT_OK(first);
    ASSERT_EQ(first->kind, Begun::Kind::proceed);
    auto all = entries();
    ASSERT_EQ(all.size(), 1U);
    EXPECT_EQ(all[0].input, canonical_json(input));
    auto back = Json::parse(all[0].input);
    ASSERT_OK(back);
    EXPECT_EQ(*back->view().string("text"), *input.view().string("text"));
    auto again = m_journal.begin("s1", "write_file", input);
    ASSERT_OK(again);
    EXPECT_EQ(again->kind, Begun::Kind::uncertain);
}

TEST_F(JournalTest, ResultsKeepTheirBytes) {
    auto first = begin(R"({"n":1})");
    ASSERT_OK(first);
    std::string answer = "line one\nline two \xe2\x80\xa6 {\"json\":true}";
    ASSERT_OK(m_journal.finish(first->entry, answer, false));
    auto again = begin(R"({"n":1})");
    ASSERT_OK(again);
    EXPECT_EQ(again->result, answer);
}

TEST_F(JournalTest, AReadOnlyDatabaseIsAnErrorAndNothingIsRecorded) {
    auto first = begin(R"({"n":1})");
    ASSERT_OK(first);
    ASSERT_OK(m_db.exec("PRAGMA query_only = ON"));

    auto refused = begin(R"({"n":2})");
    ASSERT_FALSE(refused);
    EXPECT_EQ(refused.error().exit(), Exit::no_perm) << refused.error().message();
    EXPECT_NE(refused.error().message().find("readonly"), std::string::npos)
        << refused.error().message();
    auto finish = m_journal.finish(first->entry, "x", false);
    ASSERT_FALSE(finish);
    EXPECT_EQ(finish.error().exit(), Exit::no_perm) << finish.error().message();
    auto mark = m_journal.mark_uncertain(first->entry, "x");
    ASSERT_FALSE(mark);
    EXPECT_EQ(mark.error().exit(), Exit::no_perm) << mark.error().message();
    EXPECT_FALSE(m_db.in_transaction());

    // Reading still works, and shows nothing changed.
    ASSERT_OK(m_db.exec("PRAGMA query_only = OFF"));
    auto all = entries();
    ASSERT_EQ(all.size(), 1U);
    EXPECT_EQ(all[0].state, "pending");
    auto retried = begin(R"({"n":2})");
    ASSERT_OK(retried);
    EXPECT_EQ(retried->kind, Begun::Kind::proceed);
}

TEST(Journal, AClosedDatabaseIsAnErrorNotACrash) {
    Db db = memory_state();
    Db taken = std::move(db); // `db` no longer holds a connection
    Journal journal(db);
    Json input = parse(R"({"n":1})");
    auto begun = journal.begin("s1", "shell", input);
    ASSERT_FALSE(begun);
    EXPECT_EQ(begun.error().exit(), Exit::software) << begun.error().message();
    auto finish = journal.finish(1, "x", false);
    ASSERT_FALSE(finish);
    EXPECT_EQ(finish.error().exit(), Exit::software) << finish.error().message();
    auto mark = journal.mark_uncertain(1, "x");
    ASSERT_FALSE(mark);
    auto all = journal.entries("s1");
    ASSERT_FALSE(all);
    EXPECT_EQ(all.error().exit(), Exit::software) << all.error().message();

    // The connection it moved to still works.
    Journal live(taken);
    auto ok = live.begin("s1", "shell", input);
    ASSERT_OK(ok);
    EXPECT_EQ(ok->kind, Begun::Kind::proceed);
}

TEST(Journal, ADatabaseWithoutTheSchemaIsAProgramError) {
    auto db = Db::open(":memory:");
    ASSERT_OK(db);
    Journal journal(*db);
    Json input = parse(R"({"n":1})");
    auto begun = journal.begin("s1", "shell", input);
    ASSERT_FALSE(begun);
    EXPECT_EQ(begun.error().exit(), Exit::software);
    EXPECT_NE(begun.error().message().find("no such table: journal"), std::string::npos)
        << begun.error().message();
    EXPECT_FALSE(db->in_transaction());
}

class JournalFileTest : public testing::Test {
protected:
    void SetUp() override {
        const char* tmp = std::getenv("TMPDIR"); // NOLINT(concurrency-mt-unsafe): one thread
        std::string dir =
            std::string(tmp != nullptr && *tmp != '\0' ? tmp : "/tmp") + "/sion-journal.XXXXXX";
        ASSERT_NE(::mkdtemp(dir.data()), nullptr);
        m_dir = dir;
    }

    void TearDown() override { std::filesystem::remove_all(m_dir); }

    std::string m_dir;
};

TEST_F(JournalFileTest, EntriesOutliveTheConnection) {
    Json made = parse(R"({"n":1})");
    Json pending = parse(R"({"n":2})");
    int64_t made_id = 0;
    {
        auto db = open_state(m_dir);
        ASSERT_OK(db);
        Journal journal(*db);
        auto begun = journal.begin("s1", "shell", made);
        ASSERT_OK(begun);
        made_id = begun->entry;
        ASSERT_OK(journal.finish(made_id, "ok", false));
        ASSERT_OK(journal.begin("s1", "shell", pending));
    }
    auto db = open_state(m_dir);
    ASSERT_OK(db);
    Journal journal(*db);
    auto recorded = journal.begin("s1", "shell", made);
    ASSERT_OK(recorded);
    EXPECT_EQ(recorded->kind, Begun::Kind::recorded);
    EXPECT_EQ(recorded->entry, made_id);
    EXPECT_EQ(recorded->result, "ok");
    auto uncertain = journal.begin("s1", "shell", pending);
    ASSERT_OK(uncertain);
    EXPECT_EQ(uncertain->kind, Begun::Kind::uncertain);
}

TEST_F(JournalFileTest, TwoConnectionsNeverBothProceed) {
    auto a = open_state(m_dir);
    ASSERT_OK(a);
    auto b = open_state(m_dir);
    ASSERT_OK(b);
    Journal ja(*a);
    Journal jb(*b);
    Json input = parse(R"({"n":1})");
    auto first = ja.begin("s1", "shell", input);
    ASSERT_OK(first);
    EXPECT_EQ(first->kind, Begun::Kind::proceed);
    auto second = jb.begin("s1", "shell", input);
    ASSERT_OK(second);
    EXPECT_EQ(second->kind, Begun::Kind::uncertain);
    EXPECT_EQ(second->entry, first->entry);
    ASSERT_OK(ja.finish(first->entry, "ok", false));
    auto third = jb.begin("s1", "shell", input);
    ASSERT_OK(third);
    EXPECT_EQ(third->kind, Begun::Kind::recorded);
    // The other connection cannot finish it a second time.
    auto twice = jb.finish(first->entry, "again", false);
    ASSERT_FALSE(twice);
    EXPECT_EQ(twice.error().exit(), Exit::software);
}

TEST_F(JournalFileTest, ABusyDatabaseIsTryAgainAndRecordsNothing) {
    auto a = open_state(m_dir);
    ASSERT_OK(a);
    auto b = open_state(m_dir);
    ASSERT_OK(b);
    b->set_busy_timeout(std::chrono::milliseconds(0));
    auto hold = Txn::begin(*a); // a holds the write lock
    ASSERT_OK(hold);
    Journal jb(*b);
    Json input = parse(R"({"n":1})");
    auto busy = jb.begin("s1", "shell", input);
    ASSERT_FALSE(busy);
    EXPECT_EQ(busy.error().exit(), Exit::temp_fail) << busy.error().message();
    hold->rollback();
    auto all = jb.entries("s1");
    ASSERT_OK(all);
    EXPECT_TRUE(all->empty());
}

} // namespace
} // namespace sion

namespace sion {
namespace {

TEST(JournalForget, APendingEntryIsForgottenAndTheCallProceedsAgain) {
    auto db = Db::open(":memory:");
    ASSERT_TRUE(db);
    ASSERT_TRUE(migrate_state(*db));
    Journal journal(*db);
    auto input = Json::parse(R"({"path":"a.py","patch":"x"})");
    auto first = journal.begin("s1", "apply_patch", *input);
    ASSERT_TRUE(first);
    ASSERT_EQ(first->kind, Begun::Kind::proceed);
    ASSERT_TRUE(journal.forget(first->entry));
    auto again = journal.begin("s1", "apply_patch", *input);
    ASSERT_TRUE(again);
    EXPECT_EQ(again->kind, Begun::Kind::proceed);
    ASSERT_TRUE(journal.finish(again->entry, "updated a.py (1 hunk)", false));
    auto done = journal.forget(again->entry);
    ASSERT_FALSE(done);
    EXPECT_EQ(done.error().exit(), Exit::software);
    EXPECT_EQ(done.error().message(),
              "cannot forget journal entry " + std::to_string(again->entry) + ": it is done");
    auto missing = journal.forget(99);
    ASSERT_FALSE(missing);
    EXPECT_EQ(missing.error().message(), "cannot forget journal entry 99: it is not there");
}

} // namespace
} // namespace sion
