// SPDX-License-Identifier: MIT
// A text as the lines edit_file and apply_patch see in it, and the stretch of lines nearest to one
// that was quoted but is not there, numbered as read_file shows lines.
//
// Pure functions on text in memory; views returned point into the text given, which must outlive
// them. Nothing here allocates more than a few times the text's size or fails.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

namespace sion::code {

struct Lines {
    std::vector<std::string_view> text; // each line without its ending ("\n" or "\r\n")
    std::vector<bool> crlf;             // whether each line ends with "\r\n"
    bool final_newline = false;         // whether the text ends with a line ending
    // What most lines end with ("\r\n" when CRLF endings outnumber bare LF ones, else "\n"): the
    // ending lines a change adds get. A text without endings has "\n".
    std::string_view eol = "\n";
};

// "a\r\nb\n" is {"a", "b"}, crlf {true, false}, final_newline; "" is no line at all; "a" is one
// line without a final newline.
[[nodiscard]] Lines split_lines(std::string_view text);

// `s` without the spaces, tabs and "\r" at its end (trim_end), or at both ends (trim).
[[nodiscard]] std::string_view trim_end(std::string_view s);
[[nodiscard]] std::string_view trim(std::string_view s);

// Every line ending in `s` as "\r\n" (to_crlf) or as "\n" (to_lf).
[[nodiscard]] std::string to_crlf(std::string_view s);
[[nodiscard]] std::string to_lf(std::string_view s);

// The stretch of `lines` most like `wanted`: `count` lines (wanted's number, or all the file has)
// from `first` (0-based), and how alike, from 0 (nothing in common) to 1 (equal but for whitespace
// at the ends of lines). Lines are compared without surrounding whitespace, by the characters
// their starts and ends share, so a changed word or a typo still finds its line. Ties go to the
// stretch nearest `near`. Long inputs are compared on a sample of wanted's lines, so that the
// search stays under some ten million line comparisons.
struct Stretch {
    size_t first = 0;
    size_t count = 0;
    double score = 0;
    bool whitespace_only = false; // every line equal to wanted's once trimmed, but not as it is
};

[[nodiscard]] Stretch nearest(const std::vector<std::string_view>& lines,
                              const std::vector<std::string_view>& wanted, size_t near = 0);

// `count` lines from `first` (0-based), each as read_file shows it: the line number right-aligned
// in six columns, a tab, the line (cut after 400 characters). At most 40 lines; more is said as
// "[… N more lines]". Each line ends with "\n".
[[nodiscard]] std::string quote_lines(const std::vector<std::string_view>& lines, size_t first,
                                      size_t count);

// What a model is told of a stretch it quoted that is not in `name`: "the nearest lines of a.py
// are 10-12:\n<quote_lines>", with "(they differ only in whitespace)" when that is so, or "nothing
// in a.py is like them" when no line is. Ends without "\n".
[[nodiscard]] std::string nearest_hint(const std::vector<std::string_view>& lines,
                                       const std::vector<std::string_view>& wanted,
                                       std::string_view name, size_t near = 0);

// The 1-based line of byte `offset` of `text`.
[[nodiscard]] size_t line_of(std::string_view text, size_t offset);

// "4", "4 and 10", "4, 10 and 22", the first `max` of them and then "…".
[[nodiscard]] std::string list_numbers(const std::vector<size_t>& numbers, size_t max = 20);

} // namespace sion::code
