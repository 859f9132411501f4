// SPDX-License-Identifier: MIT
// The schema of sion.db, one migration per version; a step once released is never edited.
#include "lib/db_schema.hpp"

#include <chrono>

namespace sion {

namespace {

constexpr Migration k_steps[] = {
    {1, R"sql(
CREATE TABLE profiles (
    name     TEXT PRIMARY KEY,
    models   TEXT NOT NULL DEFAULT '[]',
    autonomy INTEGER NOT NULL CHECK (autonomy BETWEEN 0 AND 6),
    created  INTEGER NOT NULL
) STRICT;
CREATE TABLE agents (
    id      TEXT PRIMARY KEY CHECK (length(id) = 64),
    profile TEXT NOT NULL REFERENCES profiles(name),
    created INTEGER NOT NULL
) STRICT;
CREATE INDEX agents_by_profile ON agents(profile);
CREATE TABLE sessions (
    id            TEXT PRIMARY KEY CHECK (length(id) = 16),
    agent         TEXT NOT NULL REFERENCES agents(id),
    profile       TEXT NOT NULL,
    task          TEXT NOT NULL,
    settings      TEXT NOT NULL DEFAULT '{}',
    state         TEXT NOT NULL,
    tainted       INTEGER NOT NULL DEFAULT 0,
    owner         TEXT,
    input_tokens  INTEGER NOT NULL DEFAULT 0,
    output_tokens INTEGER NOT NULL DEFAULT 0,
    started       INTEGER NOT NULL,
    ended         INTEGER,
    ended_why     TEXT
) STRICT;
CREATE INDEX sessions_by_agent ON sessions(agent);
CREATE TABLE messages (
    session TEXT NOT NULL REFERENCES sessions(id),
    seq     INTEGER NOT NULL,
    content TEXT NOT NULL,
    created INTEGER NOT NULL,
    PRIMARY KEY (session, seq)
) STRICT;
CREATE TABLE calls (
    session    TEXT NOT NULL REFERENCES sessions(id),
    seq        INTEGER NOT NULL,
    call_id    TEXT NOT NULL,
    parent     TEXT,
    tool       TEXT NOT NULL,
    input      TEXT NOT NULL,
    effect     TEXT,
    decision   TEXT,
    why        TEXT,
    state      TEXT NOT NULL,
    result     TEXT,
    detail     TEXT,
    tainted    INTEGER NOT NULL DEFAULT 0,
    started_ms INTEGER NOT NULL,
    wall_ms    INTEGER,
    PRIMARY KEY (session, seq)
) STRICT;
CREATE TABLE journal (
    id       INTEGER PRIMARY KEY,
    session  TEXT NOT NULL,
    tool     TEXT NOT NULL,
    input    TEXT NOT NULL,
    state    TEXT NOT NULL CHECK (state IN ('pending', 'done', 'uncertain')),
    result   TEXT,
    is_error INTEGER NOT NULL DEFAULT 0,
    started  INTEGER NOT NULL,
    ended    INTEGER,
    UNIQUE (session, tool, input)
) STRICT;
)sql"},
    {2, R"sql(
CREATE TABLE mcp_servers (
    name     TEXT PRIMARY KEY,
    config   TEXT NOT NULL,
    protocol TEXT,
    server   TEXT,
    sampling TEXT,
    created  INTEGER NOT NULL,
    reviewed INTEGER
) STRICT;
CREATE TABLE mcp_pins (
    server     TEXT NOT NULL REFERENCES mcp_servers(name),
    tool       TEXT NOT NULL,
    digest     TEXT NOT NULL,
    definition TEXT NOT NULL,
    PRIMARY KEY (server, tool)
) STRICT;
CREATE TABLE profile_mcp (
    profile TEXT NOT NULL REFERENCES profiles(name),
    server  TEXT NOT NULL REFERENCES mcp_servers(name),
    PRIMARY KEY (profile, server)
) STRICT;
)sql"},
    {3, R"sql(
ALTER TABLE sessions ADD COLUMN cache_read_tokens INTEGER NOT NULL DEFAULT 0;
ALTER TABLE sessions ADD COLUMN cache_write_tokens INTEGER NOT NULL DEFAULT 0;
)sql"},
    {4, R"sql(
CREATE TABLE routes (
    profile     TEXT NOT NULL REFERENCES profiles(name),
    name        TEXT NOT NULL,
    place       INTEGER NOT NULL,
    models      TEXT NOT NULL,
    about       TEXT,
    sent_when   TEXT CHECK (sent_when IN ('pictures', 'long')),
    longer_than INTEGER CHECK (longer_than >= 0),
    created     INTEGER NOT NULL,
    PRIMARY KEY (profile, name),
    CHECK ((about IS NULL) != (sent_when IS NULL))
) STRICT;
ALTER TABLE profiles ADD COLUMN sorter TEXT;
)sql"},
    {5, R"sql(
CREATE TABLE skills (
    profile     TEXT NOT NULL REFERENCES profiles(name),
    name        TEXT NOT NULL,
    description TEXT NOT NULL,
    dir         TEXT NOT NULL,
    origin      TEXT NOT NULL CHECK (origin IN ('installed', 'added', 'written')),
    files       TEXT,
    source      TEXT,
    created     INTEGER NOT NULL,
    PRIMARY KEY (profile, name)
) STRICT;
)sql"},
    {6, R"sql(
CREATE TABLE spans (
    session    TEXT NOT NULL REFERENCES sessions(id),
    trace      TEXT NOT NULL,
    span       TEXT NOT NULL,
    parent     TEXT,
    name       TEXT NOT NULL,
    kind       INTEGER NOT NULL,
    start_ns   INTEGER NOT NULL,
    end_ns     INTEGER NOT NULL,
    attributes TEXT NOT NULL,
    error      TEXT,
    links      TEXT,
    PRIMARY KEY (session, span)
) STRICT;
)sql"},
};

} // namespace

Status migrate_state(Db& db) {
    return migrate(db, k_steps);
}

Result<Db> open_state(const std::string& home) {
    SION_TRY(Db db, Db::open(home + "/sion.db"));
    SION_CHECK(migrate_state(db));
    return db;
}

int64_t now_ms() {
    using namespace std::chrono;
    return duration_cast<milliseconds>(system_clock::now().time_since_epoch()).count();
}

} // namespace sion
