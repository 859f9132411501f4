// SPDX-License-Identifier: MIT
// AWS's event stream framing: a message's bytes are buffered only once its prelude has checked out,
// and never more than the one message at a time.
#include "lib/models/eventstream.hpp"

#include <array>

namespace sion::models::eventstream {

namespace {

constexpr size_t k_prelude = 12; // total length, headers length, prelude CRC
constexpr size_t k_overhead = k_prelude + 4;

constexpr std::array<uint32_t, 256> crc_table() {
    std::array<uint32_t, 256> table{};
    for (uint32_t n = 0; n < 256; ++n) {
        uint32_t c = n;
        for (int k = 0; k < 8; ++k)
            c = (c & 1) != 0 ? 0xEDB88320U ^ (c >> 1) : c >> 1;
        table[n] = c;
    }
    return table;
}

constexpr auto k_crc_table = crc_table();

uint64_t read_be(std::string_view bytes, size_t at, size_t size) {
    uint64_t v = 0;
    for (size_t i = 0; i < size; ++i)
        v = (v << 8) | static_cast<unsigned char>(bytes[at + i]);
    return v;
}

void write_be(std::string& out, uint64_t v, size_t size) {
    for (size_t i = size; i-- > 0;)
        out += static_cast<char>((v >> (8 * i)) & 0xff);
}

// The fixed size of a header value of `type`, or 0 for the length-prefixed ones and booleans.
size_t fixed_size(HeaderType type) {
    switch (type) {
    case HeaderType::byte:
        return 1;
    case HeaderType::int16:
        return 2;
    case HeaderType::int32:
        return 4;
    case HeaderType::int64:
    case HeaderType::timestamp:
        return 8;
    case HeaderType::uuid:
        return 16;
    default:
        return 0;
    }
}

// Sign-extends the low `size` bytes of `v`.
int64_t signed_of(uint64_t v, size_t size) {
    if (size >= 8)
        return static_cast<int64_t>(v);
    uint64_t sign = uint64_t{1} << (size * 8 - 1);
    return static_cast<int64_t>((v ^ sign) - sign);
}

// The headers of a message, or why they are malformed.
Result<std::vector<Header>> parse_headers(std::string_view bytes) {
    std::vector<Header> headers;
    size_t at = 0;
    auto bad = [](const char* why) { return Error(Exit::data, why); };
    while (at < bytes.size()) {
        size_t name_size = static_cast<unsigned char>(bytes[at++]);
        if (name_size == 0)
            return bad("a header has an empty name");
        if (bytes.size() - at < name_size + 1)
            return bad("a header runs past the headers");
        Header h;
        h.name = std::string(bytes.substr(at, name_size));
        at += name_size;
        auto type = static_cast<unsigned char>(bytes[at++]);
        if (type > static_cast<unsigned char>(HeaderType::uuid))
            return bad("a header has an unknown type");
        h.type = static_cast<HeaderType>(type);
        if (h.type == HeaderType::bool_true || h.type == HeaderType::bool_false) {
            h.number = h.type == HeaderType::bool_true ? 1 : 0;
        } else if (h.type == HeaderType::bytes || h.type == HeaderType::string) {
            if (bytes.size() - at < 2)
                return bad("a header runs past the headers");
            size_t size = read_be(bytes, at, 2);
            at += 2;
            if (bytes.size() - at < size)
                return bad("a header runs past the headers");
            h.bytes = std::string(bytes.substr(at, size));
            at += size;
        } else {
            size_t size = fixed_size(h.type);
            if (bytes.size() - at < size)
                return bad("a header runs past the headers");
            if (h.type == HeaderType::uuid)
                h.bytes = std::string(bytes.substr(at, size));
            else
                h.number = signed_of(read_be(bytes, at, size), size);
            at += size;
        }
        headers.push_back(std::move(h));
    }
    return headers;
}

} // namespace

uint32_t crc32(std::string_view bytes, uint32_t crc) {
    crc = ~crc;
    for (char c : bytes)
        crc = k_crc_table[(crc ^ static_cast<unsigned char>(c)) & 0xff] ^ (crc >> 8);
    return ~crc;
}

const Header* Message::header(std::string_view name) const {
    for (const Header& h : headers)
        if (h.name == name)
            return &h;
    return nullptr;
}

std::string_view Message::text(std::string_view name) const {
    const Header* h = header(name);
    return h != nullptr && h->type == HeaderType::string ? std::string_view(h->bytes)
                                                         : std::string_view();
}

Status Decoder::fail(const char* why) {
    m_failed = make_error(Exit::data, "invalid event stream message at byte %llu: %s",
                          static_cast<unsigned long long>(m_offset), why);
    m_buffer.clear();
    return *m_failed;
}

Status Decoder::feed(std::string_view bytes) {
    if (m_failed)
        return *m_failed;
    while (!bytes.empty()) {
        size_t want = k_prelude;
        if (m_buffer.size() >= k_prelude)
            want = read_be(m_buffer, 0, 4);
        size_t take = std::min(want - m_buffer.size(), bytes.size());
        m_buffer.append(bytes.substr(0, take));
        bytes.remove_prefix(take);
        if (m_buffer.size() == k_prelude && want == k_prelude) {
            uint64_t total = read_be(m_buffer, 0, 4);
            uint64_t headers = read_be(m_buffer, 4, 4);
            if (crc32(std::string_view(m_buffer).substr(0, 8)) != read_be(m_buffer, 8, 4))
                return fail("the prelude checksum does not match");
            if (total < k_overhead)
                return fail("the message is shorter than its prelude and checksum");
            if (total > m_max)
                return fail("the message is longer than the limit");
            if (headers > total - k_overhead)
                return fail("the headers are longer than the message");
            continue;
        }
        if (m_buffer.size() > k_prelude && m_buffer.size() == want) {
            SION_CHECK(take_message(m_buffer));
            m_offset += m_buffer.size();
            m_buffer.clear();
        }
    }
    return {};
}

Status Decoder::take_message(std::string_view frame) {
    size_t end = frame.size() - 4;
    if (crc32(frame.substr(0, end)) != read_be(frame, end, 4))
        return fail("the message checksum does not match");
    size_t headers_size = read_be(frame, 4, 4);
    auto headers = parse_headers(frame.substr(k_prelude, headers_size));
    if (!headers)
        return fail(headers.error().message().c_str());
    Message m;
    m.headers = std::move(*headers);
    m.payload = std::string(frame.substr(k_prelude + headers_size, end - k_prelude - headers_size));
    m_ready.push_back(std::move(m));
    return {};
}

std::optional<Message> Decoder::next() {
    if (m_ready.empty())
        return std::nullopt;
    Message m = std::move(m_ready.front());
    m_ready.pop_front();
    return m;
}

Result<std::string> encode(const Message& message) {
    std::string headers;
    for (const Header& h : message.headers) {
        if (h.name.empty() || h.name.size() > 255)
            return make_error(Exit::data, "cannot encode header '%.40s': its name is %zu bytes",
                              h.name.c_str(), h.name.size());
        headers += static_cast<char>(h.name.size());
        headers += h.name;
        headers += static_cast<char>(h.type);
        switch (h.type) {
        case HeaderType::bool_true:
        case HeaderType::bool_false:
            break;
        case HeaderType::bytes:
        case HeaderType::string:
            if (h.bytes.size() > 0xffff)
                return make_error(Exit::data, "cannot encode header '%s': its value is %zu bytes",
                                  h.name.c_str(), h.bytes.size());
            write_be(headers, h.bytes.size(), 2);
            headers += h.bytes;
            break;
        case HeaderType::uuid:
            if (h.bytes.size() != 16)
                return make_error(Exit::data, "cannot encode header '%s': a uuid is 16 bytes",
                                  h.name.c_str());
            headers += h.bytes;
            break;
        default:
            write_be(headers, static_cast<uint64_t>(h.number), fixed_size(h.type));
        }
    }
    size_t total = k_overhead + headers.size() + message.payload.size();
    if (total > 0xffffffffU)
        return make_error(Exit::data, "cannot encode a message of %zu bytes", total);
    std::string out;
    write_be(out, total, 4);
    write_be(out, headers.size(), 4);
    write_be(out, crc32(out), 4);
    out += headers;
    out += message.payload;
    write_be(out, crc32(out), 4);
    return out;
}

} // namespace sion::models::eventstream
