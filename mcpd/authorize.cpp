// SPDX-License-Identifier: MIT
#include "mcpd/authorize.hpp"

#include "lib/fd.hpp"
#include "lib/home.hpp"
#include "lib/log.hpp"
#include "lib/secret_bytes.hpp"
#include "mcpd/auth_store.hpp"
#include "mcpd/oauth_consent.hpp"
#include "mcpd/oauth_types.hpp"

#include <memory>

namespace sion::mcpd {

namespace {

Result<AuthStore> open_store(bool create) {
    SION_TRY(std::string home, resolve_home());
    return AuthStore::open(home, create);
}

Status print_lines(int out, const std::vector<std::string>& lines) {
    std::string text;
    for (const std::string& line : lines)
        text += line + "\n";
    return write_all(out, text);
}

// What a client's hooks share: the store and the authorizer over it, and whether a person has
// logged in during this connection already (once is enough: a second refusal is the server's).
struct Hooks {
    Hooks(AuthStore s, std::string n, const ServerConfig& c)
        : store(std::move(s)), authorizer(store, n, c.url), name(std::move(n)), config(c) {}

    AuthStore store;
    oauth::Authorizer authorizer;
    std::string name;
    ServerConfig config;
    std::optional<Person> person;
    bool asked = false;
};

} // namespace

oauth::LoginOptions login_options(const ServerConfig& config) {
    oauth::LoginOptions o;
    o.server_url = config.url;
    o.issuer = config.auth.issuer;
    o.scope = config.auth.scope;
    o.client_credentials = config.auth.client_credentials;
    o.client.client_id = config.auth.client_id;
    o.client.secret_env = config.auth.secret_env;
    o.client.client_metadata_url = config.auth.client_metadata_url;
    o.client.callback_port = config.auth.callback_port;
    o.client.workload_token_file = config.auth.workload_token_file;
    return o;
}

namespace {

Status log_in_to(AuthStore& store, std::string_view name, const ServerConfig& config,
                 const Person& person, std::optional<oauth::Challenge> challenge,
                 std::string_view more_scope) {
    oauth::LoginOptions o = login_options(config);
    o.challenge = std::move(challenge);
    if (!more_scope.empty())
        o.scope = std::string(more_scope);
    std::unique_ptr<oauth::Consent> consent;
    if (config.auth.client_credentials)
        consent = std::make_unique<oauth::HeadlessConsent>(o.settings);
    else
        consent = std::make_unique<oauth::TerminalConsent>(person.in, person.out, person.no_browser,
                                                           config.auth.callback_port);
    SION_TRY(oauth::LoginOutcome outcome, oauth::login(store, name, o, *consent));
    return print_lines(person.out, oauth::login_lines(name, outcome));
}

} // namespace

Status log_in(std::string_view name, const ServerConfig& config, const Person& person,
              std::optional<oauth::Challenge> challenge) {
    SION_TRY(AuthStore store, open_store(true));
    return log_in_to(store, name, config, person, std::move(challenge), {});
}

Status authorize(ClientEvents& events, std::string_view name, const ServerConfig& config,
                 const Person* person) {
    SION_TRY(AuthStore store, open_store(person != nullptr));
    auto hooks = std::make_shared<Hooks>(std::move(store), std::string(name), config);
    if (person && person->logs_in)
        hooks->person = *person;
    events.authorization = [hooks]() -> std::string {
        auto header = hooks->authorizer.header();
        if (!header) {
            log_error("MCP server %s: %s", hooks->name.c_str(), header.error().message().c_str());
            return {};
        }
        return header->value_or("");
    };
    events.proof = [hooks](const std::string& method, const std::string& url) -> std::string {
        auto proof = hooks->authorizer.proof(method, url);
        if (!proof) {
            log_error("MCP server %s: %s", hooks->name.c_str(), proof.error().message().c_str());
            return {};
        }
        return std::move(*proof);
    };
    events.nonce = [hooks](const std::string& url, const std::string& nonce) {
        return hooks->authorizer.keep_nonce(url, nonce);
    };
    events.refused = [hooks](int status, std::string www_authenticate, Retry retry) {
        oauth::Challenge challenge = oauth::parse_challenge(www_authenticate);
        auto renewal = hooks->authorizer.renew(status, challenge);
        if (renewal && renewal->retry) {
            retry(true);
            return;
        }
        if (!renewal)
            log_error("MCP server %s: %s", hooks->name.c_str(), renewal.error().message().c_str());
        if (!hooks->person || hooks->asked) {
            retry(false);
            return;
        }
        hooks->asked = true;
        const Person& there = *hooks->person;
        Status said = write_all(there.out, oauth::asks_line(hooks->name) + "\n");
        Status in = said ? log_in_to(hooks->store, hooks->name, hooks->config, there, challenge,
                                     renewal ? renewal->scope : std::string())
                         : said;
        if (!in) {
            log_error("%s", in.error().message().c_str());
            retry(false);
            return;
        }
        retry(true);
    };
    return {};
}

std::optional<Authorized> authorized(std::string_view name, std::string_view url) {
    auto store = open_store(false);
    if (!store)
        return std::nullopt;
    auto auth = store->server(name);
    if (!auth || !*auth)
        return std::nullopt;
    std::optional<Authorized> out;
    if ((*auth)->server_url == url)
        out = Authorized{(*auth)->issuer, (*auth)->scope};
    wipe((*auth)->access_token);
    wipe((*auth)->refresh_token);
    return out;
}

std::string authorized_words(const std::optional<Authorized>& authorization) {
    if (!authorization)
        return {};
    std::string words = ", authorized at " + authorization->issuer;
    if (!authorization->scope.empty())
        words += " for " + authorization->scope;
    return words;
}

Status log_out(std::string_view name, int out) {
    SION_TRY(AuthStore store, open_store(false));
    SION_TRY(oauth::LogoutOutcome outcome, oauth::logout(store, name, oauth::Settings{}));
    return print_lines(out, oauth::logout_lines(name, outcome));
}

} // namespace sion::mcpd
