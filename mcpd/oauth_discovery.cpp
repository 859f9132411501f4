// SPDX-License-Identifier: MIT
// Finding where an MCP server is authorized: its challenge, its protected resource metadata (RFC
// 9728), its authorization server's metadata (RFC 8414, OpenID Connect discovery), and the scopes.
#include "mcpd/oauth_discovery.hpp"

#include "mcpd/oauth_url.hpp"
#include "mcpd/oauth_wire.hpp"

#include "lib/text.hpp"

namespace sion::mcpd::oauth {

namespace {

bool is_space(char c) {
    return c == ' ' || c == '\t';
}

bool token_char(char c) {
    return c != '=' && c != ',' && c != '"' && !is_space(c) && c > 0x20 && c < 0x7f;
}

// A quoted-string (the opening quote at `i`) with its escapes undone; `i` moves past it.
std::string quoted(std::string_view s, size_t& i) {
    std::string out;
    for (++i; i < s.size() && s[i] != '"'; ++i) {
        if (s[i] == '\\' && i + 1 < s.size())
            ++i;
        out += s[i];
    }
    if (i < s.size())
        ++i;
    return out;
}

// Whether a path is `above` or the same as `path`, segment by segment ("/" is above all).
bool path_covers(std::string_view above, std::string_view path) {
    above = trimmed(above);
    path = trimmed(path);
    if (above.empty())
        return true;
    return path == above || (path.starts_with(above) && path[above.size()] == '/');
}

// The URLs of the resource metadata to try, best first (RFC 9728 section 3.1).
std::vector<std::string> resource_metadata_urls(const Url& server) {
    std::vector<std::string> out;
    std::string_view path = trimmed(server.path);
    if (!path.empty())
        out.push_back(server.origin() + "/.well-known/oauth-protected-resource" + std::string(path));
    out.push_back(server.origin() + "/.well-known/oauth-protected-resource");
    return out;
}

// The URLs of an issuer's metadata to try, best first (RFC 8414 section 3.1, then OpenID Connect
// discovery in both of its placements), as the MCP specification orders them.
std::vector<std::string> server_metadata_urls(const Url& issuer) {
    std::string origin = issuer.origin();
    std::string path(trimmed(issuer.path));
    if (path.empty())
        return {origin + "/.well-known/oauth-authorization-server",
                origin + "/.well-known/openid-configuration"};
    return {origin + "/.well-known/oauth-authorization-server" + path,
            origin + "/.well-known/openid-configuration" + path,
            origin + path + "/.well-known/openid-configuration"};
}

ServerMetadata metadata_of(JsonView v) {
    auto text = [&](const char* key) {
        return std::string(v.string_or(key, "").value_or(""));
    };
    ServerMetadata m;
    m.issuer = text("issuer");
    m.authorization_endpoint = text("authorization_endpoint");
    m.token_endpoint = text("token_endpoint");
    m.registration_endpoint = text("registration_endpoint");
    m.revocation_endpoint = text("revocation_endpoint");
    m.scopes_supported = strings_of(v, "scopes_supported");
    m.code_challenge_methods_supported = strings_of(v, "code_challenge_methods_supported");
    m.token_endpoint_auth_methods_supported = strings_of(v, "token_endpoint_auth_methods_supported");
    m.grant_types_supported = strings_of(v, "grant_types_supported");
    m.iss_parameter_supported =
        v.boolean_or("authorization_response_iss_parameter_supported", false).value_or(false);
    m.client_id_metadata_document_supported =
        v.boolean_or("client_id_metadata_document_supported", false).value_or(false);
    m.dpop_signing_alg_values_supported = strings_of(v, "dpop_signing_alg_values_supported");
    return m;
}

// Every endpoint named must be a URL the rules let us use.
Status check_endpoints(const Url& server, const ServerMetadata& m) {
    const std::pair<const char*, const std::string*> endpoints[] = {
        {"authorization endpoint", &m.authorization_endpoint},
        {"token endpoint", &m.token_endpoint},
        {"registration endpoint", &m.registration_endpoint},
        {"revocation endpoint", &m.revocation_endpoint},
    };
    for (const auto& [what, url] : endpoints) {
        if (url->empty())
            continue;
        SION_TRY(Url parsed, parse_url(*url));
        SION_CHECK(check_reach(server, parsed, what));
    }
    if (m.token_endpoint.empty())
        return make_error(Exit::data, "the metadata of authorization server '%s' names no "
                          "token_endpoint", redact_url(m.issuer).c_str());
    return {};
}

// The metadata of `issuer`, which must name itself; with `same_origin` (a 2025-03-26 server,
// whose authorization server is its own origin) an issuer elsewhere on that origin is taken.
Result<std::optional<ServerMetadata>> fetch_metadata(const Url& server, const std::string& issuer,
                                                     bool same_origin, const Settings& settings) {
    SION_TRY(Url where, parse_url(issuer));
    SION_CHECK(check_reach(server, where, "authorization server"));
    for (const std::string& url : server_metadata_urls(where)) {
        SION_TRY(Fetched got, get_json(server, url, "authorization server metadata", settings));
        if (got.status != 200)
            continue;
        ServerMetadata m = metadata_of(got.doc);
        auto named = parse_url(m.issuer);
        bool same = trimmed(m.issuer) == trimmed(issuer)
                    || (same_origin && named && named->origin() == where.origin());
        if (!same)
            return make_error(Exit::data,
                              "refusing the metadata at '%s': it names the issuer '%s', not '%s'",
                              redact_url(url).c_str(), redact_url(m.issuer).c_str(),
                              redact_url(issuer).c_str());
        SION_CHECK(check_endpoints(server, m));
        return std::optional<ServerMetadata>(std::move(m));
    }
    return std::optional<ServerMetadata>();
}

// The resource metadata found for `server`: at the challenge's address, else the well-known ones.
Result<std::optional<Fetched>> fetch_resource_metadata(const Url& server, const Challenge& challenge,
                                                       std::string& found_at,
                                                       const Settings& settings) {
    std::vector<std::string> urls = resource_metadata_urls(server);
    if (!challenge.resource_metadata.empty())
        urls = {challenge.resource_metadata};
    for (const std::string& url : urls) {
        SION_TRY(Fetched got, get_json(server, url, "protected resource metadata", settings));
        if (got.status == 200) {
            found_at = url;
            return std::optional<Fetched>(std::move(got));
        }
    }
    if (!challenge.resource_metadata.empty())
        return make_error(Exit::unavailable, "cannot get the protected resource metadata at '%s'",
                          redact_url(challenge.resource_metadata).c_str());
    return std::optional<Fetched>();
}

Result<std::string> pick_issuer(const std::vector<std::string>& listed, const std::string& issuer,
                                const std::string& at) {
    if (listed.empty())
        return make_error(Exit::data, "the protected resource metadata at '%s' names no "
                          "authorization server", redact_url(at).c_str());
    if (issuer.empty())
        return listed.front();
    for (const std::string& one : listed)
        if (trimmed(one) == trimmed(issuer))
            return one;
    return make_error(Exit::config, "the protected resource metadata at '%s' does not name the "
                      "authorization server '%s' (it names %s)", redact_url(at).c_str(),
                      redact_url(issuer).c_str(), redact_url(listed.front()).c_str());
}

// A 2025-03-26 server: its origin's metadata, or the default endpoints there.
Result<ServerMetadata> legacy_server(const Url& server, const Settings& settings) {
    std::string origin = server.origin();
    SION_TRY(auto found, fetch_metadata(server, origin, true, settings));
    if (found)
        return std::move(*found);
    ServerMetadata m;
    m.issuer = origin;
    m.authorization_endpoint = origin + "/authorize";
    m.token_endpoint = origin + "/token";
    m.registration_endpoint = origin + "/register";
    m.defaults = true;
    return m;
}

} // namespace

Challenge parse_challenge(std::string_view s) {
    Challenge out;
    bool in_bearer = false; // within a Bearer or DPoP challenge
    auto first = [](std::string& into, std::string value) {
        if (into.empty())
            into = std::move(value);
    };
    size_t i = 0;
    while (i < s.size()) {
        while (i < s.size() && (is_space(s[i]) || s[i] == ','))
            ++i;
        size_t start = i;
        while (i < s.size() && token_char(s[i]))
            ++i;
        std::string name = ascii_lower(s.substr(start, i - start));
        size_t after = i;
        while (after < s.size() && is_space(s[after]))
            ++after;
        if (name.empty()) {
            ++i; // a stray '=' or quote
            continue;
        }
        if (after >= s.size() || s[after] != '=') {
            in_bearer = name == "bearer" || name == "dpop";
            out.bearer = out.bearer || name == "bearer";
            out.dpop = out.dpop || name == "dpop";
            continue;
        }
        i = after + 1;
        while (i < s.size() && is_space(s[i]))
            ++i;
        std::string value;
        if (i < s.size() && s[i] == '"') {
            value = quoted(s, i);
        } else {
            size_t v = i;
            while (i < s.size() && s[i] != ',' && !is_space(s[i]))
                ++i;
            value = std::string(s.substr(v, i - v));
        }
        if (!in_bearer)
            continue;
        if (name == "resource_metadata")
            first(out.resource_metadata, std::move(value));
        else if (name == "scope")
            first(out.scope, std::move(value));
        else if (name == "error")
            first(out.error, std::move(value));
        else if (name == "error_description")
            first(out.error_description, std::move(value));
    }
    return out;
}

Challenge challenge_of(const HttpResponse& response) {
    std::string joined;
    for (std::string_view value : response.headers.get_all("WWW-Authenticate")) {
        if (!joined.empty())
            joined += ", ";
        joined += value;
    }
    return parse_challenge(joined);
}

Result<Discovery> discover(const std::string& server_url, const Challenge& challenge,
                           const std::string& issuer, const Settings& settings) {
    SION_TRY(Url server, parse_url(server_url));
    Discovery out;
    out.server_url = server_url;
    out.resource = server.without_query();
    std::string at;
    SION_TRY(auto prm, fetch_resource_metadata(server, challenge, at, settings));
    if (!prm) {
        if (!issuer.empty())
            return make_error(Exit::config, "the MCP server at '%s' publishes no protected "
                              "resource metadata to pick '%s' from", redact_url(server_url).c_str(),
                              redact_url(issuer).c_str());
        SION_TRY(out.server, legacy_server(server, settings));
        return out;
    }
    JsonView doc = prm->doc;
    std::string resource(doc.string_or("resource", "").value_or(""));
    auto named = parse_url(resource);
    if (!named || named->origin() != server.origin() || !path_covers(named->path, server.path))
        return make_error(Exit::data, "refusing the protected resource metadata at '%s': it "
                          "names the resource '%s', not the MCP server '%s'",
                          redact_url(at).c_str(), redact_url(resource).c_str(),
                          redact_url(server_url).c_str());
    out.resource = resource;
    out.resource_metadata_url = at;
    out.resource_scopes = strings_of(doc, "scopes_supported");
    SION_TRY(std::string chosen, pick_issuer(strings_of(doc, "authorization_servers"), issuer, at));
    SION_TRY(auto metadata, fetch_metadata(server, chosen, false, settings));
    if (!metadata)
        return make_error(Exit::unavailable, "cannot find the metadata of the authorization "
                          "server '%s'", redact_url(chosen).c_str());
    out.server = std::move(*metadata);
    return out;
}

std::string choose_scope(const Discovery& discovery, const Challenge& challenge,
                         std::string_view wanted) {
    std::string scope = challenge.scope;
    if (scope.empty())
        for (const std::string& s : discovery.resource_scopes)
            scope = words_union(scope, s);
    scope = words_union(scope, wanted);
    if (!scope.empty() && contains(discovery.server.scopes_supported, "offline_access"))
        scope = words_union(scope, "offline_access");
    return scope;
}

} // namespace sion::mcpd::oauth
