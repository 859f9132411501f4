// SPDX-License-Identifier: MIT
// The glob matcher: braces expanded once at compile time, then each alternative matched name by
// name, "**" by a memoised walk over (pattern name, path name) pairs, so that no pattern can make
// a match take more than time proportional to the pattern's names times the path's.
#include "session/code/glob.hpp"

#include <cstdint>

namespace sion::code {

namespace {

constexpr size_t k_max_alternatives = 1024;
constexpr size_t k_max_pattern = 4096; // bytes: braces are expanded recursively, one level a group

// The code point at `i` and its length; a byte that does not start well-formed UTF-8 is itself,
// one byte long.
std::pair<uint32_t, size_t> decode(std::string_view s, size_t i) {
    auto byte = [&](size_t k) { return static_cast<unsigned char>(s[k]); };
    unsigned char b = byte(i);
    size_t len = b < 0x80 ? 1 : (b >> 5) == 6 ? 2 : (b >> 4) == 14 ? 3 : (b >> 3) == 30 ? 4 : 0;
    if (len <= 1 || i + len > s.size())
        return {b, 1};
    uint32_t cp = b & (0x7F >> len);
    for (size_t k = 1; k < len; ++k) {
        if ((byte(i + k) & 0xC0) != 0x80)
            return {b, 1};
        cp = (cp << 6) | (byte(i + k) & 0x3F);
    }
    return {cp, len};
}

// The offset just past the ']' closing the class opened at `open`, or npos.
size_t class_end(std::string_view p, size_t open) {
    size_t i = open + 1;
    if (i < p.size() && (p[i] == '!' || p[i] == '^'))
        ++i;
    if (i < p.size() && p[i] == ']') // "[]a]": a ']' first is itself
        ++i;
    while (i < p.size() && p[i] != ']')
        i += p[i] == '\\' && i + 1 < p.size() ? 2 : 1;
    return i < p.size() ? i + 1 : std::string_view::npos;
}

// Whether the class p[open, end) holds the code point `cp`.
bool class_holds(std::string_view p, size_t open, size_t end, uint32_t cp) {
    size_t i = open + 1;
    bool negated = p[i] == '!' || p[i] == '^';
    if (negated)
        ++i;
    bool found = false;
    bool first = true;
    while (i < end - 1) {
        if (p[i] == ']' && !first)
            break;
        first = false;
        if (p[i] == '\\' && i + 1 < end - 1)
            ++i;
        auto [lo, lo_len] = decode(p, i);
        i += lo_len;
        uint32_t hi = lo;
        if (i + 1 < end - 1 && p[i] == '-') {
            size_t at = i + 1;
            if (p[at] == '\\' && at + 1 < end - 1)
                ++at;
            auto [h, h_len] = decode(p, at);
            hi = h;
            i = at + h_len;
        }
        if (lo <= cp && cp <= hi)
            found = true;
    }
    return found != negated;
}

// Splits `s` at its top-level commas (outside nested braces and classes).
std::vector<std::string> split_commas(std::string_view s) {
    std::vector<std::string> parts;
    size_t depth = 0, start = 0;
    for (size_t i = 0; i < s.size(); ++i) {
        char c = s[i];
        if (c == '\\') {
            ++i;
        } else if (c == '[') {
            size_t end = class_end(s, i);
            if (end != std::string_view::npos)
                i = end - 1;
        } else if (c == '{') {
            ++depth;
        } else if (c == '}') {
            --depth;
        } else if (c == ',' && depth == 0) {
            parts.emplace_back(s.substr(start, i - start));
            start = i + 1;
        }
    }
    parts.emplace_back(s.substr(start));
    return parts;
}

// Every alternative of `s`, its braces expanded; false when one is unclosed or there are too many.
bool expand(const std::string& s, std::vector<std::string>& out, bool& unclosed) {
    size_t open = std::string::npos, depth = 0, close = std::string::npos;
    for (size_t i = 0; i < s.size() && close == std::string::npos; ++i) {
        char c = s[i];
        if (c == '\\') {
            ++i;
        } else if (c == '[') {
            size_t end = class_end(s, i);
            if (end != std::string_view::npos)
                i = end - 1;
        } else if (c == '{') {
            if (depth++ == 0)
                open = i;
        } else if (c == '}' && depth > 0) {
            if (--depth == 0)
                close = i;
        }
    }
    if (open == std::string::npos) {
        if (out.size() >= k_max_alternatives)
            return false;
        out.push_back(s);
        return true;
    }
    if (close == std::string::npos) {
        unclosed = true;
        return false;
    }
    std::string prefix = s.substr(0, open), suffix = s.substr(close + 1);
    for (const std::string& alt :
         split_commas(std::string_view(s).substr(open + 1, close - open - 1)))
        if (!expand(std::string(prefix).append(alt).append(suffix), out, unclosed))
            return false;
    return true;
}

std::vector<std::string_view> names_of(std::string_view path) {
    std::vector<std::string_view> names;
    while (!path.empty()) {
        size_t slash = path.find('/');
        std::string_view name = path.substr(0, slash);
        if (!name.empty())
            names.push_back(name);
        if (slash == std::string_view::npos)
            break;
        path.remove_prefix(slash + 1);
    }
    return names;
}

// The memoised match of segments[si…] against names[ci…]. `below`: whether names could be the
// directories above a match rather than a whole match.
struct Matcher {
    const std::vector<std::string>& segments;
    const std::vector<std::string_view>& names;
    bool below;
    std::vector<int8_t> memo; // -1 unknown

    Matcher(const std::vector<std::string>& s, const std::vector<std::string_view>& n, bool b)
        : segments(s), names(n), below(b), memo((s.size() + 1) * (n.size() + 1), -1) {}

    bool run(size_t si, size_t ci) {
        int8_t& known = memo[si * (names.size() + 1) + ci];
        if (known >= 0)
            return known != 0;
        bool result;
        if (ci == names.size())
            result = below ? si < segments.size() : si == segments.size();
        else if (si == segments.size())
            result = false;
        else if (segments[si] == "**")
            // None of the names (but as the last segment: "src/**" is what is below src), one
            // and stay, or one and go on.
            result = (si + 1 < segments.size() && run(si + 1, ci)) || run(si, ci + 1)
                     || run(si + 1, ci + 1);
        else
            result = match_name(segments[si], names[ci]) && run(si + 1, ci + 1);
        known = result ? 1 : 0;
        return result;
    }
};

} // namespace

bool match_name(std::string_view p, std::string_view n) {
    size_t pi = 0, ni = 0;
    size_t star_p = std::string_view::npos, star_n = 0;
    while (ni < n.size()) {
        if (pi < p.size()) {
            char c = p[pi];
            if (c == '*') {
                while (pi < p.size() && p[pi] == '*')
                    ++pi;
                star_p = pi;
                star_n = ni;
                continue;
            }
            if (c == '?') {
                ++pi;
                ni += decode(n, ni).second;
                continue;
            }
            if (c == '[') {
                size_t end = class_end(p, pi);
                if (end != std::string_view::npos) {
                    auto [cp, len] = decode(n, ni);
                    if (class_holds(p, pi, end, cp)) {
                        pi = end;
                        ni += len;
                        continue;
                    }
                } else if (n[ni] == '[') { // unclosed: compile() refuses it; here it is itself
                    ++pi;
                    ++ni;
                    continue;
                }
            } else {
                size_t at = c == '\\' && pi + 1 < p.size() ? pi + 1 : pi;
                if (p[at] == n[ni]) {
                    pi = at + 1;
                    ++ni;
                    continue;
                }
            }
        }
        if (star_p == std::string_view::npos)
            return false;
        // The last '*' takes one more character, and the rest is tried again from there.
        star_n += decode(n, star_n).second;
        ni = star_n;
        pi = star_p;
    }
    while (pi < p.size() && p[pi] == '*')
        ++pi;
    return pi == p.size();
}

Result<Glob> Glob::compile(std::string_view pattern) {
    std::string shown(pattern);
    if (pattern.empty())
        return make_error(Exit::data, "the pattern is empty");
    if (pattern.size() > k_max_pattern)
        return make_error(Exit::data, "the pattern is longer than %zu bytes", k_max_pattern);
    for (size_t i = 0; i < pattern.size(); ++i) {
        if (pattern[i] == '\\')
            ++i;
        else if (pattern[i] == '[' && class_end(pattern, i) == std::string_view::npos)
            return make_error(Exit::data, "unclosed '[' in pattern '%s'", shown.c_str());
    }
    std::vector<std::string> alternatives;
    bool unclosed = false;
    if (!expand(shown, alternatives, unclosed)) {
        if (unclosed)
            return make_error(Exit::data, "unclosed '{' in pattern '%s'", shown.c_str());
        return make_error(Exit::data, "the pattern '%s' has more than %zu alternatives",
                          shown.c_str(), k_max_alternatives);
    }
    Glob glob;
    glob.m_pattern = shown;
    for (std::string alt : alternatives) {
        bool anywhere = alt.find('/') == std::string::npos;
        if (!alt.empty() && alt.back() == '/')
            alt += "**";
        std::vector<std::string> segments;
        if (anywhere)
            segments.emplace_back("**");
        for (std::string_view name : names_of(alt)) {
            if (name == ".")
                continue;
            if (name == "..")
                return make_error(Exit::data,
                                  "the pattern '%s' has a '..': name the directory to search "
                                  "instead",
                                  shown.c_str());
            if (name == "**" && !segments.empty() && segments.back() == "**")
                continue;
            segments.emplace_back(name);
        }
        if (segments.empty()) // "." or "./": the directory itself, which holds no file to match
            continue;
        glob.m_alternatives.push_back(std::move(segments));
    }
    return glob;
}

bool Glob::matches(std::string_view path) const {
    std::vector<std::string_view> names = names_of(path);
    for (const auto& segments : m_alternatives)
        if (Matcher(segments, names, false).run(0, 0))
            return true;
    return false;
}

bool Glob::may_match_below(std::string_view dir) const {
    std::vector<std::string_view> names = names_of(dir);
    for (const auto& segments : m_alternatives)
        if (Matcher(segments, names, true).run(0, 0))
            return true;
    return false;
}

std::pair<std::string, std::string> split_literal_prefix(std::string_view pattern) {
    size_t meta = pattern.find_first_of("*?[{\\");
    size_t cut = meta == std::string_view::npos ? pattern.rfind('/') : pattern.rfind('/', meta);
    if (cut == std::string_view::npos)
        return {"", std::string(pattern)};
    std::string prefix(pattern.substr(0, cut == 0 ? 1 : cut));
    std::string rest(pattern.substr(cut + 1));
    if (rest.empty())
        rest = "**";
    return {prefix, rest};
}

} // namespace sion::code
