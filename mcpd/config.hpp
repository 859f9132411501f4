// SPDX-License-Identifier: MIT
// How a server on the shelf is started: what `sion agent mcp add` was given, kept as JSON in
// sion.db's mcp_servers.config:
//   {"command":["python3","/home/me/notes-server.py"],"shown":["python3","notes-server.py"],
//    "dir":"/home/me/notes","env":["NOTES_KEY"],"sandbox":"bwrap","network":"none",
//    "sandbox_read":["/opt/node"],"effects":{"export_notes":"spend"},"timeout":60}
// (all but "command" may be absent). Paths are absolute: `add` makes --dir and --sandbox-read
// absolute, and, for a server that runs unsandboxed, each word of the command that names an
// existing file relative to where it ran, so the server starts the same way wherever a session
// runs. A sandboxed server's command is run as given, in /workspace (its --dir).
#pragma once

#include "mcpd/client.hpp"

#include "lib/child.hpp"
#include "lib/json.hpp"
#include "lib/policy.hpp"
#include "lib/result.hpp"

#include <map>
#include <string>
#include <vector>

namespace sion::mcpd {

inline constexpr int k_default_timeout_s = 60;

struct ServerConfig {
    std::vector<std::string> command;     // as it is started
    std::vector<std::string> shown;       // as it was given to `add`, for `list`
    std::string dir;                      // where it works; empty: a fresh empty one when sandboxed,
                                          // else where sion-mcp runs
    std::vector<std::string> env;         // variables it is given besides PATH, HOME, LANG, TMPDIR
    std::string sandbox;                  // "", "bwrap" or "docker:IMAGE@sha256:DIGEST"
    std::string network;                  // the sandbox's --network; empty: none
    std::vector<std::string> sandbox_read; // more directories the sandbox shows, read-only
    std::map<std::string, Effect> effects; // the user's --effect overrides
    int timeout_s = k_default_timeout_s;  // a call with no answer by then is uncertain
};

[[nodiscard]] Json config_to_json(const ServerConfig& config);
// Exit::data naming the member for a stored config that is not one.
[[nodiscard]] Result<ServerConfig> config_from_json(JsonView json);

// "python3 notes-server.py, unsandboxed", "python3 server.py, in bwrap" — how `list` shows it.
[[nodiscard]] std::string describe(const ServerConfig& config);

// The variables a server is started with: `config.env`'s names and PATH, HOME, LANG, TMPDIR, with
// the values they have in this process's environment (unset ones left out). Nothing else.
[[nodiscard]] std::vector<std::string> server_environment(const ServerConfig& config);

// How the server's process is started: the command itself in its directory, or `sion-sandbox run`
// with the sandbox's options and the command. stdin and stdout are pipes; stderr is /dev/null.
// Exit::unavailable when sion-sandbox cannot be found for a sandboxed one.
[[nodiscard]] Result<ChildSpec> launch_spec(const ServerConfig& config);

// The client's options for the server `name` so configured: its timeout, its root (its directory,
// or /workspace in a sandbox), and `try_first` the protocol it spoke at its review.
[[nodiscard]] ClientOptions client_options(std::string_view name, const ServerConfig& config,
                                           std::string try_first);

} // namespace sion::mcpd
