// SPDX-License-Identifier: MIT
// What a hook wrote, made fit to show: valid UTF-8 for JSON, trailing blank lines dropped, and a
// last line saying how much was cut when the hook wrote more than was kept.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace sion::hooks {

// How much of each of a hook's output streams is kept; the rest is read and dropped.
inline constexpr size_t k_output_limit = size_t{64} << 10;

// `kept`, the first bytes of `total` a hook wrote, as text: bytes that are not well-formed UTF-8
// (and NUL bytes) become U+FFFD, a character cut in two at the end of what was kept is dropped,
// trailing whitespace is dropped, and when `total` is more than was kept, a last line says how
// much: "[... 12345 more bytes cut]". "" when the hook wrote nothing but whitespace.
[[nodiscard]] std::string shown_output(std::string_view kept, uint64_t total);

} // namespace sion::hooks
