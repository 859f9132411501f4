// SPDX-License-Identifier: MIT
// The values a server is given, gathered from where each is kept, for the client's Redactor.
#include "mcpd/server_secrets.hpp"

#include "mcpd/auth_store.hpp"
#include "mcpd/first_party.hpp"
#include "mcpd/grants.hpp"

#include "lib/home.hpp"
#include "lib/secret_bytes.hpp"
#include "lib/secrets.hpp"

#include <cstdlib>

namespace sion::mcpd {

namespace {

void add(std::vector<std::string>& out, std::string value) {
    if (!value.empty())
        out.push_back(std::move(value));
}

std::string variable(const std::string& name) {
    const char* value = std::getenv(name.c_str()); // NOLINT(concurrency-mt-unsafe)
    return value != nullptr ? std::string(value) : std::string();
}

// The headers' ${VAR}s: each variable's value, and each header that takes one as it is sent.
void add_headers(std::vector<std::string>& out, std::string_view name, const ServerConfig& config) {
    auto target = http_target(name, config);
    for (size_t i = 0; i < config.headers.size(); ++i) {
        std::vector<std::string> taken = header_variables(config.headers[i].second);
        for (const std::string& var : taken)
            add(out, variable(var));
        if (!taken.empty() && target && i < target->headers.entries().size())
            add(out, target->headers.entries()[i].second);
    }
}

// The OAuth client's secret and the tokens kept for the server.
void add_authorization(std::vector<std::string>& out, std::string_view name,
                       const ServerConfig& config) {
    if (!config.auth.secret_env.empty())
        if (auto secret = secrets::lookup(config.auth.secret_env); secret && *secret)
            add(out, std::move(**secret));
    auto home = resolve_home();
    if (!home)
        return;
    auto store = AuthStore::open(*home, false);
    if (!store)
        return;
    if (auto kept = store->server(name); kept && *kept) {
        ServerAuth& auth = **kept;
        add(out, std::move(auth.access_token));
        add(out, std::move(auth.refresh_token));
        if (auto client = store->client(auth.issuer); client && *client)
            add(out, std::move((*client)->client_secret));
        wipe(auth.dpop_key);
    }
}

} // namespace

std::vector<std::string> server_secrets(std::string_view name, const ServerConfig& config) {
    std::vector<std::string> out;
    for (const std::string& var : config.env)
        add(out, variable(var));
    add_headers(out, name, config);
    for (const GrantConfig& g : config.grants) {
        if (auto value = secrets::lookup(g.credential); value && *value)
            add(out, std::move(**value));
        if (auto header = grant_value(g))
            add(out, std::move(*header));
    }
    if (const FirstParty* own = first_party(config.first_party); own != nullptr)
        for (std::string_view setting : own->secret_settings)
            if (auto value = secrets::lookup(setting); value && *value)
                add(out, std::move(**value));
    if (!config.url.empty())
        add_authorization(out, name, config);
    return out;
}

} // namespace sion::mcpd
