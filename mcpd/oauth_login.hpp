// SPDX-License-Identifier: MIT
// Logging in to MCP servers over HTTP, as the MCP specification's authorization says: OAuth 2.1
// with PKCE, discovered from the server (RFC 9728, RFC 8414), a client registered beforehand, by
// a client ID metadata document or dynamically (RFC 7591), tokens bound to the server (RFC 8707),
// the issuer checked in the answer (RFC 9207), refreshed without the person and revoked at logout
// (RFC 7009), the client credentials grant for agents that run unattended, workload identity
// (SEP-1933, the RFC 7523 jwt-bearer grant of a platform's identity token), and tokens bound to a
// key of the client's (DPoP, RFC 9449) where the authorization server offers ES256 proofs.
//
// Here: logging in, renewing without the person, logging out, and the lines sion-mcp prints of
// them; the steps are the other oauth_*.hpp's. Errors, secrets and threads: as oauth_types.hpp
// says.
#pragma once

#include "mcpd/auth_store.hpp"
#include "mcpd/oauth_client.hpp"
#include "mcpd/oauth_consent.hpp"
#include "mcpd/oauth_discovery.hpp"
#include "mcpd/oauth_dpop.hpp"
#include "mcpd/oauth_types.hpp"

#include "lib/result.hpp"

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace sion::mcpd::oauth {

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
