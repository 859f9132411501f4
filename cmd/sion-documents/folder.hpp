// SPDX-License-Identifier: MIT
// The four tools of sion-documents over one folder (sion-documents(1)): list_documents,
// read_document, search_documents and write_document, their definitions as tools/list gives them,
// and the texts already extracted, kept in memory by path, size, modification time and inode so
// that a second search reads no document again.
//
// Every path is looked up beneath the folder with no link followed (lib/confined.hpp,
// Links::refused). A call never throws and never ends the program: what goes wrong is an answer
// with is_error set and one line saying why ("cannot read 'x.docx': it unpacks to more than 64
// MiB").
//
// Threads: one thread at a time (the cache is not locked); a search extracts the documents it has
// not kept on up to four threads of its own, joined before it answers.
#pragma once

#include "lib/confined.hpp"
#include "lib/documents.hpp"
#include "lib/json.hpp"
#include "lib/mcp_serve.hpp"

#include <map>
#include <string>
#include <string_view>
#include <vector>

namespace sion::documents_cmd {

using mcp_serve::Answer;

class Folder final : public mcp_serve::Tools {
public:
    explicit Folder(Confined root, documents::Limits limits = {})
        : m_root(std::move(root)), m_limits(limits) {}

    [[nodiscard]] std::string_view server_name() const override { return "sion-documents"; }

    // tools/list's "tools": the four, with their input schemas and annotations.
    [[nodiscard]] Json list() const override { return tools(); }
    [[nodiscard]] static Json tools();

    // Whether `name` is one of the four.
    [[nodiscard]] bool has(std::string_view name) const override { return has_tool(name); }
    [[nodiscard]] static bool has_tool(std::string_view name);

    // A tools/call of `name` (one of the four) with `arguments` (an object, or empty).
    [[nodiscard]] Answer call(std::string_view name, JsonView arguments) override;

private:
    struct Cached {
        uint64_t size = 0;
        int64_t mtime_ns = 0;
        uint64_t inode = 0;
        bool failed = false;
        std::string text;  // the text, or why it could not be had
        std::string lower; // the text with ASCII letters lowered, for search
    };

    [[nodiscard]] Answer list(JsonView arguments) const;
    [[nodiscard]] Answer read(JsonView arguments);
    [[nodiscard]] Answer search(JsonView arguments);
    [[nodiscard]] Answer write(JsonView arguments);

    // A document opened beneath the folder, and what the cache knows it by.
    struct Opened {
        Fd fd;
        documents::Kind kind;
        Cached key; // size, mtime_ns and inode
    };

    // The text of the document `rel`, extracted now or kept from before: the cache's entry, or
    // the one line saying why it cannot be read.
    [[nodiscard]] Result<const Cached*> text_of(const std::string& rel);
    // Extracts, several at a time, those of `paths` the cache does not hold as they are now.
    void extract_all(const std::vector<std::string>& paths);
    [[nodiscard]] Result<Opened> open_document(const std::string& rel) const;
    [[nodiscard]] const Cached* kept(const std::string& rel, const Cached& key) const;
    // Keeps what extracting gave (the text, or why there is none) and returns the entry; a
    // failure that is not the document's (a missing pdftotext, a time-out) is returned, not kept.
    [[nodiscard]] Result<const Cached*> settle(const std::string& rel, Cached fresh,
                                               Result<std::string> text);
    void keep(const std::string& rel, Cached cached);

    Confined m_root;
    documents::Limits m_limits;
    std::map<std::string, Cached> m_cache;
    size_t m_cached_bytes = 0;
};

} // namespace sion::documents_cmd
