// SPDX-License-Identifier: MIT
// What the two readers of patches share (patch_parse.cpp, patch_codex.cpp): the patch's lines and
// the grammar of their messages. Internal to session/code.
#pragma once

#include "session/code/patch.hpp"

#include <string>
#include <string_view>
#include <vector>

namespace sion::code::reading {

using View = std::string_view;

inline constexpr const char* k_prefix = "cannot apply the patch, so no file was changed: ";

// A line of the patch as messages quote it: cut after 80 characters, in single quotes.
[[nodiscard]] std::string quoted(View line);

// Exit::data: k_prefix, "line N of the patch: ", then the reason.
[[gnu::format(printf, 2, 3)]] Error bad(size_t line, const char* fmt, ...);

[[nodiscard]] inline bool is_prefix(View s, View p) {
    return s.substr(0, p.size()) == p;
}

// The patch's lines, "\r" taken off, and the stretch of them that is the patch (a ``` fence and
// blank lines around it left out). Numbers in messages are indices + 1.
struct Source {
    std::vector<View> lines;
    size_t begin = 0;
    size_t end = 0;
};

[[nodiscard]] Source split(View text);

// A "*** Begin Patch" patch whose first line is lines[first].
[[nodiscard]] Result<Patch> parse_codex(const Source& src, size_t first);

} // namespace sion::code::reading
