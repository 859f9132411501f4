// SPDX-License-Identifier: MIT
// The server side of MCP over stdio for sion's own servers (sion-documents, sion-mail,
// sion-calendar): JSON-RPC 2.0 lines in, one answer a request out, in order. initialize (the
// client's protocolVersion when it is one these servers speak, else the newest), ping, tools/list
// and tools/call are answered; notifications and responses need nothing; any other method is
// -32601 (server/discover too: the client then falls back to initialize); a line that is not JSON
// -32700, one that is not a JSON-RPC 2.0 message or is longer than 1 MiB -32600. A tools/call of a
// tool the server does not have is -32602; what goes wrong in one it has is a result with isError
// and one line saying why.
//
// A server is a Tools: its name, its tools' definitions, and what a call of one does. The helpers
// below make definitions in one shape, so that the review (mcpd/review.cpp) reads each tool's
// effect from its annotations as the server means it.
#pragma once

#include "lib/json.hpp"

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace sion::mcp_serve {

// The protocol versions initialize accepts, newest first.
inline constexpr std::string_view k_versions[] = {"2025-11-25", "2025-06-18", "2025-03-26",
                                                  "2024-11-05"};

// What a tools/call answers: the text, and whether it says what went wrong.
struct Answer {
    std::string text;
    bool is_error = false;
};

inline Answer fail(std::string text) {
    return {std::move(text), true};
}

class Tools {
public:
    Tools() = default;
    Tools(const Tools&) = delete;
    Tools& operator=(const Tools&) = delete;
    Tools(Tools&&) = delete;
    Tools& operator=(Tools&&) = delete;
    virtual ~Tools() = default;

    // serverInfo's name ("sion-mail").
    [[nodiscard]] virtual std::string_view server_name() const = 0;
    // tools/list's "tools".
    [[nodiscard]] virtual Json list() const = 0;
    // Whether `name` is one of them.
    [[nodiscard]] virtual bool has(std::string_view name) const = 0;
    // A tools/call of `name` (one of them) with `arguments` (an object, or absent). Never throws.
    [[nodiscard]] virtual Answer call(std::string_view name, JsonView arguments) = 0;
};

// Appends to `out` the answer to one line (nothing for a notification or a response).
void answer_line(Tools& tools, std::string_view line, bool overlong, size_t length,
                 std::string& out);

// Reads fd 0 to its end, answering on fd 1. 0 at the end of input; Exit::io (74) when a read or
// a write fails or the input ends inside a line, after saying so on stderr.
[[nodiscard]] int serve(Tools& tools);

// What a tool does, as its annotations say it (MCP's ToolAnnotations), and so what the review
// takes it for: open_world is external; read_only (and not open_world) read, which taints the
// session; anything else a write, journaled unless idempotent.
struct Hints {
    bool read_only = true;
    bool destructive = false;
    bool idempotent = false;
    bool open_world = false;
};

// A tool's definition: its input schema an object of `properties`, `required` among them, and no
// other member.
[[nodiscard]] Json tool(const char* name, const char* title, const char* description,
                        Json properties, const std::vector<std::string>& required, Hints hints);

[[nodiscard]] Json string_property(const char* description);
[[nodiscard]] Json integer_property(const char* description, int64_t min, int64_t max);
[[nodiscard]] Json boolean_property(const char* description);
// An array of strings.
[[nodiscard]] Json strings_property(const char* description);

} // namespace sion::mcp_serve
