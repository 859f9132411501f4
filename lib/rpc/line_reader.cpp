// SPDX-License-Identifier: MIT
// Bounded line splitting: the cap is checked before bytes are buffered.
#include "lib/rpc/line_reader.hpp"

#include <cstring>

namespace sion::rpc {

// A line of exactly the cap ending "\r\n" is within it, but its "\r" arrives before the "\n" that
// says so: one byte over the cap is held while it is a "\r", and the next byte decides.
bool LineReader::cap_and_cr(std::string_view seg) const {
    if (m_partial + seg.size() != m_max + 1)
        return false;
    char last = seg.empty() ? m_buf.back() : seg.back();
    return last == '\r';
}

void LineReader::finish_line(size_t offset, size_t length) {
    if (length > 0 && m_buf[offset + length - 1] == '\r')
        --length;
    m_events.push_back({offset, length, false});
}

void LineReader::feed(std::string_view bytes) {
    // Lines handed out are now free: keep only the partial line.
    if (m_next_event == m_events.size()) {
        m_events.clear();
        m_next_event = 0;
        if (m_buf.size() > m_partial)
            m_buf.erase(0, m_buf.size() - m_partial);
    }
    while (!bytes.empty()) {
        const void* found = std::memchr(bytes.data(), '\n', bytes.size());
        size_t seg = found ? static_cast<size_t>(static_cast<const char*>(found) - bytes.data())
                           : bytes.size();
        if (m_dropping) {
            m_dropped += seg;
        } else if (m_partial + seg > m_max && !cap_and_cr(bytes.substr(0, seg))) {
            // Too long: drop what is held of it and what follows until its end.
            m_buf.resize(m_buf.size() - m_partial);
            m_dropped = m_partial + seg;
            m_partial = 0;
            m_dropping = true;
        } else {
            m_buf.append(bytes.data(), seg);
            m_partial += seg;
        }
        if (found == nullptr)
            return;
        if (m_dropping) {
            m_events.push_back({0, m_dropped, true});
            m_dropping = false;
            m_dropped = 0;
        } else {
            finish_line(m_buf.size() - m_partial, m_partial);
            m_partial = 0;
        }
        bytes.remove_prefix(seg + 1);
    }
}

std::optional<Line> LineReader::next() {
    if (m_next_event == m_events.size())
        return std::nullopt;
    const Event& e = m_events[m_next_event++];
    if (e.overlong)
        return Line{{}, true, e.length};
    return Line{std::string_view(m_buf).substr(e.offset, e.length), false, e.length};
}

} // namespace sion::rpc
