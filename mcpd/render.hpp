// SPDX-License-Identifier: MIT
// What a server's answers come to as text: for the model (a tool's result, a resource read) and for
// a person (`sion-mcp resources --read`). Text is kept as it came; pictures, sound and binary
// resources are named with their type and size, never passed on as bytes.
#pragma once

#include "lib/json.hpp"

#include <cstddef>
#include <string>

namespace sion::mcpd {

// Text beyond this is cut, with a line saying how much.
inline constexpr size_t k_max_rendered = size_t{256} << 10;

// A CallToolResult's content (or its structuredContent, when it has no content) as text.
[[nodiscard]] std::string render_tool_result(JsonView result);
// A ReadResourceResult's contents as text.
[[nodiscard]] std::string render_resource(JsonView result);
// A GetPromptResult's messages as one text: each message's text, a blank line between them; what
// is not the user's is marked with its role.
[[nodiscard]] std::string render_prompt(JsonView result);

} // namespace sion::mcpd
