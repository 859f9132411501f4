// SPDX-License-Identifier: MIT
// Fuzzes what sion-mail reads from a mailbox (cmd/sion-mail/message.cpp, GMime): a whole message
// read for read_mail, and a header value decoded. Whatever comes out must be well-formed UTF-8
// within the bound on text and attachments, and nothing may crash or hang.
#include "cmd/sion-mail/message.hpp"
#include "lib/utf8.hpp"

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>

namespace {

void check(bool ok, const char* what) {
    if (ok)
        return;
    (void)std::fprintf(stderr, "fuzz_mail_message: %s\n", what);
    std::abort();
}

bool utf8(const std::string& s) {
    return sion::invalid_utf8_at(s) == std::string_view::npos;
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    std::string_view raw(reinterpret_cast<const char*>(data), size);
    sion::mail_cmd::Limits limits;
    limits.text = 4096;
    limits.attachments = 8;
    sion::mail_cmd::Message m = sion::mail_cmd::read_message(raw, limits);
    check(m.text.size() <= limits.text + 64, "text past the bound");
    check(m.attachments.size() <= limits.attachments, "attachments past the bound");
    check(utf8(m.text) && utf8(m.subject) && utf8(m.from) && utf8(m.to), "text that is not UTF-8");
    std::string header = sion::mail_cmd::decode_header(raw.substr(0, 2000));
    check(header.find('\n') == std::string::npos, "a header on more than one line");
    return 0;
}
