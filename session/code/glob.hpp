// SPDX-License-Identifier: MIT
// Glob patterns, as find_files takes them and search_files filters by them: a pure matcher of
// '/'-separated relative paths, looking nothing up.
//
// The syntax:
//   *        any characters but '/' (a name's leading '.' too: hidden files are not special)
//   ?        one character but '/' (a UTF-8 character, not a byte)
//   [abc]    one of the characters; [a-z] a range; [!abc] or [^abc] none of them; ']' first is
//            itself, and '\' escapes inside
//   {a,b}    either alternative, nested as deep as need be ("*.{ts,tsx}", "{src,lib}/**")
//   **       as a whole name: any number of names, none included ("src/**/*.rs" matches
//            "src/main.rs" and "src/a/b/c.rs"), but at the end at least one ("src/**" is what is
//            below src, not src; "**" alone matches everything); elsewhere ("a**b") it is '*'
//   \x       x itself
// A pattern (each alternative of a brace, once expanded) without '/' matches a name at any depth:
// "*.rs" is "**/*.rs". One with '/' is anchored at the directory searched; a leading "./" or "/"
// only anchors ("./*.rs" is the top level's). A trailing '/' means everything below: "src/" is
// "src/**". Matching is case-sensitive and bytewise but for '?' and classes.
//
// Errors (Exit::data), for a pattern that cannot be read as written: "the pattern is empty",
// "unclosed '[' in pattern 'a/[bc'", "unclosed '{' in pattern '{a,b'", "the pattern 'a/../b' has
// a '..': name the directory to search instead", "the pattern '{a,b}{c,d}…' has more than 1024
// alternatives", "the pattern is longer than 4096 bytes".
//
// Threads: a Glob is immutable once compiled; matches() may be called from several at once.
#pragma once

#include "lib/result.hpp"

#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace sion::code {

class Glob {
public:
    [[nodiscard]] static Result<Glob> compile(std::string_view pattern);

    // Whether `path` ("src/a/b.rs", relative to the directory searched, no "." or ".." in it)
    // matches.
    [[nodiscard]] bool matches(std::string_view path) const;
    // Whether something below the directory `dir` (relative as above; "" is the top) could match:
    // a walk need not enter a directory for which this is false.
    [[nodiscard]] bool may_match_below(std::string_view dir) const;

    [[nodiscard]] const std::string& pattern() const { return m_pattern; }

private:
    Glob() = default;
    // Each alternative as its names' patterns; "**" is any number of names.
    std::vector<std::vector<std::string>> m_alternatives;
    std::string m_pattern;
};

// `pattern` cut before its first name holding a glob character (* ? [ { \), keeping its last name
// in the rest: "src/app/**/*.ts" is {"src/app", "**/*.ts"}, "src/main.rs" is {"src", "main.rs"},
// "*.rs" and "{a,b}/c" are {"", pattern}. A tool walks from the prefix, and matches the rest
// below it, anchored.
[[nodiscard]] std::pair<std::string, std::string> split_literal_prefix(std::string_view pattern);

// Whether one name matches one name's pattern (no '/' in either; "**" is '*' here).
[[nodiscard]] bool match_name(std::string_view pattern, std::string_view name);

} // namespace sion::code
