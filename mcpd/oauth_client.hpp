// SPDX-License-Identifier: MIT
// The client's side of OAuth: which client, PKCE, the authorization request and its answer, and the
// token requests (code, client credentials with a secret or an ES256 assertion, the workload's
// identity, enterprise-managed authorization). Errors, secrets and threads: as oauth_types.hpp
// says.
#pragma once

#include "mcpd/auth_store.hpp"
#include "mcpd/oauth_discovery.hpp"
#include "mcpd/oauth_dpop.hpp"
#include "mcpd/oauth_types.hpp"

#include "lib/oauth_loopback.hpp"
#include "lib/result.hpp"

#include <cstdint>
#include <string>
#include <string_view>

namespace sion::mcpd::oauth {

// Who the client is, as the user configured it (`sion agent mcp add` flags).
struct ClientSettings {
    std::string client_id;           // --client-id: registered beforehand
    // --client-secret-env: the variable holding its secret, or its private key in PEM (for
    // private_key_jwt, ES256). login() reads it (lib/secrets' lookup) when the two below are empty.
    std::string secret_env;
    std::string client_secret;       // its secret
    std::string client_metadata_url; // --client-metadata-url: an HTTPS client ID metadata document
    std::string private_key_pem;     // for private_key_jwt (ES256), with client_id
    // --workload-token-file: where the platform keeps the workload's identity token (a JWT),
    // read at every token request (platforms rotate it); with client_id, and no person.
    std::string workload_token_file;
    int callback_port = 0;           // --callback-port; 0: any free port on 127.0.0.1
    std::string client_name = "sion";
};

// Which client to use with `discovery`'s server for a person's consent at `redirect_uri`: the
// one registered beforehand, a client ID metadata document where the server takes one, the
// registration kept in `store` for this issuer and redirect URI, or a new dynamic registration
// (a native application; no secret where the server allows it), which is kept in `store`.
// Exit::config when none is possible (no registration endpoint and no --client-id).
[[nodiscard]] Result<ClientRecord> choose_client(const Discovery& discovery,
                                                 const ClientSettings& client,
                                                 const std::string& redirect_uri,
                                                 AuthStore& store, const Settings& settings);

// The PKCE pair (RFC 7636, S256) and state of one authorization request (lib/oauth_loopback).
using oauth_loopback::make_pkce;
using oauth_loopback::Pkce;

// The URL the person opens: response_type, client_id, redirect_uri, code_challenge,
// code_challenge_method, state, resource, and scope when not empty, in that order.
[[nodiscard]] std::string authorization_url(const Discovery& discovery, const ClientRecord& client,
                                            const Pkce& pkce, std::string_view scope);

// The code in the address the browser was sent back to, once its state is `pkce.state` and its
// iss (RFC 9207) is the issuer's (required where the server says it sends one). An `error`
// there is Exit::no_perm with the server's words.
[[nodiscard]] Result<std::string> code_from_redirect(std::string_view address,
                                                     const Discovery& discovery, const Pkce& pkce);

// A token endpoint's answer.
struct Tokens {
    std::string access_token;
    std::string refresh_token; // "" when none was issued
    std::string scope;         // as granted ("" when the answer did not say)
    int64_t expires_at = 0;    // seconds since the epoch; 0 when the answer did not say
    bool dpop = false;         // token_type DPoP: bound to the signer's key
};

// Every token request below carries a DPoP proof when `dpop.key` is set; a 400 answer with
// error=use_dpop_nonce and a usable DPoP-Nonce is sent once more with that nonce. An answer of
// token_type DPoP to a request without a proof is Exit::data (the server offered no DPoP).

// The code exchanged with its verifier; the request names the server as its resource.
[[nodiscard]] Result<Tokens> exchange_code(const Discovery& discovery, const ClientRecord& client,
                                           std::string_view code, const Pkce& pkce,
                                           const Settings& settings, DpopSigner dpop = {});

// The client credentials grant: client_secret_basic or _post with `client.client_secret`, or
// private_key_jwt with `client.private_key_pem` (an ES256 assertion for the issuer).
[[nodiscard]] Result<Tokens> client_credentials(const Discovery& discovery,
                                                const ClientSettings& client,
                                                std::string_view scope, const Settings& settings,
                                                DpopSigner dpop = {});

// Workload identity (SEP-1933): the identity token the platform gave the workload, read from
// `client.workload_token_file` now, taken by the authorization server for an access token (the
// RFC 7523 section 2.1 jwt-bearer grant, `assertion`), from `client.client_id` (with its secret
// where it has one). A file that cannot be read, is empty or over 64 KiB is Exit::config naming
// it; a refusal is the server's error, never retried and never followed by another grant.
[[nodiscard]] Result<Tokens> workload_grant(const Discovery& discovery,
                                            const ClientSettings& client, std::string_view scope,
                                            const Settings& settings, DpopSigner dpop = {});

// Enterprise-managed authorization (SEP-990, "cross-app access"): the ID token the organisation's
// identity provider gave the person, exchanged there for an identity assertion grant (an ID-JAG,
// RFC 8693 token exchange naming the authorization server as audience and the MCP server as
// resource), which the authorization server takes for an access token (RFC 7523 jwt-bearer grant)
// from `client`, authenticated with its secret.
struct IdentityAssertion {
    std::string token_endpoint; // the identity provider's
    std::string id_token;       // secret
};

[[nodiscard]] Result<Tokens> enterprise_grant(const Discovery& discovery,
                                              const ClientSettings& client,
                                              const IdentityAssertion& identity,
                                              std::string_view scope, const Settings& settings,
                                              DpopSigner dpop = {});

} // namespace sion::mcpd::oauth
