// SPDX-License-Identifier: MIT
// LineReader: splits a byte stream into lines of at most a set length, without ever buffering more
// than that of one line (and a "\r" that may end it). A longer line is dropped as it arrives and
// reported once, when it ends.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace sion::rpc {

inline constexpr size_t k_default_max_line = size_t{1} << 20; // 1 MiB

struct Line {
    std::string_view text; // without its "\n" (or "\r\n"); empty for an over-long line
    bool overlong = false;
    size_t length = 0;     // bytes the line had, its end of line not counted (an over-long line's
                           // "\r" before its "\n" is counted)
};

class LineReader {
public:
    explicit LineReader(size_t max_line = k_default_max_line) : m_max(max_line) {}

    // Takes the next bytes of the stream. Lines returned by next() before this call are invalid
    // after it.
    void feed(std::string_view bytes);
    // The next complete line (or over-long line) in the stream, if there is one.
    [[nodiscard]] std::optional<Line> next();
    // Whether the stream stopped inside a line: bytes are held or being dropped with no end yet. At
    // end of input this means the peer closed (or died) mid-line.
    [[nodiscard]] bool mid_line() const { return m_partial > 0 || m_dropping; }
    [[nodiscard]] size_t max_line() const { return m_max; }

private:
    struct Event {
        size_t offset;
        size_t length;
        bool overlong;
    };
    [[nodiscard]] bool cap_and_cr(std::string_view seg) const;
    void finish_line(size_t offset, size_t length);

    size_t m_max;
    std::string m_buf;        // complete lines not yet taken, then the partial line
    size_t m_partial = 0;     // bytes of the partial line at the end of m_buf
    bool m_dropping = false;  // inside an over-long line
    size_t m_dropped = 0;     // its length so far
    std::vector<Event> m_events;
    size_t m_next_event = 0;
};

} // namespace sion::rpc
