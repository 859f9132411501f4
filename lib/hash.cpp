// SPDX-License-Identifier: MIT
// SHA-256, HMAC-SHA-256 and lowercase hex.
#include "lib/hash.hpp"

#include "lib/mbedtls_bytes.hpp"

#include <mbedtls/md.h>
#include <mbedtls/sha256.h>

namespace sion {

// mbedTLS's software SHA-256 and HMAC fail only on null arguments, which these never pass, so
// their return codes carry nothing to report.
std::string sha256(std::string_view data) {
    std::string out(k_sha256_size, '\0');
    (void)mbedtls_sha256_ret(bytes_of(data), data.size(), bytes_of(out), 0);
    return out;
}

std::string sha256_hex(std::string_view data) {
    return to_hex(sha256(data));
}

std::string hmac_sha256(std::string_view key, std::string_view data) {
    std::string out(k_sha256_size, '\0');
    (void)mbedtls_md_hmac(mbedtls_md_info_from_type(MBEDTLS_MD_SHA256), bytes_of(key), key.size(),
                          bytes_of(data), data.size(), bytes_of(out));
    return out;
}

std::string hmac_sha256_hex(std::string_view key, std::string_view data) {
    return to_hex(hmac_sha256(key, data));
}

std::string to_hex(std::string_view bytes) {
    static constexpr char k_digits[] = "0123456789abcdef";
    std::string out;
    out.reserve(bytes.size() * 2);
    for (unsigned char c : bytes) {
        out += k_digits[c >> 4];
        out += k_digits[c & 0xf];
    }
    return out;
}

} // namespace sion
