// SPDX-License-Identifier: MIT
// Lines of a text, and the stretch nearest to a quoted one (session/code/lines.hpp).
#include "session/code/lines.hpp"

#include "lib/text.hpp"

#include <algorithm>

namespace sion::code {

namespace {

constexpr size_t k_comparisons = 10'000'000; // line comparisons nearest() allows itself
constexpr size_t k_quote_lines = 40;
constexpr size_t k_quote_chars = 400;

bool blank(char c) {
    return c == ' ' || c == '\t' || c == '\r';
}

// How alike two trimmed lines are: 1 when equal, else the share of the longer one that their
// common start and common end cover. Cheap (linear), and a typo or a renamed word in the middle
// of a line still scores high.
double similarity(std::string_view a, std::string_view b) {
    if (a == b)
        return 1;
    if (a.empty() || b.empty())
        return 0;
    size_t shorter = std::min(a.size(), b.size());
    size_t prefix = 0;
    while (prefix < shorter && a[prefix] == b[prefix])
        ++prefix;
    size_t suffix = 0;
    while (suffix < shorter - prefix && a[a.size() - 1 - suffix] == b[b.size() - 1 - suffix])
        ++suffix;
    return static_cast<double>(prefix + suffix) / static_cast<double>(std::max(a.size(), b.size()));
}

size_t distance(size_t a, size_t b) {
    return a > b ? a - b : b - a;
}

} // namespace

Lines split_lines(std::string_view text) {
    Lines out;
    size_t crlf = 0;
    size_t at = 0;
    while (at < text.size()) {
        size_t nl = text.find('\n', at);
        if (nl == std::string_view::npos) {
            out.text.push_back(text.substr(at));
            out.crlf.push_back(false);
            break;
        }
        bool cr = nl > at && text[nl - 1] == '\r';
        out.text.push_back(text.substr(at, nl - at - (cr ? 1 : 0)));
        out.crlf.push_back(cr);
        crlf += cr ? 1 : 0;
        at = nl + 1;
    }
    out.final_newline = !text.empty() && text.back() == '\n';
    size_t endings = out.text.size() - (out.final_newline || out.text.empty() ? 0 : 1);
    if (crlf * 2 > endings)
        out.eol = "\r\n";
    return out;
}

std::string_view trim_end(std::string_view s) {
    while (!s.empty() && blank(s.back()))
        s.remove_suffix(1);
    return s;
}

std::string_view trim(std::string_view s) {
    s = trim_end(s);
    while (!s.empty() && blank(s.front()))
        s.remove_prefix(1);
    return s;
}

std::string to_crlf(std::string_view s) {
    std::string out;
    out.reserve(s.size() + s.size() / 16);
    for (size_t i = 0; i < s.size(); ++i) {
        if (s[i] == '\n' && (i == 0 || s[i - 1] != '\r'))
            out += '\r';
        out += s[i];
    }
    return out;
}

std::string to_lf(std::string_view s) {
    std::string out;
    out.reserve(s.size());
    for (size_t i = 0; i < s.size(); ++i)
        if (!(s[i] == '\r' && i + 1 < s.size() && s[i + 1] == '\n'))
            out += s[i];
    return out;
}

Stretch nearest(const std::vector<std::string_view>& lines,
                const std::vector<std::string_view>& wanted, size_t near) {
    Stretch best;
    if (lines.empty() || wanted.empty())
        return best;
    size_t count = std::min(wanted.size(), lines.size());
    size_t starts = lines.size() - count + 1;
    // Which of wanted's lines are compared: all of them, or an even sample when that would be
    // too many comparisons.
    size_t sample = std::clamp<size_t>(k_comparisons / starts, 1, count);
    std::vector<size_t> picked;
    std::vector<std::string_view> want;
    for (size_t s = 0; s < sample; ++s) {
        size_t j = sample == 1 ? 0 : s * (count - 1) / (sample - 1);
        picked.push_back(j);
        want.push_back(trim(wanted[j]));
    }
    std::vector<std::string_view> have(lines.size());
    for (size_t i = 0; i < lines.size(); ++i)
        have[i] = trim(lines[i]);
    best.score = -1;
    for (size_t start = 0; start < starts; ++start) {
        double sum = 0;
        for (size_t s = 0; s < picked.size(); ++s)
            sum += similarity(have[start + picked[s]], want[s]);
        double score = sum / static_cast<double>(picked.size());
        if (score > best.score
            || (score == best.score && distance(start, near) < distance(best.first, near))) {
            best.first = start;
            best.score = score;
        }
    }
    best.count = count;
    if (count == wanted.size()) {
        bool trimmed_equal = true;
        bool raw_equal = true;
        for (size_t j = 0; j < count && trimmed_equal; ++j) {
            trimmed_equal = have[best.first + j] == trim(wanted[j]);
            raw_equal = raw_equal && lines[best.first + j] == wanted[j];
        }
        best.whitespace_only = trimmed_equal && !raw_equal;
    }
    return best;
}

std::string quote_lines(const std::vector<std::string_view>& lines, size_t first, size_t count) {
    std::string out;
    size_t end = std::min(lines.size(), first + count);
    size_t shown = std::min(end, first + k_quote_lines);
    for (size_t i = first; i < shown; ++i) {
        std::string_view body = lines[i];
        out += format("%6zu\t", i + 1);
        if (body.size() > k_quote_chars) {
            size_t cut = k_quote_chars;
            while (cut > 0 && (static_cast<unsigned char>(body[cut]) & 0xC0) == 0x80)
                --cut;
            out.append(body.substr(0, cut));
            out += format(" [… %zu more characters]", body.size() - cut);
        } else {
            out.append(body);
        }
        out += '\n';
    }
    if (end > shown)
        out += format("[… %zu more lines]\n", end - shown);
    return out;
}

std::string nearest_hint(const std::vector<std::string_view>& lines,
                         const std::vector<std::string_view>& wanted, std::string_view name,
                         size_t near) {
    std::string file(name);
    if (lines.empty())
        return file + " is empty";
    Stretch s = nearest(lines, wanted, near);
    if (s.score <= 0)
        return "nothing in " + file + " is like them";
    std::string out = s.count == 1
                          ? format("the nearest line of %s is %zu", file.c_str(), s.first + 1)
                          : format("the nearest lines of %s are %zu-%zu", file.c_str(), s.first + 1,
                                   s.first + s.count);
    if (s.whitespace_only)
        out += " (they differ only in whitespace)";
    out += ":\n" + quote_lines(lines, s.first, s.count);
    out.pop_back();
    return out;
}

size_t line_of(std::string_view text, size_t offset) {
    offset = std::min(offset, text.size());
    return 1
           + static_cast<size_t>(
               std::count(text.begin(), text.begin() + static_cast<ptrdiff_t>(offset), '\n'));
}

std::string list_numbers(const std::vector<size_t>& numbers, size_t max) {
    std::string out;
    size_t shown = std::min(numbers.size(), max);
    for (size_t i = 0; i < shown; ++i) {
        if (i > 0)
            out += i + 1 == shown && shown == numbers.size() ? " and " : ", ";
        out += format("%zu", numbers[i]);
    }
    if (shown < numbers.size())
        out += ", …";
    return out;
}

} // namespace sion::code
