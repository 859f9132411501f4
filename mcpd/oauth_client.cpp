// SPDX-License-Identifier: MIT
// The client's side of OAuth: which client, PKCE, the authorization request and its answer, and the
// token requests (code, client credentials with a secret or an ES256 assertion).
#include "mcpd/oauth_client.hpp"

#include "mcpd/oauth_url.hpp"
#include "mcpd/oauth_wire.hpp"

#include "lib/base64.hpp"
#include "lib/fd.hpp"
#include "lib/hash.hpp"
#include "lib/jws.hpp"
#include "lib/secret_bytes.hpp"
#include "lib/text.hpp"

#include <fcntl.h>

#include <cerrno>

namespace sion::mcpd::oauth {

std::string secret_method(const ServerMetadata& m) {
    const auto& methods = m.token_endpoint_auth_methods_supported;
    if (methods.empty() || contains(methods, "client_secret_basic")
        || !contains(methods, "client_secret_post"))
        return "client_secret_basic";
    return "client_secret_post";
}

namespace {

constexpr int64_t k_assertion_lifetime_s = 300;

// What a native application registers as: no secret where the server allows it.
std::string registration_method(const ServerMetadata& m) {
    const auto& methods = m.token_endpoint_auth_methods_supported;
    if (methods.empty() || contains(methods, "none"))
        return "none";
    return secret_method(m);
}

Json registration_request(const ClientSettings& client, const std::string& redirect_uri,
                          const std::string& method) {
    Json uris = Json::array();
    uris.push(Json::string(redirect_uri));
    Json grants = Json::array();
    grants.push(Json::string("authorization_code"));
    grants.push(Json::string("refresh_token"));
    Json responses = Json::array();
    responses.push(Json::string("code"));
    Json body = Json::object();
    body.set("client_name", client.client_name)
        .set("redirect_uris", std::move(uris))
        .set("grant_types", std::move(grants))
        .set("response_types", std::move(responses))
        .set("token_endpoint_auth_method", method)
        .set("application_type", "native");
    return body;
}

Result<ClientRecord> register_client(const Discovery& discovery, const ClientSettings& client,
                                     const std::string& redirect_uri, const Settings& settings) {
    const ServerMetadata& m = discovery.server;
    SION_TRY(Url server, parse_url(discovery.server_url));
    SION_TRY(Url target, parse_url(m.registration_endpoint));
    std::string method = registration_method(m);
    HttpRequest request;
    request.reach = reach_rule(server, target, "registration endpoint");
    request.method = "POST";
    request.url = m.registration_endpoint;
    request.timeout = settings.timeout;
    request.max_response_size = size_t{1} << 20;
    request.headers.add("Content-Type", "application/json");
    request.headers.add("Accept", "application/json");
    request.body = registration_request(client, redirect_uri, method).dump();
    SION_TRY(HttpResponse response, http_send(request));
    std::string shown = redact_url(m.registration_endpoint);
    if (response.status != 200 && response.status != 201)
        return make_error(Exit::no_perm, "the registration endpoint '%s' refused to register "
                          "sion (HTTP %d)", shown.c_str(), response.status);
    auto doc = Json::parse(response.body);
    wipe(response.body);
    if (!doc || !doc->view().is_object())
        return make_error(Exit::data, "cannot read the answer of the registration endpoint '%s'",
                          shown.c_str());
    auto id = doc->view().string("client_id");
    if (!id || id->empty())
        return make_error(Exit::data, "the registration endpoint '%s' gave no client_id",
                          shown.c_str());
    ClientRecord record;
    record.issuer = m.issuer;
    record.client_id = std::string(*id);
    record.client_secret = std::string(doc->view().string_or("client_secret", "").value_or(""));
    record.redirect_uri = redirect_uri;
    record.kind = "registered";
    // The answer says how the server registered us (RFC 7591 section 3.2.1), whatever we asked.
    std::string given(doc->view().string_or("token_endpoint_auth_method", "").value_or(""));
    if (!given.empty())
        record.auth_method = given;
    else if (method == "none" && !record.client_secret.empty())
        record.auth_method = secret_method(m);
    else
        record.auth_method = method;
    return record;
}

// The client's assertion for the issuer (RFC 7523 section 3): iss and sub the client, aud the
// issuer, a short life and a jti never used again.
Result<std::string> client_assertion(const ClientSettings& client, const std::string& issuer) {
    SION_TRY(std::string jti, random_bytes(16));
    int64_t now = now_s();
    Json header = Json::object();
    header.set("alg", "ES256").set("typ", "JWT");
    Json claims = Json::object();
    claims.set("iss", client.client_id)
        .set("sub", client.client_id)
        .set("aud", issuer)
        .set("iat", now)
        .set("exp", now + k_assertion_lifetime_s)
        .set("jti", to_hex(jti));
    std::string signing_input = jwt_part(header) + "." + jwt_part(claims);
    auto signature = es256_sign(client.private_key_pem, signing_input);
    if (!signature)
        return signature.error().context("cannot sign the client's assertion");
    return signing_input + "." + base64url_encode(*signature);
}

} // namespace

Result<ClientRecord> choose_client(const Discovery& discovery, const ClientSettings& client,
                                   const std::string& redirect_uri, AuthStore& store,
                                   const Settings& settings) {
    const ServerMetadata& m = discovery.server;
    ClientRecord record;
    record.issuer = m.issuer;
    record.redirect_uri = redirect_uri;
    if (!client.client_id.empty()) {
        record.kind = "configured";
        record.client_id = client.client_id;
        record.client_secret = client.client_secret;
        record.auth_method = client.client_secret.empty() ? "none" : secret_method(m);
        return record;
    }
    if (!client.client_metadata_url.empty() && m.client_id_metadata_document_supported) {
        SION_TRY(Url document, parse_url(client.client_metadata_url));
        if (document.scheme != "https" || document.path == "/")
            return make_error(Exit::config, "a client ID metadata document must be at an https "
                              "URL with a path, not '%s'",
                              redact_url(client.client_metadata_url).c_str());
        record.kind = "metadata";
        record.client_id = client.client_metadata_url;
        return record;
    }
    SION_TRY(auto kept, store.client(m.issuer));
    if (kept && kept->kind == "registered" && kept->redirect_uri == redirect_uri)
        return std::move(*kept);
    if (m.registration_endpoint.empty())
        return make_error(Exit::config, "the authorization server '%s' takes no dynamic "
                          "registration: give the client it knows sion as with --client-id",
                          redact_url(m.issuer).c_str());
    SION_TRY(ClientRecord registered, register_client(discovery, client, redirect_uri, settings));
    SION_CHECK(store.put_client(registered));
    return registered;
}

std::string authorization_url(const Discovery& discovery, const ClientRecord& client,
                              const Pkce& pkce, std::string_view scope) {
    Form form = {{"response_type", "code"},
                 {"client_id", client.client_id},
                 {"redirect_uri", client.redirect_uri},
                 {"code_challenge", pkce.challenge},
                 {"code_challenge_method", "S256"},
                 {"state", pkce.state},
                 {"resource", discovery.resource}};
    if (!scope.empty())
        form.emplace_back("scope", std::string(scope));
    const std::string& endpoint = discovery.server.authorization_endpoint;
    return endpoint + (endpoint.find('?') == std::string::npos ? "?" : "&") + form_encode(form);
}

Result<std::string> code_from_redirect(std::string_view address, const Discovery& discovery,
                                       const Pkce& pkce) {
    size_t query = address.find('?');
    std::string_view fields = query == std::string_view::npos ? address : address.substr(query + 1);
    fields = fields.substr(0, fields.find('#'));
    while (!fields.empty() && (fields.back() == '\n' || fields.back() == '\r' || fields.back() == ' '))
        fields.remove_suffix(1);
    Form answer = form_decode(fields);
    const std::string& issuer = discovery.server.issuer;
    if (!constant_time_equal(form_value(answer, "state"), pkce.state))
        return make_error(Exit::data, "refusing the authorization answer: its state is not the "
                          "one this login sent (an answer to another login?)");
    bool has_iss = false;
    for (const auto& [name, value] : answer)
        has_iss = has_iss || name == "iss";
    // RFC 9207: compared exactly, and required where the server says it always sends one.
    if (has_iss && form_value(answer, "iss") != issuer)
        return make_error(Exit::data, "refusing the authorization answer: it names the issuer "
                          "'%s', not '%s'", redact_url(form_value(answer, "iss")).c_str(),
                          redact_url(issuer).c_str());
    if (!has_iss && discovery.server.iss_parameter_supported)
        return make_error(Exit::data, "refusing the authorization answer: it names no issuer, "
                          "though '%s' says it always does", redact_url(issuer).c_str());
    std::string error = form_value(answer, "error");
    if (!error.empty()) {
        std::string more = form_value(answer, "error_description");
        return make_error(Exit::no_perm, "the authorization server '%s' did not authorize sion: "
                          "%s%s%s%s", redact_url(issuer).c_str(), error.substr(0, 100).c_str(),
                          more.empty() ? "" : " (", more.substr(0, 200).c_str(),
                          more.empty() ? "" : ")");
    }
    std::string code = form_value(answer, "code");
    if (code.empty())
        return make_error(Exit::data, "refusing the authorization answer: it holds no code");
    return code;
}

Result<Tokens> exchange_code(const Discovery& discovery, const ClientRecord& client,
                             std::string_view code, const Pkce& pkce, const Settings& settings,
                             DpopSigner dpop) {
    SION_TRY(Url server, parse_url(discovery.server_url));
    Form form = {{"grant_type", "authorization_code"},
                 {"code", std::string(code)},
                 {"redirect_uri", client.redirect_uri},
                 {"code_verifier", pkce.verifier},
                 {"resource", discovery.resource}};
    HttpHeaders headers;
    authenticate(client.auth_method, client.client_id, client.client_secret, form, headers);
    return post_token(server, discovery.server.token_endpoint, form, headers, settings, dpop);
}

Result<Tokens> client_credentials(const Discovery& discovery, const ClientSettings& client,
                                  std::string_view scope, const Settings& settings,
                                  DpopSigner dpop) {
    if (client.client_id.empty())
        return make_error(Exit::usage, "the client credentials grant needs the client's "
                          "--client-id");
    SION_TRY(Url server, parse_url(discovery.server_url));
    Form form = {{"grant_type", "client_credentials"}, {"resource", discovery.resource}};
    if (!scope.empty())
        form.emplace_back("scope", std::string(scope));
    HttpHeaders headers;
    if (!client.private_key_pem.empty()) {
        SION_TRY(std::string assertion, client_assertion(client, discovery.server.issuer));
        form.emplace_back("client_assertion_type",
                          "urn:ietf:params:oauth:client-assertion-type:jwt-bearer");
        form.emplace_back("client_assertion", std::move(assertion));
    } else if (!client.client_secret.empty()) {
        authenticate(secret_method(discovery.server), client.client_id, client.client_secret, form,
                     headers);
    } else {
        return make_error(Exit::usage, "the client credentials grant needs the client's secret "
                          "or private key (--client-secret-env)");
    }
    return post_token(server, discovery.server.token_endpoint, form, headers, settings, dpop);
}

namespace {

constexpr size_t k_max_workload_token = size_t{64} << 10;

// The workload's identity token as the platform keeps it now, without the line end around it.
Result<std::string> read_workload_token(const std::string& path) {
    Fd fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NOCTTY));
    if (!fd)
        return sys_error(Exit::config, errno, "cannot read the workload identity token '%s'",
                         path.c_str());
    auto text = read_all(fd.get(), k_max_workload_token);
    if (!text)
        return make_error(Exit::config, "cannot read the workload identity token '%s': %s",
                          path.c_str(), text.error().message().c_str());
    size_t begin = text->find_first_not_of(" \t\r\n");
    size_t end = text->find_last_not_of(" \t\r\n");
    std::string token = begin == std::string::npos ? std::string()
                                                   : text->substr(begin, end + 1 - begin);
    wipe(*text);
    if (token.empty())
        return make_error(Exit::config, "the workload identity token '%s' is empty",
                          path.c_str());
    return token;
}

} // namespace

Result<Tokens> workload_grant(const Discovery& discovery, const ClientSettings& client,
                              std::string_view scope, const Settings& settings, DpopSigner dpop) {
    if (client.client_id.empty())
        return make_error(Exit::usage, "the workload identity grant needs the client's "
                          "--client-id");
    SION_TRY(Url server, parse_url(discovery.server_url));
    SION_TRY(std::string assertion, read_workload_token(client.workload_token_file));
    Form form = {{"grant_type", "urn:ietf:params:oauth:grant-type:jwt-bearer"},
                 {"assertion", std::move(assertion)},
                 {"resource", discovery.resource}};
    if (!scope.empty())
        form.emplace_back("scope", std::string(scope));
    HttpHeaders headers;
    authenticate(client.client_secret.empty() ? "none" : secret_method(discovery.server),
                 client.client_id, client.client_secret, form, headers);
    auto tokens = post_token(server, discovery.server.token_endpoint, form, headers, settings, dpop);
    wipe(form[1].second);
    return tokens;
}

Result<Tokens> enterprise_grant(const Discovery& discovery, const ClientSettings& client,
                                const IdentityAssertion& identity, std::string_view scope,
                                const Settings& settings, DpopSigner dpop) {
    if (client.client_id.empty() || client.client_secret.empty())
        return make_error(Exit::usage, "enterprise-managed authorization needs the client's "
                          "--client-id and its secret (--client-secret-env)");
    SION_TRY(Url server, parse_url(discovery.server_url));
    Form exchange = {{"grant_type", "urn:ietf:params:oauth:grant-type:token-exchange"},
                     {"requested_token_type", "urn:ietf:params:oauth:token-type:id-jag"},
                     {"subject_token", identity.id_token},
                     {"subject_token_type", "urn:ietf:params:oauth:token-type:id_token"},
                     {"audience", discovery.server.issuer},
                     {"resource", discovery.resource}};
    if (!scope.empty())
        exchange.emplace_back("scope", std::string(scope));
    auto grant = post_token(server, identity.token_endpoint, exchange, {}, settings, {}, true);
    if (!grant)
        return grant.error().context("cannot get an identity assertion grant");
    Form form = {{"grant_type", "urn:ietf:params:oauth:grant-type:jwt-bearer"},
                 {"assertion", grant->access_token},
                 {"resource", discovery.resource}};
    if (!scope.empty())
        form.emplace_back("scope", std::string(scope));
    HttpHeaders headers;
    authenticate(secret_method(discovery.server), client.client_id, client.client_secret, form,
                 headers);
    auto tokens = post_token(server, discovery.server.token_endpoint, form, headers, settings, dpop);
    wipe(grant->access_token);
    return tokens;
}

} // namespace sion::mcpd::oauth
