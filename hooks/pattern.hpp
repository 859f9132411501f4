// SPDX-License-Identifier: MIT
// --tool patterns: which tools a tool hook is for. `*` matches any characters (none too); every
// other character matches itself, so `github_*` is every tool whose name starts with "github_".
#pragma once

#include "lib/result.hpp"

#include <string>
#include <string_view>
#include <vector>

namespace sion::hooks {

// A pattern is 1 to 256 printable ASCII characters other than space and ','. Errors (Exit::data):
// "invalid pattern 'a b': it has a space" and the like.
[[nodiscard]] Status check_pattern(std::string_view pattern);

// Whether `name` matches `pattern` as a whole.
[[nodiscard]] bool pattern_matches(std::string_view pattern, std::string_view name);

// Whether a hook with these patterns is for the tool `name`: no pattern means every tool.
[[nodiscard]] bool patterns_match(const std::vector<std::string>& patterns, std::string_view name);

} // namespace sion::hooks
