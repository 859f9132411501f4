// SPDX-License-Identifier: MIT
// Base64 and base64url (RFC 4648), strict on decoding.
//
// Byte strings are std::string (any bytes, not text). Nothing here keeps global state, so every
// function may be called from any thread. Errors: bad input is Exit::data.
#pragma once

#include "lib/result.hpp"

#include <cstddef>
#include <string>
#include <string_view>

namespace sion {

// character outside the alphabet (whitespace included), misplaced padding or non-zero pad bits is
// an error (Exit::data) whose message names the offset, never the data.
[[nodiscard]] std::string base64_encode(std::string_view bytes);
[[nodiscard]] Result<std::string> base64_decode(std::string_view text);
// How many bytes a base64 text stands for, from its length and padding (not checked).
[[nodiscard]] size_t base64_size(std::string_view text);

// Base64url (RFC 4648 section 5): encoded without padding; decoded with or without it.
[[nodiscard]] std::string base64url_encode(std::string_view bytes);
[[nodiscard]] Result<std::string> base64url_decode(std::string_view text);

} // namespace sion
