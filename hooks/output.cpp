// SPDX-License-Identifier: MIT
// Hooks write what they like; the verdict is JSON, which carries UTF-8 only, and what the model is
// shown has a size.
#include "hooks/output.hpp"

#include "lib/text.hpp"
#include "lib/utf8.hpp"

#include <cinttypes>

namespace sion::hooks {

namespace {

bool blank(char c) {
    return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' || c == '\f';
}

} // namespace

std::string shown_output(std::string_view kept, uint64_t total) {
    bool cut = total > kept.size();
    if (cut)
        kept = kept.substr(0, utf8_boundary(kept, kept.size()));
    std::string text = text_for_json(kept);
    while (!text.empty() && blank(text.back()))
        text.pop_back();
    if (cut)
        text += format("%s[... %" PRIu64 " more bytes cut]", text.empty() ? "" : "\n",
                       total - kept.size());
    return text;
}

} // namespace sion::hooks
