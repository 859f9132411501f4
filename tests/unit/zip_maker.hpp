// SPDX-License-Identifier: MIT
// A zip archive of stored (uncompressed) entries, made in memory for tests of readers: the local
// headers, the central directory and its end record, as APPNOTE.TXT lays them out.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace sion::test {

inline uint32_t zip_crc32(std::string_view data) {
    uint32_t c = 0xFFFFFFFFU;
    for (unsigned char b : data) {
        c ^= b;
        for (int k = 0; k < 8; ++k)
            c = (c >> 1) ^ (0xEDB88320U & (0U - (c & 1U)));
    }
    return ~c;
}

inline std::string zip_of(const std::vector<std::pair<std::string, std::string>>& files) {
    auto u16 = [](std::string& s, uint32_t v) {
        s += static_cast<char>(v & 0xFF);
        s += static_cast<char>((v >> 8) & 0xFF);
    };
    auto u32 = [&](std::string& s, uint32_t v) {
        u16(s, v & 0xFFFF);
        u16(s, v >> 16);
    };
    std::string out;
    std::string central;
    for (const auto& [name, data] : files) {
        auto offset = static_cast<uint32_t>(out.size());
        uint32_t crc = zip_crc32(data);
        auto size = static_cast<uint32_t>(data.size());
        auto name_size = static_cast<uint32_t>(name.size());
        u32(out, 0x04034b50);
        u16(out, 20);
        u16(out, 0); // flags
        u16(out, 0); // stored
        u16(out, 0);
        u16(out, 0x21); // 1980-01-01
        u32(out, crc);
        u32(out, size);
        u32(out, size);
        u16(out, name_size);
        u16(out, 0);
        out += name;
        out += data;
        u32(central, 0x02014b50);
        u16(central, 20);
        u16(central, 20);
        u16(central, 0);
        u16(central, 0);
        u16(central, 0);
        u16(central, 0x21);
        u32(central, crc);
        u32(central, size);
        u32(central, size);
        u16(central, name_size);
        u16(central, 0);
        u16(central, 0);
        u16(central, 0);
        u16(central, 0);
        u32(central, 0);
        u32(central, offset);
        central += name;
    }
    auto central_at = static_cast<uint32_t>(out.size());
    auto count = static_cast<uint32_t>(files.size());
    out += central;
    u32(out, 0x06054b50);
    u16(out, 0);
    u16(out, 0);
    u16(out, count);
    u16(out, count);
    u32(out, static_cast<uint32_t>(central.size()));
    u32(out, central_at);
    u16(out, 0);
    return out;
}

} // namespace sion::test
