// SPDX-License-Identifier: MIT
// The unsigned char pointers mbedTLS takes, over the bytes of a std::string or string_view.
//
// For lib/'s mbedTLS callers only (hash, seal, jws): a byte string is std::string, and mbedTLS
// wants unsigned char.
#pragma once

#include <string>
#include <string_view>

namespace sion {

inline const unsigned char* bytes_of(std::string_view s) {
    return reinterpret_cast<const unsigned char*>(s.data());
}

inline unsigned char* bytes_of(std::string& s) {
    return reinterpret_cast<unsigned char*>(s.data());
}

} // namespace sion
