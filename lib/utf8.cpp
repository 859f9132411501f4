// SPDX-License-Identifier: MIT
// A UTF-8 validator with an ASCII fast path: JSON lines are mostly ASCII.
#include "lib/utf8.hpp"

#include <algorithm>
#include <cstdint>
#include <cstring>

namespace sion {

size_t invalid_utf8_at(std::string_view text) {
    const auto* s = reinterpret_cast<const unsigned char*>(text.data());
    size_t n = text.size();
    size_t i = 0;
    while (i < n) {
        // Eight ASCII bytes at a time.
        if (i + 8 <= n) {
            uint64_t word;
            std::memcpy(&word, s + i, 8);
            if ((word & 0x8080808080808080ULL) == 0) {
                i += 8;
                continue;
            }
        }
        unsigned char c = s[i];
        if (c < 0x80) {
            ++i;
            continue;
        }
        size_t len;
        unsigned char lo = 0x80, hi = 0xBF; // allowed range of the second byte
        if (c >= 0xC2 && c <= 0xDF) {
            len = 2;
        } else if (c >= 0xE0 && c <= 0xEF) {
            len = 3;
            if (c == 0xE0)
                lo = 0xA0; // no overlongs
            else if (c == 0xED)
                hi = 0x9F; // no surrogates
        } else if (c >= 0xF0 && c <= 0xF4) {
            len = 4;
            if (c == 0xF0)
                lo = 0x90;
            else if (c == 0xF4)
                hi = 0x8F; // nothing above U+10FFFF
        } else {
            return i;
        }
        if (i + len > n)
            return i;
        if (s[i + 1] < lo || s[i + 1] > hi)
            return i;
        for (size_t k = 2; k < len; ++k)
            if ((s[i + k] & 0xC0) != 0x80)
                return i;
        i += len;
    }
    return std::string_view::npos;
}

namespace {

constexpr std::string_view k_replacement = "\xEF\xBF\xBD"; // U+FFFD

} // namespace

std::string text_for_json(std::string_view bytes) {
    std::string out;
    out.reserve(bytes.size());
    while (!bytes.empty()) {
        size_t bad = invalid_utf8_at(bytes);
        std::string_view good = bytes.substr(0, bad);
        for (size_t nul = good.find('\0'); nul != std::string_view::npos; nul = good.find('\0')) {
            out.append(good.substr(0, nul));
            out.append(k_replacement);
            good.remove_prefix(nul + 1);
        }
        out.append(good);
        if (bad == std::string_view::npos)
            break;
        out.append(k_replacement);
        bytes.remove_prefix(bad + 1);
    }
    return out;
}

size_t utf8_boundary(std::string_view text, size_t keep) {
    keep = std::min(keep, text.size());
    // The length of the sequence a lead byte announces; 1 for anything else.
    auto length = [](unsigned char lead) -> size_t {
        if (lead >= 0xF0 && lead < 0xF8)
            return 4;
        if (lead >= 0xE0)
            return lead < 0xF0 ? 3 : 1;
        return lead >= 0xC0 ? 2 : 1;
    };
    for (size_t back = 1; back <= 4 && back <= keep; ++back) {
        auto c = static_cast<unsigned char>(text[keep - back]);
        if ((c & 0xC0) != 0x80)
            return length(c) > back ? keep - back : keep;
    }
    return keep;
}

} // namespace sion
