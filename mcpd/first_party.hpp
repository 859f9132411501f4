// SPDX-License-Identifier: MIT
// sion's own MCP servers as the shelf runs them (seed 000, "sion's own servers"): documents
// (sion-documents), mail (sion-mail) and calendar (sion-calendar). `sion agent mcp add NAME
// --first-party KIND` keeps the kind in the server's config ("first_party"); each start of mail or
// calendar then reads the settings afresh, so that a credential kept or changed later is used at
// the next start without adding the server again:
//   - each setting is looked up as any credential is (lib/secrets.hpp: the environment's value,
//     else the one kept with `sion agent credential add`) and given to the server in its
//     environment, and to no other program;
//   - the hosts of its URL settings are the sandbox's declared network (`--allow-host
//     HOST:PORT`, the port the scheme's own when none is written), and nothing else is reachable;
//     with no URL set, the server has no network and says what to set when it is called;
//   - SSL_CERT_FILE, when set, is passed on: the certificates it names are then trusted instead of
//     the system's, and its directory must be shown with --sandbox-read.
#pragma once

#include "lib/result.hpp"

#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace sion::mcpd {

struct FirstParty {
    std::string_view kind;    // "mail"
    std::string_view program; // "sion-mail"
    // The settings it reads, in the order its man page lists them.
    std::vector<std::string_view> settings;
    // Those of them that are URLs, and the schemes each may have.
    std::vector<std::string_view> url_settings;
    std::vector<std::string_view> schemes;
    // Those of them that are secrets: what the server says is redacted of their values.
    std::vector<std::string_view> secret_settings;
    // What its tools return is from outside (a mailbox, a calendar server) and taints a session,
    // reads included: the seed's "mail and events read are from outside".
    bool from_outside = false;
};

// The first-party server of `kind`, or nullptr.
[[nodiscard]] const FirstParty* first_party(std::string_view kind);

// Whether the tools of sion's own server of `kind` ("" for none) return what is from outside.
[[nodiscard]] bool data_from_outside(std::string_view kind);

// "documents, mail or calendar".
[[nodiscard]] std::string first_party_kinds();

// The settings of `server` that are set, each with its value. Errors are lib/secrets.hpp's (a
// store that cannot be opened).
[[nodiscard]] Result<std::vector<std::pair<std::string, std::string>>>
first_party_settings(const FirstParty& server);

// "imap.example.org:993" for each URL setting among `settings` that is a URL of its schemes, in
// order, each once. One that is not is left out: the server says so when it is called.
[[nodiscard]] std::vector<std::string>
first_party_hosts(const FirstParty& server,
                  const std::vector<std::pair<std::string, std::string>>& settings);

} // namespace sion::mcpd
