// SPDX-License-Identifier: MIT
// Profiles and agents in sion.db: creating them, listing them, and naming an agent by its id.
#include "lib/agents.hpp"

#include "lib/db_schema.hpp"
#include "lib/hash.hpp"
#include "lib/json.hpp"
#include "lib/policy.hpp"
#include "lib/secret_bytes.hpp"
#include "lib/text.hpp"

#include <cstddef>

namespace sion {

namespace {

constexpr size_t k_max_profile_name = 64;
constexpr size_t k_id_bytes = 32;
constexpr size_t k_id_digits = 2 * k_id_bytes;
constexpr size_t k_short_head = 8;
constexpr size_t k_short_tail = 4;
constexpr size_t k_min_prefix = 4;
constexpr size_t k_ambiguous_shown = 3;
constexpr std::string_view k_ellipsis = "\u2026";

bool is_lower_alnum(char c) {
    return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9');
}

bool is_hex(std::string_view s) {
    for (char c : s)
        if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F')))
            return false;
    return true;
}

std::string models_text(const std::vector<std::string>& models) {
    Json array = Json::array();
    for (const std::string& m : models)
        array.push(Json::string(m));
    return array.dump();
}

Status check_autonomy(int autonomy) {
    if (autonomy < 0 || autonomy > k_max_autonomy)
        return make_error(Exit::usage, "unknown autonomy level 'L%d': give L0 to L6", autonomy);
    return {};
}

Status check_models(const std::vector<std::string>& models) {
    for (const std::string& m : models)
        if (m.empty())
            return make_error(Exit::usage, "invalid model '': give it as provider:model");
    return {};
}

// The rows of a statement over (id, profile, created).
Result<std::vector<Agent>> read_agents(Stmt& stmt) {
    std::vector<Agent> out;
    for (;;) {
        SION_TRY(bool row, stmt.step());
        if (!row)
            return out;
        out.push_back({stmt.column_text(0), stmt.column_text(1), stmt.column_int(2)});
    }
}

// What a name means: the GLOB pattern of the ids it names, or nullopt when it names none by the
// rules (whole id, short form, prefix of 4 or more hex digits). Patterns hold hex digits and '*'
// only, so nothing in the name can act as a wildcard.
std::optional<std::string> id_pattern(std::string_view name) {
    if (name.size() >= k_min_prefix && name.size() <= k_id_digits && is_hex(name))
        return name.size() == k_id_digits ? ascii_lower(name) : ascii_lower(name) + "*";
    for (std::string_view dots : {k_ellipsis, std::string_view("...")}) {
        if (name.size() != k_short_head + dots.size() + k_short_tail
            || name.substr(k_short_head, dots.size()) != dots)
            continue;
        std::string_view head = name.substr(0, k_short_head);
        std::string_view tail = name.substr(k_short_head + dots.size());
        if (is_hex(head) && is_hex(tail))
            return ascii_lower(head) + "*" + ascii_lower(tail);
    }
    return std::nullopt;
}

Error ambiguous(std::string_view name, const std::vector<Agent>& agents) {
    std::string list;
    for (size_t i = 0; i < agents.size() && i < k_ambiguous_shown; ++i)
        list += (i == 0 ? "" : ", ") + short_agent_id(agents[i].id);
    if (agents.size() > k_ambiguous_shown)
        list += format(", and %zu more", agents.size() - k_ambiguous_shown);
    return make_error(Exit::data, "agent '%.*s' is ambiguous: %s", static_cast<int>(name.size()),
                      name.data(), list.c_str());
}

} // namespace

Result<std::vector<std::string>> parse_kept_models(std::string_view owner, std::string_view text) {
    auto damaged = [&](const std::string& why) {
        return make_error(Exit::data, "%.*s has damaged models: %s", static_cast<int>(owner.size()),
                          owner.data(), why.c_str());
    };
    auto json = Json::parse(text);
    if (!json)
        return damaged(json.error().message());
    if (!json->view().is_array())
        return damaged(std::string(json->view().type_name()) + ", not an array");
    std::vector<std::string> models;
    for (JsonView m : json->view()) {
        auto s = m.as_string();
        if (!s)
            return damaged(std::string("an element is ") + m.type_name() + ", not a string");
        models.emplace_back(*s);
    }
    return models;
}

Status check_profile_name(std::string_view name) {
    bool ok = !name.empty() && name.size() <= k_max_profile_name && is_lower_alnum(name[0]);
    for (char c : name)
        ok = ok && (is_lower_alnum(c) || c == '-' || c == '_');
    if (!ok)
        return make_error(Exit::usage,
                          "invalid profile name '%.*s': use lowercase letters, digits, '-' and '_'",
                          static_cast<int>(name.size()), name.data());
    return {};
}

Result<std::optional<Profile>> find_profile(Db& db, std::string_view name) {
    SION_TRY(Stmt stmt,
             db.prepare("SELECT name, models, autonomy, created FROM profiles WHERE name = ?1"));
    SION_CHECK(stmt.bind(1, name));
    SION_TRY(bool row, stmt.step());
    if (!row)
        return std::optional<Profile>();
    Profile profile;
    profile.name = stmt.column_text(0);
    std::string models = stmt.column_text(1);
    profile.autonomy = static_cast<int>(stmt.column_int(2));
    profile.created = stmt.column_int(3);
    stmt.reset();
    SION_TRY(profile.models, parse_kept_models("profile '" + profile.name + "'", models));
    return std::optional<Profile>(std::move(profile));
}

Result<Profile> ensure_profile(Db& db, std::string_view name,
                               const std::vector<std::string>& models,
                               std::optional<int> autonomy) {
    SION_CHECK(check_profile_name(name));
    SION_CHECK(check_models(models));
    if (autonomy)
        SION_CHECK(check_autonomy(*autonomy));
    SION_TRY(Txn txn, Txn::begin(db));
    SION_TRY(std::optional<Profile> found, find_profile(db, name));
    Profile profile;
    if (!found) {
        profile.name = std::string(name);
        profile.models = models;
        profile.autonomy = autonomy.value_or(k_default_autonomy);
        profile.created = now_ms();
        SION_TRY(Stmt insert, db.prepare("INSERT INTO profiles (name, models, autonomy, created) "
                                         "VALUES (?1, ?2, ?3, ?4)"));
        SION_CHECK(insert.bind_all(name, std::string_view(models_text(profile.models)),
                                   profile.autonomy, profile.created));
        SION_CHECK(insert.run());
    } else {
        profile = std::move(*found);
        if (!models.empty())
            profile.models = models;
        if (autonomy)
            profile.autonomy = *autonomy;
        SION_TRY(Stmt update,
                 db.prepare("UPDATE profiles SET models = ?1, autonomy = ?2 WHERE name = ?3"));
        SION_CHECK(
            update.bind_all(std::string_view(models_text(profile.models)), profile.autonomy, name));
        SION_CHECK(update.run());
    }
    SION_CHECK(txn.commit());
    return profile;
}

Result<Agent> create_agent(Db& db, std::string_view profile) {
    SION_CHECK(check_profile_name(profile));
    SION_TRY(std::string bytes, random_bytes(k_id_bytes));
    Agent agent{to_hex(bytes), std::string(profile), now_ms()};
    SION_TRY(Txn txn, Txn::begin(db));
    SION_TRY(std::optional<Profile> found, find_profile(db, profile));
    if (!found)
        return make_error(Exit::no_input, "no profile '%.*s'", static_cast<int>(profile.size()),
                          profile.data());
    SION_TRY(Stmt insert,
             db.prepare("INSERT INTO agents (id, profile, created) VALUES (?1, ?2, ?3)"));
    SION_CHECK(insert.bind_all(std::string_view(agent.id), profile, agent.created));
    SION_CHECK(insert.run());
    SION_CHECK(txn.commit());
    return agent;
}

Status add_agent(Db& db, const Agent& agent) {
    SION_TRY(Txn txn, Txn::begin(db));
    SION_TRY(std::optional<Profile> found, find_profile(db, agent.profile));
    if (!found)
        return make_error(Exit::no_input, "no profile '%s'", agent.profile.c_str());
    SION_TRY(Stmt insert, db.prepare("INSERT INTO agents (id, profile, created) VALUES (?1, ?2, "
                                     "?3) ON CONFLICT (id) DO NOTHING"));
    SION_CHECK(insert.bind_all(std::string_view(agent.id), std::string_view(agent.profile),
                               agent.created));
    SION_CHECK(insert.run());
    return txn.commit();
}

// By rowid after created: agents made in the same millisecond keep the order they were made in.
Result<std::vector<Agent>> list_agents(Db& db, std::optional<std::string_view> profile) {
    SION_TRY(Stmt stmt, db.prepare("SELECT id, profile, created FROM agents "
                                   "WHERE ?1 IS NULL OR profile = ?1 ORDER BY created, rowid"));
    SION_CHECK(stmt.bind(1, profile));
    return read_agents(stmt);
}

// Every agent the name matches is looked at, in any profile, so that an agent named in the wrong
// profile is told apart from one that does not exist.
Result<Agent> find_agent(Db& db, std::string_view name, std::optional<std::string_view> profile) {
    std::optional<std::string> pattern = id_pattern(name);
    if (!pattern)
        return make_error(
            Exit::usage,
            "invalid agent '%.*s': give its id, its short form or a prefix of 4 hex digits",
            static_cast<int>(name.size()), name.data());
    SION_TRY(Stmt stmt, db.prepare("SELECT id, profile, created FROM agents WHERE id GLOB ?1 "
                                   "ORDER BY created, rowid"));
    SION_CHECK(stmt.bind(1, std::string_view(*pattern)));
    SION_TRY(std::vector<Agent> matches, read_agents(stmt));
    std::vector<Agent> mine;
    for (Agent& a : matches)
        if (!profile || a.profile == *profile)
            mine.push_back(a);
    if (mine.size() == 1)
        return mine.front();
    if (mine.size() > 1)
        return ambiguous(name, mine);
    if (profile && matches.size() == 1)
        return make_error(Exit::data, "agent %s is of profile '%s', not '%.*s'",
                          short_agent_id(matches.front().id).c_str(),
                          matches.front().profile.c_str(), static_cast<int>(profile->size()),
                          profile->data());
    if (profile)
        return make_error(Exit::no_input, "no agent '%.*s' in profile '%.*s'",
                          static_cast<int>(name.size()), name.data(),
                          static_cast<int>(profile->size()), profile->data());
    return make_error(Exit::no_input, "no agent '%.*s'", static_cast<int>(name.size()),
                      name.data());
}

std::string short_agent_id(std::string_view id) {
    if (id.size() <= k_short_head + k_short_tail)
        return std::string(id);
    return std::string(id.substr(0, k_short_head)) + std::string(k_ellipsis)
           + std::string(id.substr(id.size() - k_short_tail));
}

Result<std::vector<std::string>> profile_servers(Db& db, std::string_view profile) {
    SION_TRY(Stmt q,
             db.prepare("SELECT server FROM profile_mcp WHERE profile = ?1 ORDER BY server"));
    SION_CHECK(q.bind(1, profile));
    std::vector<std::string> servers;
    for (;;) {
        SION_TRY(bool row, q.step());
        if (!row)
            return servers;
        servers.push_back(q.column_text(0));
    }
}

Status add_profile_server(Db& db, std::string_view profile, std::string_view server) {
    SION_TRY(Stmt s,
             db.prepare("INSERT OR IGNORE INTO profile_mcp (profile, server) VALUES (?1, ?2)"));
    SION_CHECK(s.bind_all(profile, server));
    return s.run();
}

Result<bool> remove_profile_server(Db& db, std::string_view profile, std::string_view server) {
    SION_TRY(Stmt s, db.prepare("DELETE FROM profile_mcp WHERE profile = ?1 AND server = ?2"));
    SION_CHECK(s.bind_all(profile, server));
    SION_CHECK(s.run());
    return db.changes() != 0;
}

Status remove_server_from_profiles(Db& db, std::string_view server) {
    SION_TRY(Stmt s, db.prepare("DELETE FROM profile_mcp WHERE server = ?1"));
    SION_CHECK(s.bind(1, server));
    return s.run();
}

} // namespace sion
