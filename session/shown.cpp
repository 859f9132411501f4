// SPDX-License-Identifier: MIT
// Outside text made safe to show: control characters escaped, forged transcript lines joined.
#include "session/shown.hpp"

#include "lib/text.hpp"

#include <cstdint>

namespace sion::session {

namespace {

// The code point of the well-formed UTF-8 sequence at `at` and its length; length 0 when the
// byte there starts none.
struct Decoded {
    uint32_t point = 0;
    size_t length = 0;
};

Decoded decode(std::string_view text, size_t at) {
    auto byte = [&](size_t i) { return static_cast<unsigned char>(text[i]); };
    unsigned char lead = byte(at);
    size_t length = lead < 0x80 ? 1 : (lead & 0xE0) == 0xC0 ? 2 : (lead & 0xF0) == 0xE0 ? 3
                                  : (lead & 0xF8) == 0xF0 ? 4 : 0;
    if (length == 0 || at + length > text.size())
        return {};
    uint32_t point = length == 1 ? lead : lead & (0x7F >> length);
    for (size_t i = 1; i < length; ++i) {
        if ((byte(at + i) & 0xC0) != 0x80)
            return {};
        point = (point << 6) | (byte(at + i) & 0x3F);
    }
    static constexpr uint32_t k_least[] = {0, 0, 0x80, 0x800, 0x10000};
    if (point < k_least[length] || point > 0x10FFFF || (point >= 0xD800 && point <= 0xDFFF))
        return {};
    return {point, length};
}

// Code points shown as \uHHHH: C1 controls, line and paragraph separators, the bidirectional
// controls, and the characters of no width that could hide in front of a marker.
bool is_hidden_format(uint32_t p) {
    return (p >= 0x80 && p <= 0x9F) || (p >= 0x200B && p <= 0x200F)
           || (p >= 0x2028 && p <= 0x202E) || (p >= 0x2060 && p <= 0x2069) || p == 0xFEFF;
}

// Blanks a line may begin with before what it looks like.
bool is_blank(uint32_t p) {
    return p == ' ' || p == '\t' || p == 0xA0 || p == 0x1680 || (p >= 0x2000 && p <= 0x200A)
           || p == 0x202F || p == 0x205F || p == 0x3000;
}

bool starts_with(std::string_view text, std::string_view prefix) {
    return text.substr(0, prefix.size()) == prefix;
}

bool is_hex(char c) {
    return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f');
}

// Where the blanks a line begins with end.
size_t after_blanks(std::string_view line) {
    size_t at = 0;
    while (at < line.size()) {
        Decoded d = decode(line, at);
        if (d.length == 0 || !is_blank(d.point))
            break;
        at += d.length;
    }
    return at;
}

// Whether `line` begins, after its blanks, as a line of the transcript's own does.
bool looks_like_ours(std::string_view line) {
    std::string_view rest = line.substr(after_blanks(line));
    for (std::string_view marker : {"→", "←", "✗", "agent:", "you:", "the session is tainted",
                                    "the model ", "the MCP servers ", "MCP server "})
        if (starts_with(rest, marker))
            return true;
    if (rest == "~" || starts_with(rest, "~ "))
        return true;
    if (starts_with(rest, "session ") && rest.size() >= 24) {
        for (size_t i = 8; i < 24; ++i)
            if (!is_hex(rest[i]))
                return false;
        return true;
    }
    return false;
}

// `text` with each character that is not to be shown as it is escaped; LF and CR included.
void append_escaped(std::string& out, std::string_view text) {
    size_t at = 0;
    while (at < text.size()) {
        char c = text[at];
        if (c == '\n') {
            out += "\\n";
        } else if (c == '\r') {
            out += "\\r";
        } else if (c == '\t') {
            out += c;
        } else if (static_cast<unsigned char>(c) < 0x20 || c == 0x7F) {
            out += format("\\x%02x", static_cast<unsigned>(static_cast<unsigned char>(c)));
        } else {
            Decoded d = decode(text, at);
            if (d.length == 0) {
                out += format("\\x%02x", static_cast<unsigned>(static_cast<unsigned char>(c)));
            } else {
                if (is_hidden_format(d.point))
                    out += format("\\u%04x", static_cast<unsigned>(d.point));
                else
                    out.append(text.substr(at, d.length));
                at += d.length;
                continue;
            }
        }
        ++at;
    }
}

// Whether enough of a line that has not ended has come to judge it: 24 bytes after its blanks
// (the longest marker, "session " and 16 hex digits).
bool judged(std::string_view start) {
    return start.size() - after_blanks(start) >= 24;
}

// The length of `text` without a UTF-8 sequence its end cuts off.
size_t whole_sequences(std::string_view text) {
    for (size_t back = 1; back <= 3 && back <= text.size(); ++back) {
        auto c = static_cast<unsigned char>(text[text.size() - back]);
        if ((c & 0xC0) == 0x80)
            continue; // a continuation byte: its lead is further back
        size_t length = c < 0x80             ? 1
                        : (c & 0xE0) == 0xC0 ? 2
                        : (c & 0xF0) == 0xE0 ? 3
                        : (c & 0xF8) == 0xF0 ? 4
                                             : 1;
        return length > back ? text.size() - back : text.size();
    }
    return text.size();
}

} // namespace

std::string ShownStream::feed(std::string_view piece) {
    m_text.append(piece);
    return shown(false);
}

std::string ShownStream::finish() {
    return shown(true);
}

std::string ShownStream::shown(bool whole) {
    std::string out;
    while (true) {
        std::string_view rest = std::string_view(m_text).substr(m_shown);
        size_t nl = rest.find('\n');
        if (m_break) {
            std::string_view next = rest.substr(0, nl);
            if (nl == std::string_view::npos && !whole && !judged(next))
                return out;
            out += looks_like_ours(next) ? (m_crlf ? "\\r\\n" : "\\n") : "\n";
            m_break = false;
        }
        if (nl == std::string_view::npos) {
            size_t n = rest.size();
            if (!whole) {
                if (n > 0 && rest[n - 1] == '\r')
                    --n;
                n = whole_sequences(rest.substr(0, n));
            }
            append_escaped(out, rest.substr(0, n));
            m_shown += n;
            return out;
        }
        std::string_view line = rest.substr(0, nl);
        m_crlf = !line.empty() && line.back() == '\r';
        if (m_crlf)
            line.remove_suffix(1);
        append_escaped(out, line);
        m_shown += nl + 1;
        m_break = true;
    }
}

std::string shown_line(std::string_view text) {
    std::string out;
    out.reserve(text.size());
    append_escaped(out, text);
    return out;
}

std::string shown_lines(std::string_view text) {
    std::string out;
    out.reserve(text.size());
    size_t at = 0;
    while (true) {
        size_t nl = text.find('\n', at);
        std::string_view line = text.substr(at, nl == std::string_view::npos ? nl : nl - at);
        bool crlf = !line.empty() && line.back() == '\r' && nl != std::string_view::npos;
        if (crlf)
            line.remove_suffix(1);
        append_escaped(out, line);
        if (nl == std::string_view::npos)
            break;
        at = nl + 1;
        std::string_view next = text.substr(at, text.find('\n', at) - at);
        if (looks_like_ours(next))
            out += crlf ? "\\r\\n" : "\\n";
        else
            out += '\n';
    }
    return out;
}

} // namespace sion::session
