// SPDX-License-Identifier: MIT
// Tests for lib/db: opening, WAL, migrations, transactions, bound parameters and how failures look.
#include "lib/db.hpp"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <csignal>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <optional>
#include <string>
#include <vector>

using namespace std::string_literals;

namespace sion {
namespace {

#define ASSERT_OK(r) ASSERT_TRUE(r) << (r).error().message()
#define EXPECT_OK(r) EXPECT_TRUE(r) << (r).error().message()

class DbTest : public testing::Test {
protected:
    void SetUp() override {
        const char* tmp = std::getenv("TMPDIR"); // NOLINT(concurrency-mt-unsafe): one thread
        std::string dir =
            std::string(tmp != nullptr && *tmp != '\0' ? tmp : "/tmp") + "/sion-db.XXXXXX";
        ASSERT_NE(::mkdtemp(dir.data()), nullptr);
        // sqlite names files by their real path; compare messages against the same.
        m_dir = std::filesystem::canonical(dir).string();
        m_path = m_dir + "/sion.db";
    }

    void TearDown() override { std::filesystem::remove_all(m_dir); }

    static std::string slurp(const std::string& path) {
        std::ifstream in(path, std::ios::binary);
        return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
    }

    // The first column of the first row of a constant query, as text.
    static std::string query_text(Db& db, Sql sql) {
        auto stmt = db.prepare(sql);
        if (!stmt)
            return "error: " + stmt.error().message();
        auto row = stmt->step();
        if (!row)
            return "error: " + row.error().message();
        return *row ? stmt->column_text(0) : "no row";
    }

    std::string m_dir;
    std::string m_path;
};

TEST_F(DbTest, OpenCreatesThePrivateFileEvenUnderUmaskZero) {
    mode_t old = ::umask(0);
    auto db = Db::open(m_path);
    ::umask(old);
    ASSERT_OK(db);
    struct stat st = {};
    ASSERT_EQ(::stat(m_path.c_str(), &st), 0);
    EXPECT_EQ(st.st_mode & 07777, 0600U);
    ASSERT_OK(db->exec("CREATE TABLE t(a)"));
    // The WAL file takes the database file's mode.
    ASSERT_EQ(::stat((m_path + "-wal").c_str(), &st), 0);
    EXPECT_EQ(st.st_mode & 07777, 0600U);
    EXPECT_EQ(db->path(), m_path);
}

// A close does not copy the log into the database (that costs every program milliseconds at its
// end): the log stays, and the next connection reads all that was committed.
TEST_F(DbTest, ACloseLeavesTheLogAndLosesNothing) {
    {
        auto db = Db::open(m_path);
        ASSERT_OK(db);
        ASSERT_OK(db->exec("CREATE TABLE t(a); INSERT INTO t VALUES (1), (2)"));
    }
    EXPECT_GT(std::filesystem::file_size(m_path + "-wal"), 0U);
    auto db = Db::open(m_path);
    ASSERT_OK(db);
    auto stmt = db->prepare("SELECT count(*) FROM t");
    ASSERT_OK(stmt);
    auto row = stmt->step();
    ASSERT_OK(row);
    EXPECT_EQ(stmt->column_int(0), 2);
}

TEST_F(DbTest, OpenKeepsAnExistingFilesMode) {
    { ASSERT_OK(Db::open(m_path)); }
    ASSERT_EQ(::chmod(m_path.c_str(), 0640), 0);
    ASSERT_OK(Db::open(m_path));
    struct stat st = {};
    ASSERT_EQ(::stat(m_path.c_str(), &st), 0);
    EXPECT_EQ(st.st_mode & 07777, 0640U);
}

TEST_F(DbTest, WalForeignKeysAndFullSynchronousAreOn) {
    auto db = Db::open(m_path);
    ASSERT_OK(db);
    EXPECT_EQ(query_text(*db, "PRAGMA journal_mode"), "wal");
    EXPECT_EQ(query_text(*db, "PRAGMA foreign_keys"), "1");
    EXPECT_EQ(query_text(*db, "PRAGMA synchronous"), "2");
    ASSERT_OK(
        db->exec("CREATE TABLE p(id INTEGER PRIMARY KEY); CREATE TABLE c(p REFERENCES p(id))"));
    auto bad = db->exec("INSERT INTO c VALUES (42)");
    ASSERT_FALSE(bad);
    EXPECT_EQ(bad.error().exit(), Exit::data);
    EXPECT_EQ(bad.error().message(),
              "cannot run 'INSERT INTO c VALUES (42)': FOREIGN KEY constraint failed");
}

TEST_F(DbTest, OpenInAMissingDirectorySaysSo) {
    std::string path = m_dir + "/missing/sion.db";
    auto db = Db::open(path);
    ASSERT_FALSE(db);
    EXPECT_EQ(db.error().message(),
              "cannot open database '" + path + "': unable to open database file");
    EXPECT_EQ(db.error().exit(), Exit::io);
}

TEST_F(DbTest, InMemoryDatabaseWorks) {
    auto db = Db::open(":memory:");
    ASSERT_OK(db);
    EXPECT_EQ(query_text(*db, "SELECT 1 + 1"), "2");
}

TEST_F(DbTest, MigrationsApplyInOrderAndOnlyOnce) {
    auto db = Db::open(m_path);
    ASSERT_OK(db);
    auto v0 = schema_version(*db);
    ASSERT_OK(v0);
    EXPECT_EQ(*v0, 0);
    // Step 2 needs step 1's table, so running out of order would fail; running twice would add a
    // row.
    ASSERT_OK(migrate(*db, {{1, "CREATE TABLE t(a)"}, {2, "INSERT INTO t VALUES ('two')"}}));
    ASSERT_OK(migrate(*db, {{1, "CREATE TABLE t(a)"}, {2, "INSERT INTO t VALUES ('two')"}}));
    EXPECT_EQ(query_text(*db, "SELECT group_concat(a) FROM t"), "two");
    EXPECT_EQ(query_text(*db, "PRAGMA user_version"), "2");
    // A later program adds a step: only that one runs.
    ASSERT_OK(migrate(*db, {{1, "CREATE TABLE t(a)"},
                            {2, "INSERT INTO t VALUES ('two')"},
                            {5, "INSERT INTO t VALUES ('five')"}}));
    EXPECT_EQ(query_text(*db, "SELECT group_concat(a) FROM t"), "two,five");
    EXPECT_EQ(query_text(*db, "PRAGMA user_version"), "5");
    EXPECT_FALSE(db->in_transaction());
}

TEST_F(DbTest, MigrationsFromAConstantArray) {
    static constexpr Migration k_steps[] = {{1, "CREATE TABLE t(a)"},
                                            {2, "CREATE INDEX t_a ON t(a)"}};
    auto db = Db::open(m_path);
    ASSERT_OK(db);
    ASSERT_OK(migrate(*db, k_steps));
    EXPECT_EQ(query_text(*db, "PRAGMA user_version"), "2");
}

TEST_F(DbTest, NewerDatabaseIsRefused) {
    {
        auto db = Db::open(m_path);
        ASSERT_OK(db);
        ASSERT_OK(migrate(*db, {{1, "CREATE TABLE t(a)"}, {3, "CREATE TABLE u(b)"}}));
    }
    auto db = Db::open(m_path);
    ASSERT_OK(db);
    auto old = migrate(*db, {{1, "CREATE TABLE t(a)"}, {2, "CREATE TABLE v(c)"}});
    ASSERT_FALSE(old);
    EXPECT_EQ(old.error().exit(), Exit::config);
    EXPECT_EQ(old.error().message(),
              "database '" + m_path
                  + "' has schema version 3, newer than the 2 this sion knows: upgrade sion");
    EXPECT_EQ(query_text(*db, "SELECT count(*) FROM sqlite_master WHERE name = 'v'"), "0");
}

TEST_F(DbTest, FailingMigrationLeavesThePreviousVersion) {
    auto db = Db::open(m_path);
    ASSERT_OK(db);
    auto failed = migrate(*db, {{1, "CREATE TABLE t(a)"},
                                {2, "CREATE TABLE u(b); INSERT INTO nowhere VALUES (1)"},
                                {3, "CREATE TABLE w(c)"}});
    ASSERT_FALSE(failed);
    EXPECT_EQ(failed.error().exit(), Exit::software);
    EXPECT_EQ(failed.error().message(),
              "cannot migrate database '" + m_path
                  + "' to schema version 2: cannot run 'CREATE TABLE u(b); "
                    "INSERT INTO nowhere VALUES (1)': no such table: nowhere");
    EXPECT_EQ(query_text(*db, "PRAGMA user_version"), "1");
    EXPECT_EQ(query_text(*db, "SELECT group_concat(name) FROM sqlite_master"), "t");
    EXPECT_FALSE(db->in_transaction());
}

TEST_F(DbTest, MigrationStepsOutOfOrderAreAProgramError) {
    auto db = Db::open(m_path);
    ASSERT_OK(db);
    auto bad = migrate(*db, {{2, "CREATE TABLE t(a)"}, {1, "CREATE TABLE u(a)"}});
    ASSERT_FALSE(bad);
    EXPECT_EQ(bad.error().exit(), Exit::software);
    EXPECT_EQ(bad.error().message(), "migration to schema version 1 comes after version 2");
    EXPECT_EQ(query_text(*db, "PRAGMA user_version"), "0");
}

TEST_F(DbTest, MigrationVersionsStartAtOne) {
    auto db = Db::open(m_path);
    ASSERT_OK(db);
    auto bad = migrate(*db, {{0, "CREATE TABLE t(a)"}});
    ASSERT_FALSE(bad);
    EXPECT_EQ(bad.error().exit(), Exit::software);
    EXPECT_EQ(bad.error().message(), "migration to schema version 0: versions start at 1");
}

TEST_F(DbTest, MigrationThatCommitsItselfIsReported) {
    auto db = Db::open(m_path);
    ASSERT_OK(db);
    auto bad = migrate(*db, {{1, "COMMIT; CREATE TABLE t(a)"}});
    ASSERT_FALSE(bad);
    EXPECT_EQ(bad.error().exit(), Exit::software);
    EXPECT_EQ(bad.error().message(),
              "cannot migrate database '" + m_path
                  + "' to schema version 1: the step ended its own transaction");
    EXPECT_EQ(query_text(*db, "PRAGMA user_version"), "0");
}

TEST_F(DbTest, DroppedTxnRollsBackAndCommittedTxnStays) {
    auto db = Db::open(m_path);
    ASSERT_OK(db);
    ASSERT_OK(db->exec("CREATE TABLE t(a)"));
    {
        auto txn = Txn::begin(*db);
        ASSERT_OK(txn);
        EXPECT_TRUE(db->in_transaction());
        ASSERT_OK(db->exec("INSERT INTO t VALUES ('dropped')"));
    }
    EXPECT_FALSE(db->in_transaction());
    {
        auto txn = Txn::begin(*db);
        ASSERT_OK(txn);
        ASSERT_OK(db->exec("INSERT INTO t VALUES ('kept')"));
        ASSERT_OK(txn->commit());
        auto again = txn->commit();
        ASSERT_FALSE(again);
        EXPECT_EQ(again.error().exit(), Exit::software);
    }
    {
        auto txn = Txn::begin(*db);
        ASSERT_OK(txn);
        ASSERT_OK(db->exec("INSERT INTO t VALUES ('rolled back')"));
        txn->rollback();
        EXPECT_FALSE(db->in_transaction());
    }
    EXPECT_EQ(query_text(*db, "SELECT group_concat(a) FROM t"), "kept");
}

TEST_F(DbTest, MovedTxnRollsBackOnce) {
    auto db = Db::open(m_path);
    ASSERT_OK(db);
    ASSERT_OK(db->exec("CREATE TABLE t(a)"));
    {
        auto txn = Txn::begin(*db);
        ASSERT_OK(txn);
        Txn moved = std::move(txn).value();
        ASSERT_OK(db->exec("INSERT INTO t VALUES (1)"));
        ASSERT_OK(moved.commit());
    }
    EXPECT_EQ(query_text(*db, "SELECT count(*) FROM t"), "1");
}

TEST_F(DbTest, NestedTxnIsAProgramError) {
    auto db = Db::open(m_path);
    ASSERT_OK(db);
    auto outer = Txn::begin(*db);
    ASSERT_OK(outer);
    auto inner = Txn::begin(*db);
    ASSERT_FALSE(inner);
    EXPECT_EQ(inner.error().exit(), Exit::software);
    EXPECT_EQ(inner.error().message(),
              "cannot run 'BEGIN IMMEDIATE': cannot start a transaction within a transaction");
}

// Stores `value` as the only row of t(v) through a bound parameter, then reads it back: a statement
// on the row, typeof(v) in column 0 and v in column 1.
template <class T>
Result<Stmt> store_and_read(Db& db, const T& value) {
    SION_CHECK(db.exec("CREATE TABLE IF NOT EXISTS t(v); DELETE FROM t"));
    SION_TRY(Stmt insert, db.prepare("INSERT INTO t(v) VALUES (?)"));
    SION_CHECK(insert.bind(1, value));
    SION_CHECK(insert.run());
    SION_TRY(Stmt read, db.prepare("SELECT typeof(v), v FROM t"));
    SION_TRY(bool row, read.step());
    if (!row)
        return make_error(Exit::software, "no row stored");
    return read;
}

TEST_F(DbTest, NumbersAndNullBindAndReadBack) {
    auto db = Db::open(m_path);
    ASSERT_OK(db);
    auto r = store_and_read(*db, std::int64_t{INT64_MIN});
    ASSERT_OK(r);
    EXPECT_EQ(r->column_text(0), "integer");
    EXPECT_EQ(r->column_int(1), INT64_MIN);
    EXPECT_EQ(r->column_count(), 2);
    r = store_and_read(*db, 42);
    ASSERT_OK(r);
    EXPECT_EQ(r->column_int(1), 42);
    r = store_and_read(*db, true);
    ASSERT_OK(r);
    EXPECT_EQ(r->column_int(1), 1);
    r = store_and_read(*db, std::uint64_t{INT64_MAX});
    ASSERT_OK(r);
    EXPECT_EQ(r->column_int(1), INT64_MAX);
    r = store_and_read(*db, 2.5);
    ASSERT_OK(r);
    EXPECT_EQ(r->column_text(0), "real");
    EXPECT_EQ(r->column_double(1), 2.5);
    r = store_and_read(*db, std::nullopt);
    ASSERT_OK(r);
    EXPECT_EQ(r->column_text(0), "null");
    EXPECT_TRUE(r->column_is_null(1));
    EXPECT_EQ(r->column_optional_int(1), std::nullopt);
    r = store_and_read(*db, std::optional<std::int64_t>{7});
    ASSERT_OK(r);
    EXPECT_EQ(r->column_optional_int(1), 7);
    r = store_and_read(*db, std::optional<double>{});
    ASSERT_OK(r);
    EXPECT_TRUE(r->column_is_null(1));
}

TEST_F(DbTest, TextAndBlobsBindAndReadBack) {
    auto db = Db::open(m_path);
    ASSERT_OK(db);
    // Text that would break string-built SQL, with a NUL inside; a blob of every byte value.
    std::string tricky = "it's \"quoted\"'); DROP TABLE t; --\0tail"s;
    std::string bytes;
    for (int i = 0; i < 256; ++i)
        bytes += static_cast<char>(i);
    auto r = store_and_read(*db, std::string_view(tricky));
    ASSERT_OK(r);
    EXPECT_EQ(r->column_text(0), "text");
    EXPECT_EQ(r->column_text(1), tricky);
    r = store_and_read(*db, Blob{bytes});
    ASSERT_OK(r);
    EXPECT_EQ(r->column_text(0), "blob");
    EXPECT_EQ(r->column_blob(1), bytes);
    r = store_and_read(*db, std::string_view());
    ASSERT_OK(r);
    EXPECT_EQ(r->column_text(0), "text"); // empty text is not NULL
    EXPECT_EQ(r->column_optional_text(1), "");
    r = store_and_read(*db, Blob{});
    ASSERT_OK(r);
    EXPECT_EQ(r->column_text(0), "blob"); // nor is an empty blob
    EXPECT_EQ(r->column_blob(1), "");
    r = store_and_read(*db, "literal");
    ASSERT_OK(r);
    EXPECT_EQ(r->column_text(1), "literal");
    r = store_and_read(*db, std::string("owned"));
    ASSERT_OK(r);
    EXPECT_EQ(r->column_text(1), "owned");
    r = store_and_read(*db, std::optional<std::string>{});
    ASSERT_OK(r);
    EXPECT_EQ(r->column_optional_text(1), std::nullopt);
    r = store_and_read(*db, std::optional<std::string>{tricky});
    ASSERT_OK(r);
    EXPECT_EQ(r->column_optional_text(1), tricky);
}

TEST_F(DbTest, BindAllAndRowIds) {
    auto db = Db::open(m_path);
    ASSERT_OK(db);
    ASSERT_OK(db->exec("CREATE TABLE t(k INTEGER PRIMARY KEY, a, b, c)"));
    auto insert = db->prepare("INSERT INTO t(a, b, c) VALUES (?, ?, ?)");
    ASSERT_OK(insert);
    ASSERT_OK(insert->bind_all(1, "x", Blob{std::string_view("\0y", 2)}));
    ASSERT_OK(insert->run());
    EXPECT_EQ(db->last_insert_rowid(), 1);
    EXPECT_EQ(db->changes(), 1);
    EXPECT_EQ(query_text(*db, "SELECT a || b || hex(c) FROM t"), "1x0079");
    // One parameter too many: the error names it, and nothing else is bound past it.
    auto extra = insert->bind_all(1, 2, 3, 4);
    ASSERT_FALSE(extra);
    EXPECT_EQ(extra.error().exit(), Exit::software);
    EXPECT_EQ(extra.error().message(), "cannot bind parameter 4 of 'INSERT INTO t(a, b, c) VALUES "
                                       "(?, ?, ?)': column index out of range");
}

TEST_F(DbTest, UnsignedAboveInt64IsRefused) {
    auto db = Db::open(m_path);
    ASSERT_OK(db);
    auto stmt = db->prepare("SELECT ?");
    ASSERT_OK(stmt);
    auto big = stmt->bind(1, UINT64_MAX);
    ASSERT_FALSE(big);
    EXPECT_EQ(big.error().message(), "cannot bind parameter 1 of 'SELECT ?': integer out of range");
}

TEST_F(DbTest, PrepareErrorsNameTheStatement) {
    auto db = Db::open(m_path);
    ASSERT_OK(db);
    auto bad = db->prepare("SELEKT 1");
    ASSERT_FALSE(bad);
    EXPECT_EQ(bad.error().exit(), Exit::software);
    EXPECT_EQ(bad.error().message(),
              "cannot prepare statement 'SELEKT 1': near \"SELEKT\": syntax error");
    auto two = db->prepare("SELECT 1; SELECT 2");
    ASSERT_FALSE(two);
    EXPECT_EQ(two.error().message(),
              "cannot prepare statement 'SELECT 1; SELECT 2': more than one statement");
    auto none = db->prepare("  ");
    ASSERT_FALSE(none);
    EXPECT_EQ(none.error().message(), "cannot prepare statement '': no statement in it");
    EXPECT_OK(db->prepare("SELECT 1;\n"));
    // Long statements are cut to one short line.
    auto long_one = db->prepare(
        "SELECT nothing_here\n  FROM a_table_that_does_not_exist_at_all\n  WHERE x = 1");
    ASSERT_FALSE(long_one);
    EXPECT_EQ(long_one.error().message(), "cannot prepare statement 'SELECT nothing_here FROM "
                                          "a_table_that_does_not_exist_at_all W...': "
                                          "no such table: a_table_that_does_not_exist_at_all");
}

TEST_F(DbTest, StepErrorResetsTheStatement) {
    auto db = Db::open(m_path);
    ASSERT_OK(db);
    ASSERT_OK(db->exec("CREATE TABLE t(a UNIQUE)"));
    auto insert = db->prepare("INSERT INTO t VALUES (?)");
    ASSERT_OK(insert);
    ASSERT_OK(insert->bind(1, 1));
    ASSERT_OK(insert->run());
    auto dup = insert->run();
    ASSERT_FALSE(dup);
    EXPECT_EQ(dup.error().exit(), Exit::data);
    EXPECT_EQ(dup.error().message(),
              "cannot run 'INSERT INTO t VALUES (?)': UNIQUE constraint failed: t.a");
    ASSERT_OK(insert->bind(1, 2));
    EXPECT_OK(insert->run());
    insert->clear_bindings();
    EXPECT_OK(insert->run()); // NULL is not unique-constrained
    EXPECT_EQ(query_text(*db, "SELECT count(*) FROM t"), "3");
}

TEST_F(DbTest, MovedDbAndStmtKeepWorking) {
    auto opened = Db::open(m_path);
    ASSERT_OK(opened);
    Db db = std::move(opened).value();
    ASSERT_OK(db.exec("CREATE TABLE t(a)"));
    auto prepared = db.prepare("INSERT INTO t VALUES (1)");
    ASSERT_OK(prepared);
    Stmt stmt = std::move(prepared).value();
    Db other = std::move(db);
    ASSERT_OK(stmt.run());
    Stmt second = std::move(stmt);
    second.reset();
    ASSERT_OK(second.run());
    EXPECT_EQ(query_text(other, "SELECT count(*) FROM t"), "2");
}

TEST_F(DbTest, WriterHeldElsewhereIsBusyAfterTheTimeout) {
    auto holder = Db::open(m_path);
    ASSERT_OK(holder);
    ASSERT_OK(holder->exec("CREATE TABLE t(a)"));
    auto waiter = Db::open(m_path, std::chrono::milliseconds(50));
    ASSERT_OK(waiter);
    {
        auto held = Txn::begin(*holder);
        ASSERT_OK(held);
        auto busy = Txn::begin(*waiter);
        ASSERT_FALSE(busy);
        EXPECT_EQ(busy.error().exit(), Exit::temp_fail);
        EXPECT_EQ(busy.error().message(), "database '" + m_path + "' is busy: database is locked");
        // Readers are not blocked by a writer under WAL.
        EXPECT_EQ(query_text(*waiter, "SELECT count(*) FROM t"), "0");
        waiter->set_busy_timeout(std::chrono::milliseconds(0));
        auto insert = waiter->exec("INSERT INTO t VALUES (1)");
        ASSERT_FALSE(insert);
        EXPECT_EQ(insert.error().exit(), Exit::temp_fail);
    }
    auto after = Txn::begin(*waiter);
    ASSERT_OK(after);
    ASSERT_OK(after->commit());
}

TEST_F(DbTest, FileThatIsNotADatabaseIsRefusedAndLeftAlone) {
    std::string garbage;
    for (int i = 0; garbage.size() < 8192; ++i)
        garbage += "this is not a database, line " + std::to_string(i) + "\n";
    {
        std::ofstream out(m_path, std::ios::binary);
        out << garbage;
    }
    ASSERT_EQ(::chmod(m_path.c_str(), 0644), 0);
    struct stat before = {};
    ASSERT_EQ(::stat(m_path.c_str(), &before), 0);
    auto db = Db::open(m_path);
    ASSERT_FALSE(db);
    EXPECT_EQ(db.error().exit(), Exit::data);
    EXPECT_EQ(db.error().message(),
              "database '" + m_path + "' is damaged or not a database: file is not a database");
    EXPECT_EQ(slurp(m_path), garbage);
    struct stat after = {};
    ASSERT_EQ(::stat(m_path.c_str(), &after), 0);
    EXPECT_EQ(after.st_mode, before.st_mode);
    EXPECT_EQ(after.st_mtim.tv_sec, before.st_mtim.tv_sec);
    EXPECT_EQ(after.st_mtim.tv_nsec, before.st_mtim.tv_nsec);
    EXPECT_FALSE(std::filesystem::exists(m_path + "-wal"));
    EXPECT_FALSE(std::filesystem::exists(m_path + "-shm"));
}

TEST_F(DbTest, DamagedPageIsReportedAsData) {
    {
        auto db = Db::open(m_path);
        ASSERT_OK(db);
        ASSERT_OK(db->exec("CREATE TABLE t(a); INSERT INTO t VALUES (1)"));
        // Everything into the main file: a close leaves the log as it is.
        ASSERT_OK(db->exec("PRAGMA wal_checkpoint(TRUNCATE)"));
    }
    ASSERT_EQ(std::filesystem::file_size(m_path + "-wal"), 0U);
    {
        // Page 2 holds table t: make its b-tree page header nonsense.
        std::fstream f(m_path, std::ios::in | std::ios::out | std::ios::binary);
        f.seekp(4096);
        std::string junk(64, '\xff');
        f.write(junk.data(), static_cast<std::streamsize>(junk.size()));
    }
    auto db = Db::open(m_path);
    ASSERT_OK(db);
    auto stmt = db->prepare("SELECT a FROM t");
    ASSERT_OK(stmt);
    auto row = stmt->step();
    ASSERT_FALSE(row);
    EXPECT_EQ(row.error().exit(), Exit::data);
    EXPECT_EQ(row.error().message(),
              "database '" + m_path
                  + "' is damaged or not a database: database disk image is malformed");
}

// The child writes and commits, then opens a transaction big enough to spill uncommitted pages into
// the WAL, and dies without a word: by SIGKILL, or by _exit with no destructor to roll back.
[[noreturn]] void write_then_die(const std::string& path, bool by_signal) {
    auto db = Db::open(path);
    if (!db || !db->exec("CREATE TABLE t(name, payload)"))
        ::_exit(10);
    auto kept = db->prepare("INSERT INTO t VALUES ('kept', ?)");
    if (!kept || !kept->bind(1, Blob{"committed"}) || !kept->run())
        ::_exit(11);
    auto txn = Txn::begin(*db);
    auto lost = db->prepare("INSERT INTO t VALUES ('lost', ?)");
    if (!txn || !lost)
        ::_exit(12);
    std::string payload(4096, 'x');
    for (int i = 0; i < 2048; ++i) { // 8 MiB: more than the page cache holds
        if (!lost->bind(1, Blob{payload}) || !lost->run())
            ::_exit(13);
        lost->reset();
    }
    if (by_signal)
        ::kill(::getpid(), SIGKILL);
    ::_exit(0);
}

TEST_F(DbTest, ProcessKilledMidTransactionKeepsCommittedDataOnly) {
    for (bool by_signal : {true, false}) {
        SCOPED_TRACE(by_signal ? "SIGKILL" : "_exit");
        std::filesystem::remove(m_path);
        pid_t pid = ::fork();
        ASSERT_GE(pid, 0);
        if (pid == 0)
            write_then_die(m_path, by_signal);
        int status = 0;
        ASSERT_EQ(::waitpid(pid, &status, 0), pid);
        if (by_signal) {
            ASSERT_TRUE(WIFSIGNALED(status)) << status;
            EXPECT_EQ(WTERMSIG(status), SIGKILL);
        } else {
            ASSERT_TRUE(WIFEXITED(status)) << status;
            ASSERT_EQ(WEXITSTATUS(status), 0);
        }
        // The uncommitted pages did reach the WAL: recovery has to skip them, not just never see
        // them.
        std::error_code ec;
        EXPECT_GT(std::filesystem::file_size(m_path + "-wal", ec), 1024U * 1024U) << ec.message();
        auto db = Db::open(m_path);
        ASSERT_OK(db);
        EXPECT_EQ(query_text(*db, "SELECT group_concat(name || ':' || payload) FROM t"),
                  "kept:committed");
        EXPECT_EQ(query_text(*db, "PRAGMA integrity_check"), "ok");
    } // each round's last close checkpoints and removes the WAL
}

// A child's work for WritersWaitTheirTurn: 60 rounds of a transaction, a write outside one and a
// write with RETURNING, with no busy timeout at all once the database is open (opening reads the
// log's index, which another's checkpoint may hold a moment); exits 0 when every write landed.
[[noreturn]] void write_in_turn(const std::string& path, int who) {
    auto db = Db::open(path);
    if (!db) {
        std::fprintf(stderr, "%s\n", db.error().message().c_str());
        ::_exit(1);
    }
    db->set_busy_timeout(std::chrono::milliseconds(0));
    if (who < 0) {
        ::_exit(db->exec("CREATE TABLE t(who, n)") ? 0 : 1);
    }
    for (int n = 0; n < 60; ++n) {
        Status done = [&]() -> Status {
            SION_TRY(Txn txn, Txn::begin(*db));
            SION_TRY(Stmt in, db->prepare("INSERT INTO t VALUES (?1, ?2)"));
            SION_CHECK(in.bind_all(who, n));
            SION_CHECK(in.run());
            SION_CHECK(txn.commit());
            SION_TRY(Stmt alone, db->prepare("INSERT INTO t VALUES (?1, -?2 - 1)"));
            SION_CHECK(alone.bind_all(who, n));
            SION_CHECK(alone.run());
            SION_TRY(Stmt back, db->prepare("INSERT INTO t VALUES (?1, ?2 + 1000) RETURNING n"));
            SION_CHECK(back.bind_all(who, n));
            SION_TRY(bool row, back.step());
            if (!row || back.column_int(0) != n + 1000)
                return make_error(Exit::software, "RETURNING gave no row");
            back.reset();
            return {};
        }();
        if (!done) {
            std::fprintf(stderr, "%s\n", done.error().message().c_str());
            ::_exit(1);
        }
    }
    ::_exit(0);
}

// Processes writing at once each wait their turn (PATH-writers) instead of failing busy, even
// with no busy timeout; nothing is lost and nothing written twice.
TEST_F(DbTest, WritersWaitTheirTurnInsteadOfFailing) {
    auto run = [&](int who) {
        pid_t pid = ::fork();
        if (pid == 0)
            write_in_turn(m_path, who);
        return pid;
    };
    int status = 0;
    pid_t maker = run(-1); // this process opens nothing before its children: no turn to share
    ASSERT_EQ(::waitpid(maker, &status, 0), maker);
    ASSERT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    std::vector<pid_t> writers;
    for (int who = 0; who < 8; ++who)
        writers.push_back(run(who));
    for (pid_t pid : writers) {
        ASSERT_EQ(::waitpid(pid, &status, 0), pid);
        EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << "a writer failed: " << status;
    }
    auto db = Db::open(m_path);
    ASSERT_OK(db);
    EXPECT_EQ(query_text(*db, "SELECT count(*) FROM t"), "1440");
    EXPECT_EQ(query_text(*db, "SELECT count(*) FROM (SELECT DISTINCT who, n FROM t)"), "1440");

    struct stat st {};

    ASSERT_EQ(::stat((m_path + "-writers").c_str(), &st), 0);
    EXPECT_EQ(st.st_mode & 0777, 0600U);
}

// A program that only reads makes no file beside the database.
TEST_F(DbTest, OnlyReadingMakesNoWritersFile) {
    {
        pid_t pid = ::fork();
        if (pid == 0)
            write_in_turn(m_path, -1);
        int status = 0;
        ASSERT_EQ(::waitpid(pid, &status, 0), pid);
        std::filesystem::remove(m_path + "-writers");
    }
    auto db = Db::open(m_path);
    ASSERT_OK(db);
    EXPECT_EQ(query_text(*db, "SELECT count(*) FROM t"), "0");
    EXPECT_FALSE(std::filesystem::exists(m_path + "-writers"));
}

} // namespace
} // namespace sion
