// SPDX-License-Identifier: MIT
// What a server on the shelf is given that it must never be heard to say back: the values the
// client takes out of everything the server sends before passing it on (mcpd/client.hpp,
// ClientOptions::secrets), to a session or to the operator's terminal.
#pragma once

#include "mcpd/config.hpp"

#include <string>
#include <string_view>
#include <vector>

namespace sion::mcpd {

// The secrets of the server `name` so configured, as they are where this process runs:
//   - the values of the variables --env names (config.env) that are set here;
//   - over HTTP, each --header value that takes a ${VAR}, expanded, and the value of each such
//     variable;
//   - its OAuth client's secret (--client-secret-env's variable, from the environment or the
//     sealed credentials, lib/secrets.hpp) and one a dynamic registration issued;
//   - the access and refresh tokens kept for it in $SION_HOME/agents/mcp-auth.bin;
//   - each grant's credential, alone and as its header's value;
//   - for sion's own mail and calendar servers, their password settings (mcpd/first_party.hpp).
// Values shorter than Redactor::k_min_secret are left in the list but are not secrets
// (lib/redact.hpp passes them over). Never fails: what cannot be read (an unset variable, a store
// that is not there or does not open) gives nothing, and the client's own use of it says why.
// The caller wipe()s the values when done.
[[nodiscard]] std::vector<std::string> server_secrets(std::string_view name,
                                                      const ServerConfig& config);

} // namespace sion::mcpd
