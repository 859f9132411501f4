// SPDX-License-Identifier: MIT
// Logging in to MCP servers over HTTP, as the MCP specification's authorization says: OAuth 2.1
// with PKCE, discovered from the server (RFC 9728, RFC 8414), a client registered beforehand, by
// a client ID metadata document or dynamically (RFC 7591), tokens bound to the server (RFC 8707),
// the issuer checked in the answer (RFC 9207), refreshed without the person and revoked at logout
// (RFC 7009), the client credentials grant for agents that run unattended, workload identity
// (SEP-1933, the RFC 7523 jwt-bearer grant of a platform's identity token), and tokens bound to a
// key of the client's (DPoP, RFC 9449) where the authorization server offers ES256 proofs.
//
// Everything is synchronous, over lib/http.hpp. Nothing here prints but the terminal consent,
// which writes to the fd it is given. Secrets (tokens, client secrets, PKCE verifiers, private
// keys) never appear in an Error's message.
//
// Errors: a peer that breaks the rules (metadata naming another issuer or resource, no PKCE S256,
// an answer with another state or iss, a malformed document) is Exit::data; an address the rules
// forbid (plain HTTP, or a private address, away from the MCP server's own) is Exit::no_perm; an
// authorization server that refuses (a token request's error, a consent declined) is
// Exit::no_perm; unreachable peers Exit::unavailable and time limits Exit::timeout (lib/http's).
//
// Threads: one login or renewal at a time per AuthStore; different stores may be used by
// different threads.
#pragma once

#include "mcpd/auth_store.hpp"

#include "lib/fd.hpp"
#include "lib/http.hpp"
#include "lib/oauth_loopback.hpp"
#include "lib/result.hpp"

#include <chrono>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace sion::mcpd::oauth {

// ---- Addresses ------------------------------------------------------------------------------

// An absolute http(s) URL, split. `host` is lowercased, without brackets for IPv6; `port` is the
// one written ("" when none); `path` starts with '/' ("/" when none was written).
struct Url {
    std::string scheme; // "http" or "https"
    std::string host;
    std::string port;
    std::string path;
    std::string query; // without '?'

    // "https://host[:port]", the port only when written and not the scheme's default.
    [[nodiscard]] std::string origin() const;
    // origin() + path, without a trailing slash unless the path is "/" alone ("https://a/").
    [[nodiscard]] std::string without_query() const;
};

// Exit::data for anything but an absolute http or https URL with a host, or one with user info
// or a fragment.
[[nodiscard]] Result<Url> parse_url(std::string_view text);

enum class Reach { loopback, private_network, public_network };

// Where a host is as written: loopback (localhost, 127/8, ::1), a private network (10/8,
// 172.16/12, 192.168/16, 169.254/16, 100.64/10, fc00::/7, fe80::/10, and the rest of
// lib/address.hpp's) or public. Names other than localhost are judged public here: the rules
// below then ask for HTTPS, and reach_rule() judges the addresses they resolve to.
[[nodiscard]] Reach reach_of(std::string_view host);

// Whether `target` may be used for discovery, registration or tokens of the MCP server at
// `server`: HTTPS at a public address; plain HTTP only when both are on this machine; a private
// or loopback address only when the server is at one itself. Exit::no_perm otherwise, naming
// `what` ("protected resource metadata") and the URL. 0.0.0.0 and :: are refused wherever the
// server is. Hosts are judged as written (reach_of()): for URLs named in metadata.
[[nodiscard]] Status check_reach(const Url& server, const Url& target, const char* what);

// check_reach()'s rule for a request to `target` (HttpRequest::reach): each address its name
// resolves to judged, with the MCP server where its own name resolves (public when it does not).
[[nodiscard]] std::function<Status(const Destination&)>
reach_rule(const Url& server, const Url& target, const char* what);

// ---- Discovery ------------------------------------------------------------------------------

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

struct Settings {
    // Each request to a metadata, registration, token or revocation endpoint.
    std::chrono::milliseconds timeout{30000};
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

// ---- The client ------------------------------------------------------------------------------

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

// ---- Consent ---------------------------------------------------------------------------------

// How the person's consent is got: given the authorization URL, the address the browser was
// sent back to (with its code and state).
class Consent {
public:
    Consent() = default;
    Consent(const Consent&) = delete;
    Consent& operator=(const Consent&) = delete;
    Consent(Consent&&) = delete;
    Consent& operator=(Consent&&) = delete;
    virtual ~Consent() = default;

    // Where the browser is sent back to: "http://127.0.0.1:PORT/callback". Called once, before
    // wait(); `preferred_port` is a kept registration's (0 for none) and is used when free.
    [[nodiscard]] virtual Result<std::string> redirect_uri(int preferred_port) = 0;
    [[nodiscard]] virtual Result<std::string> wait(const std::string& authorization_url) = 0;
};

// The person at a terminal: prints "Open this URL to authorize:" and the URL to `out`, runs
// xdg-open on it unless `no_browser`, and takes whichever comes first of the browser's return to
// 127.0.0.1 (on `port`, or a free one; a return without the state sent is answered 400 and
// ignored) and an address pasted on `in` (a line), for 5 minutes at most (Exit::timeout). `in`
// and `out` are borrowed.
class TerminalConsent : public Consent {
public:
    TerminalConsent(int in, int out, bool no_browser, int port)
        : m_in(in), m_out(out), m_no_browser(no_browser), m_port(port) {}

    [[nodiscard]] Result<std::string> redirect_uri(int preferred_port) override;
    [[nodiscard]] Result<std::string> wait(const std::string& authorization_url) override;

    // How long wait() waits for the person.
    std::chrono::milliseconds patience{std::chrono::minutes(5)};

private:
    int m_in, m_out;
    bool m_no_browser;
    int m_port;
    std::optional<oauth_loopback::Listener> m_listener; // from redirect_uri() on
};

// No person: GETs the authorization URL without following redirects and takes the Location the
// server sends back (an authorization server that approves at once: tests, the conformance
// driver). Exit::no_perm for an answer that is no redirect.
class HeadlessConsent : public Consent {
public:
    explicit HeadlessConsent(Settings settings, int port = 0)
        : m_settings(std::move(settings)), m_port(port) {}

    [[nodiscard]] Result<std::string> redirect_uri(int preferred_port) override;
    [[nodiscard]] Result<std::string> wait(const std::string& authorization_url) override;

private:
    Settings m_settings;
    int m_port;
};

// ---- DPoP (RFC 9449) ---------------------------------------------------------------------------

// Whether the authorization server `m` takes DPoP proofs signed with ES256 (the one algorithm
// sion signs them with): then a login makes a key of its own and binds its tokens to it.
[[nodiscard]] bool offers_dpop(const ServerMetadata& m);

// The DPoP-Nonce values servers gave (RFC 9449 sections 8 and 9), the latest per origin.
class DpopNonces {
public:
    static constexpr size_t k_max_size = 512;

    // Keeps `nonce` for the origin of `url`. False, and nothing kept, for a nonce that is empty,
    // longer than k_max_size or not a token68 (RFC 7235), or a `url` that is not http(s).
    bool keep(std::string_view url, std::string_view nonce);
    // The latest nonce kept for the origin of `url`, or "".
    [[nodiscard]] std::string of(std::string_view url) const;

private:
    std::vector<std::pair<std::string, std::string>> m_nonces; // origin, nonce
};

// What signs the proofs of a login's token requests: its key (PEM, P-256; none: no proofs) and
// the nonces the servers gave. Borrowed.
struct DpopSigner {
    std::string_view key;
    DpopNonces* nonces = nullptr;
};

// A DPoP proof (RFC 9449 section 4.2) of a request by `method` to `url`: a JWT with the header
// typ "dpop+jwt", alg "ES256" and the public jwk of `key_pem`, and the claims jti (fresh), htm,
// htu (`url` without its query and fragment), iat, ath (base64url(SHA-256(access_token)), when
// one is given) and nonce (when one is given). Exit::data for a key or URL that is no such thing.
[[nodiscard]] Result<std::string> dpop_proof(std::string_view key_pem, std::string_view method,
                                             std::string_view url, std::string_view access_token,
                                             std::string_view nonce);

// ---- Tokens ----------------------------------------------------------------------------------

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

// ---- Logging in, renewing, logging out --------------------------------------------------------

struct LoginOptions {
    std::string server_url;
    std::string issuer;   // --issuer
    std::string scope;    // --scope: asked for besides what the server says
    bool client_credentials = false; // --client-credentials
    // Enterprise-managed authorization instead of a person's consent (no renewal: the ID token
    // is the person's, and a new one means a new login).
    std::optional<IdentityAssertion> identity;
    ClientSettings client;
    Settings settings;
    // The challenge of the refusal that asked for this login, when there was one; otherwise the
    // server is asked (a POST, then a GET) for one.
    std::optional<Challenge> challenge;
};

// What a login did, for the lines `sion agent mcp add` and `login` print.
struct LoginOutcome {
    std::string issuer;
    std::string client_id;
    bool registered = false; // a new dynamic registration was made
    std::string scope;       // as granted (or asked, when the server did not say)
    bool refreshable = false;
    bool unattended = false; // the client credentials grant, or the workload's identity
    bool workload = false;   // the workload's identity (--workload-token-file)
};

// Logs in to the server `name` and keeps its tokens in `store`, replacing any it had: discovery,
// the client, the person's consent (PKCE S256, required of the server) and the code exchanged; or,
// with `client_credentials`, the client credentials grant and no person; with a workload token
// file, the workload's identity and no person. Where the authorization server offers DPoP with
// ES256, a new key is made for the login, sealed with its tokens (renewals sign with it).
[[nodiscard]] Result<LoginOutcome> login(AuthStore& store, std::string_view name,
                                         const LoginOptions& options, Consent& consent);

// What to do after a refusal.
struct Renewal {
    bool retry = false; // the tokens were renewed: send the request again with header()'s value
    // Otherwise a person must log in again (needs_login() says how), asking for `scope`.
    std::string scope;
    std::string why; // what the refusal or the failed renewal said, for messages
};

// The HTTP client's authorization hook for the server `name` at `server_url`. One per connection:
// it remembers which token it renewed, so a renewed token that is refused in turn asks for a
// login. Tokens kept for the name at another URL (a server removed and added again elsewhere)
// are never sent: to the hook the server has no authorization.
class Authorizer {
public:
    Authorizer(AuthStore& store, std::string name, std::string server_url, Settings settings = {})
        : m_store(store), m_name(std::move(name)), m_server_url(std::move(server_url)),
          m_settings(std::move(settings)) {}

    // The Authorization header's value for the next request ("Bearer …", or "DPoP …" for a
    // token bound to a key), renewed first when it has expired; none when the server has no
    // authorization kept.
    [[nodiscard]] Result<std::optional<std::string>> header();
    // The DPoP header's value for a request by `method` to `url` with the token header() gave:
    // a fresh proof with its ath and the latest nonce of that origin; "" for a token not bound.
    [[nodiscard]] Result<std::string> proof(std::string_view method, std::string_view url);
    // A server's DPoP-Nonce, kept for the next proofs (DpopNonces::keep).
    bool keep_nonce(std::string_view url, std::string_view nonce);

    // After the server refused a request (401, or 403 with insufficient_scope; `challenge` its
    // WWW-Authenticate): renews the tokens where no person is needed (the refresh token, or the
    // client credentials grant for a server logged in unattended) and says whether to send the
    // request again or to log in — with the union of the scopes, for a step-up; when the server
    // has moved to another authorization server (its metadata read again); when a renewed token
    // is refused too. A 403 asking for scopes the token has already is an Error (Exit::no_perm),
    // and so is a use_dpop_nonce refusal that reaches it (the one retry with the nonce is the
    // transport's, and was refused too).
    [[nodiscard]] Result<Renewal> renew(int status, const Challenge& challenge);

private:
    // The authorization kept for the server, when it is for m_server_url.
    [[nodiscard]] Result<std::optional<ServerAuth>> kept();
    [[nodiscard]] Result<Renewal> renew_tokens(ServerAuth& auth, const Challenge& challenge);

    AuthStore& m_store;
    std::string m_name;
    std::string m_server_url;
    Settings m_settings;
    std::string m_renewed; // a digest of the last access token renew() got
    DpopNonces m_nonces;   // the resource server's and the authorization server's
};

struct LogoutOutcome {
    bool had_authorization = false;
    std::string revoked_at; // the issuer whose revocation endpoint took the tokens, or ""
    std::string revoke_error; // why revoking failed, when it did (the tokens are forgotten still)
};

// Revokes the tokens of `name` where the authorization server takes revocations (RFC 7009), then
// forgets them, and the dynamic registration of their issuer when no other server uses it. A
// revocation that fails is reported in the outcome and does not keep the tokens.
[[nodiscard]] Result<LogoutOutcome> logout(AuthStore& store, std::string_view name,
                                           const Settings& settings);

// ---- The lines sion-mcp prints ---------------------------------------------------------------

// "MCP server notes asks for authorization."
[[nodiscard]] std::string asks_line(std::string_view name);
// "registered with http://127.0.0.1:8812 as client 59ac…" — only when outcome.registered.
// "authorized notes at http://127.0.0.1:8812 for notes:read, renewed without you while its
// refresh token lasts"
[[nodiscard]] std::vector<std::string> login_lines(std::string_view name,
                                                   const LoginOutcome& outcome);
// "revoked its tokens at http://127.0.0.1:8812", "forgot the authorization of MCP server notes"
// (and "could not revoke its tokens at …: why" when revoking failed)
[[nodiscard]] std::vector<std::string> logout_lines(std::string_view name,
                                                    const LogoutOutcome& outcome);
// "the MCP server notes needs authorization (HTTP 401): log in with `sion agent mcp login notes`",
// with " --scope 'a b'" in the command when `scope` is not empty.
[[nodiscard]] std::string needs_login(std::string_view name, int status, std::string_view scope);

} // namespace sion::mcpd::oauth
