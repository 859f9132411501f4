// SPDX-License-Identifier: MIT
// lib/models/eventstream: frames made by another encoder (Python's struct and zlib, as Bedrock's
// stand-in makes them) decoded whole and byte by byte, every header type round-tripped, and each
// kind of corruption refused with the offset of its message, the decoder failed from then on.
#include "lib/models/eventstream.hpp"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace sion::models::eventstream {
namespace {

std::string unhex(std::string_view hex) {
    std::string out;
    for (size_t i = 0; i + 1 < hex.size(); i += 2)
        out += static_cast<char>(std::stoi(std::string(hex.substr(i, 2)), nullptr, 16));
    return out;
}

// Made with Python: struct.pack(">II", total, headers), zlib.crc32 for both checksums.
const std::string k_delta =
    unhex("0000009f00000057c37babff0b3a6576656e742d74797065070011636f6e74656e74426c6f636b44656c7461"
          "0d3a636f6e74656e742d747970650700106170706c69636174696f6e2f6a736f6e0d3a6d6573736167652d74"
          "7970650700056576656e747b22636f6e74656e74426c6f636b496e646578223a302c2264656c7461223a7b22"
          "74657874223a224869227d2c2270223a2261626364227df2ace5ff");
// The empty message of AWS's own test vectors.
const std::string k_empty = unhex("000000100000000005c248eb7d98c8ff");

std::vector<Message> drain(Decoder& d) {
    std::vector<Message> out;
    while (auto m = d.next())
        out.push_back(std::move(*m));
    return out;
}

void expect_delta(const Message& m) {
    EXPECT_EQ(m.text(":event-type"), "contentBlockDelta");
    EXPECT_EQ(m.text(":content-type"), "application/json");
    EXPECT_EQ(m.text(":message-type"), "event");
    EXPECT_EQ(m.text(":exception-type"), "");
    EXPECT_EQ(m.payload, R"({"contentBlockIndex":0,"delta":{"text":"Hi"},"p":"abcd"})");
}

TEST(EventStream, CrcIsZlibs) {
    EXPECT_EQ(crc32("123456789"), 0xCBF43926U);
    EXPECT_EQ(crc32(""), 0U);
    EXPECT_EQ(crc32("6789", crc32("12345")), 0xCBF43926U);
}

TEST(EventStream, DecodesAWholeStream) {
    Decoder d;
    ASSERT_TRUE(d.feed(k_delta + k_empty + k_delta));
    auto messages = drain(d);
    ASSERT_EQ(messages.size(), 3U);
    expect_delta(messages[0]);
    EXPECT_TRUE(messages[1].headers.empty());
    EXPECT_TRUE(messages[1].payload.empty());
    expect_delta(messages[2]);
    EXPECT_FALSE(d.mid_message());
}

TEST(EventStream, DecodesAStreamByteByByte) {
    Decoder d;
    std::string stream = k_empty + k_delta;
    size_t seen = 0;
    for (size_t i = 0; i < stream.size(); ++i) {
        ASSERT_TRUE(d.feed(stream.substr(i, 1))) << i;
        seen += drain(d).size();
        // Nothing is out until the last byte of each message is in.
        EXPECT_EQ(seen, i + 1 >= stream.size() ? 2U : i + 1 >= k_empty.size() ? 1U : 0U) << i;
        EXPECT_EQ(d.mid_message(), i + 1 != k_empty.size() && i + 1 != stream.size()) << i;
    }
}

TEST(EventStream, EveryHeaderTypeRoundTrips) {
    Message m;
    auto add = [&](const char* name, HeaderType type, int64_t number, std::string bytes = {}) {
        m.headers.push_back(Header{name, type, number, std::move(bytes)});
    };
    add("t", HeaderType::bool_true, 1);
    add("f", HeaderType::bool_false, 0);
    add("b", HeaderType::byte, -5);
    add("s", HeaderType::int16, -30000);
    add("i", HeaderType::int32, -2000000000);
    add("l", HeaderType::int64, -9000000000000000000);
    add("x", HeaderType::bytes, 0, std::string("\0\xff", 2));
    add("str", HeaderType::string, 0, "value");
    add("ts", HeaderType::timestamp, 1440938160000);
    add("u", HeaderType::uuid, 0, std::string(16, '\x42'));
    m.payload = std::string("payload\0with nul", 16);
    auto bytes = encode(m);
    ASSERT_TRUE(bytes) << bytes.error().message();
    Decoder d;
    ASSERT_TRUE(d.feed(*bytes));
    auto got = drain(d);
    ASSERT_EQ(got.size(), 1U);
    ASSERT_EQ(got[0].headers.size(), m.headers.size());
    for (size_t i = 0; i < m.headers.size(); ++i) {
        EXPECT_EQ(got[0].headers[i].name, m.headers[i].name);
        EXPECT_EQ(got[0].headers[i].type, m.headers[i].type) << m.headers[i].name;
        EXPECT_EQ(got[0].headers[i].number, m.headers[i].number) << m.headers[i].name;
        EXPECT_EQ(got[0].headers[i].bytes, m.headers[i].bytes) << m.headers[i].name;
    }
    EXPECT_EQ(got[0].payload, m.payload);
    EXPECT_EQ(got[0].text("str"), "value");
    EXPECT_EQ(got[0].text("ts"), ""); // not a string
    ASSERT_NE(got[0].header("u"), nullptr);
}

TEST(EventStream, EncoderRefusesWhatCannotBeFramed) {
    Message m;
    m.headers.push_back(Header{"", HeaderType::string, 0, "v"});
    EXPECT_FALSE(encode(m));
    m.headers[0] = Header{"n", HeaderType::string, 0, std::string(70000, 'v')};
    EXPECT_FALSE(encode(m));
    m.headers[0] = Header{"n", HeaderType::uuid, 0, "short"};
    auto r = encode(m);
    ASSERT_FALSE(r);
    EXPECT_EQ(r.error().exit(), Exit::data);
    EXPECT_EQ(r.error().message(), "cannot encode header 'n': a uuid is 16 bytes");
}

// The message that comes out of feeding `stream`, or the error.
std::string error_of(const std::string& stream, size_t max = Decoder::k_default_max_message) {
    Decoder d(max);
    auto s = d.feed(stream);
    if (s)
        return "no error";
    EXPECT_EQ(s.error().exit(), Exit::data);
    // The error sticks, and nothing is decoded after it.
    auto again = d.feed(k_empty);
    EXPECT_FALSE(again);
    if (!again) {
        EXPECT_EQ(again.error().message(), s.error().message());
    }
    return s.error().message();
}

// `frame` with its prelude and message checksums made right again after a change.
std::string refit(std::string frame) {
    auto put = [&](size_t at, uint32_t v) {
        for (int i = 0; i < 4; ++i)
            frame[at + i] = static_cast<char>((v >> (24 - 8 * i)) & 0xff);
    };
    put(8, crc32(std::string_view(frame).substr(0, 8)));
    put(frame.size() - 4, crc32(std::string_view(frame).substr(0, frame.size() - 4)));
    return frame;
}

TEST(EventStream, RefusesCorruptFrames) {
    std::string prelude = k_delta;
    prelude[3] = '\xa0';
    EXPECT_EQ(error_of(k_empty + prelude),
              "invalid event stream message at byte 16: the prelude checksum does not match");
    std::string payload = k_delta;
    payload[120] ^= 1;
    EXPECT_EQ(error_of(k_delta + payload),
              "invalid event stream message at byte 159: the message checksum does not match");
    EXPECT_EQ(error_of(k_delta, 100),
              "invalid event stream message at byte 0: the message is longer than the limit");
    std::string shorter = k_empty;
    shorter[3] = 12;
    EXPECT_EQ(error_of(refit(shorter)), "invalid event stream message at byte 0: the message is "
                                        "shorter than its prelude and checksum");
    std::string long_headers = k_empty;
    long_headers[7] = 1;
    EXPECT_EQ(error_of(refit(long_headers)),
              "invalid event stream message at byte 0: the headers are longer than the message");
    std::string unknown = k_delta;
    unknown[12 + 1 + 11] = 10; // the first header's type
    EXPECT_EQ(error_of(refit(unknown)),
              "invalid event stream message at byte 0: a header has an unknown type");
    std::string past = k_delta;
    past[12 + 1 + 11 + 2] = '\x7f'; // the first header's value is longer than the headers
    EXPECT_EQ(error_of(refit(past)),
              "invalid event stream message at byte 0: a header runs past the headers");
    std::string empty_name = k_delta;
    empty_name[12] = 0;
    EXPECT_EQ(error_of(refit(empty_name)),
              "invalid event stream message at byte 0: a header has an empty name");
}

TEST(EventStream, ACutStreamIsMidMessage) {
    Decoder d;
    ASSERT_TRUE(d.feed(k_delta.substr(0, 40)));
    EXPECT_TRUE(d.mid_message());
    EXPECT_FALSE(d.next());
}

} // namespace
} // namespace sion::models::eventstream
