// SPDX-License-Identifier: MIT
// Fuzzes the Server-Sent Events decoder: arbitrary bytes fed in chunks must give the events a
// plain reading of the whole stream gives (a second, non-incremental reading of the standard's
// rules, written here), and an event over the bound must be refused, never buffered.
//
// Input layout, so that seeds stay readable text:
//   byte 0      bits 0-2: how many chunk-size bytes follow (0: the stream is fed in one piece)
//   next bytes  chunk sizes, (byte % 16) + 1 each, used in turn
//   the rest    the stream
// The decoder's bound is 64 bytes, so events over it are common.
#include "lib/models/sse.hpp"

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>
#include <vector>

namespace {

using sion::models::SseDecoder;
using sion::models::SseEvent;

constexpr size_t k_max = 64;

void check(bool ok, const char* what) {
    if (ok)
        return;
    (void)std::fprintf(stderr, "fuzz_sse: %s\n", what);
    std::abort();
}

struct Reading {
    std::vector<SseEvent> events;
    bool over = false; // an event or a line went over the bound
};

// The whole stream read at once: split into lines, then fields gathered into events.
Reading read_whole(std::string_view s) {
    Reading r;
    if (s.substr(0, 3) == "\xEF\xBB\xBF")
        s.remove_prefix(3);
    std::string type, data, id;
    size_t at = 0;
    while (true) {
        size_t end = s.find_first_of("\r\n", at);
        std::string_view line = s.substr(at, end == std::string_view::npos ? end : end - at);
        if (line.size() + data.size() > k_max) {
            r.over = true;
            return r;
        }
        if (end == std::string_view::npos)
            return r; // a line without its end is not read
        at = end + (s[end] == '\r' && end + 1 < s.size() && s[end + 1] == '\n' ? 2 : 1);
        if (line.empty()) {
            if (!data.empty()) {
                data.pop_back();
                r.events.push_back(SseEvent{type.empty() ? "message" : type, data, id});
            }
            type.clear();
            data.clear();
            continue;
        }
        if (line[0] == ':')
            continue;
        size_t colon = line.find(':');
        std::string_view field = line.substr(0, colon);
        std::string_view value = colon == std::string_view::npos ? "" : line.substr(colon + 1);
        if (!value.empty() && value[0] == ' ')
            value.remove_prefix(1);
        if (field == "event") {
            type = value;
        } else if (field == "data") {
            if (data.size() + value.size() + 1 > k_max) {
                r.over = true;
                return r;
            }
            data += value;
            data += '\n';
        } else if (field == "id" && value.find('\0') == std::string_view::npos) {
            id = value;
        }
    }
}

bool same(const SseEvent& a, const SseEvent& b) {
    return a.type == b.type && a.data == b.data && a.id == b.id;
}

} // namespace

// NOLINTNEXTLINE(readability-identifier-naming): libFuzzer's entry point
extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    if (size < 1)
        return 0;
    const size_t n_chunks = data[0] & 7;
    if (size < 1 + n_chunks)
        return 0;
    std::vector<size_t> chunks;
    for (size_t i = 0; i < n_chunks; ++i)
        chunks.push_back(data[1 + i] % 16 + 1);
    std::string_view stream(reinterpret_cast<const char*>(data) + 1 + n_chunks,
                            size - 1 - n_chunks);

    const Reading want = read_whole(stream);
    SseDecoder decoder(k_max);
    std::vector<SseEvent> got;
    bool refused = false;
    std::string_view rest = stream;
    for (size_t feeds = 0; !rest.empty() && !refused; ++feeds) {
        size_t n =
            chunks.empty() ? rest.size() : std::min(rest.size(), chunks[feeds % chunks.size()]);
        refused = !decoder.feed(rest.substr(0, n));
        rest.remove_prefix(n);
        while (auto e = decoder.next()) {
            check(e->data.size() <= k_max, "an event over the bound was handed out");
            got.push_back(std::move(*e));
        }
    }
    check(refused == want.over, refused ? "a stream within the bound was refused"
                                        : "a stream over the bound was not refused");
    if (refused) {
        check(!decoder.feed("\n\n"), "a refused decoder took more bytes");
        check(got.size() <= want.events.size(), "more events than the stream holds");
    } else {
        check(got.size() == want.events.size(), "another number of events than the stream holds");
    }
    for (size_t i = 0; i < got.size(); ++i)
        check(same(got[i], want.events[i]), "an event differs from the stream's");
    return 0;
}
