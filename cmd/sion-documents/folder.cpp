// SPDX-License-Identifier: MIT
// sion-documents' tools: what each does with the folder, and the cache of extracted texts.
#include "cmd/sion-documents/folder.hpp"

#include "lib/text.hpp"
#include "lib/utf8.hpp"

#include <fcntl.h>
#include <sys/stat.h>

#include <algorithm>
#include <atomic>
#include <optional>
#include <thread>
#include <vector>

namespace sion::documents_cmd {

namespace {

constexpr size_t k_listed_max = 1000;     // documents list_documents names
constexpr size_t k_walk_max = 100000;     // entries a walk visits
constexpr int64_t k_lines_default = 2000; // lines read_document gives
constexpr int64_t k_lines_max = 100000;
constexpr size_t k_read_bytes = size_t{256} << 10; // bytes of text read_document gives, at most
constexpr int64_t k_results_default = 20;          // documents search_documents names
constexpr int64_t k_results_max = 100;
constexpr size_t k_lines_shown = 3;  // matching lines shown a document
constexpr size_t k_line_shown = 200; // bytes of a matching line shown
constexpr size_t k_query_max = 1000;
constexpr size_t k_cache_max = size_t{512} << 20; // bytes of text kept in memory
constexpr size_t k_extract_threads = 4;           // documents extracted side by side, at most

constexpr const char* k_kinds_read =
    "Markdown, plain text, HTML, Word (.docx), OpenDocument (.odt), PowerPoint (.pptx) or PDF";

using mcp_serve::fail;
using mcp_serve::integer_property;
using mcp_serve::string_property;

Json tool(const char* name, const char* title, const char* description, Json properties,
          const std::vector<std::string>& required, bool writes) {
    mcp_serve::Hints hints;
    hints.read_only = !writes;
    hints.destructive = writes; // a write replaces the document of its path
    hints.idempotent = writes;
    return mcp_serve::tool(name, title, description, std::move(properties), required, hints);
}

bool hidden(std::string_view rel) {
    size_t slash = rel.rfind('/');
    std::string_view name = slash == std::string_view::npos ? rel : rel.substr(slash + 1);
    return !name.empty() && name.front() == '.';
}

// "cannot open 'x': …" from Confined::open_at as a read says it.
Error as_read(Error e) {
    const std::string& m = e.message();
    if (m.rfind("cannot open '", 0) == 0)
        return {e.exit(), "cannot read '" + m.substr(13)};
    return e;
}

// The path argument: a string, or the error to answer.
Result<std::string> path_argument(JsonView arguments, bool required) {
    auto path = required ? arguments.string("path") : arguments.string_or("path", ".");
    if (!path)
        return path.error();
    if (required && path->empty())
        return make_error(Exit::data, "member 'path' is empty: give a document's path");
    return std::string(*path);
}

void lower_ascii(std::string& s) {
    for (char& c : s)
        c = ascii_lower(c);
}

// The line of `text` around `at`, cut to k_line_shown bytes around the match when longer.
std::string line_around(std::string_view text, size_t at, size_t match) {
    size_t start = text.rfind('\n', at);
    start = start == std::string_view::npos ? 0 : start + 1;
    size_t end = text.find('\n', at);
    end = end == std::string_view::npos ? text.size() : end;
    std::string_view line = text.substr(start, end - start);
    if (!line.empty() && line.back() == '\r')
        line.remove_suffix(1);
    if (line.size() <= k_line_shown)
        return one_line(line);
    size_t from = at - start > k_line_shown / 2 ? at - start - k_line_shown / 2 : 0;
    while (from > 0 && (static_cast<unsigned char>(line[from]) & 0xC0) == 0x80)
        --from;
    size_t keep = utf8_boundary(line.substr(from), std::max(k_line_shown, match));
    return (from > 0 ? "…" : "") + one_line(line.substr(from, keep))
           + (from + keep < line.size() ? "…" : "");
}

} // namespace

Json Folder::tools() {
    Json list_props = Json::object();
    list_props.set("path", string_property("a subfolder, relative to the folder (all of it when "
                                           "absent)"));
    Json read_props = Json::object();
    read_props.set("path", string_property("the document's path, relative to the folder"));
    read_props.set("offset", integer_property("the first line to read, from 1 (1)", 1, INT32_MAX));
    read_props.set("limit", integer_property("how many lines to read (2000)", 1, k_lines_max));
    Json search_props = Json::object();
    search_props.set("query", string_property("the text to find, as it is: not a pattern"));
    search_props.set("limit", integer_property("how many documents to name, most hits first (20)",
                                               1, k_results_max));
    Json write_props = Json::object();
    write_props.set("path", string_property("the document's path, relative to the folder, ending "
                                            "in .md, .markdown or .txt"));
    write_props.set("text", string_property("the whole text of the document"));
    Json tools = Json::array();
    tools.push(tool("list_documents", "List documents",
                    "List the documents in the folder, or in one of its subfolders: each one's "
                    "path, kind and size, sorted by path. Hidden files and files that are not "
                    "documents are left out.",
                    std::move(list_props), {}, false));
    tools.push(tool("read_document", "Read a document",
                    "Read a document of the folder as text: Markdown, plain text, HTML, Word "
                    "(.docx), OpenDocument (.odt), PowerPoint (.pptx) or PDF. A long one comes in "
                    "parts: offset is the first line to read, limit how many.",
                    std::move(read_props), {"path"}, false));
    tools.push(tool("search_documents", "Search documents",
                    "Find the documents of the folder whose text holds the query (plain text, "
                    "letters A to Z in either case), most hits first, each with its first "
                    "matching lines and their numbers.",
                    std::move(search_props), {"query"}, false));
    tools.push(tool("write_document", "Write a document",
                    "Write a Markdown (.md, .markdown) or plain text (.txt) document in the "
                    "folder, replacing one of that path; missing subfolders are made.",
                    std::move(write_props), {"path", "text"}, true));
    return tools;
}

bool Folder::has_tool(std::string_view name) {
    return name == "list_documents" || name == "read_document" || name == "search_documents"
           || name == "write_document";
}

Answer Folder::call(std::string_view name, JsonView arguments) {
    if (arguments.exists() && !arguments.is_object())
        return fail(std::string(name) + " takes its arguments as an object");
    if (name == "list_documents")
        return list(arguments);
    if (name == "read_document")
        return read(arguments);
    if (name == "search_documents")
        return search(arguments);
    return write(arguments);
}

Answer Folder::list(JsonView arguments) const {
    auto given = path_argument(arguments, false);
    if (!given)
        return fail("list_documents: " + given.error().message());
    std::vector<std::string> lines;
    size_t more = 0;
    auto walked = m_root.walk(
        *given,
        [&](const Confined::Entry& e) {
            if (hidden(e.rel))
                return Confined::Visit::skip_dir;
            if (!e.is_file)
                return Confined::Visit::go_on;
            auto kind = documents::kind_of(e.rel);
            if (!kind)
                return Confined::Visit::go_on;
            if (lines.size() >= k_listed_max) {
                ++more;
                return Confined::Visit::go_on;
            }
            auto st = m_root.stat(e.rel);
            if (!st || !st->is_file)
                return Confined::Visit::go_on;
            lines.push_back(e.rel + " (" + documents::kind_name(*kind) + ", "
                            + std::to_string(st->size) + " bytes)");
            return Confined::Visit::go_on;
        },
        k_walk_max);
    if (!walked)
        return fail(walked.error().message());
    if (lines.empty())
        return {*given == "." ? "no documents in the folder" : "no documents in '" + *given + "'"};
    std::string text;
    for (const std::string& line : lines)
        text += line + "\n";
    if (more > 0)
        text += "… and " + std::to_string(more) + " more: list a subfolder\n";
    text.pop_back();
    return {text};
}

Result<Folder::Opened> Folder::open_document(const std::string& rel) const {
    auto kind = documents::kind_of(rel);
    if (!kind)
        return make_error(Exit::data,
                          "cannot read '%s': it is not a document sion-documents "
                          "reads (%s)",
                          rel.c_str(), k_kinds_read);
    auto opened = m_root.open_at(rel, O_RDONLY | O_NONBLOCK | O_NOCTTY);
    if (!opened)
        return as_read(std::move(opened).error());
    Opened o{std::move(*opened), *kind, {}};

    struct stat st {};

    if (::fstat(o.fd.get(), &st) != 0)
        return sys_error(Exit::io, errno, "cannot read '%s'", rel.c_str());
    if (S_ISDIR(st.st_mode))
        return make_error(Exit::data, "cannot read '%s': it is a directory", rel.c_str());
    if (!S_ISREG(st.st_mode))
        return make_error(Exit::data, "cannot read '%s': it is not a regular file", rel.c_str());
    o.key.size = static_cast<uint64_t>(st.st_size);
    o.key.mtime_ns = static_cast<int64_t>(st.st_mtim.tv_sec) * 1000000000 + st.st_mtim.tv_nsec;
    o.key.inode = static_cast<uint64_t>(st.st_ino);
    return o;
}

const Folder::Cached* Folder::kept(const std::string& rel, const Cached& key) const {
    auto it = m_cache.find(rel);
    if (it == m_cache.end() || it->second.size != key.size || it->second.mtime_ns != key.mtime_ns
        || it->second.inode != key.inode)
        return nullptr;
    return &it->second;
}

Result<const Folder::Cached*> Folder::settle(const std::string& rel, Cached fresh,
                                             Result<std::string> text) {
    if (text) {
        fresh.text = std::move(*text);
        fresh.lower = fresh.text;
        lower_ascii(fresh.lower);
    } else {
        fresh.failed = true;
        fresh.text = "cannot read '" + rel + "': " + one_line(text.error().message());
        // Only what the document is decides: a missing pdftotext or a time-out may pass.
        if (text.error().exit() != Exit::data)
            return Error(text.error().exit(), fresh.text);
    }
    keep(rel, std::move(fresh));
    return &m_cache.at(rel);
}

Result<const Folder::Cached*> Folder::text_of(const std::string& rel) {
    SION_TRY(Opened o, open_document(rel));
    if (const Cached* hit = kept(rel, o.key))
        return hit;
    return settle(rel, std::move(o.key), documents::extract(o.fd.get(), o.kind, m_limits));
}

void Folder::extract_all(const std::vector<std::string>& paths) {
    struct Pending {
        const std::string* rel;
        Opened opened;
        std::optional<Result<std::string>> text;
    };

    std::vector<Pending> pending;
    for (const std::string& rel : paths) {
        auto o = open_document(rel);
        if (o && kept(rel, o->key) == nullptr)
            pending.push_back({&rel, std::move(*o), std::nullopt});
    }
    // Documents are extracted side by side (pdftotext, above all, is a process a PDF):
    // lib/documents may be called from several threads at once; the cache is filled on this one
    // after.
    std::atomic<size_t> next{0};
    auto work = [&]() noexcept {
        for (size_t i = next++; i < pending.size(); i = next++)
            pending[i].text.emplace(
                documents::extract(pending[i].opened.fd.get(), pending[i].opened.kind, m_limits));
    };
    auto threads = std::min<size_t>(
        {k_extract_threads, std::max(1U, std::thread::hardware_concurrency()), pending.size()});
    std::vector<std::thread> workers;
    for (size_t t = 1; t < threads; ++t)
        workers.emplace_back(work);
    work();
    for (std::thread& w : workers)
        w.join();
    for (Pending& p : pending)
        (void)settle(*p.rel, std::move(p.opened.key), std::move(*p.text));
}

void Folder::keep(const std::string& rel, Cached cached) {
    if (auto it = m_cache.find(rel); it != m_cache.end()) {
        m_cached_bytes -= it->second.text.size() + it->second.lower.size();
        m_cache.erase(it);
    }
    size_t bytes = cached.text.size() + cached.lower.size();
    if (m_cached_bytes + bytes > k_cache_max) { // a bound, not a policy: start again
        m_cache.clear();
        m_cached_bytes = 0;
    }
    m_cached_bytes += bytes;
    m_cache.emplace(rel, std::move(cached));
}

Answer Folder::read(JsonView arguments) {
    auto given = path_argument(arguments, true);
    if (!given)
        return fail("read_document: " + given.error().message());
    auto offset = arguments.integer_or("offset", 1);
    auto limit = arguments.integer_or("limit", k_lines_default);
    if (!offset || !limit)
        return fail("read_document: " + (!offset ? offset : limit).error().message());
    if (*offset < 1 || *limit < 1 || *limit > k_lines_max)
        return fail("read_document: offset is a line from 1, limit a number of lines from 1 to "
                    + std::to_string(k_lines_max));
    auto rel = m_root.relative(*given);
    if (!rel)
        return fail("cannot read '" + *given + "': " + rel.error().message());
    auto cached = text_of(*rel);
    if (!cached)
        return fail(cached.error().message());
    if ((*cached)->failed)
        return fail((*cached)->text);
    std::string_view text = (*cached)->text;
    if (text.empty())
        return {"(the document '" + *given + "' has no text)"};
    // Lines [offset, offset + limit), within k_read_bytes.
    size_t line = 1;
    size_t at = 0;
    while (line < static_cast<size_t>(*offset) && at < text.size()) {
        size_t nl = text.find('\n', at);
        if (nl == std::string_view::npos) {
            at = text.size();
            break;
        }
        at = nl + 1;
        ++line;
    }
    size_t total = static_cast<size_t>(std::count(text.begin(), text.end(), '\n'))
                   + (text.empty() || text.back() == '\n' ? 0 : 1);
    if (static_cast<size_t>(*offset) > std::max<size_t>(total, 1))
        return fail("cannot read '" + *given + "' from line " + std::to_string(*offset)
                    + ": it has " + std::to_string(total) + " lines");
    size_t end = at;
    size_t last = line - 1;
    while (end < text.size() && last - line + 1 < static_cast<size_t>(*limit)) {
        size_t nl = text.find('\n', end);
        size_t next = nl == std::string_view::npos ? text.size() : nl + 1;
        if (next - at > k_read_bytes && last >= line)
            break;
        end = next;
        ++last;
    }
    std::string out(text.substr(at, end - at));
    if (out.size() > k_read_bytes) // one line longer than the bound
        out.resize(utf8_boundary(out, k_read_bytes));
    if (line > 1 || last < total)
        out += (out.empty() || out.back() == '\n' ? "" : "\n") + std::string("[lines ")
               + std::to_string(line) + "-" + std::to_string(last) + " of " + std::to_string(total)
               + (last < total ? ": read on with offset " + std::to_string(last + 1) : "") + "]";
    return {out};
}

Answer Folder::search(JsonView arguments) {
    auto query = arguments.string("query");
    if (!query)
        return fail("search_documents: " + query.error().message());
    auto limit = arguments.integer_or("limit", k_results_default);
    if (!limit)
        return fail("search_documents: " + limit.error().message());
    if (query->empty() || query->size() > k_query_max)
        return fail("search_documents: the query is 1 to " + std::to_string(k_query_max)
                    + " bytes");
    if (*limit < 1 || *limit > k_results_max)
        return fail("search_documents: limit is from 1 to " + std::to_string(k_results_max));
    std::string needle(*query);
    lower_ascii(needle);
    std::vector<std::string> paths;
    auto walked = m_root.walk(
        ".",
        [&](const Confined::Entry& e) {
            if (hidden(e.rel))
                return Confined::Visit::skip_dir;
            if (e.is_file && documents::kind_of(e.rel))
                paths.push_back(e.rel);
            return Confined::Visit::go_on;
        },
        k_walk_max);
    if (!walked)
        return fail(walked.error().message());

    struct Found {
        const std::string* path;
        size_t hits;
        std::string lines;
    };

    std::vector<Found> found;
    std::vector<std::string> unread;
    extract_all(paths);
    for (const std::string& rel : paths) {
        auto cached = text_of(rel);
        if (!cached || (*cached)->failed) {
            unread.push_back(cached ? (*cached)->text : cached.error().message());
            continue;
        }
        const std::string& lower = (*cached)->lower;
        Found f{&rel, 0, {}};
        size_t shown = 0;
        size_t line = 1;
        size_t counted_to = 0;
        size_t last_line = 0;
        for (size_t at = lower.find(needle); at != std::string::npos;
             at = lower.find(needle, at + needle.size())) {
            ++f.hits;
            if (shown >= k_lines_shown)
                continue;
            line += static_cast<size_t>(std::count(lower.begin() + static_cast<long>(counted_to),
                                                   lower.begin() + static_cast<long>(at), '\n'));
            counted_to = at;
            if (line == last_line)
                continue;
            last_line = line;
            ++shown;
            f.lines += "  " + std::to_string(line) + ": "
                       + line_around((*cached)->text, at, needle.size()) + "\n";
        }
        if (f.hits > 0)
            found.push_back(std::move(f));
    }
    std::stable_sort(found.begin(), found.end(),
                     [](const Found& a, const Found& b) { return a.hits > b.hits; });
    std::string shown_query = one_line(*query);
    std::string text;
    if (found.empty())
        text = "no document holds '" + shown_query + "'\n";
    else
        text = std::to_string(found.size())
               + (found.size() == 1 ? " document holds '" : " documents hold '") + shown_query
               + "'\n";
    for (size_t i = 0; i < found.size() && i < static_cast<size_t>(*limit); ++i)
        text += *found[i].path + " (" + std::to_string(found[i].hits)
                + (found[i].hits == 1 ? " hit)\n" : " hits)\n") + found[i].lines;
    if (found.size() > static_cast<size_t>(*limit))
        text += "… and " + std::to_string(found.size() - static_cast<size_t>(*limit))
                + " more with fewer hits\n";
    for (const std::string& why : unread)
        text += "not searched: " + why + "\n";
    text.pop_back();
    return {text};
}

Answer Folder::write(JsonView arguments) {
    auto given = path_argument(arguments, true);
    if (!given)
        return fail("write_document: " + given.error().message());
    auto text = arguments.string("text");
    if (!text)
        return fail("write_document: " + text.error().message());
    auto kind = documents::kind_of(*given);
    if (!kind || !documents::writable(*kind))
        return fail("cannot write '" + *given
                    + "': only Markdown and plain text are written (.md, .markdown, .txt)");
    if (text->size() > m_limits.text_max)
        return fail("cannot write '" + *given + "': the text is longer than "
                    + documents::size_words(m_limits.text_max));
    auto written = m_root.write(*given, *text);
    if (!written)
        return fail(written.error().message());
    return {"wrote '" + *given + "' (" + std::to_string(text->size()) + " bytes)"};
}

} // namespace sion::documents_cmd
