// SPDX-License-Identifier: MIT
// A command's output cut at its cap (output.hpp).
#include "sandboxd/output.hpp"

#include "lib/text.hpp"
#include "lib/utf8.hpp"

#include <algorithm>
#include <cinttypes>

namespace sion::sandboxd {

bool cut_output(std::string& text, uint64_t cap, uint64_t total_bytes) {
    if (text.size() <= cap && total_bytes <= cap)
        return false;
    size_t keep = utf8_boundary(text, static_cast<size_t>(std::min<uint64_t>(cap, text.size())));
    uint64_t cut = std::max<uint64_t>(total_bytes, text.size()) - keep;
    text.resize(keep);
    if (!text.empty() && text.back() != '\n')
        text += '\n';
    text += format("[... %" PRIu64 " more bytes cut]\n", cut);
    return true;
}

} // namespace sion::sandboxd
