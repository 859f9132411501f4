// SPDX-License-Identifier: MIT
// What a command that lists prints: each entry as the text it has always printed, or with --json as
// one JSON object a line (JSON Lines) whose members its schema in schemas/ names.
//
// For mains and their command layers: it writes to stdout, whose errors finish_stdout() reports.
#pragma once

#include "lib/cli.hpp"
#include "lib/json.hpp"

#include <string_view>

namespace sion {

// The option of a command that lists: "--json", a flag.
[[nodiscard]] OptionSpec json_lines_option();

class Listing {
public:
    // With `json`, entries are printed as JSON lines; otherwise as their text.
    explicit Listing(bool json) : m_json(json) {}

    [[nodiscard]] bool json() const { return m_json; }

    // Prints one entry: `entry`, an object, as compact JSON on one line; or `text`, whole lines
    // (a newline is added after it). Nothing is printed for a list with no entries.
    void print(const Json& entry, std::string_view text) const;

private:
    bool m_json;
};

} // namespace sion
