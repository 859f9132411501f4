// SPDX-License-Identifier: MIT
// Base64 and base64url, coded by hand for strict decoding.
#include "lib/base64.hpp"

#include <algorithm>
#include <cstdint>

namespace sion {

// Base64 is coded here rather than with mbedtls_base64_*: mbedTLS's decoder skips whitespace and
// knows neither the url alphabet nor unpadded input, and decoding must be strict.
namespace {

constexpr char k_base64_std[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
constexpr char k_base64_url[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";

std::string encode_base64(std::string_view in, const char* alphabet, bool pad) {
    std::string out;
    out.reserve((in.size() + 2) / 3 * 4);
    for (size_t i = 0; i < in.size(); i += 3) {
        size_t n = std::min<size_t>(3, in.size() - i);
        uint32_t v = 0;
        for (size_t k = 0; k < 3; ++k)
            v = (v << 8) | (k < n ? static_cast<unsigned char>(in[i + k]) : 0U);
        for (size_t k = 0; k <= n; ++k)
            out += alphabet[(v >> (18 - 6 * k)) & 63];
        if (pad)
            out.append(3 - n, '=');
    }
    return out;
}

int base64_value(char c, bool url) {
    if (c >= 'A' && c <= 'Z')
        return c - 'A';
    if (c >= 'a' && c <= 'z')
        return c - 'a' + 26;
    if (c >= '0' && c <= '9')
        return c - '0' + 52;
    if (c == (url ? '-' : '+'))
        return 62;
    if (c == (url ? '_' : '/'))
        return 63;
    return -1;
}

// Padding is required for base64 and optional for base64url; where it is present the length is
// a multiple of 4. Pad bits must be zero, so every byte string has exactly one encoding.
Result<std::string> decode_base64(std::string_view in, bool url) {
    const char* name = url ? "base64url" : "base64";
    size_t padding = 0;
    while (padding < 2 && padding < in.size() && in[in.size() - 1 - padding] == '=')
        ++padding;
    if ((!url || padding > 0) && in.size() % 4 != 0)
        return make_error(Exit::data, "cannot decode %s: length %zu is not a multiple of 4", name,
                          in.size());
    std::string_view body = in.substr(0, in.size() - padding);
    if (body.size() % 4 == 1)
        return make_error(Exit::data, "cannot decode %s: a lone character at offset %zu", name,
                          body.size() - 1);
    std::string out;
    out.reserve(body.size() / 4 * 3 + 2);
    uint32_t acc = 0;
    int bits = 0;
    for (size_t i = 0; i < body.size(); ++i) {
        int v = base64_value(body[i], url);
        if (v < 0)
            return make_error(Exit::data, "cannot decode %s: invalid character at offset %zu", name,
                              i);
        acc = (acc << 6) | static_cast<uint32_t>(v);
        bits += 6;
        if (bits >= 8) {
            bits -= 8;
            out += static_cast<char>((acc >> bits) & 0xff);
            acc &= (1U << bits) - 1;
        }
    }
    if (acc != 0)
        return make_error(Exit::data, "cannot decode %s: non-zero pad bits at offset %zu", name,
                          body.size() - 1);
    return out;
}

} // namespace

std::string base64_encode(std::string_view bytes) {
    return encode_base64(bytes, k_base64_std, true);
}

size_t base64_size(std::string_view text) {
    while (!text.empty() && text.back() == '=')
        text.remove_suffix(1);
    return text.size() * 3 / 4;
}

Result<std::string> base64_decode(std::string_view text) {
    return decode_base64(text, false);
}

std::string base64url_encode(std::string_view bytes) {
    return encode_base64(bytes, k_base64_url, false);
}

Result<std::string> base64url_decode(std::string_view text) {
    return decode_base64(text, true);
}

} // namespace sion
