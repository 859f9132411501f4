// SPDX-License-Identifier: MIT
// Small text helpers: printf-style formatting into a std::string (g++ 12 has no <format>).
#pragma once

#include <cstdarg>
#include <string>

namespace sion {

[[gnu::format(printf, 1, 2)]] std::string format(const char* fmt, ...);
[[gnu::format(printf, 1, 0)]] std::string vformat(const char* fmt, va_list ap);

} // namespace sion
