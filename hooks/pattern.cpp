// SPDX-License-Identifier: MIT
// Matching tool names against --tool patterns, with `*` as the only wildcard: the greedy match with
// one backtrack point: never recursive, at worst the pattern's length times the name's.
#include "hooks/pattern.hpp"

namespace sion::hooks {

namespace {

constexpr size_t k_max_pattern = 256;

} // namespace

Status check_pattern(std::string_view pattern) {
    auto bad = [&](const char* why) {
        return make_error(Exit::data, "invalid pattern '%.*s': %s",
                          static_cast<int>(pattern.size()), pattern.data(), why);
    };
    if (pattern.empty())
        return make_error(Exit::data, "invalid pattern '': it is empty");
    if (pattern.size() > k_max_pattern)
        return make_error(Exit::data, "invalid pattern: it is longer than %zu characters",
                          k_max_pattern);
    for (char c : pattern) {
        auto u = static_cast<unsigned char>(c);
        if (c == ' ')
            return bad("it has a space");
        if (c == ',')
            return bad("it has a ',' (give --tool once for each pattern)");
        if (u < 0x20 || u == 0x7f)
            return make_error(Exit::data, "invalid pattern: it has a control character");
        if (u > 0x7f)
            return bad("tool names are printable ASCII");
    }
    return {};
}

bool pattern_matches(std::string_view pattern, std::string_view name) {
    size_t p = 0, n = 0;
    size_t star = std::string_view::npos, resume = 0;
    while (n < name.size()) {
        if (p < pattern.size() && pattern[p] == '*') {
            star = p++;
            resume = n;
        } else if (p < pattern.size() && pattern[p] == name[n]) {
            ++p;
            ++n;
        } else if (star != std::string_view::npos) {
            p = star + 1;
            n = ++resume;
        } else {
            return false;
        }
    }
    while (p < pattern.size() && pattern[p] == '*')
        ++p;
    return p == pattern.size();
}

bool patterns_match(const std::vector<std::string>& patterns, std::string_view name) {
    if (patterns.empty())
        return true;
    for (const auto& p : patterns)
        if (pattern_matches(p, name))
            return true;
    return false;
}

} // namespace sion::hooks
