// SPDX-License-Identifier: MIT
// A server's grants (config.hpp's GrantConfig; seed 002): what `sion agent mcp grant` takes, and
// how each reaches the server's requests without the server holding it. A command in bubblewrap
// gets them through its sandbox's proxy (launch_spec() gives sion-sandbox run the lines
// grant_line() makes, on a descriptor); a server over HTTP through its client, which writes the
// header into its requests when its URL is on the grant's (http_target()).
//
// A grant's URL is http or https, with no user info, query or fragment, and a path with no '.'
// or '..' segment; plain http only to a loopback address (a credential is not sent where anyone
// on the way may read it). Its credential is a variable's name (lib/secrets.hpp's rules); its
// header an HTTP token the client does not set itself; its scheme a token, or empty.
#pragma once

#include "mcpd/config.hpp"

#include "lib/result.hpp"

#include <string>
#include <string_view>

namespace sion::mcpd {

// A grant for the server `name` so configured, checked: Exit::usage for a URL, credential, header
// or scheme that is none; Exit::config for a server nothing could write it for (unsandboxed, in
// Docker, with the host's network) or, over HTTP, a URL the server's own is not on.
[[nodiscard]] Result<GrantConfig> make_grant(std::string_view name, const ServerConfig& config,
                                             std::string_view url, std::string credential,
                                             std::string header, std::string scheme);

// The header's value: the scheme, a space and the credential's value, as lookup() finds it.
// Exit::config when it is not kept (never a value in a message):
//   "the grant for https://api.example.org/v1 needs the credential API_TOKEN: keep it with
//   `sion agent credential add API_TOKEN`"
[[nodiscard]] Result<std::string> grant_value(const GrantConfig& grant);

// The grant as sion-sandbox run --grants-fd takes it (sandboxd/grants.hpp), its value in it: one
// JSON line without its newline. grant_value()'s errors.
[[nodiscard]] Result<std::string> grant_line(const GrantConfig& grant);

// Its host as --allow-host declares it: "api.example.org:443", "[::1]:8080".
[[nodiscard]] std::string grant_host(const GrantConfig& grant);

// Whether `url` is on the grant: the same scheme, host and port, and a path on its path.
[[nodiscard]] bool grant_covers(const GrantConfig& grant, std::string_view url);

// "https://api.example.org/v1 gets Authorization: Bearer ${API_TOKEN}", for list and grant.
[[nodiscard]] std::string describe_grant(const GrantConfig& grant);

} // namespace sion::mcpd
