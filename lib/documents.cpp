// SPDX-License-Identifier: MIT
// Documents as text: which kind a name says, and the text of each kind but the zip containers'
// (lib/office_text.cpp), each bounded before it is read.
#include "lib/documents.hpp"

#include "lib/fd.hpp"
#include "lib/text.hpp"
#include "lib/utf8.hpp"
#include "lib/web.hpp"

#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace sion::documents {

namespace {

struct Named {
    std::string_view extension;
    Kind kind;
};

constexpr Named k_kinds[] = {
    {".md", Kind::markdown}, {".markdown", Kind::markdown}, {".txt", Kind::text},
    {".html", Kind::html},   {".htm", Kind::html},          {".docx", Kind::docx},
    {".odt", Kind::odt},     {".pptx", Kind::pptx},         {".pdf", Kind::pdf},
};

// The whole file at `fd` from its start, at most `max` bytes (more is an error).
Result<std::string> read_bounded(int fd, size_t max) {
    struct stat st {};

    if (::fstat(fd, &st) != 0)
        return sys_error(Exit::io, errno, "cannot look at it");
    if (static_cast<uint64_t>(st.st_size) > max)
        return make_error(Exit::data, "it is larger than %s", size_words(max).c_str());
    if (::lseek(fd, 0, SEEK_SET) < 0)
        return sys_error(Exit::io, errno, "cannot read it");
    auto bytes = read_all(fd, max);
    if (!bytes && bytes.error().exit() == Exit::data) // it grew past the bound meanwhile
        return make_error(Exit::data, "it is larger than %s", size_words(max).c_str());
    return bytes;
}

Result<std::string> html_text(std::string_view bytes) {
    SION_CHECK(web::html_ready());
    // No address: a relative link has nothing to be resolved against, and is shown as its text.
    web::Html html = web::html_to_text(bytes, "", "");
    if (html.title.empty())
        return std::move(html.text);
    if (html.text.compare(0, html.title.size(), html.title) == 0)
        return std::move(html.text);
    return html.title + "\n\n" + html.text;
}

Result<std::string> pdf_text(int fd, const Limits& limits) {
    if (::lseek(fd, 0, SEEK_SET) < 0)
        return sys_error(Exit::io, errno, "cannot read it");
    auto text = web::pdf_to_text(fd, limits.pdf_time, limits.text_max + 1);
    if (!text && text.error().exit() == Exit::data)
        return make_error(Exit::data, "pdftotext cannot read it: %s",
                          text.error().message().c_str());
    if (!text && text.error().exit() == Exit::timeout)
        return make_error(
            Exit::timeout, "pdftotext took longer than %lld s",
            static_cast<long long>(
                std::chrono::duration_cast<std::chrono::seconds>(limits.pdf_time).count()));
    if (!text)
        return std::move(text).error();
    if (text->cut)
        return make_error(Exit::data, "its text is longer than %s",
                          size_words(limits.text_max).c_str());
    return std::move(text->text);
}

} // namespace

std::optional<Kind> kind_of(std::string_view name) {
    size_t slash = name.rfind('/');
    std::string_view base = slash == std::string_view::npos ? name : name.substr(slash + 1);
    size_t dot = base.rfind('.');
    if (dot == std::string_view::npos || dot == 0)
        return std::nullopt;
    std::string extension = ascii_lower(base.substr(dot));
    for (const Named& n : k_kinds)
        if (n.extension == extension)
            return n.kind;
    return std::nullopt;
}

const char* kind_name(Kind kind) {
    switch (kind) {
    case Kind::markdown:
        return "markdown";
    case Kind::text:
        return "text";
    case Kind::html:
        return "html";
    case Kind::docx:
        return "docx";
    case Kind::odt:
        return "odt";
    case Kind::pptx:
        return "pptx";
    case Kind::pdf:
        return "pdf";
    }
    return "text";
}

bool writable(Kind kind) {
    return kind == Kind::markdown || kind == Kind::text;
}

std::string size_words(size_t bytes) {
    if (bytes >= (size_t{1} << 20) && bytes % (size_t{1} << 20) == 0)
        return std::to_string(bytes >> 20) + " MiB";
    if (bytes >= 1024 && bytes % 1024 == 0)
        return std::to_string(bytes >> 10) + " KiB";
    return std::to_string(bytes) + " bytes";
}

Result<std::string> plain_text(std::string_view bytes) {
    if (bytes.substr(0, 3) == "\xEF\xBB\xBF")
        bytes.remove_prefix(3);
    if (invalid_utf8_at(bytes) != std::string_view::npos
        || bytes.find('\0') != std::string_view::npos)
        return make_error(Exit::data, "it is not UTF-8 text");
    return std::string(bytes);
}

Result<std::string> extract(int fd, Kind kind, const Limits& limits) {
    Result<std::string> text = std::string();
    switch (kind) {
    case Kind::markdown:
    case Kind::text: {
        SION_TRY(std::string bytes, read_bounded(fd, std::min(limits.file_max, limits.text_max)));
        text = plain_text(bytes);
        break;
    }
    case Kind::html: {
        SION_TRY(std::string bytes, read_bounded(fd, limits.file_max));
        text = html_text(bytes);
        break;
    }
    case Kind::docx:
    case Kind::odt:
    case Kind::pptx:
    case Kind::pdf: {
        // Read by libarchive or pdftotext, not here: bounded by its size first.
        struct stat st {};

        if (::fstat(fd, &st) != 0)
            return sys_error(Exit::io, errno, "cannot look at it");
        if (static_cast<uint64_t>(st.st_size) > limits.file_max)
            return make_error(Exit::data, "it is larger than %s",
                              size_words(limits.file_max).c_str());
        text = kind == Kind::pdf ? pdf_text(fd, limits) : office_text(fd, kind, limits);
        break;
    }
    }
    if (text && text->size() > limits.text_max)
        return make_error(Exit::data, "its text is longer than %s",
                          size_words(limits.text_max).c_str());
    return text;
}

} // namespace sion::documents
