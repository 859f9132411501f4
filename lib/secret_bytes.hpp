// SPDX-License-Identifier: MIT
// Secret bytes: drawn from the kernel's CSPRNG, compared in constant time, wiped when done with.
//
// Byte strings are std::string (any bytes, not text). Nothing here keeps global state, so every
// function may be called from any thread. Errors: only the kernel's, Exit::os.
#pragma once

#include "lib/result.hpp"

#include <cstddef>
#include <string>
#include <string_view>

namespace sion {

// Whether a and b hold the same bytes, in time that depends on their lengths only.
[[nodiscard]] bool constant_time_equal(std::string_view a, std::string_view b);

// `size` bytes from the kernel's CSPRNG (getrandom(2)); fails (Exit::os) only where the kernel
// has no getrandom.
[[nodiscard]] Result<std::string> random_bytes(size_t size);
[[nodiscard]] Status fill_random(void* buffer, size_t size);

// fill_random() as mbedTLS calls a random generator (its f_rng): 0, or -1 when it failed.
int mbedtls_random(void* unused, unsigned char* out, size_t size) noexcept;

// Overwrites a string's bytes with zeros (where the compiler cannot drop it) and empties it.
void wipe(std::string& secret);

} // namespace sion
