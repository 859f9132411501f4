// SPDX-License-Identifier: MIT
// A string search_files looks for before (or instead of) RE2: found as memmem finds it, or with
// ASCII letters of either case, sixteen places at a time; and the literal a regular expression's
// every match must hold, which picks out the lines worth giving RE2.
//
// Pure and immutable once made: a Needle may be searched from several threads at once.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

namespace sion::code {

class Needle {
public:
    Needle() = default;
    // `bytes` is not empty. With `fold`, an ASCII letter matches either case of itself and any
    // other byte only itself: RE2's case folding for a string that ascii_fold_exact() accepts.
    Needle(std::string_view bytes, bool fold);

    // The offset of the first occurrence in `text` at or after `from`, or npos.
    [[nodiscard]] size_t find(std::string_view text, size_t from) const;

    [[nodiscard]] bool empty() const { return m_bytes.empty(); }

    [[nodiscard]] const std::string& bytes() const { return m_bytes; }

private:
    [[nodiscard]] bool equal_at(const char* at) const;

    std::string m_bytes; // lowered when m_fold
    bool m_fold = false;
    size_t m_first = 0;  // the offsets of the three bytes least likely in text, checked first
    size_t m_second = 0; // (the same offset twice when the needle is shorter)
    size_t m_third = 0;
};

// Whether ASCII case folding is RE2's Unicode case folding for `s`: it is ASCII and holds no k or
// s, whose other cases are outside ASCII (U+212A KELVIN SIGN, U+017F LONG S).
[[nodiscard]] bool ascii_fold_exact(std::string_view s);

// A string every match of `pattern` (RE2's syntax, as search_files compiles it) holds, as it is
// written with case, the longest one found; "" when none is found, which is always a safe answer:
// it is found conservatively, from the literal text at the pattern's top level, and never for a
// pattern with "|" at its top level or with flags, "\Q", "\x", "\p" or an octal escape.
[[nodiscard]] std::string required_literal(std::string_view pattern);

} // namespace sion::code
