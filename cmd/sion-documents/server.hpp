// SPDX-License-Identifier: MIT
// sion-documents' side of MCP over stdio: JSON-RPC 2.0 lines in, one answer a request out, in
// order. initialize (the client's protocolVersion when it is one this server speaks, else the
// newest), ping, tools/list and tools/call are answered; notifications and responses need
// nothing; any other method is -32601 (server/discover too: the client then falls back to
// initialize); a line that is not JSON -32700, one that is not a JSON-RPC 2.0 message or is longer
// than 1 MiB -32600. A tools/call of a tool this server does not have is -32602; what goes wrong in
// one it has is a result with isError.
#pragma once

#include "cmd/sion-documents/folder.hpp"

#include <string>
#include <string_view>

namespace sion::documents_cmd {

// The protocol versions initialize accepts, newest first.
inline constexpr std::string_view k_versions[] = {"2025-11-25", "2025-06-18", "2025-03-26",
                                                  "2024-11-05"};

// Appends to `out` the answer to one line (nothing for a notification or a response).
void answer_line(Folder& folder, std::string_view line, bool overlong, size_t length,
                 std::string& out);

// Reads fd 0 to its end, answering on fd 1. 0 at the end of input; Exit::io (74) when a read or
// a write fails or the input ends inside a line, after saying so on stderr.
[[nodiscard]] int serve(Folder& folder);

} // namespace sion::documents_cmd
