// SPDX-License-Identifier: MIT
// UTF-8 validation: the pipes carry UTF-8 only, and cJSON passes any bytes through.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

namespace sion {

// The offset of the first byte that is not part of well-formed UTF-8 (RFC 3629: no overlongs, no
// surrogates, nothing above U+10FFFF), or npos when all of `text` is.
[[nodiscard]] size_t invalid_utf8_at(std::string_view text);

// `bytes` as JSON can carry them: each NUL byte, and each byte that is not part of well-formed
// UTF-8, becomes U+FFFD.
[[nodiscard]] std::string text_for_json(std::string_view bytes);

// `keep`, or less, so that text[0, keep) does not end inside a character: where output kept up to a
// cap is cut. A `keep` past the end is taken as the text's size.
[[nodiscard]] size_t utf8_boundary(std::string_view text, size_t keep);

} // namespace sion
