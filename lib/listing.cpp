// SPDX-License-Identifier: MIT
// A listing's entries, as text or as JSON lines.
#include "lib/listing.hpp"

#include <cstdio>
#include <string>

namespace sion {

OptionSpec json_lines_option() {
    return {"json", 0, nullptr, "print one JSON object a line instead of text"};
}

void Listing::print(const Json& entry, std::string_view text) const {
    std::string line = m_json ? entry.dump() : std::string(text);
    line += '\n';
    std::fwrite(line.data(), 1, line.size(), stdout);
}

} // namespace sion
