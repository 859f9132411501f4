// SPDX-License-Identifier: MIT
// Finding where an MCP server is authorized: its challenge, its protected resource metadata (RFC
// 9728), its authorization server's metadata (RFC 8414, OpenID Connect discovery), and the scopes.
// Errors, secrets and threads: as oauth_types.hpp says.
#pragma once

#include "mcpd/oauth_types.hpp"

#include "lib/http.hpp"
#include "lib/result.hpp"

#include <string>
#include <string_view>
#include <vector>

namespace sion::mcpd::oauth {

// The parameters of a Bearer challenge (RFC 6750 section 3), or a DPoP one (RFC 9449 section
// 7.1), in a WWW-Authenticate value; where both are, the first value of each parameter counts.
struct Challenge {
    bool bearer = false; // a Bearer challenge was there at all
    bool dpop = false;   // a DPoP challenge was
    std::string resource_metadata;
    std::string scope;
    std::string error; // "invalid_token", "insufficient_scope", ...
    std::string error_description;
};

// The Bearer or DPoP challenge of a WWW-Authenticate header's value; one without any is empty.
// Values may be quoted strings (with \ escapes) or tokens; other schemes' challenges are skipped.
[[nodiscard]] Challenge parse_challenge(std::string_view www_authenticate);
// The Bearer challenge of a response, from all of its WWW-Authenticate headers.
[[nodiscard]] Challenge challenge_of(const HttpResponse& response);

// What the authorization server says of itself (RFC 8414), or the 2025-03-26 defaults.
struct ServerMetadata {
    std::string issuer;
    std::string authorization_endpoint;
    std::string token_endpoint;
    std::string registration_endpoint; // "" when it takes no dynamic registration
    std::string revocation_endpoint;   // "" when it takes no revocations
    std::vector<std::string> scopes_supported;
    std::vector<std::string> code_challenge_methods_supported;
    std::vector<std::string> token_endpoint_auth_methods_supported;
    std::vector<std::string> grant_types_supported;
    bool iss_parameter_supported = false; // authorization_response_iss_parameter_supported
    bool client_id_metadata_document_supported = false;
    std::vector<std::string> dpop_signing_alg_values_supported;
    // No metadata at all: /authorize, /token and /register at the MCP server's origin, as the
    // 2025-03-26 specification's fallback says.
    bool defaults = false;
};

// Where and how the MCP server at `server_url` is authorized.
struct Discovery {
    std::string server_url;            // the MCP server's URL, as configured
    std::string resource;              // what token requests name as `resource` (RFC 8707)
    std::string resource_metadata_url; // "" when there was none (2025-03-26 servers)
    std::vector<std::string> resource_scopes; // the metadata's scopes_supported
    ServerMetadata server;
};

// Finds the authorization server of the MCP server at `server_url`: its protected resource
// metadata from `challenge.resource_metadata`, else the path-inserted well-known URI, else the
// root one; it must name the server (its origin, and its path or one above) and an authorization
// server (`issuer`, when not empty, picks one of several and must be among them). That server's
// metadata comes from the RFC 8414 path-inserted URI, then OpenID Connect discovery, and must name
// itself as issuer. A server with no resource metadata is a 2025-03-26 one: the metadata at its
// own origin, or the default endpoints there.
[[nodiscard]] Result<Discovery> discover(const std::string& server_url, const Challenge& challenge,
                                         const std::string& issuer, const Settings& settings);

// The scopes to ask for, as the specification chooses them: the challenge's, else the resource
// metadata's scopes_supported, else none; then `wanted` (--scope, or a step-up's) added, and
// offline_access where the authorization server lists it. Space-separated, each once, in order.
[[nodiscard]] std::string choose_scope(const Discovery& discovery, const Challenge& challenge,
                                       std::string_view wanted);

} // namespace sion::mcpd::oauth
