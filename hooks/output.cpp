// SPDX-License-Identifier: MIT
// Hooks write what they like; the verdict is JSON, which carries UTF-8 only, and what the model is
// shown has a size.
#include "hooks/output.hpp"

#include "lib/text.hpp"
#include "lib/utf8.hpp"

#include <cinttypes>

namespace sion::hooks {

namespace {

// The length of the character a lead byte starts (1 for anything else).
size_t sequence_length(unsigned char lead) {
    if (lead >= 0xF0)
        return 4;
    if (lead >= 0xE0)
        return 3;
    if (lead >= 0xC0)
        return 2;
    return 1;
}

// The size of `text` without a character cut short at its end.
size_t whole_characters(std::string_view text) {
    for (size_t back = 1; back <= 4 && back <= text.size(); ++back) {
        auto c = static_cast<unsigned char>(text[text.size() - back]);
        if ((c & 0xC0) != 0x80)
            return sequence_length(c) > back ? text.size() - back : text.size();
    }
    return text.size();
}

bool blank(char c) {
    return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' || c == '\f';
}

} // namespace

std::string shown_output(std::string_view kept, uint64_t total) {
    bool cut = total > kept.size();
    if (cut)
        kept = kept.substr(0, whole_characters(kept));
    std::string text = text_for_json(kept);
    while (!text.empty() && blank(text.back()))
        text.pop_back();
    if (cut)
        text += format("%s[... %" PRIu64 " more bytes cut]", text.empty() ? "" : "\n",
                       total - kept.size());
    return text;
}

} // namespace sion::hooks
