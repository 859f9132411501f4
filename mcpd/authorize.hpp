// SPDX-License-Identifier: MIT
// The authorization of a server over HTTP, from the configuration on the shelf and the tokens
// sealed in $SION_HOME/agents/mcp-auth.bin: the client's hooks (mcpd/client.hpp) for sessions and
// for the command line, and the logins of `sion agent mcp add`, `login` and `logout`.
//
// In a session nobody is asked: a refused token is renewed without a person (its refresh token,
// or the client credentials grant) and the request sent again; when that cannot be done the
// request fails with how to log in. At the command line a person is there: a refusal renewal
// cannot answer starts a login at the terminal, and the request is sent again once.
#pragma once

#include "lib/result.hpp"
#include "mcpd/client.hpp"
#include "mcpd/config.hpp"
#include "mcpd/oauth_discovery.hpp"
#include "mcpd/oauth_login.hpp"

#include <optional>
#include <string>
#include <string_view>

namespace sion::mcpd {

// The person at this terminal, for logins: answers are read from `in`, what they must see goes to
// `out`.
struct Person {
    int in = 0;
    int out = 1;
    bool no_browser = false; // --no-browser: print the URL only
    bool logs_in = true;     // false (add --login-later): a server that wants a login is refused
};

// The login's options for the server `name` so configured, with the secret of --client-secret-env
// read from the environment or the sealed credentials where the login runs.
[[nodiscard]] oauth::LoginOptions login_options(const ServerConfig& config);

// Logs in to the server `name`: at the terminal (`person`), or, for a server configured with
// --client-credentials, with nobody. `challenge` is the refusal that asked for it, when one did.
// Prints the seed's lines to person.out: "registered with …", "authorized notes at …".
[[nodiscard]] Status log_in(std::string_view name, const ServerConfig& config, const Person& person,
                            std::optional<oauth::Challenge> challenge = std::nullopt);

// Sets `events.authorization` and `events.refused` for the server `name` over HTTP. With
// `person`, a refusal that needs a login prints "MCP server NAME asks for authorization." and logs
// in there. Errors are the store's (a tampered mcp-auth.bin).
[[nodiscard]] Status authorize(ClientEvents& events, std::string_view name,
                               const ServerConfig& config, const Person* person);

// Who authorized a server over HTTP: the authorization server's issuer, and the scope granted ("":
// none named).
struct Authorized {
    std::string issuer;
    std::string scope;
};

// The authorization kept for the server `name` logged in to at `url`; none for one that is not
// (tokens kept for the name at another URL are not its), or when the store cannot be read.
[[nodiscard]] std::optional<Authorized> authorized(std::string_view name, std::string_view url);

// ", authorized at http://127.0.0.1:8812 for notes:read" — what `list` adds for a server with
// `authorization`; "" for none.
[[nodiscard]] std::string authorized_words(const std::optional<Authorized>& authorization);

// `sion agent mcp logout NAME`: revokes and forgets, printing what was done to `out`.
[[nodiscard]] Status log_out(std::string_view name, int out);

} // namespace sion::mcpd
