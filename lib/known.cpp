// SPDX-License-Identifier: MIT
// Names for shell completions: sion.db's, read from a database that is there already, the sealed
// store's, and the providers'.
#include "lib/known.hpp"

#include "lib/db.hpp"
#include "lib/home.hpp"
#include "lib/models/model.hpp"
#include "lib/secrets.hpp"

#include <unistd.h>

namespace sion {

namespace {

// The statement that reads `kind`'s names and descriptions.
Result<Stmt> names_of(Db& db, std::string_view kind) {
    if (kind == "agent")
        return db.prepare("SELECT substr(id, 1, 8), 'profile ' || profile FROM agents "
                          "ORDER BY created");
    if (kind == "session")
        return db.prepare("SELECT id, state || ', agent ' || substr(agent, 1, 8) FROM sessions "
                          "ORDER BY started DESC LIMIT 100");
    if (kind == "profile")
        return db.prepare("SELECT name, '' FROM profiles ORDER BY name");
    if (kind == "mcp-server")
        return db.prepare("SELECT name, '' FROM mcp_servers ORDER BY name");
    if (kind == "route")
        return db.prepare("SELECT name, 'profile ' || profile FROM routes ORDER BY profile, place");
    return Error{Exit::software, "no such kind"};
}

} // namespace

std::vector<std::string> known_names(std::string_view kind,
                                     const std::vector<std::string>& operands) {
    std::vector<std::string> out;
    if (kind == "provider") {
        for (std::string_view name : models::provider_names())
            out.push_back(std::string(name) + ":");
        return out;
    }
    auto home = resolve_home();
    if (!home)
        return {};
    if (kind == "credential") {
        auto store = secrets::Store::open(*home, false);
        if (!store)
            return {};
        auto names = store->names();
        return names ? std::move(*names) : std::vector<std::string>{};
    }
    std::string path = *home + "/sion.db";
    if (::access(path.c_str(), R_OK) != 0)
        return {};
    auto db = Db::open(path);
    if (!db)
        return {};
    auto stmt = names_of(*db, kind);
    // `run PROFILE AGENT`, `remove PROFILE ROUTE`: the agents or routes of PROFILE, when the
    // operand before names a profile.
    std::string of_profile = (kind == "agent" || kind == "route") && !operands.empty()
                                 ? "profile " + operands.back()
                                 : "";
    std::vector<std::string> narrowed;
    while (stmt) {
        auto row = stmt->step();
        if (!row || !*row)
            break;
        std::string name = stmt->column_text(0);
        std::string about = stmt->column_text(1);
        out.push_back(about.empty() ? name : name + "\t" + about);
        if (!of_profile.empty() && about == of_profile)
            narrowed.push_back(out.back());
    }
    return narrowed.empty() ? out : narrowed;
}

} // namespace sion
