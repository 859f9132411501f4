// SPDX-License-Identifier: MIT
// An incremental decoder of Server-Sent Events (the WHATWG HTML standard's "event stream"), as
// model providers stream their answers: bytes in any chunks, events out once each is complete.
//
// The rules are the standard's: lines end at CRLF, LF or CR (a CR at the end of one chunk and an LF
// at the start of the next are one line end); a UTF-8 byte order mark at the very start is dropped;
// a blank line dispatches the event; `event:` names it ("message" when none does), `data:` lines
// are joined with "\n", `id:` sets the last event id (kept from event to event; a value holding
// NUL is ignored), `retry:` of ASCII digits only sets the reconnection time, a line starting with
// ':' is a comment, a field without ':' has the empty value, one space after the ':' is dropped,
// and unknown fields are ignored. An event whose data is empty (no `data:` line) is not dispatched,
// and one the stream ends inside of is dropped (mid_event() says so). Bytes are passed through
// as they are: the caller's JSON parser judges their encoding.
//
// Bounded: an event may hold at most max_event bytes, counting its data and the line being read;
// more is an error (Exit::data) "an event of the stream is longer than N bytes", after which the
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

namespace sion::models {

struct SseEvent {
    std::string type = "message"; // the `event:` field, or "message"
    std::string data;             // `data:` lines joined by "\n"
    std::string id;               // the last event id when it was dispatched ("" for none)
};

class SseDecoder {
public:
    static constexpr size_t k_default_max_event = size_t{8} << 20;

    explicit SseDecoder(size_t max_event = k_default_max_event) : m_max(max_event) {}

    // Takes the next bytes of the stream; the events they complete wait for next().
    [[nodiscard]] Status feed(std::string_view bytes);
    // The oldest complete event not yet taken, if any.
    [[nodiscard]] std::optional<SseEvent> next();
    // Whether the bytes so far end inside an event (a line, a field or data without its blank
    // line).
    [[nodiscard]] bool mid_event() const;

    // The last `retry:` value, in milliseconds, if one came.
    [[nodiscard]] std::optional<int64_t> retry_ms() const { return m_retry; }

    [[nodiscard]] size_t max_event() const { return m_max; }

private:
    [[nodiscard]] Status take_line(std::string_view line);
    void dispatch();
    [[nodiscard]] Status too_long() const;

    size_t m_max;
    std::string m_line;      // the line being read, without its end
    bool m_after_cr = false; // the last byte was a CR: an LF now ends nothing
    bool m_started = false;  // the first bytes (and a BOM among them) have been seen
    std::string m_bom;       // bytes at the start that may still be a BOM
    std::string m_type;      // the event being built
    std::string m_data;
    bool m_has_fields = false; // a field line came since the last blank line
    std::string m_last_id;
    std::optional<int64_t> m_retry;
    std::deque<SseEvent> m_ready;
    bool m_failed = false;
};

} // namespace sion::models
