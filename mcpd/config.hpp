// SPDX-License-Identifier: MIT
// How a server on the shelf is started: what `sion agent mcp add` was given, kept as JSON in
// sion.db's mcp_servers.config:
//   {"command":["python3","/home/me/notes-server.py"],"shown":["python3","notes-server.py"],
//    "dir":"/home/me/notes","env":["NOTES_KEY"],"sandbox":"bwrap","network":"none",
//    "sandbox_read":["/opt/node"],"memory":"8G","effects":{"export_notes":"spend","query":"read"},
//    "local":["query"],"timeout":60}
// (all but "command" may be absent), or for a server over HTTP:
//   {"url":"https://mcp.example.com/mcp","headers":[["X-Key","${NOTES_KEY}"]],"transport":"sse",
//    "auth":{"issuer":"https://as.example.com","client_id":"sion-notes","secret_env":"NOTES_SECRET",
//            "scope":"notes:read","callback_port":8765,"client_credentials":true},
//    "effects":{…},"timeout":60}
// sion's own servers add "first_party":"mail" (or "calendar", "documents": mcpd/first_party.hpp);
// and for either, its grants (`sion agent mcp grant`):
//   "grants":[{"url":"https://api.example.org/v1","credential":"API_TOKEN",
//              "header":"Authorization","scheme":"Bearer"}]
// where header values keep `${VAR}` as given (expanded by http_target() where the client runs),
// and "transport" is what the server spoke at its last review ("http", or "sse" for the HTTP+SSE
// of 2024-11-05; absent: not known). Paths are absolute: `add` makes --dir and --sandbox-read
// absolute, and, for a server that runs unsandboxed, each word of the command that names an
// existing file relative to where it ran, so the server starts the same way wherever a session
// runs. A sandboxed server's command is run as given, in /workspace (its --dir).
#pragma once

#include "mcpd/client.hpp"

#include "lib/child.hpp"
#include "lib/fd.hpp"
#include "lib/json.hpp"
#include "lib/policy.hpp"
#include "lib/result.hpp"

#include <map>
#include <set>
#include <string>
#include <vector>

namespace sion::mcpd {

inline constexpr int k_default_timeout_s = 60;

// How a server over HTTP is logged in to (mcpd/oauth_login.hpp): the `add` flags, kept for `login`
// and for renewals. Every member may be empty: the server's own metadata says the rest.
struct AuthConfig {
    std::string issuer;              // --issuer: which of its authorization servers
    std::string client_id;           // --client-id: a client registered beforehand
    std::string secret_env;          // --client-secret-env: the variable holding its secret
    std::string client_metadata_url; // --client-metadata-url
    std::string scope;               // --scope: asked for besides what the server says
    int callback_port = 0;           // --callback-port; 0: any free port
    bool client_credentials = false; // --client-credentials: no person logs in
    std::string workload_token_file; // --workload-token-file: the workload's identity, no person

    [[nodiscard]] bool empty() const {
        return issuer.empty() && client_id.empty() && secret_env.empty()
            && client_metadata_url.empty() && scope.empty() && callback_port == 0
            && !client_credentials && workload_token_file.empty();
    }
};

// A grant (seed 002): a credential from the operator's store (lib/secrets.hpp: the environment's
// variable, else the sealed one) written into the server's requests to one host, on one path, so
// that the server never holds it: by the sandbox's proxy for a command in bubblewrap (sion-sandbox
// run --grants-fd), by the client itself for a server over HTTP (mcpd/grants.hpp).
struct GrantConfig {
    std::string url;                      // "https://api.example.org/v1": where it is written
    std::string credential;               // the variable's name: "API_TOKEN"
    std::string header = "Authorization"; // the header it is written as
    std::string scheme = "Bearer";        // before the value, a space between; empty: none
};

struct ServerConfig {
    std::vector<std::string> command;     // as it is started
    std::vector<std::string> shown;       // as it was given to `add`, for `list`
    std::string dir;                      // where it works; empty: a fresh empty one when sandboxed,
                                          // else where sion-mcp runs
    std::vector<std::string> env;         // variables it is given besides PATH, HOME, LANG, TMPDIR
    std::string sandbox;                  // "", "bwrap" or "docker:IMAGE@sha256:DIGEST"
    std::string network;                  // the sandbox's --network; empty: none
    std::vector<std::string> sandbox_read; // more directories the sandbox shows, read-only
    std::string memory;                   // the sandbox's --memory, as given; empty: its default
    std::map<std::string, Effect> effects; // the user's --effect overrides
    // Tools the user said reach only this machine (--effect TOOL=read-local or write-local):
    // what they return does not taint a session.
    std::set<std::string> local;
    int timeout_s = k_default_timeout_s;  // a call with no answer by then is uncertain
    std::string url;                      // over HTTP: no command, sandbox, dir or env
    std::vector<std::pair<std::string, std::string>> headers; // added to its requests, unexpanded
    std::string transport;                // over HTTP: "http", "sse" or empty
    AuthConfig auth;                      // over HTTP: how it is logged in to
    std::vector<GrantConfig> grants;      // `sion agent mcp grant`
    std::string first_party;              // sion's own server of that kind; empty: not one
};

[[nodiscard]] Json config_to_json(const ServerConfig& config);
// Exit::data naming the member for a stored config that is not one.
[[nodiscard]] Result<ServerConfig> config_from_json(JsonView json);

// "python3 notes-server.py, unsandboxed", "python3 server.py, in bwrap",
// "http://127.0.0.1:8812/mcp over HTTP" — how `list` shows it.
[[nodiscard]] std::string describe(const ServerConfig& config);

// The variables a server is started with: `config.env`'s names and PATH, HOME, LANG, TMPDIR, with
// the values they have in this process's environment (unset ones left out). Nothing else.
[[nodiscard]] std::vector<std::string> server_environment(const ServerConfig& config);

// How the server's process is started: the command itself in its directory, or `sion-sandbox run`
// with the sandbox's options and the command. stdin and stdout are pipes; stderr is /dev/null.
// With grants, the sandbox's network is the declared one, its hosts theirs, and `grants` a memory
// file of their lines (grant_line()), the sandbox's --grants-fd 3, which spec.extra_fds borrows:
// keep it open until the process is spawned. sion's mail and calendar servers are given their
// settings, and their URLs' hosts are declared too (mcpd/first_party.hpp). Exit::unavailable when
// sion-sandbox cannot be found for a sandboxed one; grant_value()'s; first_party_settings()'s.
struct ServerLaunch {
    ChildSpec spec;
    Fd grants;
};
[[nodiscard]] Result<ServerLaunch> launch_spec(const ServerConfig& config);

// --effect's TOOL=EFFECT: `effect` read, write, external or spend, or read-local or write-local
// (a read or a write of what is on this machine only, whose results do not taint), set in
// `config`'s effects and local. Exit::usage naming what is given otherwise.
[[nodiscard]] Status set_effect(ServerConfig& config, std::string_view given);

// "Name: value" of --header: Exit::usage unless Name is an HTTP token the transport does not set
// itself and the value holds no control character.
[[nodiscard]] Result<std::pair<std::string, std::string>> parse_header(std::string_view given);

// The variables a --header value takes as ${VAR}, in the order it takes them.
[[nodiscard]] std::vector<std::string> header_variables(std::string_view value);

// Where a server over HTTP is: its URL and its headers with each `${VAR}` replaced by the
// variable's value here, and the header of each grant whose URL the server's is on, its value
// the credential's (grant_value()). Exit::config naming the variable (never a value) when one is
// not set.
[[nodiscard]] Result<HttpTarget> http_target(std::string_view name, const ServerConfig& config);

// The client's options for the server `name` so configured: its timeout, its root (its directory,
// or /workspace in a sandbox), and `try_first` the protocol it spoke at its review.
[[nodiscard]] ClientOptions client_options(std::string_view name, const ServerConfig& config,
                                           std::string try_first);

struct Person; // mcpd/authorize.hpp

// The client of the server so configured: its process started (launch_spec()), or its URL
// reached (http_target()) with the authorization kept for it; its standard error a pipe when
// options.keep_last_words asks for its last lines (authorize(): a refusal that needs a
// login logs in with `person`, when there is one); what it passes on redacted of the server's
// secrets (options.secrets is server_secrets(), mcpd/server_secrets.hpp). Errors are theirs.
[[nodiscard]] Result<std::unique_ptr<Client>> open_client(uv_loop_t* loop, std::string_view name,
                                                          const ServerConfig& config,
                                                          ClientOptions options,
                                                          ClientEvents events,
                                                          const Person* person);

} // namespace sion::mcpd
