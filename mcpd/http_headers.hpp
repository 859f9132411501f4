// SPDX-License-Identifier: MIT
// The headers of MCP's Streamable HTTP as of 2026-07-28 that mirror a request's body: Mcp-Method,
// Mcp-Name, and Mcp-Param-<Name> for the tool arguments a tool's inputSchema marks with
// "x-mcp-header": "<Name>".
//
// The marks' rules: a name is an HTTP token (RFC 9110), unique in the schema whatever its case, on
// a property of type string, integer or boolean (not number), at any depth of nested "properties".
// A tool whose marks break them is not offered (mcpd/review.cpp says why).
//
// A value goes as it is when it is printable ASCII (0x20 to 0x7E) without a space at either end
// and does not itself look encoded; otherwise as "=?base64?<base64 of its UTF-8>?=". Integers
// in decimal, booleans as true or false; an argument absent or null gets no header.
#pragma once

#include "lib/http.hpp"
#include "lib/json.hpp"
#include "lib/result.hpp"

#include <string>
#include <string_view>
#include <vector>

namespace sion::mcpd {

struct HeaderMark {
    std::string name;              // "Region", sent as Mcp-Param-Region
    std::vector<std::string> path; // the property's names from the arguments down
};

// The marks of an inputSchema (none for a schema that is not an object), or why they break the
// rules (Exit::data): "its x-mcp-header 'a b' is not an HTTP token".
[[nodiscard]] Result<std::vector<HeaderMark>> header_marks(JsonView input_schema);

// A value as a header carries it.
[[nodiscard]] std::string header_value(std::string_view text);

// The headers that mirror request `method` with `params`: Mcp-Method, Mcp-Name for tools/call
// (the tool), resources/read (the URI) and prompts/get (the prompt), and for tools/call the
// Mcp-Param-* of `marks` found in its arguments.
void add_mirror_headers(HttpHeaders& headers, std::string_view method, JsonView params,
                        const std::vector<HeaderMark>& marks);

} // namespace sion::mcpd
