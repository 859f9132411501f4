// SPDX-License-Identifier: MIT
// Documents read as text (sion-documents, seed 000's "sion's own servers"): Markdown and plain text
// as they are, HTML through lib/web's renderer, Word (.docx), OpenDocument text (.odt) and
// PowerPoint (.pptx) from their zip container (libarchive) and its XML (libxml2), and PDF through
// pdftotext (lib/web). Which kind a file is, is told by its name's extension alone.
//
// Every input is taken as hostile and bounded: the file's size, the bytes a zip container may
// unpack to and its number of entries (a zip bomb), the XML's DTD (any DOCTYPE stops the parse
// before one declaration is read: no entity is ever expanded, no external one loaded; documents
// of these kinds never have one), the network (never), the text returned, pdftotext's time.
// Errors are Exit::data (Exit::unavailable for a missing library or pdftotext, Exit::timeout when
// pdftotext runs out of time), their message saying why without the file's name, for the caller
// to put after "cannot read 'x': ": "it is not UTF-8 text", "it unpacks to more than 64 MiB".
//
// Threads: any function may be called from several threads at once.
#pragma once

#include "lib/result.hpp"

#include <chrono>
#include <cstddef>
#include <optional>
#include <string>
#include <string_view>

namespace sion::documents {

enum class Kind { markdown, text, html, docx, odt, pptx, pdf };

// The kind a file's name says (".md", ".markdown", ".txt", ".html", ".htm", ".docx", ".odt",
// ".pptx", ".pdf", in any case), or nothing for a name that is no document's.
[[nodiscard]] std::optional<Kind> kind_of(std::string_view name);

// "markdown", "text", "html", "docx", "odt", "pptx", "pdf".
[[nodiscard]] const char* kind_name(Kind kind);

// Markdown and plain text: the only kinds written.
[[nodiscard]] bool writable(Kind kind);

struct Limits {
    size_t file_max = size_t{64} << 20;     // the document's own size
    size_t unpacked_max = size_t{64} << 20; // what a container's parts unpack to, in all
    size_t entries_max = 10000;             // a container's entries
    size_t text_max = size_t{16} << 20;     // the text made of it
    std::chrono::milliseconds pdf_time{30000};
};

// The text of the document of kind `kind` open at `fd` (a regular file, read from its start; the
// caller keeps the fd): UTF-8, lines apart by "\n", at most limits.text_max bytes (a longer text
// is an error, "its text is longer than 16 MiB", never cut silently).
[[nodiscard]] Result<std::string> extract(int fd, Kind kind, const Limits& limits = {});

// Parts of extract(), for tests: bytes of Markdown or plain text checked as UTF-8 (a BOM left
// off; a NUL byte or malformed UTF-8: "it is not UTF-8 text"), the text of a .docx, .odt or .pptx
// open at `fd` (lib/office_text.cpp), and the text of one XML part of a .docx
// (word/document.xml), .odt (content.xml) or .pptx (one slide).
[[nodiscard]] Result<std::string> plain_text(std::string_view bytes);
[[nodiscard]] Result<std::string> office_text(int fd, Kind kind, const Limits& limits = {});
[[nodiscard]] Result<std::string> xml_part_text(std::string_view xml, Kind kind);

// "64 MiB", "16 KiB", "300 bytes": a limit as messages say it.
[[nodiscard]] std::string size_words(size_t bytes);

} // namespace sion::documents
