// SPDX-License-Identifier: MIT
// Fuzzes the event stream decoder: arbitrary bytes fed whole and in chunks must give the same
// messages and the same error, and every message decoded must encode to bytes that decode to it
// again.
//
// Input layout: byte 0 is the chunk size, (byte % 32) + 1; byte 1 the decoder's limit of a
// message, (byte + 1) * 64 bytes; the rest is the stream.
#include "lib/models/eventstream.hpp"

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>
#include <vector>

namespace {

using namespace sion::models::eventstream;

void check(bool ok, const char* what) {
    if (ok)
        return;
    (void)std::fprintf(stderr, "fuzz_eventstream: %s\n", what);
    std::abort();
}

bool same(const Message& a, const Message& b) {
    if (a.payload != b.payload || a.headers.size() != b.headers.size())
        return false;
    for (size_t i = 0; i < a.headers.size(); ++i) {
        const Header& x = a.headers[i];
        const Header& y = b.headers[i];
        if (x.name != y.name || x.type != y.type || x.number != y.number || x.bytes != y.bytes)
            return false;
    }
    return true;
}

struct Outcome {
    std::vector<Message> messages;
    std::string error;
    bool mid = false;
};

Outcome run(std::string_view stream, size_t chunk, size_t max) {
    Decoder d(max);
    Outcome out;
    for (size_t at = 0; at < stream.size(); at += chunk) {
        auto s = d.feed(stream.substr(at, chunk));
        while (auto m = d.next())
            out.messages.push_back(std::move(*m));
        if (!s) {
            out.error = s.error().message();
            return out;
        }
    }
    out.mid = d.mid_message();
    return out;
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    if (size < 2)
        return 0;
    size_t chunk = (data[0] % 32) + 1;
    size_t max = (size_t{data[1]} + 1) * 64;
    std::string_view stream(reinterpret_cast<const char*>(data) + 2, size - 2);

    Outcome whole = run(stream, stream.size() + 1, max);
    Outcome pieces = run(stream, chunk, max);
    check(whole.error == pieces.error, "chunks changed the error");
    check(whole.mid == pieces.mid, "chunks changed where the stream ends");
    check(whole.messages.size() == pieces.messages.size(), "chunks changed the messages");
    for (size_t i = 0; i < whole.messages.size(); ++i) {
        check(same(whole.messages[i], pieces.messages[i]), "chunks changed a message");
        auto bytes = encode(whole.messages[i]);
        check(bytes.has_value(), "a decoded message does not encode");
        check(bytes->size() <= max, "a decoded message is over the limit");
        Decoder again(max);
        check(again.feed(*bytes).has_value(), "an encoded message does not decode");
        auto back = again.next();
        check(back.has_value() && same(*back, whole.messages[i]), "a message does not round-trip");
        check(!again.mid_message(), "an encoded message leaves bytes behind");
    }
    return 0;
}
