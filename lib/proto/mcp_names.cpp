// SPDX-License-Identifier: MIT
// MCP servers' names (mcp_names.hpp).
#include "lib/proto/mcp_names.hpp"

#include "lib/text.hpp"

namespace sion::proto {

Status check_server_name(std::string_view name) {
    bool ok = !name.empty() && name.size() <= 32 && name.front() != '-';
    for (char c : name)
        ok = ok && ((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-');
    if (!ok)
        return make_error(Exit::usage,
                          "invalid server name '%s': give 1 to 32 lowercase letters, digits and "
                          "hyphens",
                          one_line(name).c_str());
    return {};
}

} // namespace sion::proto
