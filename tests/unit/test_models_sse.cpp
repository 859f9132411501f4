// SPDX-License-Identifier: MIT
// lib/models/sse: the WHATWG event-stream rules (line ends, fields, comments, the BOM, ids, retry),
// events split across chunks at every byte, and the bound on an event's size.
#include "lib/models/sse.hpp"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace sion::models {
namespace {

using namespace std::string_literals;

std::vector<SseEvent> decode_in(std::string_view stream, size_t chunk, bool* mid = nullptr) {
    SseDecoder d;
    std::vector<SseEvent> out;
    for (size_t at = 0; at < stream.size(); at += chunk) {
        Status fed = d.feed(stream.substr(at, chunk));
        EXPECT_TRUE(fed) << (fed ? "" : fed.error().message());
        while (auto e = d.next())
            out.push_back(std::move(*e));
    }
    if (mid != nullptr)
        *mid = d.mid_event();
    return out;
}

std::string show(const std::vector<SseEvent>& events) {
    std::string out;
    for (const auto& e : events)
        out += "[" + e.type + "|" + e.data + "|" + e.id + "]";
    return out;
}

// The same events whatever the chunks, down to one byte at a time.
std::string decode(std::string_view stream) {
    std::string whole = show(decode_in(stream, stream.size() + 1));
    for (size_t chunk = 1; chunk <= 7; ++chunk)
        EXPECT_EQ(show(decode_in(stream, chunk)), whole) << "chunks of " << chunk;
    return whole;
}

TEST(Sse, DataLinesJoinWithNewlines) {
    EXPECT_EQ(decode("data: a\ndata: b\n\n"), "[message|a\nb|]");
    EXPECT_EQ(decode("data:a\n\ndata:  two spaces\n\n"), "[message|a|][message| two spaces|]");
}

TEST(Sse, EventNamesAndIds) {
    EXPECT_EQ(decode("event: message_start\ndata: {}\nid: 7\n\ndata: x\n\n"),
              "[message_start|{}|7][message|x|7]");
    // An id holding NUL is ignored; an empty one clears it.
    EXPECT_EQ(decode("id: 1\ndata: a\n\nid: 2\0x\ndata: b\n\nid\ndata: c\n\n"s),
              "[message|a|1][message|b|1][message|c|]");
}

TEST(Sse, EveryLineEnd) {
    EXPECT_EQ(decode("data: a\r\n\r\ndata: b\r\rdata: c\n\n"),
              "[message|a|][message|b|][message|c|]");
    // A CR and the LF after it are one line end, even in different chunks.
    EXPECT_EQ(decode("data: a\r\ndata: b\r\n\r\n"), "[message|a\nb|]");
}

TEST(Sse, CommentsFieldsWithoutColonAndUnknownFields) {
    EXPECT_EQ(decode(": OPENROUTER PROCESSING\n\n: keep-alive\ndata: x\nfoo: bar\n\n"),
              "[message|x|]");
    // "data" alone is a data line with the empty value, which is an event.
    EXPECT_EQ(decode("data\n\n"), "[message||]");
    EXPECT_EQ(decode("data\ndata\n\n"), "[message|\n|]");
}

TEST(Sse, NoDataNoEvent) {
    EXPECT_EQ(decode("event: ping\n\n\n\nid: 3\n\n"), "");
    // The event name does not outlive a blank line without data.
    EXPECT_EQ(decode("event: x\n\ndata: y\n\n"), "[message|y|]");
}

TEST(Sse, ByteOrderMarkOnlyAtTheStart) {
    EXPECT_EQ(decode("\xEF\xBB\xBF"
                     "data: a\n\n"),
              "[message|a|]");
    // A second one is part of the field name, which is then unknown.
    EXPECT_EQ(decode("\xEF\xBB\xBF\xEF\xBB\xBF"
                     "data: a\n\ndata: b\n\n"),
              "[message|b|]");
    // Bytes that begin like a BOM and are not one are kept.
    EXPECT_EQ(decode("\xEF\xBB"
                     "x\ndata: a\n\n"),
              "[message|a|]");
}

TEST(Sse, RetryTakesDigitsOnly) {
    SseDecoder d;
    ASSERT_TRUE(d.feed("retry: 1500\n\nretry: 12x\n\n"));
    EXPECT_EQ(d.retry_ms(), 1500);
    ASSERT_TRUE(d.feed("retry: 99999999999999999999\n\n"));
    EXPECT_EQ(d.retry_ms(), 1500);
}

TEST(Sse, AnEventTheStreamEndsInsideIsDropped) {
    bool mid = false;
    EXPECT_EQ(show(decode_in("data: a\n\ndata: b\n", 3, &mid)), "[message|a|]");
    EXPECT_TRUE(mid);
    EXPECT_EQ(show(decode_in("data: a\n\ndata: b", 100, &mid)), "[message|a|]");
    EXPECT_TRUE(mid);
    EXPECT_EQ(show(decode_in("data: a\n\n", 2, &mid)), "[message|a|]");
    EXPECT_FALSE(mid);
    EXPECT_EQ(show(decode_in("\xEF\xBB\xBF", 1, &mid)), "");
    EXPECT_FALSE(mid);
}

TEST(Sse, AnEventOverTheLimitIsAnError) {
    SseDecoder d(16);
    ASSERT_TRUE(d.feed("data: 0123456789\n\n"));
    EXPECT_EQ(d.next()->data, "0123456789");
    // Data gathered over several lines, and one long line still coming, both count.
    Status fed = d.feed("data: 0123456789\ndata: 0123456789\n");
    ASSERT_FALSE(fed);
    EXPECT_EQ(fed.error().exit(), Exit::data);
    EXPECT_EQ(fed.error().message(), "an event of the stream is longer than 16 bytes");
    EXPECT_FALSE(d.feed("\n"));
    SseDecoder line(16);
    EXPECT_TRUE(line.feed("data: 01234567"));
    EXPECT_FALSE(line.feed("89abcdef"));
    // Comments are lines too: a stream of one endless comment is refused, not buffered.
    SseDecoder comment(16);
    EXPECT_FALSE(comment.feed(": " + std::string(40, 'x')));
}

} // namespace
} // namespace sion::models
