// SPDX-License-Identifier: MIT
// `chatgpt:MODEL`: the Responses API (openai_responses.hpp) on the ChatGPT plan of whoever signed
// in on this machine (`sion agent chatgpt login`), and what signing in keeps.
//
// Sign-in is OpenAI's for open-source apps, OAuth 2.0 with PKCE (S256) and OpenID Connect: the
// first sign-in on a machine registers the app ("Siontology", no client secret) at the issuer's
// registration endpoint; the browser is sent to the issuer's authorize endpoint and comes back to
// http://127.0.0.1:PORT/auth/callback (1455, or a port the kernel picks when that one is taken)
// with a code, which is exchanged at the token endpoint. The ID token is checked against the
// issuer's published keys (JWKS, RS256): its issuer, audience (the client id), expiry and nonce;
// the plan is used only if the person allowed it (k_use_scope among the granted scopes of the
// claim "https://api.openai.com/auth").
//
// Endpoints (each may point at 127.0.0.1 for tests): SION_CHATGPT_ISSUER (https://auth.openai.com:
// /oauth/register, /oauth/authorize, /oauth/token, /.well-known/jwks.json) and
// SION_CHATGPT_BASE_URL (https://chatgpt.com/backend-api/codex: /responses, /models).
//
// The tokens are kept sealed beside the credentials ($SION_HOME/agents/chatgpt.bin, under the key
// file secrets.key), renewed a minute before they lapse and again when the API refuses one (401):
// each renewal brings a new refresh token, which replaces the old. Renewals are serialised by a
// lock on agents/chatgpt.lock, so sessions at once do not spend the same refresh token twice.
//
// Requests on a plan are streamed and not stored; a usage limit the plan reports (HTTP 429, or
// partway as a failed response) is the model being busy (Exit::unavailable).
//
// Errors: not signed in is Exit::config ("chatgpt: no ChatGPT account is signed in: run 'sion
// agent chatgpt login'"); a token store changed or sealed under another key Exit::data; an ID token
// that fails a check Exit::no_perm, saying which; the issuer unreachable Exit::unavailable.
#pragma once

#include "lib/models/model.hpp"
#include "lib/models/wire.hpp"

#include <optional>
#include <string>
#include <vector>

namespace sion::models::chatgpt {

constexpr std::string_view k_client_name = "Siontology";
constexpr std::string_view k_use_scope = "chatgpt.tokens.use.direct";
constexpr std::string_view k_scopes =
    "openid profile email offline_access chatgpt.tokens.use.direct";
constexpr int k_port = 1455;

struct Endpoints {
    std::string issuer;   // without a trailing slash
    std::string api_base; // likewise

    // From the environment (see above); Exit::config for a URL that is not one.
    [[nodiscard]] static Result<Endpoints> from_environment();
};

// What sign-in keeps.
struct Account {
    std::string issuer;
    std::string client_id;
    std::string id_token;
    std::string access_token;
    std::string refresh_token;
    int64_t expires_at = 0; // the access token's, Unix seconds
    std::string account_id; // the plan's ChatGPT account
    std::string email;
    std::string plan; // "plus", "pro", …

    [[nodiscard]] Json to_json() const;
    [[nodiscard]] static Result<Account> from_json(JsonView j);
};

// The sealed token store of one $SION_HOME.
class TokenStore {
public:
    // Makes agents/ and the key file when `create` is set.
    [[nodiscard]] static Result<TokenStore> open(const std::string& home, bool create);

    [[nodiscard]] const std::string& path() const { return m_path; }

    // The account kept; none when nothing is. Exit::data for a store that was changed.
    [[nodiscard]] Result<std::optional<Account>> read() const;
    [[nodiscard]] Status write(const Account& account) const;
    // Forgets the account; false when none was kept.
    [[nodiscard]] Result<bool> remove() const;

private:
    TokenStore(std::string home, std::string path)
        : m_home(std::move(home)), m_path(std::move(path)) {}

    std::string m_home;
    std::string m_path;
};

// What an ID token says, once checked.
struct IdClaims {
    std::string email;
    std::string account_id;
    std::string plan;
    int64_t expires_at = 0;
};

// `jwt` checked (see above) against `jwks` (a JWK Set), for `issuer` and `client_id` at `now`
// (Unix seconds); `nonce` too unless it is empty (a renewal's ID token has none to match).
// Exit::no_perm, one line: "the ID token's signature does not verify", "the ID token is for
// audience 'x', not 'y'", "the ID token has expired", "the ID token's nonce does not match",
// "the ID token's issuer 'x' is not 'y'", "the plan may not be used by other apps: allow
// chatgpt.tokens.use.direct when signing in"; Exit::data for one that is malformed.
[[nodiscard]] Result<IdClaims> verify_id_token(std::string_view jwt, JsonView jwks,
                                               std::string_view issuer, std::string_view client_id,
                                               std::string_view nonce, int64_t now);

// A PKCE pair: a random verifier and its S256 challenge.
struct Pkce {
    std::string verifier;
    std::string challenge;

    [[nodiscard]] static Result<Pkce> make();
};

// The issuer's HTTP, for signing in and renewing.
class Issuer {
public:
    explicit Issuer(Endpoints endpoints, Clock clock = steady_ms)
        : m_endpoints(std::move(endpoints)), m_wire(Reach::remote, std::move(clock)) {}

    [[nodiscard]] const Endpoints& endpoints() const { return m_endpoints; }

    // Registers the app for `redirect_uri`; its client id.
    [[nodiscard]] Result<std::string> register_client(std::string_view redirect_uri);
    // Where the browser goes to sign in.
    [[nodiscard]] std::string authorize_url(std::string_view client_id,
                                            std::string_view redirect_uri, const Pkce& pkce,
                                            std::string_view state, std::string_view nonce) const;
    // The code exchanged and its ID token checked: the account to keep.
    [[nodiscard]] Result<Account> exchange_code(std::string_view client_id, std::string_view code,
                                                std::string_view redirect_uri, const Pkce& pkce,
                                                std::string_view nonce);
    // `account` renewed with its refresh token (which comes back new).
    [[nodiscard]] Result<Account> renew(const Account& account);

private:
    [[nodiscard]] Result<Account> read_tokens(std::string_view form, Account account,
                                              std::string_view nonce);

    Endpoints m_endpoints;
    Wire m_wire;
};

// The account kept in `home`, renewed first when it lapses within a minute or its access token
// is `refused_token` (one the API refused; "" for none); the renewed account is kept.
// Exit::config when none is signed in.
[[nodiscard]] Result<Account> current_account(const std::string& home, Issuer& issuer,
                                              std::string_view refused_token);

// The models the plan offers (GET {api_base}/models), their ids.
[[nodiscard]] Result<std::vector<std::string>> plan_models(const std::string& home);

[[nodiscard]] Result<std::unique_ptr<Model>> open_chatgpt(const ModelSpec& spec);

// Unix seconds now.
[[nodiscard]] int64_t unix_now();

} // namespace sion::models::chatgpt
