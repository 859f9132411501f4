// SPDX-License-Identifier: MIT
// The engine of search_files: a regular expression (RE2's syntax, matched in time linear in what is
// searched, whatever the pattern) over the lines of files beneath a Confined root, shown as grep -n
// shows them with file names and context:
//
//   src/main.rs-11-fn helper() {
//   src/main.rs:12:    let total = count();
//   src/main.rs-13-}
//   --
//   src/lib.rs:3:pub fn count() -> usize {
//
// A matching line is "path:N:text", a line around one "path-N-text"; "--" stands between groups
// that are not adjacent (with context only). A pattern matches within a line, never across one
// ("^" and "$" are a line's start and end; "\s" and "[^x]" match no newline); a line's "\r" before
// its "\n" is not shown. A line longer than max_line bytes is shown cut, around its first match:
// "[… 4000 characters cut] …text… [… 90000 more characters cut]". Text that is not UTF-8 is shown
// with U+FFFD for each bad byte. A file holding a NUL byte is binary and not searched, nor is one
// larger than max_file; both are counted.
//
// What is shown stops at max_lines matching lines or max_bytes bytes, whichever comes first; the
// search goes on, only counting, so that the report can say how many more there were.
//
// Threads: a Searcher is immutable once compiled and may search from several threads at once, each
// into its own SearchReport. search() of a directory reads and searches its files on up to four
// threads of its own (as many as there are cores), joined before it returns; what it reports is
// the same, in the same order, as one thread's.
#pragma once

#include "lib/confined.hpp"
#include "lib/result.hpp"
#include "session/code/glob.hpp"
#include "session/code/needle.hpp"

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace re2 {
class RE2;
}

namespace sion::code {

struct SearchOptions {
    bool ignore_case = false;
    size_t context = 2;                 // lines shown before and after each match
    size_t max_lines = 200;             // matching lines shown
    size_t max_bytes = 30000;           // bytes of text shown
    size_t max_line = 500;              // bytes of one line shown
    size_t max_file = size_t{16} << 20; // a larger file is passed over
    size_t max_entries = 1000000;       // entries a walk visits (Confined::walk)
};

struct SearchReport {
    std::string text;         // the lines shown, each ending in '\n'
    size_t searched = 0;      // files searched
    size_t matched_files = 0; // files with a matching line
    size_t shown_files = 0;   // files with a matching line shown
    size_t matched_lines = 0; // matching lines, shown or not
    size_t shown_lines = 0;   // matching lines shown
    size_t binary = 0;        // files passed over as binary
    size_t too_large = 0;     // files passed over as larger than max_file
    size_t unreadable = 0;    // files that could not be read (gone meanwhile, refused)
    bool full = false;        // max_lines or max_bytes was reached: the rest is only counted
    bool walk_cut = false;    // the walk stopped at max_entries
    // Where the last line shown was, for the "--" between groups.
    std::string last_path;
    size_t last_line = 0;
};

class Searcher {
public:
    // Exit::data for a pattern RE2 cannot read, "invalid regular expression '(': missing ): (",
    // or an empty one, "the pattern is empty".
    [[nodiscard]] static Result<Searcher> compile(std::string_view pattern,
                                                  const SearchOptions& options);

    // Searches `text`, the bytes of the file shown as `path`, into `report`.
    void search_text(std::string_view path, std::string_view text, SearchReport& report) const;

    // Searches `path` beneath `root`: a file (any glob aside), or every regular file below a
    // directory, in Confined::walk's order, whose path relative to that directory `only` matches
    // when it is given. Links are not followed (but `path` itself may be one that stays inside).
    // An Error is `path`'s own (outside, missing); a file below it that cannot be read is counted.
    [[nodiscard]] Status search(const Confined& root, std::string_view path, const Glob* only,
                                SearchReport& report) const;

    // The report as the model sees it: its lines, then a line for what was not shown and one for
    // what was passed over, or "no line matches 'PATTERN'" and the same.
    [[nodiscard]] std::string render(const SearchReport& report) const;

    [[nodiscard]] const std::string& pattern() const { return m_pattern; }

private:
    Searcher() = default;
    struct Emitter;

    // The next match at or after `from`, a line's start: an offset on its line no later than
    // where it starts, and exactly there when the line is longer than max_line; or npos.
    [[nodiscard]] size_t find(std::string_view text, size_t from) const;
    // RE2's leftmost match in text[from, to): its offset, or npos.
    [[nodiscard]] size_t regex_find(std::string_view text, size_t from, size_t to) const;
    void search_file(const Confined& root, const std::string& rel, SearchReport& report) const;

    class Pool;
    void merge(const Confined& root, const std::string& rel, SearchReport& part,
               SearchReport& all) const;

    std::shared_ptr<const re2::RE2> m_re;
    SearchOptions m_options;
    std::string m_pattern;
    // How a match is found: the needle is the pattern (plain text, found without RE2), or a
    // literal every match holds (RE2 looks only at the lines that hold it), or there is none.
    enum class Mode { needle, filtered, regex };
    Mode m_mode = Mode::regex;
    Needle m_needle;
};

// Appends `bytes` to `out` with U+FFFD for each byte that is not part of well-formed UTF-8: what a
// model is shown must be UTF-8, whatever a file or a file's name holds.
void append_utf8(std::string& out, std::string_view bytes);

} // namespace sion::code
