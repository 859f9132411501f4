// SPDX-License-Identifier: MIT
// Server-Sent Events: lines split as they arrive, fields gathered into events, each bounded.
#include "lib/models/sse.hpp"

namespace sion::models {

namespace {

constexpr std::string_view k_bom = "\xEF\xBB\xBF";

bool all_digits(std::string_view s) {
    if (s.empty())
        return false;
    for (char c : s)
        if (c < '0' || c > '9')
            return false;
    return true;
}

} // namespace

Status SseDecoder::too_long() const {
    return make_error(Exit::data, "an event of the stream is longer than %zu bytes", m_max);
}

Status SseDecoder::feed(std::string_view bytes) {
    if (m_failed)
        return too_long();
    // The BOM may come split across chunks: its bytes are held until they are known to be one.
    if (!m_started) {
        while (!bytes.empty() && m_bom.size() < k_bom.size() && bytes[0] == k_bom[m_bom.size()]) {
            m_bom += bytes[0];
            bytes.remove_prefix(1);
        }
        if (m_bom.size() == k_bom.size()) {
            m_started = true;
            m_bom.clear();
        } else if (!bytes.empty()) {
            m_started = true;
            std::string held = std::move(m_bom);
            m_bom.clear();
            SION_CHECK(feed(held));
        } else {
            return {};
        }
    }
    size_t start = 0;
    for (size_t i = 0; i < bytes.size(); ++i) {
        char c = bytes[i];
        if (c != '\r' && c != '\n')
            continue;
        bool lf_after_cr = c == '\n' && m_after_cr && i == start && m_line.empty();
        m_after_cr = c == '\r';
        if (lf_after_cr) {
            start = i + 1;
            continue;
        }
        m_line.append(bytes.substr(start, i - start));
        start = i + 1;
        if (m_line.size() + m_data.size() > m_max) {
            m_failed = true;
            return too_long();
        }
        std::string line = std::move(m_line);
        m_line.clear();
        SION_CHECK(take_line(line));
    }
    if (start < bytes.size()) {
        m_after_cr = false;
        m_line.append(bytes.substr(start));
        if (m_line.size() + m_data.size() > m_max) {
            m_failed = true;
            return too_long();
        }
    }
    return {};
}

Status SseDecoder::take_line(std::string_view line) {
    if (line.empty()) {
        dispatch();
        return {};
    }
    if (line[0] == ':')
        return {};
    m_has_fields = true;
    std::string_view field = line;
    std::string_view value;
    if (size_t colon = line.find(':'); colon != std::string_view::npos) {
        field = line.substr(0, colon);
        value = line.substr(colon + 1);
        if (!value.empty() && value[0] == ' ')
            value.remove_prefix(1);
    }
    if (field == "event") {
        m_type = value;
    } else if (field == "data") {
        if (m_data.size() + value.size() + 1 > m_max) {
            m_failed = true;
            return too_long();
        }
        m_data.append(value);
        m_data += '\n';
    } else if (field == "id") {
        if (value.find('\0') == std::string_view::npos)
            m_last_id = value;
    } else if (field == "retry") {
        // Digits only, and few enough of them to be a time: a longer run is no reconnection time.
        if (all_digits(value) && value.size() <= 15)
            m_retry = std::stoll(std::string(value));
    }
    return {};
}

void SseDecoder::dispatch() {
    m_has_fields = false;
    if (m_data.empty()) {
        m_type.clear();
        return;
    }
    SseEvent event;
    m_data.pop_back();
    event.data = std::move(m_data);
    if (!m_type.empty())
        event.type = std::move(m_type);
    event.id = m_last_id;
    m_data.clear();
    m_type.clear();
    m_ready.push_back(std::move(event));
}

std::optional<SseEvent> SseDecoder::next() {
    if (m_ready.empty())
        return std::nullopt;
    SseEvent event = std::move(m_ready.front());
    m_ready.pop_front();
    return event;
}

bool SseDecoder::mid_event() const {
    return !m_bom.empty() || !m_line.empty() || m_has_fields;
}

} // namespace sion::models
