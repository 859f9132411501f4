// SPDX-License-Identifier: MIT
#include "mcpd/shelf.hpp"

#include "lib/agents.hpp"
#include "lib/db_schema.hpp"

namespace sion::mcpd {

namespace {

Error not_on_shelf(std::string_view name) {
    return make_error(Exit::no_input,
                      "there is no MCP server %.*s on the shelf (`sion agent mcp list`)",
                      static_cast<int>(name.size()), name.data());
}

std::optional<std::string> sampling_text(const std::optional<Sampling>& s) {
    if (!s)
        return std::nullopt;
    Json j = Json::object();
    j.set("max_tokens", s->max_tokens);
    j.set("per_run", s->per_run);
    if (!s->model.empty())
        j.set("model", std::string_view(s->model));
    return j.dump();
}

Result<std::optional<Sampling>> sampling_of(const std::string& text) {
    if (text.empty())
        return std::optional<Sampling>();
    SION_TRY(Json j, Json::parse(text));
    Sampling s;
    SION_TRY(int64_t tokens, j.view().integer_or("max_tokens", k_default_sampling_tokens));
    SION_TRY(int64_t per_run, j.view().integer_or("per_run", k_default_sampling_per_run));
    SION_TRY(std::string_view model, j.view().string_or("model", ""));
    s.max_tokens = static_cast<int>(tokens);
    s.per_run = static_cast<int>(per_run);
    s.model = std::string(model);
    return std::optional<Sampling>(std::move(s));
}

Result<ShelfEntry> entry_of(Stmt& row) {
    ShelfEntry e;
    e.name = row.column_text(0);
    auto config = Json::parse(row.column_text(1));
    if (!config)
        return Error(Exit::data, "the shelf's entry for MCP server " + e.name
                                     + " is damaged: " + config.error().message());
    auto parsed = config_from_json(*config);
    if (!parsed)
        return Error(Exit::data, "the shelf's entry for MCP server " + e.name
                                     + " is damaged: " + parsed.error().message());
    e.config = std::move(*parsed);
    e.protocol = row.column_text(2);
    if (!row.column_is_null(3)) {
        auto server = Json::parse(row.column_text(3));
        if (server) {
            e.server_name = std::string(server->view().string_or("name", "").value_or(""));
            e.server_version = std::string(server->view().string_or("version", "").value_or(""));
        }
    }
    SION_TRY(e.sampling, sampling_of(row.column_text(4)));
    return e;
}

std::string server_text(const Introduced& i) {
    Json j = Json::object();
    j.set("name", std::string_view(i.server_name));
    j.set("version", std::string_view(i.server_version));
    return j.dump();
}

Status write_pins(Db& db, std::string_view name, const std::vector<ToolDef>& tools) {
    SION_TRY(Stmt clear, db.prepare("DELETE FROM mcp_pins WHERE server = ?1"));
    SION_CHECK(clear.bind(1, name));
    SION_CHECK(clear.run());
    SION_TRY(Stmt insert, db.prepare("INSERT OR REPLACE INTO mcp_pins (server, tool, digest, "
                                     "definition) VALUES (?1, ?2, ?3, ?4)"));
    for (const ToolDef& t : tools) {
        if (!t.unusable.empty())
            continue;
        SION_CHECK(insert.bind_all(name, std::string_view(t.name), std::string_view(t.digest),
                                   std::string_view(t.definition.dump())));
        SION_CHECK(insert.run());
    }
    return {};
}

} // namespace

Result<std::optional<ShelfEntry>> Shelf::find(std::string_view name) {
    SION_TRY(Stmt q, m_db.prepare("SELECT name, config, coalesce(protocol, ''), server, "
                                  "coalesce(sampling, '') FROM mcp_servers WHERE name = ?1"));
    SION_CHECK(q.bind(1, name));
    SION_TRY(bool row, q.step());
    if (!row)
        return std::optional<ShelfEntry>();
    SION_TRY(ShelfEntry e, entry_of(q));
    q.reset();
    return std::optional<ShelfEntry>(std::move(e));
}

Result<ShelfEntry> Shelf::get(std::string_view name) {
    SION_TRY(auto found, find(name));
    if (!found)
        return not_on_shelf(name);
    return std::move(*found);
}

Result<std::vector<ShelfEntry>> Shelf::list() {
    SION_TRY(Stmt q, m_db.prepare("SELECT name, config, coalesce(protocol, ''), server, "
                                  "coalesce(sampling, '') FROM mcp_servers ORDER BY name"));
    std::vector<ShelfEntry> out;
    for (;;) {
        SION_TRY(bool row, q.step());
        if (!row)
            break;
        SION_TRY(ShelfEntry e, entry_of(q));
        out.push_back(std::move(e));
    }
    return out;
}

Status Shelf::add(const ShelfEntry& e, const std::vector<ToolDef>& tools) {
    SION_TRY(Txn txn, Txn::begin(m_db));
    SION_TRY(auto found, find(e.name));
    if (found)
        return make_error(Exit::usage,
                          "MCP server %s is on the shelf already: review it (`sion agent mcp "
                          "review %s`) or remove it first",
                          e.name.c_str(), e.name.c_str());
    SION_TRY(Stmt insert, m_db.prepare("INSERT INTO mcp_servers (name, config, protocol, server, "
                                       "sampling, created, reviewed) VALUES (?1, ?2, ?3, ?4, ?5, "
                                       "?6, ?6)"));
    Introduced i{e.protocol, e.server_name, e.server_version, e.config.transport};
    SION_CHECK(insert.bind_all(std::string_view(e.name),
                               std::string_view(config_to_json(e.config).dump()),
                               std::string_view(e.protocol), std::string_view(server_text(i)),
                               sampling_text(e.sampling), now_ms()));
    SION_CHECK(insert.run());
    SION_CHECK(write_pins(m_db, e.name, tools));
    return txn.commit();
}

Status Shelf::pin(std::string_view name, const Introduced& i, const std::vector<ToolDef>& tools,
                  const ServerConfig* said) {
    SION_TRY(Txn txn, Txn::begin(m_db));
    SION_TRY(auto found, find(name));
    if (!found)
        return not_on_shelf(name);
    SION_TRY(Stmt update, m_db.prepare("UPDATE mcp_servers SET protocol = ?1, server = ?2, "
                                       "reviewed = ?3 WHERE name = ?4"));
    SION_CHECK(update.bind_all(std::string_view(i.protocol), std::string_view(server_text(i)),
                               now_ms(), name));
    SION_CHECK(update.run());
    bool transport = !found->config.url.empty() && !i.transport.empty()
        && i.transport != found->config.transport;
    if (transport || said) {
        ServerConfig config = found->config;
        if (transport)
            config.transport = i.transport;
        if (said) {
            config.effects = said->effects;
            config.local = said->local;
        }
        SION_TRY(Stmt keep, m_db.prepare("UPDATE mcp_servers SET config = ?1 WHERE name = ?2"));
        SION_CHECK(keep.bind_all(std::string_view(config_to_json(config).dump()), name));
        SION_CHECK(keep.run());
    }
    SION_CHECK(write_pins(m_db, name, tools));
    return txn.commit();
}

Result<std::vector<Pin>> Shelf::pins(std::string_view name) {
    SION_TRY(Stmt q, m_db.prepare("SELECT tool, digest, definition FROM mcp_pins WHERE server = ?1 "
                                  "ORDER BY rowid"));
    SION_CHECK(q.bind(1, name));
    std::vector<Pin> out;
    for (;;) {
        SION_TRY(bool row, q.step());
        if (!row)
            break;
        Pin p;
        p.tool = q.column_text(0);
        p.digest = q.column_text(1);
        auto definition = Json::parse(q.column_text(2));
        p.definition = definition ? std::move(*definition) : Json::object();
        out.push_back(std::move(p));
    }
    return out;
}

Status Shelf::remove(std::string_view name) {
    SION_TRY(Txn txn, Txn::begin(m_db));
    SION_TRY(auto found, find(name));
    if (!found)
        return not_on_shelf(name);
    SION_CHECK(remove_server_from_profiles(m_db, name));
    for (Sql sql : {Sql("DELETE FROM mcp_pins WHERE server = ?1"),
                    Sql("DELETE FROM mcp_servers WHERE name = ?1")}) {
        SION_TRY(Stmt s, m_db.prepare(sql));
        SION_CHECK(s.bind(1, name));
        SION_CHECK(s.run());
    }
    return txn.commit();
}

Status Shelf::give(std::string_view profile, std::string_view name) {
    SION_TRY(Txn txn, Txn::begin(m_db));
    SION_TRY(auto found, find(name));
    if (!found)
        return not_on_shelf(name);
    SION_TRY(auto p, find_profile(m_db, profile));
    if (!p)
        return make_error(Exit::no_input, "no profile '%.*s'", static_cast<int>(profile.size()),
                          profile.data());
    SION_CHECK(add_profile_server(m_db, profile, name));
    return txn.commit();
}

Status Shelf::drop(std::string_view profile, std::string_view name) {
    SION_TRY(Txn txn, Txn::begin(m_db));
    SION_TRY(bool had, remove_profile_server(m_db, profile, name));
    if (!had)
        return make_error(Exit::no, "profile '%.*s' does not have MCP server %.*s",
                          static_cast<int>(profile.size()), profile.data(),
                          static_cast<int>(name.size()), name.data());
    return txn.commit();
}

Status Shelf::set_sampling(std::string_view name, const std::optional<Sampling>& sampling) {
    SION_TRY(Txn txn, Txn::begin(m_db));
    SION_TRY(auto found, find(name));
    if (!found)
        return not_on_shelf(name);
    SION_TRY(Stmt s, m_db.prepare("UPDATE mcp_servers SET sampling = ?1 WHERE name = ?2"));
    SION_CHECK(s.bind_all(sampling_text(sampling), name));
    SION_CHECK(s.run());
    return txn.commit();
}

Status Shelf::set_grants(std::string_view name, const std::vector<GrantConfig>& grants) {
    SION_TRY(Txn txn, Txn::begin(m_db));
    SION_TRY(ShelfEntry e, get(name));
    e.config.grants = grants;
    SION_TRY(Stmt s, m_db.prepare("UPDATE mcp_servers SET config = ?1 WHERE name = ?2"));
    SION_CHECK(s.bind_all(std::string_view(config_to_json(e.config).dump()), name));
    SION_CHECK(s.run());
    return txn.commit();
}

} // namespace sion::mcpd
