// SPDX-License-Identifier: MIT
// SQLite connections, statements, transactions and schema migrations, with sqlite's errors as
// Errors.
#include "lib/db.hpp"

#include "lib/text.hpp"

#include <sqlite3.h>

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cctype>
#include <cerrno>
#include <limits>
#include <map>
#include <memory>
#include <mutex>

namespace sion {

// The turn to write to one database file, for every Db of it in this process: an exclusive flock(2)
// on PATH-writers while any of them writes. Counted, so that a statement inside a transaction (or a
// second Db's write while the first holds the turn) does not wait for its own process. The file is
// made at the first write, so that a program that only reads makes nothing; when it cannot be
// (a directory this process may not write), writes go as sqlite lets them.
struct WriteTurn {
    std::string beside; // PATH-writers
    std::mutex mutex;
    int fd = -1;
    bool opened = false;
    int held = 0;

    void take() {
        std::lock_guard lock(mutex);
        if (!opened) {
            opened = true;
            fd = ::open(beside.c_str(), O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0600);
        }
        if (held++ == 0 && fd >= 0)
            while (::flock(fd, LOCK_EX) != 0 && errno == EINTR) {
            }
    }

    void give_back() {
        std::lock_guard lock(mutex);
        if (--held == 0 && fd >= 0)
            (void)::flock(fd, LOCK_UN);
    }
};

namespace {

// The turn of the database at `path`, one per process; nullptr for ":memory:".
WriteTurn* turn_of(const std::string& path) {
    if (path.empty() || path == ":memory:")
        return nullptr;
    static std::mutex mutex;
    static std::map<std::string, std::unique_ptr<WriteTurn>> turns; // NOLINT: for the process
    std::lock_guard lock(mutex);
    auto& turn = turns[path];
    if (!turn) {
        turn = std::make_unique<WriteTurn>();
        turn->beside = path + "-writers";
    }
    return turn.get();
}

constexpr size_t k_sql_excerpt = 60;

// The statement as it appears in a message: one line, cut short.
std::string excerpt(const char* sql) {
    std::string out;
    bool space = false;
    for (const char* p = sql ? sql : ""; *p != '\0'; ++p) {
        if (std::isspace(static_cast<unsigned char>(*p)) != 0) {
            space = !out.empty();
            continue;
        }
        if (out.size() >= k_sql_excerpt)
            return out + "...";
        if (space)
            out += ' ';
        space = false;
        out += *p;
    }
    return out;
}

// The database's file for messages: absolute, as sqlite resolved it.
std::string file_of(sqlite3* db) {
    const char* name = db != nullptr ? sqlite3_db_filename(db, "main") : nullptr;
    return name != nullptr && *name != '\0' ? name : ":memory:";
}

Exit exit_for(int rc) {
    switch (rc & 0xff) {
    case SQLITE_BUSY:
        return Exit::temp_fail;
    case SQLITE_CORRUPT:
    case SQLITE_NOTADB:
    case SQLITE_CONSTRAINT:
    case SQLITE_TOOBIG:
    case SQLITE_MISMATCH:
        return Exit::data;
    case SQLITE_CANTOPEN:
    case SQLITE_IOERR:
    case SQLITE_FULL:
    case SQLITE_PROTOCOL:
        return Exit::io;
    case SQLITE_PERM:
    case SQLITE_READONLY:
    case SQLITE_AUTH:
        return Exit::no_perm;
    case SQLITE_NOMEM:
        return Exit::os;
    default:
        return Exit::software;
    }
}

// An Error from sqlite's result code and message. A busy or damaged database is named by its file,
// the thing a person can act on; anything else by the operation `what` ("cannot run 'X'").
Error db_error(sqlite3* db, int rc, const std::string& what) {
    const char* why = db != nullptr ? sqlite3_errmsg(db) : sqlite3_errstr(rc);
    switch (rc & 0xff) {
    case SQLITE_BUSY:
        return make_error(Exit::temp_fail, "database '%s' is busy: %s", file_of(db).c_str(), why);
    case SQLITE_CORRUPT:
    case SQLITE_NOTADB:
        return make_error(Exit::data, "database '%s' is damaged or not a database: %s",
                          file_of(db).c_str(), why);
    default:
        return make_error(exit_for(rc), "%s: %s", what.c_str(), why);
    }
}

// Runs SQL without parameters. Internal callers may pass text built here from integers (PRAGMAs
// take no parameters); everything from outside arrives as an Sql constant.
Status exec_text(sqlite3* db, const char* sql) {
    int rc = sqlite3_exec(db, sql, nullptr, nullptr, nullptr);
    if (rc != SQLITE_OK)
        return db_error(db, rc, "cannot run '" + excerpt(sql) + "'");
    return {};
}

// sqlite creates files 0644 less the umask; state is private, so the file is made first, 0600. An
// existing file (or a symlink: O_EXCL follows none) is left alone, and a failure is left for sqlite
// to report in its own words.
void create_private(const std::string& path) {
    if (path.empty() || path == ":memory:")
        return;
    int fd = ::open(path.c_str(), O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0600);
    if (fd < 0)
        return;
    (void)::fchmod(fd, 0600); // a umask such as 0277 would have taken the owner's write bit
    ::close(fd);
}

} // namespace

Result<Db> Db::open(const std::string& path, std::chrono::milliseconds busy_timeout) {
    create_private(path);
    sqlite3* raw = nullptr;
    int flags =
        SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX | SQLITE_OPEN_EXRESCODE;
    int rc = sqlite3_open_v2(path.c_str(), &raw, flags, nullptr);
    Db db(raw, path); // sqlite hands back a handle to close even when opening failed
    if (rc != SQLITE_OK) {
        const char* why = raw != nullptr ? sqlite3_errmsg(raw) : sqlite3_errstr(rc);
        return make_error(exit_for(rc), "cannot open database '%s': %s", path.c_str(), why);
    }
    db.set_busy_timeout(busy_timeout);
    SION_CHECK(db.configure());
    // After configure(): its PRAGMAs set this connection up, and a program that only reads makes
    // no file beside the database.
    db.m_turn = turn_of(db.m_path);
    return db;
}

// synchronous=FULL: with WAL, NORMAL already survives a killed process, but a power loss could undo
// the last commits. The journal records a call before it runs, and that record must outlive the
// machine going down, or a call that ran could run again. FULL costs one fsync of the WAL per
// commit, small beside a model call.
Status Db::configure() {
    // Hardening sqlite recommends for applications: no writes that could corrupt the file on
    // purpose (writable_schema and the like), and no SQL functions with side effects called from
    // the schema.
    sqlite3_db_config(m_db, SQLITE_DBCONFIG_DEFENSIVE, 1, nullptr);
    sqlite3_db_config(m_db, SQLITE_DBCONFIG_TRUSTED_SCHEMA, 0, nullptr);
    // The last connection to close would copy the write-ahead log into the database, sync it and
    // delete the log: milliseconds at the end of every program, for nothing, since the next one
    // reads the log as it is. The log is copied in as it grows instead (sqlite's automatic
    // checkpoint, on commits), and stays beside the database.
    sqlite3_db_config(m_db, SQLITE_DBCONFIG_NO_CKPT_ON_CLOSE, 1, nullptr);
    // Reading the journal mode reads the header first, so a file that is not a database fails here,
    // before anything is written.
    SION_TRY(Stmt mode, prepare("PRAGMA journal_mode=WAL"));
    SION_TRY(bool row, mode.step());
    std::string got = row ? mode.column_text(0) : std::string();
    mode.reset();
    if (got != "wal" && got != "memory")
        return make_error(Exit::unavailable,
                          "cannot use write-ahead logging on database '%s': journal mode is '%s'",
                          m_path.c_str(), got.c_str());
    return exec("PRAGMA synchronous=FULL; PRAGMA foreign_keys=ON");
}

Db::Db(sqlite3* db, std::string path) : m_db(db), m_path(std::move(path)) {}

Db::Db(Db&& other) noexcept
    : m_db(other.m_db), m_path(std::move(other.m_path)), m_turn(other.m_turn) {
    other.m_db = nullptr;
}

Db& Db::operator=(Db&& other) noexcept {
    if (this != &other) {
        sqlite3_close_v2(m_db);
        m_db = other.m_db;
        m_path = std::move(other.m_path);
        m_turn = other.m_turn;
        other.m_db = nullptr;
    }
    return *this;
}

// close_v2: statements still alive keep the connection until they are finalized, rather than the
// close failing and leaking it.
Db::~Db() {
    sqlite3_close_v2(m_db);
}

void Db::set_busy_timeout(std::chrono::milliseconds timeout) {
    constexpr auto k_max = std::numeric_limits<int>::max();
    auto ms = timeout.count();
    sqlite3_busy_timeout(m_db, ms > k_max ? k_max : ms < 0 ? 0 : static_cast<int>(ms));
}

// DDL and PRAGMAs may write: outside a transaction they take the turn.
Status Db::exec(Sql sql) {
    bool take = m_turn != nullptr && sqlite3_get_autocommit(m_db) != 0;
    if (take)
        m_turn->take();
    Status status = exec_text(m_db, sql.c_str());
    if (take)
        m_turn->give_back();
    return status;
}

Result<Stmt> Db::prepare(Sql sql) {
    sqlite3_stmt* raw = nullptr;
    const char* tail = nullptr;
    int rc = sqlite3_prepare_v3(m_db, sql.c_str(), -1, 0, &raw, &tail);
    Stmt stmt(raw, m_turn);
    std::string what = "cannot prepare statement '" + excerpt(sql.c_str()) + "'";
    if (rc != SQLITE_OK)
        return db_error(m_db, rc, what);
    if (raw == nullptr)
        return make_error(Exit::software, "%s: no statement in it", what.c_str());
    for (; tail != nullptr && *tail != '\0'; ++tail) {
        if (std::isspace(static_cast<unsigned char>(*tail)) == 0 && *tail != ';')
            return make_error(Exit::software, "%s: more than one statement", what.c_str());
    }
    return stmt;
}

std::int64_t Db::last_insert_rowid() const {
    return sqlite3_last_insert_rowid(m_db);
}

std::int64_t Db::changes() const {
    return sqlite3_changes64(m_db);
}

bool Db::in_transaction() const {
    return sqlite3_get_autocommit(m_db) == 0;
}

Stmt& Stmt::operator=(Stmt&& other) noexcept {
    if (this != &other) {
        sqlite3_finalize(m_stmt);
        let_go();
        m_stmt = other.m_stmt;
        m_turn = other.m_turn;
        m_holding = other.m_holding;
        other.m_stmt = nullptr;
        other.m_holding = false;
    }
    return *this;
}

Stmt::~Stmt() {
    sqlite3_finalize(m_stmt);
    let_go();
}

void Stmt::let_go() {
    if (m_holding) {
        m_holding = false;
        m_turn->give_back();
    }
}

Status Stmt::check_bind(int index, int rc) const {
    if (rc == SQLITE_OK)
        return {};
    return db_error(
        sqlite3_db_handle(m_stmt), rc,
        format("cannot bind parameter %d of '%s'", index, excerpt(sqlite3_sql(m_stmt)).c_str()));
}

Error Stmt::out_of_range(int index) const {
    return make_error(Exit::software, "cannot bind parameter %d of '%s': integer out of range",
                      index, excerpt(sqlite3_sql(m_stmt)).c_str());
}

Status Stmt::bind(int index, std::int64_t value) {
    return check_bind(index, sqlite3_bind_int64(m_stmt, index, value));
}

Status Stmt::bind(int index, double value) {
    return check_bind(index, sqlite3_bind_double(m_stmt, index, value));
}

// An empty string_view may have no data pointer, and sqlite binds a null pointer as NULL: point at
// "" so empty text stays empty text.
Status Stmt::bind(int index, std::string_view text) {
    const char* data = text.data() != nullptr ? text.data() : "";
    return check_bind(index, sqlite3_bind_text64(m_stmt, index, data, text.size(), SQLITE_TRANSIENT,
                                                 SQLITE_UTF8));
}

Status Stmt::bind(int index, Blob blob) {
    if (blob.bytes.empty()) // a null pointer would bind NULL, not an empty blob
        return check_bind(index, sqlite3_bind_zeroblob(m_stmt, index, 0));
    return check_bind(index, sqlite3_bind_blob64(m_stmt, index, blob.bytes.data(),
                                                 blob.bytes.size(), SQLITE_TRANSIENT));
}

Status Stmt::bind(int index, std::nullopt_t) {
    return check_bind(index, sqlite3_bind_null(m_stmt, index));
}

// A statement that writes outside a transaction holds the turn until it is done (one with RETURNING
// commits only then: at its last step, or its reset).
Result<bool> Stmt::step() {
    sqlite3* db = sqlite3_db_handle(m_stmt);
    if (m_turn != nullptr && !m_holding && sqlite3_stmt_readonly(m_stmt) == 0
        && sqlite3_get_autocommit(db) != 0) {
        m_turn->take();
        m_holding = true;
    }
    int rc = sqlite3_step(m_stmt);
    if (rc == SQLITE_ROW)
        return true;
    if (rc == SQLITE_DONE) {
        sqlite3_reset(m_stmt); // ready to bind again: sqlite refuses bindings until a reset
        let_go();
        return false;
    }
    Error error = db_error(db, rc, "cannot run '" + excerpt(sqlite3_sql(m_stmt)) + "'");
    sqlite3_reset(m_stmt); // returns the same error again; the statement is ready to rerun
    let_go();
    return error;
}

Status Stmt::run() {
    for (;;) {
        SION_TRY(bool row, step());
        if (!row)
            return {};
    }
}

// sqlite3_reset repeats the last step's error, which step() has already reported.
void Stmt::reset() {
    (void)sqlite3_reset(m_stmt);
    let_go();
}

void Stmt::clear_bindings() {
    (void)sqlite3_clear_bindings(m_stmt);
}

int Stmt::column_count() const {
    return sqlite3_column_count(m_stmt);
}

bool Stmt::column_is_null(int column) const {
    return sqlite3_column_type(m_stmt, column) == SQLITE_NULL;
}

std::int64_t Stmt::column_int(int column) const {
    return sqlite3_column_int64(m_stmt, column);
}

double Stmt::column_double(int column) const {
    return sqlite3_column_double(m_stmt, column);
}

// The pointer first, then the size: asking for the size first could convert the value afterwards.
std::string Stmt::column_text(int column) const {
    const auto* data = sqlite3_column_text(m_stmt, column);
    auto size = static_cast<size_t>(sqlite3_column_bytes(m_stmt, column));
    return data != nullptr ? std::string(reinterpret_cast<const char*>(data), size) : std::string();
}

std::string Stmt::column_blob(int column) const {
    const void* data = sqlite3_column_blob(m_stmt, column);
    auto size = static_cast<size_t>(sqlite3_column_bytes(m_stmt, column));
    return data != nullptr ? std::string(static_cast<const char*>(data), size) : std::string();
}

std::optional<std::int64_t> Stmt::column_optional_int(int column) const {
    if (column_is_null(column))
        return std::nullopt;
    return column_int(column);
}

std::optional<std::string> Stmt::column_optional_text(int column) const {
    if (column_is_null(column))
        return std::nullopt;
    return column_text(column);
}

Result<Txn> Txn::begin(Db& db) {
    if (db.m_turn != nullptr)
        db.m_turn->take();
    if (Status begun = exec_text(db.m_db, "BEGIN IMMEDIATE"); !begun) {
        if (db.m_turn != nullptr)
            db.m_turn->give_back();
        return begun.error();
    }
    return Txn(db.m_db, db.m_turn);
}

void Txn::over() {
    m_open = false;
    if (m_turn != nullptr)
        m_turn->give_back();
}

Status Txn::commit() {
    if (!m_open)
        return make_error(Exit::software, "cannot commit on database '%s': no transaction is open",
                          file_of(m_db).c_str());
    Status status = exec_text(m_db, "COMMIT");
    // A failed COMMIT may leave the transaction open (busy: roll back on drop) or may have rolled
    // it back already; either way it is over once sqlite is back in autocommit mode.
    if (status || sqlite3_get_autocommit(m_db) != 0)
        over();
    return status;
}

void Txn::rollback() {
    if (!m_open)
        return;
    over();
    // Nothing to report to: if ROLLBACK fails, sqlite has already rolled back or the connection is
    // closing, which rolls back too.
    if (sqlite3_get_autocommit(m_db) == 0)
        (void)sqlite3_exec(m_db, "ROLLBACK", nullptr, nullptr, nullptr);
}

Result<int> schema_version(Db& db) {
    SION_TRY(Stmt stmt, db.prepare("PRAGMA user_version"));
    SION_TRY(bool row, stmt.step());
    return row ? static_cast<int>(stmt.column_int(0)) : 0;
}

namespace {

Status check_steps(std::span<const Migration> steps) {
    int last = 0;
    for (const Migration& step : steps) {
        if (step.version <= 0)
            return make_error(Exit::software, "migration to schema version %d: versions start at 1",
                              step.version);
        if (step.version <= last)
            return make_error(Exit::software,
                              "migration to schema version %d comes after version %d", step.version,
                              last);
        last = step.version;
    }
    return {};
}

Status check_not_newer(const Db& db, int current, int latest) {
    if (current <= latest)
        return {};
    return make_error(
        Exit::config,
        "database '%s' has schema version %d, newer than the %d this sion knows: upgrade sion",
        db.path().c_str(), current, latest);
}

// One step in its own transaction, with the version bump, so it lands whole or not at all. The
// version is read again inside the transaction: another process may have migrated meanwhile.
Result<int> apply_step(Db& db, sqlite3* handle, const Migration& step, int latest) {
    SION_TRY(Txn txn, Txn::begin(db));
    SION_TRY(int current, schema_version(db));
    SION_CHECK(check_not_newer(db, current, latest));
    if (current >= step.version)
        return current;
    std::string what = format("cannot migrate database '%s' to schema version %d",
                              db.path().c_str(), step.version);
    if (Status done = db.exec(step.sql); !done)
        return done.error().context(what);
    if (!db.in_transaction()) // a COMMIT in the step: what it did is no longer all-or-nothing
        return make_error(Exit::software, "%s: the step ended its own transaction", what.c_str());
    // PRAGMA takes no bound parameters; the version is an int of the program's own.
    std::string bump = format("PRAGMA user_version = %d", step.version);
    if (Status done = exec_text(handle, bump.c_str()); !done)
        return done.error().context(what);
    if (Status done = txn.commit(); !done)
        return done.error().context(what);
    return step.version;
}

} // namespace

Status migrate(Db& db, std::span<const Migration> steps) {
    SION_CHECK(check_steps(steps));
    int latest = steps.empty() ? 0 : steps.back().version;
    SION_TRY(int current, schema_version(db));
    SION_CHECK(check_not_newer(db, current, latest));
    for (const Migration& step : steps) {
        if (step.version > current) {
            SION_TRY(current, apply_step(db, db.m_db, step, latest));
        }
    }
    return {};
}

Status migrate(Db& db, std::initializer_list<Migration> steps) {
    return migrate(db, std::span<const Migration>(steps.begin(), steps.size()));
}

} // namespace sion
