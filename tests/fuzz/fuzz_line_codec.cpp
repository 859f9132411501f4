// SPDX-License-Identifier: MIT
// Fuzzes the JSON-lines codec: arbitrary bytes through rpc::LineReader in chunks, every line
// through rpc::decode, every decoded message (and every failure's answer) encoded and decoded
// again.
//
// Input layout, so that seeds stay readable text:
//   byte 0      the line cap: (byte + 1) * 2, so 2 to 512 bytes and over-long lines are common
//   byte 1      bits 0-2: how many chunk-size bytes follow (0: the stream is fed in one piece);
//               bits 3-4: how many feeds pass between drains of the reader (0: drain after each)
//   next bytes  chunk sizes, (byte % 64) + 1 each, used in turn
//   the rest    the stream
// A seed like `~0{"jsonrpc":"2.0","method":"m"}` plus a newline is one line under a 254-byte cap.
#include "lib/rpc/line_reader.hpp"
#include "lib/rpc/message.hpp"

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>
#include <vector>

namespace {

using sion::JsonView;
using namespace sion::rpc;

void check(bool ok, const char* what, std::string_view detail = {}) {
    if (ok)
        return;
    (void)std::fprintf(stderr, "fuzz_line_codec: %s: '%.*s'\n", what,
                       static_cast<int>(detail.size()), detail.data());
    std::abort();
}

// A line as the reference model expects it.
struct Expected {
    std::string text;
    bool overlong;
    size_t length;
};

// Splits the stream as the contract says: lines end at "\n", a "\r" before it is not part of the
// line, and a line longer than the cap is over-long, its length counting that "\r".
std::vector<Expected> split(std::string_view stream, size_t max, std::string_view& tail) {
    std::vector<Expected> lines;
    for (;;) {
        size_t nl = stream.find('\n');
        if (nl == std::string_view::npos)
            break;
        std::string_view raw = stream.substr(0, nl);
        stream.remove_prefix(nl + 1);
        std::string_view text = raw;
        if (!text.empty() && text.back() == '\r')
            text.remove_suffix(1);
        if (text.size() > max) {
            lines.push_back({{}, true, raw.size()});
        } else {
            lines.push_back({std::string(text), false, text.size()});
        }
    }
    tail = stream;
    return lines;
}

bool same_line(const Expected& want, const Line& got) {
    return want.overlong == got.overlong && want.length == got.length
           && (got.overlong || got.text == want.text);
}

// Whether two ids answer to the same request: null (or absent) alike, equal strings, equal
// integers.
bool same_id(JsonView a, JsonView b) {
    bool a_null = !a.exists() || a.is_null();
    bool b_null = !b.exists() || b.is_null();
    if (a_null || b_null)
        return a_null && b_null;
    if (a.is_string() || b.is_string())
        return a.is_string() && b.is_string() && *a.as_string() == *b.as_string();
    auto ai = a.as_int();
    auto bi = b.as_int();
    return ai && bi && *ai == *bi;
}

// The text an encoder made is one line: it ends with "\n" and holds no other.
Message decode_encoded(const std::string& line) {
    check(!line.empty() && line.back() == '\n', "encoded text does not end with a newline", line);
    std::string_view body(line.data(), line.size() - 1);
    check(body.find('\n') == std::string_view::npos, "encoded text spans lines", line);
    Decoded d = decode(body);
    check(d.message.has_value() != d.failure.has_value(), "decode gave not exactly one outcome",
          line);
    check(d.message.has_value(), "encoded message does not decode", line);
    return std::move(*d.message);
}

void check_failure(const Failure& f, std::string_view line) {
    check(f.code == k_parse_error || f.code == k_invalid_request, "failure code out of range",
          line);
    check(!f.message.empty(), "failure without a message", line);
    check(f.id.exists(), "failure without an id", line);
    Message answer = decode_encoded(encode_failure(f));
    check(answer.kind == Kind::error, "failure answer is not an error", line);
    check(answer.error_code == f.code, "failure answer changed the code", line);
    check(answer.error_message == f.message, "failure answer changed the message", line);
    check(same_id(answer.id, f.id.view()), "failure answer is addressed to another id", line);
}

std::string encode_again(const Message& m) {
    switch (m.kind) {
    case Kind::request:
        return encode_request(m.id, m.method, m.params);
    case Kind::notification:
        return encode_notification(m.method, m.params);
    case Kind::response:
        return encode_result(m.id, m.result);
    case Kind::error:
        return encode_error(m.id, m.error_code, m.error_message, m.error_data);
    }
    std::abort();
}

void check_message(const Message& m, std::string_view line) {
    switch (m.kind) {
    case Kind::request:
        check(m.id.is_string() || m.id.as_int().has_value(), "request with a bad id", line);
        break;
    case Kind::notification:
        check(!m.id.exists(), "notification with an id", line);
        break;
    case Kind::response:
        check(m.result.exists() && !m.id.is_null(), "response without a result or an id", line);
        break;
    case Kind::error:
        break;
    }
    Message again = decode_encoded(encode_again(m));
    check(again.kind == m.kind, "re-encoded message changed kind", line);
    check(again.method == m.method, "re-encoded message changed method", line);
    check(same_id(again.id, m.id), "re-encoded message changed id", line);
    check(again.params.dump() == m.params.dump(), "re-encoded message changed params", line);
    check(again.result.dump() == m.result.dump(), "re-encoded message changed result", line);
    check(again.error_code == m.error_code, "re-encoded message changed the error code", line);
    check(again.error_message == m.error_message, "re-encoded message changed the error message",
          line);
    check(again.error_data.dump() == m.error_data.dump(), "re-encoded message changed error data",
          line);
    if (m.kind == Kind::request && m.id.as_int()) {
        Message by_number = decode_encoded(encode_request(*m.id.as_int(), m.method, m.params));
        check(same_id(by_number.id, m.id), "request encoded with a number id changed id", line);
    }
}

void check_line(const Line& line, size_t max) {
    if (line.overlong) {
        check(line.length > max, "over-long line reported with a length within the cap");
        check(line.text.empty(), "over-long line handed out with text");
        check_failure(overlong_failure(line.length, max), {});
        return;
    }
    check(line.text.size() <= max, "line longer than the cap handed out", line.text);
    check(line.text.size() == line.length, "line length differs from its text", line.text);
    Decoded d = decode(line.text);
    check(d.message.has_value() != d.failure.has_value(), "decode gave not exactly one outcome",
          line.text);
    if (d.failure) {
        check_failure(*d.failure, line.text);
    } else {
        check_message(*d.message, line.text);
    }
}

} // namespace

// NOLINTNEXTLINE(readability-identifier-naming): libFuzzer's entry point
extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    if (size < 2)
        return 0;
    const size_t max = (size_t{data[0]} + 1) * 2;
    const size_t n_chunks = data[1] & 7;
    const size_t drain_every = ((data[1] >> 3) & 3) + 1;
    if (size < 2 + n_chunks)
        return 0;
    std::vector<size_t> chunks;
    for (size_t i = 0; i < n_chunks; ++i)
        chunks.push_back(data[2 + i] % 64 + 1);
    std::string_view stream(reinterpret_cast<const char*>(data) + 2 + n_chunks,
                            size - 2 - n_chunks);

    std::string_view tail;
    const std::vector<Expected> want = split(stream, max, tail);
    size_t seen = 0;
    LineReader reader(max);
    check(reader.max_line() == max, "reader does not keep its cap");
    auto drain = [&] {
        while (auto line = reader.next()) {
            check(seen < want.size(), "reader handed out a line that is not in the stream",
                  line->text);
            check(same_line(want[seen], *line), "reader handed out another line than the stream's",
                  line->text);
            check_line(*line, max);
            ++seen;
        }
    };

    std::string_view rest = stream;
    for (size_t feeds = 0; !rest.empty(); ++feeds) {
        size_t n =
            chunks.empty() ? rest.size() : std::min(rest.size(), chunks[feeds % chunks.size()]);
        reader.feed(rest.substr(0, n));
        rest.remove_prefix(n);
        if ((feeds + 1) % drain_every == 0)
            drain();
    }
    drain();
    check(seen == want.size(), "reader lost lines of the stream");
    check(reader.mid_line() == !tail.empty(), "reader is wrong about ending inside a line", tail);
    return 0;
}
