// SPDX-License-Identifier: MIT
// The bridge: `sion-mcp serve`, between one session (sion-run, on stdin and stdout) and the MCP
// servers it has. It starts every server at once, offers the tools whose pins still match, routes
// calls, and sends what servers ask for (elicitation, sampling) up to the session, which alone
// talks to a person or a model. The methods and their params are in sion-mcp(1) and in
// schemas/mcp.*.json:
//   mcp/state      the servers, their state and the tools offered, asked before every model call
//   tools/call     {name, arguments, traceparent?} → {text, isError, content?,
//                  structuredContent?, start_us, end_us}; errors k_no_answer (uncertain),
//                  k_no_tool, k_not_connected. A traceparent (W3C) goes to the server in the
//                  request's _meta, and over HTTP as the traceparent header too; start_us and
//                  end_us say when the server was asked and answered (Unix microseconds).
//   prompts/list   {server} → {prompts}
//   prompts/get    {server, name, arguments} → {text}
//   mcp/servers    {servers} the session's servers from now on: those it no longer has end, and
//                  those it has newly start (read from the shelf then)
//   mcp/close      ends every server, then the bridge
// and up to the session, while a call is open: elicitation/create and sampling/createMessage,
// each with the server's name added to the server's params.
// Everything of a server's that the bridge passes up (results, refusals, failures, its tools,
// prompts and resources, its requests) comes from its Client already redacted of the secrets it
// was given (mcpd/server_secrets.hpp): the bridge adds none and redacts nothing itself.
#pragma once

#include "mcpd/shelf.hpp"

#include "lib/db.hpp"

#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace sion::mcpd {

// tools/call's errors.
inline constexpr int k_no_answer = -32001;     // the server ended or its timeout passed: uncertain
inline constexpr int k_no_tool = -32002;       // no tool of that name is offered
inline constexpr int k_not_connected = -32003; // the server is not running: nothing was sent

// A server of the session as the shelf has it, read before the bridge starts: the bridge keeps no
// database open while its servers run.
struct BridgedServer {
    std::string name;
    std::optional<ShelfEntry> entry; // nullopt: not on the shelf, or unreadable (`error`)
    std::vector<Pin> pins;
    std::string error;
};

// The servers `names` (each once, in the order given) from the shelf.
[[nodiscard]] std::vector<BridgedServer> load_servers(Db& db, const std::vector<std::string>& names);

// Reads servers from the shelf when the bridge starts them (load_servers() on a database opened
// for the while): the bridge keeps none open while its servers run.
using ServerLoader = std::function<std::vector<BridgedServer>(const std::vector<std::string>&)>;

// Starts the servers `names` (each once, in order) and serves until mcp/close, or until stdin ends
// and every request has been answered, or until this process's parent dies (then at once: nobody
// is left to answer); returns the exit status (0, or 74 when stdout failed). `ask`: someone can be
// asked, so servers are told the client can elicit. `sampling_model` is the model named in
// sampling requests of servers whose sampling names none (the session's first).
[[nodiscard]] int serve_bridge(std::vector<std::string> names, ServerLoader load, bool ask,
                               std::string sampling_model);

} // namespace sion::mcpd
