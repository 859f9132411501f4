// SPDX-License-Identifier: MIT
// The stdio transport: a server's process, one JSON-RPC message a line on its stdin and stdout
// (lib/rpc/uv_connection.hpp).
//
// The server is gone when its process ends or its output closes. Once one has happened the other is
// waited for, a second at most, so that `ended` says how the process ended ("MCP server notes ended
// (its program exited with status 3)"): a process whose output closed is then killed, an output
// still open (a descendant holds it) closed. close() closes its stdin; its process group gets
// SIGTERM if it has not ended within a second (so that a server that wraps another, as sion-sandbox
// run does, can take its sandbox down) and SIGKILL a second after that.
//
// Lifetime: the transport keeps itself alive while its process and handles are; the loop must run
// until `closed`.
#pragma once

#include "mcpd/transport.hpp"

#include "lib/child.hpp"

#include <uv.h>

#include <memory>
#include <string>

namespace sion::mcpd {

// When spec.err is a pipe, what the process writes there is read as it comes and its last lines kept
// for last_words() (mcpd/last_words.hpp); whatever is left in the pipe is read before `ended`.
//
// Starts the server (`spec`: stdin and stdout must be pipes). Errors are those of spawning.
// `who` names it in messages ("MCP server notes"); messages over `max_message` bytes are not read.
[[nodiscard]] Result<std::shared_ptr<Transport>> start_stdio(uv_loop_t* loop, const ChildSpec& spec,
                                                             std::string who, size_t max_message,
                                                             TransportEvents events);

} // namespace sion::mcpd
