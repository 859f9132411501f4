// SPDX-License-Identifier: MIT
// `chatgpt:MODEL`: the Responses API (openai_responses.hpp) on the ChatGPT plan of whoever signed
// in on this machine (`sion agent chatgpt login`), and what signing in keeps.
//
// Sign-in is OpenAI's "Sign in with ChatGPT" for open-source apps, as its guide for them
// describes it: OAuth 2.0 with PKCE (S256), state and nonce, and OpenID Connect, the endpoints
// read from the issuer's discovery document ({issuer}/.well-known/openid-configuration:
// authorization_endpoint, token_endpoint, jwks_uri, revocation_endpoint). The browser comes back
// to http://127.0.0.1:PORT/auth/callback (1455, or a port the kernel picks when that one is
// taken). The first sign-in on a machine registers the app there, without a client secret: it
// asks with client_id "dynamic_agent_client", agent_name_hint "Siontology" and this machine's
// ext_agent_host_id (a urn:uuid made then and kept), and the way back brings the client_id
// OpenAI issued, which later sign-ins, code exchanges and renewals use (a way back naming another
// is refused). Every request asks for k_scopes and names k_resource. The ID token is checked
// against the issuer's published keys (JWKS, RS256): its issuer, audience (the issued client id),
// expiry and nonce; the plan is used only if the person allowed it: k_use_scope among the scopes
// the token endpoint says it granted.
//
// Endpoints (each may point at 127.0.0.1 for tests): SION_CHATGPT_ISSUER
// (https://auth.openai.com) and SION_CHATGPT_BASE_URL (https://api.openai.com/v1: /responses,
// /models), the requests carrying the access token as a bearer token. Not in OpenAI's guide and
// kept as Codex CLI does it: the plan's account (the ID token's claim "https://api.openai.com/auth",
// its chatgpt_account_id and chatgpt_plan_type) is named in a ChatGPT-Account-Id header.
//
// The tokens are kept sealed beside the credentials ($SION_HOME/agents/chatgpt.bin, under the key
// file secrets.key, lib/secrets.hpp), with this machine's host id and registration, renewed a
// minute before they lapse and again when the API refuses one (401): each renewal brings a new
// refresh token, which replaces the old. Renewals are serialised by a lock on
// agents/chatgpt.lock, so sessions at once do not spend the same refresh token twice. Logging out
// revokes the refresh token at the revocation endpoint when the issuer has one (a failure is
// noted, not fatal) and forgets the account; the host id and registration stay.
//
// Requests on a plan are streamed and not stored; a usage limit the plan reports (HTTP 429, or
// partway as a failed response) is the model being busy (Exit::unavailable).
//
// Errors: not signed in is Exit::config ("chatgpt: no ChatGPT account is signed in: run 'sion
// agent chatgpt login'"); a token store changed or sealed under another key Exit::data; an ID token
// or a way back that fails a check Exit::no_perm, saying which; the issuer unreachable
// Exit::unavailable.
#pragma once

#include "lib/models/model.hpp"
#include "lib/models/wire.hpp"
#include "lib/oauth_loopback.hpp"
#include "lib/secrets.hpp"

#include <optional>
#include <string>
#include <vector>

namespace sion::models::chatgpt {

constexpr std::string_view k_client_name = "Siontology";
constexpr std::string_view k_dynamic_client = "dynamic_agent_client";
constexpr std::string_view k_use_scope = "chatgpt.tokens.use.direct";
constexpr std::string_view k_scopes =
    "openid profile email offline_access resource.invoke chatgpt.tokens.use.direct";
constexpr std::string_view k_resource = "https://api.openai.com/v1";
constexpr std::string_view k_callback_path = "/auth/callback";
constexpr int k_port = 1455;

struct Endpoints {
    std::string issuer;   // without a trailing slash
    std::string api_base; // likewise

    // From the environment (see above); Exit::config for a URL that is not one.
    [[nodiscard]] static Result<Endpoints> from_environment();
};

// The account signed in.
struct Account {
    std::string issuer;
    std::string client_id;
    std::string id_token;
    std::string access_token;
    std::string refresh_token;
    int64_t expires_at = 0; // the access token's, Unix seconds
    std::string scope;      // as granted
    std::string subject;    // the ID token's sub
    std::string account_id; // the plan's ChatGPT account ("" when the ID token names none)
    std::string email;
    std::string plan; // "plus", "pro", …

    [[nodiscard]] Json to_json() const;
    [[nodiscard]] static Result<Account> from_json(JsonView j);
};

// What sign-in keeps: this machine's host id and registration, and the account.
struct SignIn {
    std::string host_id;   // "urn:uuid:…", sent as ext_agent_host_id; "" before the first sign-in
    std::string issuer;    // the registration's
    std::string client_id; // the one OpenAI issued; "" before the first sign-in
    std::optional<Account> account;

    [[nodiscard]] Json to_json() const;
    [[nodiscard]] static Result<SignIn> from_json(JsonView j);
};

// The sealed token store of one $SION_HOME (a secrets::SealedDocument).
class TokenStore {
public:
    // Makes agents/ when `create` is set, and the key file at the first write.
    [[nodiscard]] static Result<TokenStore> open(const std::string& home, bool create);

    [[nodiscard]] const std::string& path() const { return m_file.path(); }

    // What is kept; an empty SignIn when nothing is. Exit::data for a store that was changed.
    [[nodiscard]] Result<SignIn> read() const;
    [[nodiscard]] Status write(const SignIn& kept) const;
    // Removes the store whole (one that no longer opens); false when there was none.
    [[nodiscard]] Result<bool> remove() const { return m_file.remove(); }

private:
    explicit TokenStore(secrets::SealedDocument file) : m_file(std::move(file)) {}

    secrets::SealedDocument m_file; // agents/chatgpt.bin
};

// What an ID token says, once checked.
struct IdClaims {
    std::string subject;
    std::string email;
    std::string account_id;
    std::string plan;
    int64_t expires_at = 0;
};

// `jwt` checked (see above) against `jwks` (a JWK Set), for `issuer` and `client_id` at `now`
// (Unix seconds); `nonce` too unless it is empty (a renewal's ID token has none to match).
// Exit::no_perm, one line: "the ID token's signature does not verify", "the ID token is for
// audience 'x', not 'y'", "the ID token has expired", "the ID token's nonce does not match",
// "the ID token's issuer 'x' is not 'y'"; Exit::data for one that is malformed or names no
// subject.
[[nodiscard]] Result<IdClaims> verify_id_token(std::string_view jwt, JsonView jwks,
                                               std::string_view issuer, std::string_view client_id,
                                               std::string_view nonce, int64_t now);

// A new host id: "urn:uuid:" and a random (version 4) UUID.
[[nodiscard]] Result<std::string> make_host_id();

// What the way back brought, checked: the code, and the client id to use from then on.
struct Callback {
    std::string code;
    std::string client_id;
};

// The way back `address` (the browser's, or one pasted) for a request with `state` to `issuer`,
// by the registration `client_id` ("" for a first sign-in, which must bring one). Exit::no_perm:
// "the sign-in came back with another state", "the sign-in was refused: access_denied", "the
// sign-in came back from issuer 'x', not 'y'", "the sign-in came back with no client id", "the
// sign-in came back for client 'x', not 'y'"; Exit::data for one with no code.
[[nodiscard]] Result<Callback> read_callback(std::string_view address, std::string_view state,
                                             std::string_view issuer, std::string_view client_id);

// The issuer's OpenID configuration: where to send the browser and the requests.
struct IssuerMetadata {
    std::string authorization_endpoint;
    std::string token_endpoint;
    std::string jwks_uri;
    std::string revocation_endpoint; // "" when it has none
};

// The issuer's HTTP, for signing in, renewing and revoking.
class Issuer {
public:
    explicit Issuer(Endpoints endpoints, Clock clock = steady_ms)
        : m_endpoints(std::move(endpoints)), m_wire(Reach::remote, std::move(clock)) {}

    [[nodiscard]] const Endpoints& endpoints() const { return m_endpoints; }

    // The discovery document, fetched once. Exit::unavailable for one that cannot be had, names
    // another issuer or lacks an endpoint.
    [[nodiscard]] Result<IssuerMetadata> metadata();
    // Where the browser goes to sign in, by `client_id` ("": registering, see above).
    [[nodiscard]] Result<std::string> authorize_url(std::string_view client_id,
                                                    std::string_view host_id,
                                                    std::string_view redirect_uri,
                                                    const oauth_loopback::Pkce& pkce,
                                                    std::string_view nonce);
    // The code exchanged and its ID token checked: the account to keep. Exit::no_perm, "the plan
    // may not be used by other apps: allow chatgpt.tokens.use.direct when signing in", when the
    // scopes granted lack k_use_scope.
    [[nodiscard]] Result<Account> exchange_code(std::string_view client_id, std::string_view code,
                                                std::string_view redirect_uri,
                                                const oauth_loopback::Pkce& pkce,
                                                std::string_view nonce);
    // `account` renewed with its refresh token (which comes back new).
    [[nodiscard]] Result<Account> renew(const Account& account);
    // The refresh token revoked (nothing is done when the issuer names no revocation endpoint).
    [[nodiscard]] Status revoke(const Account& account);

private:
    // `secrets`: what of `form` its errors must not show (a code, a verifier, a refresh token).
    [[nodiscard]] Result<Account> read_tokens(std::string form, Account account,
                                              std::string_view nonce,
                                              std::vector<std::string> secrets);

    Endpoints m_endpoints;
    Wire m_wire;
    std::optional<IssuerMetadata> m_metadata;
};

// The account kept in `home`, renewed first when it lapses within a minute or its access token
// is `refused_token` (one the API refused; "" for none); the renewed account is kept.
// Exit::config when none is signed in.
[[nodiscard]] Result<Account> current_account(const std::string& home, Issuer& issuer,
                                              std::string_view refused_token);

// The models the plan offers (GET {api_base}/models: those of its "models" whose visibility is
// "list", in the order given), their slugs.
[[nodiscard]] Result<std::vector<std::string>> plan_models(const std::string& home);

[[nodiscard]] Result<std::unique_ptr<Model>> open_chatgpt(const ModelSpec& spec);

// Unix seconds now.
[[nodiscard]] int64_t unix_now();

} // namespace sion::models::chatgpt
