// SPDX-License-Identifier: MIT
// The text of office documents: the parts that hold it unpacked from the zip container by
// libarchive, within bounds, and their XML parsed by libxml2 with no DTD allowed.
#include "lib/documents.hpp"
#include "lib/loaded_libs.hpp"
#include "lib/text.hpp"
#include "lib/utf8.hpp"

#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <climits>
#include <cstdlib>
#include <map>
#include <memory>
#include <optional>
#include <string>

namespace sion::documents {

namespace {

constexpr int k_max_depth = 256;

void texts_of(const xmlNode* n, std::string& out, int depth) {
    if (depth > k_max_depth)
        return;
    for (; n != nullptr; n = n->next) {
        if ((n->type == XML_TEXT_NODE || n->type == XML_CDATA_SECTION_NODE) && n->content)
            out += reinterpret_cast<const char*>(n->content);
        else if (n->type == XML_ELEMENT_NODE)
            texts_of(n->children, out, depth + 1);
    }
}

// WordprocessingML and DrawingML (a slide's text): text only in <w:t>/<a:t>, paragraphs a line.
void ooxml(const xmlNode* n, std::string& out, int depth) {
    if (depth > k_max_depth)
        return;
    for (; n != nullptr; n = n->next) {
        if (n->type != XML_ELEMENT_NODE)
            continue;
        std::string_view name = xml_name(n);
        if (name == "t")
            texts_of(n->children, out, depth + 1);
        else if (name == "tab")
            out += '\t';
        else if (name == "br" || name == "cr")
            out += '\n';
        else if (name == "delText" || name == "instrText") // deleted text, fields' codes
            continue;
        else {
            ooxml(n->children, out, depth + 1);
            if (name == "p")
                out += '\n';
        }
    }
}

// OpenDocument: text in paragraphs and headings, <text:s text:c="N"/> for N spaces.
void odf(const xmlNode* n, std::string& out, int depth, bool in_paragraph) {
    if (depth > k_max_depth)
        return;
    for (; n != nullptr; n = n->next) {
        if (n->type == XML_TEXT_NODE || n->type == XML_CDATA_SECTION_NODE) {
            if (in_paragraph && n->content != nullptr)
                out += reinterpret_cast<const char*>(n->content);
            continue;
        }
        if (n->type != XML_ELEMENT_NODE)
            continue;
        std::string_view name = xml_name(n);
        if (name == "s") {
            std::string count = xml_attribute(n, "c", false);
            long spaces = count.empty() ? 1 : std::strtol(count.c_str(), nullptr, 10);
            out.append(static_cast<size_t>(std::clamp(spaces, 1L, 1000L)), ' ');
        } else if (name == "tab") {
            out += '\t';
        } else if (name == "line-break") {
            out += '\n';
        } else if (name == "tracked-changes") {
            continue;
        } else if (name == "p" || name == "h") {
            odf(n->children, out, depth + 1, true);
            out += '\n';
        } else {
            odf(n->children, out, depth + 1, in_paragraph);
        }
    }
}

// The parts of a container that hold its text, by the kind's names.
struct Parts {
    std::string main; // word/document.xml, content.xml
    bool has_main = false;
    std::map<unsigned, std::string> slides; // ppt/slides/slideN.xml by N
};

// N of "ppt/slides/slideN.xml", or nothing.
std::optional<unsigned> slide_number(std::string_view name) {
    constexpr std::string_view prefix = "ppt/slides/slide";
    constexpr std::string_view suffix = ".xml";
    if (name.size() <= prefix.size() + suffix.size() || name.substr(0, prefix.size()) != prefix
        || name.substr(name.size() - suffix.size()) != suffix)
        return std::nullopt;
    std::string_view digits =
        name.substr(prefix.size(), name.size() - prefix.size() - suffix.size());
    if (digits.empty() || digits.size() > 6
        || digits.find_first_not_of("0123456789") != digits.npos)
        return std::nullopt;
    return static_cast<unsigned>(std::stoul(std::string(digits)));
}

// libarchive's last error, on one line; it may have none (a null string).
std::string archive_said(const ArchiveApi* api, struct archive* a) {
    const char* said = api->error_string(a);
    return said != nullptr ? one_line(said) : "the archive is damaged";
}

const char* main_part(Kind kind) {
    return kind == Kind::docx ? "word/document.xml" : "content.xml";
}

const char* kind_words(Kind kind) {
    switch (kind) {
    case Kind::docx:
        return "a Word document";
    case Kind::odt:
        return "an OpenDocument text";
    default:
        return "a PowerPoint presentation";
    }
}

Result<Parts> unpack(int fd, Kind kind, const Limits& limits) {
    SION_TRY(const ArchiveApi* api, archive_api());
    if (::lseek(fd, 0, SEEK_SET) < 0)
        return sys_error(Exit::io, errno, "cannot read it");
    std::unique_ptr<struct archive, int (*)(struct archive*)> a(api->read_new(), api->read_free);
    if (!a)
        return make_error(Exit::os, "cannot read it: out of memory");
    api->support_format_zip(a.get());
    if (api->open_fd(a.get(), fd, 65536) != ARCHIVE_OK)
        return make_error(Exit::data, "it is not a zip container, as %s is (%s)", kind_words(kind),
                          archive_said(api, a.get()).c_str());
    Parts parts;
    size_t entries = 0;
    uint64_t unpacked = 0;
    struct archive_entry* entry = nullptr;
    char buffer[65536];
    for (;;) {
        int rc = api->next_header(a.get(), &entry);
        if (rc == ARCHIVE_EOF)
            break;
        if (rc != ARCHIVE_OK && rc != ARCHIVE_WARN)
            return make_error(Exit::data, "it cannot be unpacked: %s",
                              archive_said(api, a.get()).c_str());
        if (++entries > limits.entries_max)
            return make_error(Exit::data, "it holds more than %zu entries", limits.entries_max);
        const char* raw = api->entry_pathname(entry);
        std::string_view name = raw != nullptr ? raw : "";
        auto slide = kind == Kind::pptx ? slide_number(name) : std::nullopt;
        bool wanted = kind == Kind::pptx ? slide.has_value() && !parts.slides.contains(*slide)
                                         : name == main_part(kind) && !parts.has_main;
        if (!wanted || api->entry_filetype(entry) != AE_IFREG)
            continue; // its data is skipped, not unpacked
        if (api->entry_size_is_set(entry) != 0
            && static_cast<uint64_t>(api->entry_size(entry)) > limits.unpacked_max - unpacked)
            return make_error(Exit::data, "it unpacks to more than %s",
                              size_words(limits.unpacked_max).c_str());
        std::string bytes;
        for (;;) {
            la_ssize_t n = api->read_data(a.get(), buffer, sizeof buffer);
            if (n < 0)
                return make_error(Exit::data, "it cannot be unpacked: %s",
                                  archive_said(api, a.get()).c_str());
            if (n == 0)
                break;
            unpacked += static_cast<uint64_t>(n);
            if (unpacked > limits.unpacked_max)
                return make_error(Exit::data, "it unpacks to more than %s",
                                  size_words(limits.unpacked_max).c_str());
            bytes.append(buffer, static_cast<size_t>(n));
        }
        if (kind == Kind::pptx) {
            parts.slides.emplace(*slide, std::move(bytes));
        } else {
            parts.main = std::move(bytes);
            parts.has_main = true;
        }
    }
    if (kind != Kind::pptx && !parts.has_main)
        return make_error(Exit::data, "it has no %s, as %s has", main_part(kind), kind_words(kind));
    if (kind == Kind::pptx && parts.slides.empty())
        return make_error(Exit::data, "it has no slides (ppt/slides/slide1.xml), as %s has",
                          kind_words(kind));
    return parts;
}

// Trailing white space and runs of blank lines made one blank line.
std::string tidy(std::string_view text) {
    std::string out;
    out.reserve(text.size());
    size_t newlines = 0;
    for (char c : text) {
        if (c == '\n') {
            while (!out.empty() && (out.back() == ' ' || out.back() == '\t'))
                out.pop_back();
            if (++newlines > 2)
                continue;
        } else {
            newlines = 0;
        }
        out += c;
    }
    while (!out.empty() && (out.back() == '\n' || out.back() == ' ' || out.back() == '\t'))
        out.pop_back();
    size_t start = out.find_first_not_of('\n');
    return start == std::string::npos ? std::string() : out.substr(start);
}

} // namespace

Result<std::string> xml_part_text(std::string_view xml_bytes, Kind kind) {
    SION_TRY(XmlDocument doc, read_xml_without_dtd(xml_bytes, "part.xml"));
    std::string out;
    if (kind == Kind::odt)
        odf(doc->children, out, 0, false);
    else
        ooxml(doc->children, out, 0);
    return text_for_json(out);
}

Result<std::string> office_text(int fd, Kind kind, const Limits& limits) {
    SION_TRY(Parts parts, unpack(fd, kind, limits));
    if (kind != Kind::pptx) {
        SION_TRY(std::string text, xml_part_text(parts.main, kind));
        return tidy(text);
    }
    std::string out;
    for (const auto& [number, part] : parts.slides) {
        auto text = xml_part_text(part, kind);
        if (!text)
            return text.error().context("slide " + std::to_string(number));
        out += (out.empty() ? "" : "\n\n") + std::string("[slide ") + std::to_string(number) + "]\n"
               + tidy(*text);
    }
    return out;
}

} // namespace sion::documents
