// SPDX-License-Identifier: MIT
// Small text helpers: printf-style formatting into a std::string (g++ 12 has no <format>),
// percent-encoding, text made one line for a terminal, and ASCII case.
#pragma once

#include <cstdarg>
#include <string>
#include <string_view>

namespace sion {

[[gnu::format(printf, 1, 2)]] std::string format(const char* fmt, ...);
[[gnu::format(printf, 1, 0)]] std::string vformat(const char* fmt, va_list ap);

// RFC 3986 percent-encoding: unreserved bytes (A-Z a-z 0-9 - . _ ~) kept, every other byte %XX in
// uppercase hex; '/' kept too when `keep_slash` (a path). As SigV4 signs and file:// URIs want it.
[[nodiscard]] std::string percent_encode(std::string_view bytes, bool keep_slash = false);

// %XX decoded (either case of hex); a '%' not followed by two hex digits stays as it is. With
// `plus_is_space`, '+' is a space, as in a form (application/x-www-form-urlencoded) or a query.
[[nodiscard]] std::string percent_decode(std::string_view text, bool plus_is_space = false);

// Text on one line for a terminal (a server's description, a name it gave): whitespace runs,
// newlines included, made one space and trimmed; other control characters dropped.
[[nodiscard]] std::string one_line(std::string_view text);

// `text` without the white space (space, tab, CR, LF, FF, VT) at either end.
[[nodiscard]] std::string_view trim_space(std::string_view text);

// ASCII case: 'A' to 'Z' lowered to 'a' to 'z', every other byte (UTF-8's too) kept, whatever the
// locale. For the words that protocols and people compare without case: header and scheme names,
// host names, hex digits, a "yes".
[[nodiscard]] constexpr char ascii_lower(char c) {
    return c >= 'A' && c <= 'Z' ? static_cast<char>(c - 'A' + 'a') : c;
}
[[nodiscard]] std::string ascii_lower(std::string_view text);

// Whether `a` and `b` are the same bytes but for ASCII case.
[[nodiscard]] bool ascii_iequals(std::string_view a, std::string_view b);

} // namespace sion
