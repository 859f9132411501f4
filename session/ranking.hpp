// SPDX-License-Identifier: MIT
// Tool search (seed 001, "What a model is sent"): past 40 tools a model is not shown them all, and
// finds the MCP servers' tools by asking. ToolIndex ranks tools for a query by BM25 over the words
// of each tool's name (counted three times), its description and its input schema (the
// properties' names and descriptions), as search_words() makes them; a tool the query names
// comes first, and "select:a,b" asks for those tools alone.
//
// The index is in memory, built once a session's tools are known: 10,000 tools take a few
// milliseconds to index and well under one to search (tests/bench/bench_ranking.cpp, beside
// SQLite FTS5's bm25() over the same words).
#pragma once

#include "lib/json.hpp"

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace sion::session {

// The words of `text` as the index counts them: split at anything that is not a letter or a digit
// and where camelCase changes case ("readFile" → read file, "HTTPServer" → http server),
// lowercased, plurals made one ("files" → file, "directories" → directory, "matches" → match), and
// common words ("the", "a", "of", …) and single characters left out. Bytes of UTF-8 beyond ASCII
// are letters, kept as they are.
[[nodiscard]] std::vector<std::string> search_words(std::string_view text);

// The text of an input schema the index reads: its properties' names and descriptions, nested
// objects' and arrays' items' too, with spaces between them.
[[nodiscard]] std::string schema_text(JsonView schema);

class ToolIndex {
public:
    // Adds a tool, numbered from 0 in the order added.
    void add(std::string_view name, std::string_view description, JsonView input_schema);

    [[nodiscard]] size_t size() const { return m_names.size(); }
    [[nodiscard]] const std::string& name(size_t tool) const { return m_names[tool]; }

    // The numbers of the best `limit` tools for `query`, best first. "select:a,b" gives the tools
    // of those names, in that order, each once, and nothing for a name there is none of.
    // Otherwise the tools whose names the query holds as words of its own (split at blanks and
    // commas, any case) come first, in the query's order; then the others with a BM25 score above
    // zero (k1 1.2, b 0.75), highest first, ties in the order added.
    [[nodiscard]] std::vector<size_t> search(std::string_view query, size_t limit) const;

private:
    struct Posting {
        uint32_t tool;
        uint32_t count; // how often the word is in the tool's words
    };

    std::vector<std::string> m_names;
    std::unordered_map<std::string, size_t> m_by_name; // lowercased names, the first of each
    std::vector<uint32_t> m_lengths;                   // each tool's word count (its name thrice)
    uint64_t m_total_length = 0;
    std::unordered_map<std::string, std::vector<Posting>> m_postings;
};

} // namespace sion::session
