// SPDX-License-Identifier: MIT
// SQLite for sion's state: Db (one connection), Stmt (a prepared statement), Txn (a write
// transaction), and migrate() (schema steps keyed by PRAGMA user_version).
//
// SQL text is an Sql, whose constructor is consteval: every statement is a constant in the source,
// and values reach the database only as bound parameters, never spliced into SQL. A list of values
// binds as one JSON array (`... WHERE id IN (SELECT value FROM json_each(?1))`).
//
// Writes wait their turn: every write of every program sharing a database (a write transaction, or
// a statement that writes outside one) first takes an exclusive flock(2) on the file beside it,
// PATH-writers, and lets it go when it is done, so that any number of processes writing at once
// each writes in its turn rather than failing after the busy timeout. A process that dies lets go
// of its turn. Within a process, the Dbs of one file share one turn.
//
// Errors carry sqlite's own message. Their exit codes: a database still busy after the busy timeout
// is Exit::temp_fail; a damaged file or one that is not a database is Exit::data; a database newer
// than this program is Exit::config; a disk or I/O failure is Exit::io; a refused write is
// Exit::no_perm; a constraint failure is Exit::data; a mistake in SQL or its use is Exit::software.
// Nothing here throws.
//
// Threads: a Db, its Stmts and Txns are used by one thread at a time, and never across fork(). A
// Stmt or a Txn must not outlive the Db it came from (moving the Db is fine).
#pragma once

#include "lib/result.hpp"

#include <chrono>
#include <concepts>
#include <cstdint>
#include <initializer_list>
#include <limits>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <type_traits>

struct sqlite3;
struct sqlite3_stmt;

namespace sion {

// SQL text fixed at compile time: a string built at run time cannot become one.
class Sql {
public:
    consteval Sql(const char* text) : m_text(text) {} // NOLINT(google-explicit-constructor)

    [[nodiscard]] constexpr const char* c_str() const { return m_text; }

private:
    const char* m_text;
};

// Bytes to bind as a BLOB (a plain string_view binds as TEXT). The bytes may hold NULs.
struct Blob {
    std::string_view bytes;
};

inline constexpr std::chrono::milliseconds k_default_busy_timeout{5000};

class Stmt;
struct Migration;
struct WriteTurn; // lib/db.cpp: the turn to write to one database file, in this process

class Db {
public:
    // Opens the database at `path`, creating the file with mode 0600 if it is missing (an existing
    // file keeps its mode), and sets: WAL journal mode, synchronous=FULL, foreign_keys=ON and the
    // busy timeout. ":memory:" opens a private in-memory database. A file that is not a database is
    // refused with Exit::data and left as it was.
    // Errors: "cannot open database 'PATH': unable to open database file".
    [[nodiscard]] static Result<Db>
    open(const std::string& path, std::chrono::milliseconds busy_timeout = k_default_busy_timeout);

    Db(const Db&) = delete;
    Db& operator=(const Db&) = delete;
    Db(Db&& other) noexcept;
    Db& operator=(Db&& other) noexcept;
    ~Db();

    // How long a statement waits for another connection's lock before failing with Exit::temp_fail.
    void set_busy_timeout(std::chrono::milliseconds timeout);

    // Runs constant SQL with no parameters and no result rows: DDL, PRAGMAs. It may hold several
    // statements separated by ';'.
    [[nodiscard]] Status exec(Sql sql);

    // Prepares one statement; text after the first statement is an error.
    [[nodiscard]] Result<Stmt> prepare(Sql sql);

    // The rowid of the last row this connection inserted, and the rows the last statement changed.
    [[nodiscard]] std::int64_t last_insert_rowid() const;
    [[nodiscard]] std::int64_t changes() const;
    // Whether a transaction is open on this connection.
    [[nodiscard]] bool in_transaction() const;

    // The path given to open().
    [[nodiscard]] const std::string& path() const { return m_path; }

private:
    friend class Txn;
    friend Status migrate(Db& db, std::span<const Migration> steps);

    Db(sqlite3* db, std::string path);

    [[nodiscard]] Status configure();

    sqlite3* m_db = nullptr;
    std::string m_path;
    WriteTurn* m_turn = nullptr; // none for ":memory:", or when the file beside cannot be made
};

// A prepared statement. Parameters are numbered from 1 (as in "?1"), result columns from 0, as in
// sqlite. Text and blobs are copied when bound, so the caller's buffers may go away at once.
class Stmt {
public:
    Stmt(const Stmt&) = delete;
    Stmt& operator=(const Stmt&) = delete;

    Stmt(Stmt&& other) noexcept
        : m_stmt(other.m_stmt), m_turn(other.m_turn), m_holding(other.m_holding) {
        other.m_stmt = nullptr;
        other.m_holding = false;
    }

    Stmt& operator=(Stmt&& other) noexcept;
    ~Stmt();

    [[nodiscard]] Status bind(int index, std::int64_t value);
    [[nodiscard]] Status bind(int index, double value);
    [[nodiscard]] Status bind(int index, std::string_view text);
    [[nodiscard]] Status bind(int index, Blob blob);
    [[nodiscard]] Status bind(int index, std::nullopt_t);
    // Other integers (and bool, as 0 or 1); an unsigned value above INT64_MAX is an error.
    template <std::integral T>
    [[nodiscard]] Status bind(int index, T value);

    // NULL when empty, else the value.
    template <class T>
    [[nodiscard]] Status bind(int index, const std::optional<T>& value) {
        return value ? bind(index, *value) : bind(index, std::nullopt);
    }
    // Binds the arguments to parameters 1, 2, ... in order.
    template <class... Args>
    [[nodiscard]] Status bind_all(const Args&... args);

    // Runs the statement to its next row: true when a row is ready to read, false when it is done.
    // Done or failed, the statement is reset, ready to bind and run again.
    [[nodiscard]] Result<bool> step();
    // Steps until done, ignoring any rows: for INSERT, UPDATE, DELETE.
    [[nodiscard]] Status run();
    // Rewinds the statement to run again, for one left before it was done; bindings are kept until
    // clear_bindings().
    void reset();
    void clear_bindings();

    // The current row's columns (valid after step() returned true). Text and blobs are copied out.
    [[nodiscard]] int column_count() const;
    [[nodiscard]] bool column_is_null(int column) const;
    [[nodiscard]] std::int64_t column_int(int column) const;
    [[nodiscard]] double column_double(int column) const;
    [[nodiscard]] std::string column_text(int column) const;
    [[nodiscard]] std::string column_blob(int column) const;
    // NULL as nullopt.
    [[nodiscard]] std::optional<std::int64_t> column_optional_int(int column) const;
    [[nodiscard]] std::optional<std::string> column_optional_text(int column) const;

private:
    friend class Db;

    Stmt(sqlite3_stmt* stmt, WriteTurn* turn) : m_stmt(stmt), m_turn(turn) {}

    [[nodiscard]] Status check_bind(int index, int rc) const;
    [[nodiscard]] Error out_of_range(int index) const;
    // Gives the turn back, once the statement that took it is done or reset.
    void let_go();

    sqlite3_stmt* m_stmt = nullptr;
    WriteTurn* m_turn = nullptr;
    bool m_holding = false; // it writes outside a transaction, and holds the turn till it is done
};

// A write transaction: its turn (waiting as long as it takes), then BEGIN IMMEDIATE, so it takes
// the write lock at once and cannot fail later for want of it. Dropped before commit(), it rolls
// back.
class Txn {
public:
    [[nodiscard]] static Result<Txn> begin(Db& db);

    Txn(const Txn&) = delete;
    Txn& operator=(const Txn&) = delete;

    Txn(Txn&& other) noexcept : m_db(other.m_db), m_turn(other.m_turn), m_open(other.m_open) {
        other.m_open = false;
    }

    Txn& operator=(Txn&&) = delete;

    ~Txn() { rollback(); }

    // Makes the changes durable. If it fails the transaction is still open (or already rolled back
    // by sqlite) and is rolled back when dropped.
    [[nodiscard]] Status commit();
    // Undoes the changes now; does nothing once committed or rolled back.
    void rollback();

private:
    Txn(sqlite3* db, WriteTurn* turn) : m_db(db), m_turn(turn) {}

    // Gives the turn back once the transaction is over.
    void over();

    sqlite3* m_db;
    WriteTurn* m_turn; // held while open
    bool m_open = true;
};

// One schema step: the SQL that takes the database from version-1 (or the step before) to
// `version`.
struct Migration {
    int version;
    Sql sql;
};

// Applies, in order, each step whose version is above the database's PRAGMA user_version, each in
// its own transaction together with raising user_version to the step's version, so a failing step
// leaves the database at the previous version. Steps' versions must be positive and increasing. A
// database whose version is above the last step's is refused with Exit::config ("upgrade sion").
// A step runs inside a transaction, so it cannot change foreign_keys or the journal mode, and
// must not COMMIT (that is reported as an error, though what it did by then stays).
[[nodiscard]] Status migrate(Db& db, std::span<const Migration> steps);
[[nodiscard]] Status migrate(Db& db, std::initializer_list<Migration> steps);

// The database's PRAGMA user_version.
[[nodiscard]] Result<int> schema_version(Db& db);

template <std::integral T>
Status Stmt::bind(int index, T value) {
    if constexpr (std::is_unsigned_v<T> && sizeof(T) >= sizeof(std::int64_t)) {
        if (value > static_cast<T>(std::numeric_limits<std::int64_t>::max()))
            return out_of_range(index);
    }
    return bind(index, static_cast<std::int64_t>(value));
}

template <class... Args>
Status Stmt::bind_all(const Args&... args) {
    int index = 0;
    Status status;
    // Stops at the first failure: && short-circuits the fold.
    (void)((status = bind(++index, args), status.has_value()) && ...);
    return status;
}

} // namespace sion
