// SPDX-License-Identifier: MIT
#include "lib/web.hpp"

#include "lib/address.hpp"
#include "lib/child.hpp"
#include "lib/curl_api.hpp"
#include "lib/loaded_libs.hpp"
#include "lib/programs.hpp"
#include "lib/text.hpp"
#include "lib/utf8.hpp"

#include <iconv.h>

#include <algorithm>
#include <cerrno>
#include <climits>
#include <cstring>
#include <memory>
#include <mutex>

namespace sion::web {

namespace {

constexpr int k_max_depth = 512;

bool is_space(unsigned char c) {
    return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v';
}

bool one_of(std::string_view name, std::initializer_list<std::string_view> names) {
    return std::find(names.begin(), names.end(), name) != names.end();
}

// Text written out with blocks apart, whitespace of inline text made one space.
class Writer {
public:
    // At least `lines` line breaks before what comes next (1: a new line, 2: a blank line).
    void block(int lines) { m_breaks = std::max(m_breaks, lines); }

    void inline_text(std::string_view text) {
        for (char c : text) {
            if (is_space(static_cast<unsigned char>(c))) {
                m_space = true;
                continue;
            }
            flush();
            m_out += c;
        }
    }

    void verbatim(std::string_view text) {
        flush();
        m_out += text;
    }

    // Text that starts a block ("- ", "# "): written as the block's first.
    void lead(std::string_view text) {
        flush();
        m_out += text;
        m_space = false;
    }

    void cell_apart() {
        if (!m_out.empty() && m_out.back() != '\n' && m_breaks == 0) {
            m_out += " | ";
            m_space = false;
        }
    }

    std::string take() {
        while (!m_out.empty() && (m_out.back() == '\n' || m_out.back() == ' '))
            m_out.pop_back();
        return std::move(m_out);
    }

    [[nodiscard]] size_t size() const { return m_out.size(); }

    [[nodiscard]] std::string_view since(size_t at) const {
        return std::string_view(m_out).substr(std::min(at, m_out.size()));
    }

private:
    void flush() {
        if (m_breaks > 0 && !m_out.empty()) {
            while (!m_out.empty() && m_out.back() == ' ')
                m_out.pop_back();
            int have = 0;
            for (auto it = m_out.rbegin(); it != m_out.rend() && *it == '\n'; ++it)
                ++have;
            m_out.append(static_cast<size_t>(std::max(0, m_breaks - have)), '\n');
        } else if (m_space && !m_out.empty() && m_out.back() != '\n' && m_out.back() != ' ') {
            m_out += ' ';
        }
        m_breaks = 0;
        m_space = false;
    }

    std::string m_out;
    int m_breaks = 0;
    bool m_space = false;
};

class Renderer {
public:
    Renderer(std::string_view url) : m_url(url) {}

    void node(const xmlNode* n, int depth, bool pre) {
        if (depth > k_max_depth)
            return;
        for (; n != nullptr; n = n->next) {
            if (n->type == XML_TEXT_NODE || n->type == XML_CDATA_SECTION_NODE) {
                std::string_view text =
                    n->content != nullptr ? reinterpret_cast<const char*>(n->content) : "";
                if (pre)
                    m_out.verbatim(text);
                else
                    m_out.inline_text(text);
            } else if (n->type == XML_ELEMENT_NODE) {
                element(n, depth, pre);
            }
        }
    }

    std::string title;
    Writer m_out;

private:
    void element(const xmlNode* n, int depth, bool pre) {
        std::string name = ascii_lower(xml_name(n));
        if (name == "title") {
            if (title.empty()) {
                Writer t;
                for (const xmlNode* c = n->children; c != nullptr; c = c->next)
                    if (c->type == XML_TEXT_NODE && c->content != nullptr)
                        t.inline_text(reinterpret_cast<const char*>(c->content));
                title = t.take();
            }
            return;
        }
        if (one_of(name, {"script", "style", "noscript", "template", "head", "svg", "math",
                          "iframe", "object", "embed", "select", "input", "textarea", "button",
                          "canvas", "audio", "video", "map"})) {
            if (name == "head")
                node(n->children, depth + 1, pre); // its title only: the rest is left out above
            return;
        }
        if (name.size() == 2 && name[0] == 'h' && name[1] >= '1' && name[1] <= '6') {
            m_out.block(2);
            m_out.lead(std::string(static_cast<size_t>(name[1] - '0'), '#') + " ");
            node(n->children, depth + 1, pre);
            m_out.block(2);
            return;
        }
        if (name == "br") {
            m_out.block(1);
            return;
        }
        if (name == "hr") {
            m_out.block(2);
            return;
        }
        if (name == "pre") {
            m_out.block(2);
            node(n->children, depth + 1, true);
            m_out.block(2);
            return;
        }
        if (name == "ul" || name == "ol" || name == "dl") {
            m_lists.push_back(name == "ol" ? 1 : 0);
            m_out.block(m_lists.size() > 1 ? 1 : 2);
            node(n->children, depth + 1, pre);
            m_lists.pop_back();
            m_out.block(m_lists.empty() ? 2 : 1);
            return;
        }
        if (name == "li") {
            m_out.block(1);
            std::string indent((m_lists.empty() ? 0 : m_lists.size() - 1) * 2, ' ');
            if (!m_lists.empty() && m_lists.back() > 0)
                m_out.lead(indent + std::to_string(m_lists.back()++) + ". ");
            else
                m_out.lead(indent + "- ");
            node(n->children, depth + 1, pre);
            m_out.block(1);
            return;
        }
        if (name == "tr") {
            m_out.block(1);
            node(n->children, depth + 1, pre);
            m_out.block(1);
            return;
        }
        if (name == "td" || name == "th") {
            m_out.cell_apart();
            node(n->children, depth + 1, pre);
            return;
        }
        if (name == "img") {
            std::string alt = one_line(xml_attribute(n, "alt", true));
            if (!alt.empty())
                m_out.inline_text(" [" + alt + "] ");
            return;
        }
        if (name == "a") {
            size_t at = m_out.size();
            node(n->children, depth + 1, pre);
            std::string href = xml_attribute(n, "href", true);
            if (href.empty() || href.front() == '#')
                return;
            auto absolute = resolve_location(m_url, href);
            std::string shown(trim_space(m_out.since(at)));
            if (absolute && *absolute != shown && *absolute + "/" != shown)
                m_out.inline_text(" <" + *absolute + ">");
            return;
        }
        bool block = one_of(
            name, {"p",       "div",    "section",    "article", "main",   "header", "footer",
                   "nav",     "aside",  "blockquote", "table",   "thead",  "tbody",  "tfoot",
                   "caption", "figure", "figcaption", "address", "dt",     "dd",     "details",
                   "summary", "form",   "fieldset",   "body",    "center", "dialog"});
        if (block)
            m_out.block(name == "dt" || name == "dd" ? 1 : 2);
        node(n->children, depth + 1, pre);
        if (block)
            m_out.block(name == "dt" || name == "dd" ? 1 : 2);
    }

    std::string m_url;
    std::vector<int> m_lists; // each open list's next number, 0 for an unordered one
};


} // namespace

MediaType parse_media_type(std::string_view content_type) {
    MediaType m;
    size_t semi = content_type.find(';');
    m.type = ascii_lower(trim_space(content_type.substr(0, semi)));
    while (semi != std::string_view::npos) {
        std::string_view rest = content_type.substr(semi + 1);
        semi = rest.find(';');
        std::string_view param = trim_space(rest.substr(0, semi));
        size_t eq = param.find('=');
        if (eq != std::string_view::npos
            && ascii_iequals(trim_space(param.substr(0, eq)), "charset")) {
            std::string_view value = trim_space(param.substr(eq + 1));
            if (value.size() >= 2 && value.front() == '"' && value.back() == '"')
                value = value.substr(1, value.size() - 2);
            m.charset = ascii_lower(value);
        }
        content_type = rest;
    }
    return m;
}

Status html_ready() {
    SION_TRY(const XmlApi* xml, xml_api());
    (void)xml;
    return {};
}

Html html_to_text(std::string_view html, std::string_view charset, std::string_view url) {
    Html out;
    auto xml = xml_api();
    if (!xml) // without libxml2 a page has no text: html_ready() says why
        return out;
    std::string url_z(url);
    std::string charset_z(charset);
    int options = HTML_PARSE_RECOVER | HTML_PARSE_NOERROR | HTML_PARSE_NOWARNING | HTML_PARSE_NONET
                  | HTML_PARSE_NOBLANKS;
    int size = static_cast<int>(std::min<size_t>(html.size(), INT_MAX));
    htmlDocPtr doc = (*xml)->html_read_memory(html.data(), size, url_z.c_str(),
                                    charset_z.empty() ? nullptr : charset_z.c_str(), options);
    if (doc == nullptr && !charset_z.empty()) // a charset libxml2 does not know: its own guess
        doc = (*xml)->html_read_memory(html.data(), size, url_z.c_str(), nullptr, options);
    if (doc == nullptr)
        return out;
    std::unique_ptr<xmlDoc, void (*)(xmlDocPtr)> owned(doc, (*xml)->free_doc);
    Renderer r(url);
    r.node(doc->children, 0, false);
    out.title = text_for_json(r.title);
    out.text = text_for_json(r.m_out.take());
    return out;
}

Result<PdfText> pdf_to_text(int fd, std::chrono::milliseconds time, size_t max) {
    auto program = find_program("pdftotext");
    if (!program)
        return make_error(Exit::unavailable, "reading a PDF takes pdftotext (Debian package "
                                             "poppler-utils), which is not installed");
    ChildSpec spec;
    spec.argv = {*program, "-q", "-enc", "UTF-8", "-nopgbrk", "/dev/fd/3", "-"};
    spec.env = env_keep({"PATH", "LANG", "LC_ALL"});
    spec.extra_fds = {{fd, 3}};
    spec.time_limit = time;
    SION_TRY(RunResult r, sion::run(spec, "", max));
    if (r.timed_out)
        return make_error(Exit::timeout, "it took longer than %lld s",
                          static_cast<long long>(
                              std::chrono::duration_cast<std::chrono::seconds>(time).count()));
    if (r.status != 0)
        return make_error(Exit::data, "%s", first_said(r, "pdftotext").c_str());
    PdfText out;
    out.cut = r.out_truncated;
    out.text = text_for_json(r.out);
    return out;
}

Result<std::string> to_utf8(std::string_view bytes, std::string_view charset) {
    std::string cs = ascii_lower(charset);
    if (cs.empty() || cs == "utf-8" || cs == "utf8" || cs == "us-ascii" || cs == "ascii")
        return text_for_json(bytes);
    iconv_t cd = ::iconv_open("UTF-8", cs.c_str());
    if (cd == reinterpret_cast<iconv_t>(-1))
        return make_error(Exit::data, "unknown charset '%s'", one_line(charset).c_str());
    std::string out;
    std::string in(bytes);
    char* from = in.data();
    size_t left = in.size();
    char buffer[65536];
    while (left > 0) {
        char* to = buffer;
        size_t room = sizeof buffer;
        size_t rc = ::iconv(cd, &from, &left, &to, &room);
        out.append(buffer, static_cast<size_t>(to - buffer));
        if (rc == static_cast<size_t>(-1)) {
            if (errno == E2BIG)
                continue;
            // A byte the charset does not have: U+FFFD, and on past it.
            out += "\xEF\xBF\xBD";
            ++from;
            --left;
        }
    }
    ::iconv_close(cd);
    return text_for_json(out);
}

Result<std::string> resolve_location(std::string_view base, std::string_view location) {
    SION_TRY(const CurlApi* api, curl_api());
    std::unique_ptr<CURLU, void (*)(CURLU*)> u(api->url(), api->url_cleanup);
    if (!u)
        return make_error(Exit::os, "cannot make a URL handle");
    std::string b(base);
    std::string l(location);
    if (api->url_set(u.get(), CURLUPART_URL, b.c_str(), 0) != CURLUE_OK
        || api->url_set(u.get(), CURLUPART_URL, l.c_str(), CURLU_URLENCODE) != CURLUE_OK)
        return make_error(Exit::data, "bad address '%s'", one_line(location).c_str());
    char* out = nullptr;
    if (api->url_get(u.get(), CURLUPART_URL, &out, 0) != CURLUE_OK || out == nullptr)
        return make_error(Exit::data, "bad address '%s'", one_line(location).c_str());
    std::string absolute(out);
    api->free(out);
    SION_TRY(Destination d, split_url(absolute));
    (void)d;
    return absolute;
}

} // namespace sion::web
