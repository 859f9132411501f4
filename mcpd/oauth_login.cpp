// SPDX-License-Identifier: MIT
// Logging in, renewing without the person, logging out, and the lines sion-mcp prints of them.
#include "mcpd/oauth_login.hpp"

#include "mcpd/oauth_url.hpp"
#include "mcpd/oauth_wire.hpp"

#include "lib/hash.hpp"
#include "lib/jws.hpp"
#include "lib/secret_bytes.hpp"
#include "lib/secrets.hpp"
#include "lib/text.hpp"

namespace sion::mcpd::oauth {

namespace {

// An access token this close to its end is renewed before it is sent.
constexpr int64_t k_expiry_margin_s = 30;

bool is_private_key(std::string_view value) {
    return value.starts_with("-----BEGIN");
}

// The secret or key of --client-secret-env, where the caller has not given it.
Status resolve_secret(ClientSettings& client) {
    if (client.secret_env.empty() || !client.client_secret.empty()
        || !client.private_key_pem.empty())
        return {};
    SION_TRY(auto value, secrets::lookup(client.secret_env));
    if (!value)
        return make_error(Exit::config, "the variable %s that holds the client's secret is not "
                          "set", client.secret_env.c_str());
    if (is_private_key(*value))
        client.private_key_pem = std::move(*value);
    else
        client.client_secret = std::move(*value);
    return {};
}

void wipe_client(ClientSettings& client) {
    wipe(client.client_secret);
    wipe(client.private_key_pem);
}

// The challenge of the server's refusal of a request without a token: a POST (Streamable HTTP),
// then a GET (the 2024-11-05 stream). Only the head is read; none at all is an empty challenge.
Result<Challenge> probe(const std::string& server_url, const Settings& settings) {
    for (const char* method : {"POST", "GET"}) {
        HttpRequest request;
        request.method = method;
        request.url = server_url;
        request.timeout = settings.timeout;
        request.headers.add("Accept", "application/json, text/event-stream");
        if (request.method == "POST") {
            request.headers.add("Content-Type", "application/json");
            request.body = R"({"jsonrpc":"2.0","id":0,"method":"ping"})";
        }
        HttpResponse head;
        request.on_headers = [&head](const HttpResponse& r) {
            head = r;
            return false; // the head is all a probe needs; a stream would never end
        };
        auto sent = http_send(request);
        if (!sent && head.status == 0)
            return std::move(sent).error();
        if (head.status == 401 || head.status == 403)
            return challenge_of(head);
    }
    return Challenge{};
}

ServerAuth auth_of(const Discovery& d, const std::string& client_id, const std::string& method,
                   const std::string& secret_env, Tokens tokens, const std::string& scope,
                   std::string_view dpop_key) {
    ServerAuth a;
    a.server_url = d.server_url;
    a.resource = d.resource;
    a.issuer = d.server.issuer;
    a.token_endpoint = d.server.token_endpoint;
    a.revocation_endpoint = d.server.revocation_endpoint;
    a.client_id = client_id;
    a.auth_method = method;
    a.secret_env = secret_env;
    a.access_token = std::move(tokens.access_token);
    a.refresh_token = std::move(tokens.refresh_token);
    a.scope = tokens.scope.empty() ? scope : tokens.scope;
    a.expires_at = tokens.expires_at;
    a.dpop_key = std::string(dpop_key);
    a.dpop = tokens.dpop;
    return a;
}

// Forgets the secrets of `a` held in memory.
void wipe_auth(ServerAuth& a) {
    wipe(a.access_token);
    wipe(a.refresh_token);
    wipe(a.dpop_key);
}

int port_of(const std::string& redirect_uri) {
    auto url = parse_url(redirect_uri);
    return url && !url->port.empty() ? std::stoi(url->port) : 0;
}

Result<ServerAuth> login_with_person(AuthStore& store, const Discovery& d,
                                     const LoginOptions& options, const ClientSettings& client,
                                     const std::string& scope, Consent& consent,
                                     DpopSigner dpop, LoginOutcome& out) {
    if (!d.server.defaults && !contains(d.server.code_challenge_methods_supported, "S256"))
        return make_error(Exit::data, "refusing the authorization server '%s': it does not offer "
                          "PKCE with S256", redact_url(d.server.issuer).c_str());
    SION_TRY(auto kept, store.client(d.server.issuer));
    SION_TRY(std::string redirect, consent.redirect_uri(kept ? port_of(kept->redirect_uri) : 0));
    SION_TRY(ClientRecord record, choose_client(d, client, redirect, store, options.settings));
    out.registered = record.kind == "registered" && !(kept && kept->client_id == record.client_id);
    out.client_id = record.client_id;
    SION_TRY(Pkce pkce, make_pkce());
    SION_TRY(std::string answer, consent.wait(authorization_url(d, record, pkce, scope)));
    SION_TRY(std::string code, code_from_redirect(answer, d, pkce));
    auto tokens = exchange_code(d, record, code, pkce, options.settings, dpop);
    wipe(pkce.verifier);
    wipe(record.client_secret);
    if (!tokens)
        return std::move(tokens).error();
    return auth_of(d, record.client_id, record.auth_method, client.secret_env, std::move(*tokens),
                   scope, dpop.key);
}

// The tokens of a grant no person takes part in (client credentials, the workload's identity),
// renewed by making it again: a refresh token would only outlive what the grant was made with.
Result<ServerAuth> unattended_auth(const Discovery& d, const ClientSettings& client,
                                   const std::string& method, Result<Tokens> tokens,
                                   const std::string& scope, std::string_view dpop_key) {
    if (!tokens)
        return std::move(tokens).error();
    ServerAuth auth =
        auth_of(d, client.client_id, method, client.secret_env, std::move(*tokens), scope, dpop_key);
    auth.unattended = true;
    auth.workload_token_file = client.workload_token_file;
    wipe(auth.refresh_token);
    return auth;
}

} // namespace

Result<LoginOutcome> login(AuthStore& store, std::string_view name, const LoginOptions& options,
                           Consent& consent) {
    ClientSettings client = options.client;
    Status resolved = resolve_secret(client);
    if (!resolved)
        return std::move(resolved).error();
    Challenge challenge;
    if (options.challenge) {
        challenge = *options.challenge;
    } else {
        SION_TRY(Challenge probed, probe(options.server_url, options.settings));
        challenge = std::move(probed);
    }
    SION_TRY(Discovery d, discover(options.server_url, challenge, options.issuer, options.settings));
    std::string scope = choose_scope(d, challenge, options.scope);
    LoginOutcome out;
    out.issuer = d.server.issuer;
    // RFC 9449: a key of this login's own, where the server takes ES256 proofs.
    std::string key;
    if (offers_dpop(d.server)) {
        auto made = es256_generate();
        if (!made) {
            wipe_client(client);
            return std::move(made).error();
        }
        key = std::move(*made);
    }
    DpopNonces nonces;
    DpopSigner dpop{key, &nonces};
    Result<ServerAuth> auth = make_error(Exit::software, "no login was made");
    out.client_id = client.client_id;
    if (options.client_credentials) {
        std::string method =
            client.private_key_pem.empty() ? secret_method(d.server) : "private_key_jwt";
        auth = unattended_auth(d, client, method,
                               oauth::client_credentials(d, client, scope, options.settings, dpop),
                               scope, key);
        out.unattended = true;
    } else if (!client.workload_token_file.empty()) {
        std::string method = client.client_secret.empty() ? "none" : secret_method(d.server);
        auth = unattended_auth(d, client, method,
                               workload_grant(d, client, scope, options.settings, dpop), scope,
                               key);
        out.unattended = out.workload = true;
    } else if (options.identity) {
        auto tokens =
            enterprise_grant(d, client, *options.identity, scope, options.settings, dpop);
        if (tokens) {
            auth = auth_of(d, client.client_id, secret_method(d.server), client.secret_env,
                           std::move(*tokens), scope, key);
            wipe(auth->refresh_token);
        } else {
            auth = std::move(tokens).error();
        }
    } else {
        auth = login_with_person(store, d, options, client, scope, consent, dpop, out);
    }
    wipe_client(client);
    wipe(key);
    if (!auth)
        return std::move(auth).error();
    out.scope = auth->scope;
    out.refreshable = !auth->refresh_token.empty();
    Status kept = store.put_server(name, *auth);
    wipe_auth(*auth);
    if (!kept)
        return std::move(kept).error();
    return out;
}

Result<std::optional<ServerAuth>> Authorizer::kept() {
    SION_TRY(auto auth, m_store.server(m_name));
    if (auth && auth->server_url != m_server_url) {
        wipe_auth(*auth);
        auth.reset();
    }
    return auth;
}

Result<std::optional<std::string>> Authorizer::header() {
    SION_TRY(auto auth, kept());
    if (!auth || auth->access_token.empty())
        return std::optional<std::string>();
    if (auth->expires_at != 0 && now_s() + k_expiry_margin_s >= auth->expires_at
        && (!auth->refresh_token.empty() || auth->unattended)) {
        SION_TRY(Renewal renewed, renew_tokens(*auth, Challenge{}));
        if (!renewed.retry)
            return make_error(Exit::no_perm, "%s", needs_login(m_name, 401, renewed.scope).c_str());
        SION_TRY(auto fresh, kept());
        if (fresh)
            auth = std::move(fresh);
    }
    std::string value = (auth->dpop ? "DPoP " : "Bearer ") + auth->access_token;
    wipe_auth(*auth);
    return std::optional<std::string>(std::move(value));
}

Result<std::string> Authorizer::proof(std::string_view method, std::string_view url) {
    SION_TRY(auto auth, kept());
    if (!auth || !auth->dpop || auth->dpop_key.empty())
        return std::string();
    auto made = dpop_proof(auth->dpop_key, method, url, auth->access_token, m_nonces.of(url));
    wipe_auth(*auth);
    return made;
}

bool Authorizer::keep_nonce(std::string_view url, std::string_view nonce) {
    return m_nonces.keep(url, nonce);
}

Result<Renewal> Authorizer::renew(int status, const Challenge& challenge) {
    SION_TRY(auto auth, kept());
    Renewal login_again;
    login_again.scope = challenge.scope;
    login_again.why = format("HTTP %d", status);
    if (!auth)
        return login_again;
    if (challenge.error == "use_dpop_nonce")
        return make_error(Exit::no_perm, "the MCP server %s refuses the DPoP proof even with the "
                          "nonce it gave", m_name.c_str());
    if (status == 403 && challenge.error == "insufficient_scope") {
        std::string wanted = words_union(auth->scope, challenge.scope);
        if (wanted == words_union(auth->scope, ""))
            return make_error(Exit::no_perm, "the MCP server %s refuses the request even with the "
                              "scopes it asks for (%s)", m_name.c_str(),
                              challenge.scope.empty() ? "none named" : challenge.scope.c_str());
        login_again.scope = wanted;
        login_again.why = "it asks for the scopes " + challenge.scope;
        return login_again;
    }
    // A token renewed just now and refused at once: no renewal will do.
    if (!m_renewed.empty() && constant_time_equal(sha256(auth->access_token), m_renewed))
        return login_again;
    // The server may have moved to another authorization server: read its metadata again.
    if (!challenge.resource_metadata.empty()) {
        auto found = discover(auth->server_url, challenge, auth->issuer, m_settings);
        if (!found && found.error().exit() != Exit::config)
            return std::move(found).error();
        if (!found || found->server.issuer != auth->issuer) {
            login_again.why = "its authorization server changed";
            return login_again;
        }
    }
    return renew_tokens(*auth, challenge);
}

Result<Renewal> Authorizer::renew_tokens(ServerAuth& auth, const Challenge& challenge) {
    Renewal login_again;
    login_again.scope = challenge.scope.empty() ? auth.scope : challenge.scope;
    if (auth.refresh_token.empty() && !auth.unattended) {
        login_again.why = "its token has expired and there is no refresh token";
        return login_again;
    }
    Discovery d;
    d.server_url = auth.server_url;
    d.resource = auth.resource;
    d.server.issuer = auth.issuer;
    d.server.token_endpoint = auth.token_endpoint;
    ClientSettings client;
    client.client_id = auth.client_id;
    client.secret_env = auth.secret_env;
    if (auth.auth_method != "none") {
        SION_CHECK(resolve_secret(client));
        if (client.client_secret.empty() && client.private_key_pem.empty()) {
            SION_TRY(auto kept, m_store.client(auth.issuer));
            if (kept && kept->client_id == auth.client_id)
                client.client_secret = kept->client_secret;
        }
    }
    client.workload_token_file = auth.workload_token_file;
    DpopSigner dpop{auth.dpop_key, &m_nonces};
    Result<Tokens> tokens = make_error(Exit::software, "no renewal was made");
    if (auth.unattended && !auth.workload_token_file.empty()) {
        tokens = workload_grant(d, client, auth.scope, m_settings, dpop);
    } else if (auth.unattended) {
        tokens = client_credentials(d, client, auth.scope, m_settings, dpop);
    } else {
        SION_TRY(Url server, parse_url(auth.server_url));
        Form form = {{"grant_type", "refresh_token"},
                     {"refresh_token", auth.refresh_token},
                     {"resource", auth.resource}};
        HttpHeaders headers;
        authenticate(auth.auth_method, auth.client_id, client.client_secret, form, headers);
        tokens = post_token(server, auth.token_endpoint, form, headers, m_settings, dpop);
    }
    wipe_client(client);
    if (!tokens) {
        // Refused (an expired or revoked refresh token): only the person can help now.
        if (tokens.error().exit() != Exit::no_perm)
            return std::move(tokens).error();
        login_again.why = tokens.error().message();
        return login_again;
    }
    auth.access_token = std::move(tokens->access_token);
    if (!tokens->refresh_token.empty() && !auth.unattended)
        auth.refresh_token = std::move(tokens->refresh_token); // rotated (OAuth 2.1 section 4.3.1)
    if (!tokens->scope.empty())
        auth.scope = tokens->scope;
    auth.expires_at = tokens->expires_at;
    auth.dpop = tokens->dpop;
    m_renewed = sha256(auth.access_token);
    SION_CHECK(m_store.put_server(m_name, auth));
    Renewal renewed;
    renewed.retry = true;
    return renewed;
}

namespace {

// RFC 7009: each token POSTed to the revocation endpoint, the refresh token first (revoking it
// ends the access tokens it made, where the server ties them), authenticated as the client.
Status revoke_tokens(const ServerAuth& auth, const std::string& secret, const Settings& settings) {
    SION_TRY(Url server, parse_url(auth.server_url));
    SION_TRY(Url target, parse_url(auth.revocation_endpoint));
    auto reach = reach_rule(server, target, "revocation endpoint");
    for (const auto* token : {&auth.refresh_token, &auth.access_token}) {
        if (token->empty())
            continue;
        Form form = {{"token", *token},
                     {"token_type_hint",
                      token == &auth.refresh_token ? "refresh_token" : "access_token"}};
        HttpRequest request;
        request.method = "POST";
        request.url = auth.revocation_endpoint;
        request.reach = reach;
        request.timeout = settings.timeout;
        authenticate(auth.auth_method, auth.client_id, secret, form, request.headers);
        request.headers.add("Content-Type", "application/x-www-form-urlencoded");
        request.body = form_encode(form);
        auto sent = http_send(request);
        wipe(request.body);
        if (!sent)
            return std::move(sent).error();
        if (sent->status != 200)
            return make_error(Exit::no_perm, "the revocation endpoint '%s' answered HTTP %d",
                              redact_url(auth.revocation_endpoint).c_str(), sent->status);
    }
    return {};
}

} // namespace

Result<LogoutOutcome> logout(AuthStore& store, std::string_view name, const Settings& settings) {
    LogoutOutcome out;
    SION_TRY(auto auth, store.server(name));
    if (!auth)
        return out;
    out.had_authorization = true;
    SION_TRY(auto kept, store.client(auth->issuer));
    if (!auth->revocation_endpoint.empty()) {
        ClientSettings client;
        client.secret_env = auth->secret_env;
        Status revoked = resolve_secret(client);
        if (client.client_secret.empty() && kept && kept->client_id == auth->client_id)
            client.client_secret = kept->client_secret;
        if (revoked)
            revoked = revoke_tokens(*auth, client.client_secret, settings);
        wipe_client(client);
        if (revoked)
            out.revoked_at = auth->issuer;
        else
            out.revoke_error = revoked.error().message();
    }
    wipe_auth(*auth);
    SION_TRY(bool forgot, store.forget_server(name));
    (void)forgot;
    SION_TRY(auto others, store.servers_of(auth->issuer));
    if (others.empty() && kept && kept->kind == "registered") {
        SION_TRY(bool dropped, store.forget_client(auth->issuer));
        (void)dropped;
    }
    return out;
}

std::string asks_line(std::string_view name) {
    return format("MCP server %.*s asks for authorization.", static_cast<int>(name.size()),
                  name.data());
}

std::vector<std::string> login_lines(std::string_view name, const LoginOutcome& o) {
    std::vector<std::string> lines;
    std::string n(name);
    if (o.registered)
        lines.push_back("registered with " + o.issuer + " as client " + o.client_id);
    std::string line = "authorized " + n + " at " + o.issuer;
    if (!o.scope.empty())
        line += " for " + o.scope;
    if (o.workload)
        line += ", renewed without anyone with the workload's identity token";
    else if (o.unattended)
        line += ", renewed without anyone with the client's credentials";
    else if (o.refreshable)
        line += ", renewed without you while its refresh token lasts";
    else
        line += ", until its token expires (no refresh token: log in again then)";
    lines.push_back(line);
    return lines;
}

std::vector<std::string> logout_lines(std::string_view name, const LogoutOutcome& o) {
    std::vector<std::string> lines;
    std::string n(name);
    if (!o.had_authorization) {
        lines.push_back("MCP server " + n + " has no authorization to forget");
        return lines;
    }
    if (!o.revoked_at.empty())
        lines.push_back("revoked its tokens at " + o.revoked_at);
    if (!o.revoke_error.empty())
        lines.push_back("could not revoke its tokens: " + o.revoke_error);
    lines.push_back("forgot the authorization of MCP server " + n);
    return lines;
}

std::string needs_login(std::string_view name, int status, std::string_view scope) {
    std::string n(name);
    std::string command = "sion agent mcp login " + n;
    if (!scope.empty())
        command += " --scope '" + std::string(scope) + "'";
    return format("the MCP server %s needs authorization (HTTP %d): log in with `%s`", n.c_str(),
                  status, command.c_str());
}

} // namespace sion::mcpd::oauth
