// SPDX-License-Identifier: MIT
// SHA-256, HMAC-SHA-256 and lowercase hex, over mbedTLS.
//
// Byte strings are std::string (any bytes, not text). Nothing here keeps global state or fails, so
// every function may be called from any thread.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

namespace sion {

constexpr size_t k_sha256_size = 32;

// SHA-256 of `data`: 32 bytes, or 64 lowercase hex digits.
[[nodiscard]] std::string sha256(std::string_view data);
[[nodiscard]] std::string sha256_hex(std::string_view data);

// HMAC-SHA-256 of `data` under `key` (any length): 32 bytes, or 64 lowercase hex digits.
[[nodiscard]] std::string hmac_sha256(std::string_view key, std::string_view data);
[[nodiscard]] std::string hmac_sha256_hex(std::string_view key, std::string_view data);

// Lowercase hex of any bytes.
[[nodiscard]] std::string to_hex(std::string_view bytes);


} // namespace sion
