// SPDX-License-Identifier: MIT
// AWS's binary event stream (application/vnd.amazon.eventstream), as Bedrock's ConverseStream
// and other streaming AWS APIs frame their answers: an incremental, bounded decoder, and an
// encoder for tests and stand-ins.
//
// A message is, big-endian: its total length (u32), the length of its headers (u32), a CRC32 of
// those 8 bytes, the headers, the payload, and a CRC32 of everything before it (CRC-32/IEEE, as
// zlib's). A header is its name's length (u8, at least 1), the name, a type byte and the value:
// 0 true, 1 false (no value), 2 byte, 3 int16, 4 int32, 5 int64, 6 bytes (u16 length), 7 string
// (u16 length), 8 timestamp (int64 milliseconds since the epoch), 9 uuid (16 bytes).
//
// The decoder checks the prelude's CRC before it waits for the rest of a message, so a corrupt
// length is never trusted: a message longer than max_message or shorter than 16 bytes, headers
// longer than the message, a CRC that does not match, an unknown header type or a header that
// runs past the headers are errors (Exit::data) naming the offset of the message in the stream:
// "invalid event stream message at byte 96: the message checksum does not match". After one the
// decoder stays failed and every feed returns the same error.
//
// Threads: one decoder is used by one thread at a time.
#pragma once

#include "lib/result.hpp"

#include <cstddef>
#include <cstdint>
#include <deque>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace sion::models::eventstream {

enum class HeaderType : uint8_t {
    bool_true = 0,
    bool_false = 1,
    byte = 2,
    int16 = 3,
    int32 = 4,
    int64 = 5,
    bytes = 6,
    string = 7,
    timestamp = 8,
    uuid = 9,
};

struct Header {
    std::string name;
    HeaderType type = HeaderType::string;
    int64_t number = 0; // bool (1 or 0), byte, int16, int32, int64, timestamp (ms)
    std::string bytes;  // bytes, string, uuid (16 bytes)
};

struct Message {
    std::vector<Header> headers;
    std::string payload;

    // The first header of that name, if any.
    [[nodiscard]] const Header* header(std::string_view name) const;
    // The value of a string header of that name; "" when there is none or it is of another type.
    [[nodiscard]] std::string_view text(std::string_view name) const;
};

class Decoder {
public:
    // Bedrock's messages are far smaller; 16 MiB is the service's own limit of a payload.
    static constexpr size_t k_default_max_message = size_t{16} << 20;

    explicit Decoder(size_t max_message = k_default_max_message) : m_max(max_message) {}

    // Takes the next bytes of the stream; the messages they complete wait for next().
    [[nodiscard]] Status feed(std::string_view bytes);
    // The oldest complete message not yet taken, if any.
    [[nodiscard]] std::optional<Message> next();

    // Whether the bytes so far end inside a message (a stream that ends here was cut short).
    [[nodiscard]] bool mid_message() const { return !m_buffer.empty(); }

private:
    [[nodiscard]] Status take_message(std::string_view frame);
    [[nodiscard]] Status fail(const char* why);

    size_t m_max;
    std::string m_buffer;  // the message being read
    uint64_t m_offset = 0; // where it starts in the stream
    std::deque<Message> m_ready;
    std::optional<Error> m_failed;
};

// The bytes of `message`: what the decoder reads back. A header whose name is empty or longer
// than 255 bytes, a string or bytes value over 65535 bytes, or a uuid that is not 16 bytes is an
// error (Exit::data).
[[nodiscard]] Result<std::string> encode(const Message& message);

// CRC-32/IEEE (zlib's crc32) of `bytes`, continuing from `crc`.
[[nodiscard]] uint32_t crc32(std::string_view bytes, uint32_t crc = 0);

} // namespace sion::models::eventstream
