// SPDX-License-Identifier: MIT
// Text from outside (tool results, MCP servers' messages, paths, the model's words) as the
// transcript and the terminal show it: no byte of it can move the cursor, colour the terminal,
// or start a line that passes for one of the transcript's own. --json events keep the text as it
// is (JSON escapes it); only what people read goes through here.
//
// Escapes, shown as visible text:
//   - C0 control characters and DEL as \xHH (ESC as \x1b), except a tab, which is kept; CR as \r
//     and LF as \n where they do not end a line (see below);
//   - C1 control characters (U+0080 to U+009F), the line and paragraph separators (U+2028,
//     U+2029) and the bidirectional embeddings, overrides and isolates (U+202A to U+202E, U+2066
//     to U+2069) as \uHHHH.
// A backslash stays as it is, so "\x1b" may have been written so; --json tells them apart.
//
// Lines: shown_line() makes one line of its text (every LF and CR escaped): for names, paths and
// the messages sion's own sentences quote. shown_lines() keeps the line breaks (LF, or CR LF) of
// text that is many lines by nature (a command's output, a file, the model's paragraphs), as the
// seeds show it, except before a line that begins, after any blanks, as a line of the transcript's
// own does (transcript.hpp): "→", "←", "✗", "~", "agent:", "you:", "session " and 16 hex
// digits, "the session is tainted", "the model ", "the MCP servers ", "MCP server ". That line is
// joined to the one before it with a visible \n, so a path, an output or an answer cannot forge a
// call, a result, a notice or the end of a session.
#pragma once

#include <string>
#include <string_view>

namespace sion::session {

[[nodiscard]] std::string shown_line(std::string_view text);
[[nodiscard]] std::string shown_lines(std::string_view text);

// The model's text as it streams, shown as shown_lines() shows it whole: of each piece, what can
// be shown for sure, the rest held back until the next piece or the end. Held back are a line
// break until enough of the next line has come to judge it (its line break, or 24 bytes after its
// blanks), a CR that may begin a CR LF, and a UTF-8 sequence cut in two. The pieces that feed()
// and finish() return, joined, are shown_lines() of the text.
class ShownStream {
public:
    [[nodiscard]] std::string feed(std::string_view piece);
    [[nodiscard]] std::string finish();

    // Everything fed.
    [[nodiscard]] const std::string& text() const { return m_text; }

private:
    [[nodiscard]] std::string shown(bool whole);

    std::string m_text;
    size_t m_shown = 0;   // m_text's bytes shown (a line break held counts as shown)
    bool m_break = false; // a line break before m_shown waits to be judged
    bool m_crlf = false;  // that line break was CR LF
};

} // namespace sion::session
