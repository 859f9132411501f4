// SPDX-License-Identifier: MIT
// Pages of the web made text for a model (fetch_url, session/tool_web.cpp): HTML parsed by
// libxml2's HTML parser (never by hand) and rendered as readable text, other text converted to
// UTF-8 from its charset, and a redirect's Location resolved against the URL it came from.
#pragma once

#include "lib/result.hpp"

#include <chrono>
#include <string>
#include <string_view>

namespace sion::web {

// A Content-Type's media type, lowercased, and its charset parameter ("" when none):
// "text/html; charset=ISO-8859-1" is {"text/html", "iso-8859-1"}.
struct MediaType {
    std::string type;
    std::string charset;
};

[[nodiscard]] MediaType parse_media_type(std::string_view content_type);

// An HTML page as text: its title apart; headings as lines starting "# " ("## " …), paragraphs
// and other blocks apart by a blank line, list items as "- " (or "1. " in an ordered list), table
// rows a line each with their cells apart by " | ", a link's text followed by its address in angle
// brackets (resolved against `url`, http and https only, not when the text is the address), an
// image by its alt text in brackets; pre's text as it is; script, style, templates, forms' controls
// and the head (but its title) left out. `charset` is the Content-Type's; without it, the page's
// own <meta charset> or the parser's guess decides. Malformed HTML is read as browsers would
// recover it; nothing is fetched (no network, no external entities).
struct Html {
    std::string title;
    std::string text;
};
// libxml2 is loaded on first use (lib/loaded_libs.hpp): html_ready() loads it, Exit::unavailable
// "cannot load 'libxml2.so.2' (install the Debian package libxml2): …" when it cannot;
// html_to_text() gives no text then.
[[nodiscard]] Status html_ready();

[[nodiscard]] Html html_to_text(std::string_view html, std::string_view charset,
                                std::string_view url);

// The text of the PDF open at `fd` (read from its start; the caller keeps the fd), by pdftotext
// (poppler-utils) run through lib/child with `time` to do it in: UTF-8, pages apart by a line
// break, at most `max` bytes of it (`cut` says more was dropped). Errors: Exit::unavailable
// "reading a PDF takes pdftotext (Debian package poppler-utils), which is not installed";
// Exit::timeout "it took longer than 30 s"; Exit::data with the first line pdftotext said when it
// failed ("Syntax Error: Couldn't read xref table").
struct PdfText {
    std::string text;
    bool cut = false;
};
[[nodiscard]] Result<PdfText> pdf_to_text(int fd, std::chrono::milliseconds time, size_t max);

// `bytes` in `charset` (any iconv(3) knows; "" or utf-8 as they are) as UTF-8, a byte sequence
// that is not UTF-8 after that replaced by U+FFFD. Exit::data "unknown charset 'x'".
[[nodiscard]] Result<std::string> to_utf8(std::string_view bytes, std::string_view charset);

// `location` (absolute, or relative to `base`) as an absolute URL, as curl reads it; Exit::data
// for one that is not http or https.
[[nodiscard]] Result<std::string> resolve_location(std::string_view base,
                                                   std::string_view location);

} // namespace sion::web
