// SPDX-License-Identifier: MIT
#include "mcpd/last_words.hpp"

#include "lib/text.hpp"

#include <algorithm>
#include <cstdlib>

namespace sion::mcpd {

namespace {

std::string escaped(std::string_view line) {
    std::string out;
    for (unsigned char c : line) {
        if (c == '\t')
            out += ' ';
        else if (c == 0x1b)
            out += "\\e";
        else if (c < 0x20 || c == 0x7f)
            out += format("\\x%02x", c);
        else
            out += static_cast<char>(c);
    }
    return out;
}

bool variable_char(char c) {
    return (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
}

bool word_char(char c) {
    return variable_char(c) || (c >= 'a' && c <= 'z');
}

// A variable nobody gives a server with --env, which a hint naming it would mislead about: one a
// server always gets or that is the machine's, or one of its families, or sion's own.
bool standard_variable(std::string_view name) {
    for (std::string_view own : {"PATH", "HOME", "LANG", "TMPDIR", "USER", "LOGNAME", "SHELL",
                                 "PWD", "OLDPWD", "TERM", "SHLVL", "MAIL", "HOSTNAME", "_"})
        if (name == own)
            return true;
    for (std::string_view family : {"LC_", "XDG_", "SSH_", "SUDO_", "TERM_", "SION_"})
        if (name.starts_with(family))
            return true;
    return false;
}

} // namespace

std::string shown_line(std::string_view text, size_t max_chars) {
    size_t characters = 0;
    for (size_t i = 0; i < text.size(); ++i)
        if ((static_cast<unsigned char>(text[i]) & 0xC0) != 0x80 && ++characters > max_chars)
            return escaped(text.substr(0, i)) + "\u2026";
    return escaped(text);
}

void LastWords::add(std::string_view bytes) {
    m_kept.append(bytes);
    if (m_kept.size() > k_words_bytes) {
        m_kept.erase(0, m_kept.size() - k_words_bytes);
        m_cut = true;
    }
}

std::vector<std::string> LastWords::lines() const {
    std::vector<std::string> all;
    size_t start = 0;
    bool first = true;
    while (start < m_kept.size()) {
        size_t end = m_kept.find('\n', start);
        if (end == std::string::npos)
            end = m_kept.size();
        std::string_view line(m_kept.data() + start, end - start);
        if (!line.empty() && line.back() == '\r')
            line.remove_suffix(1);
        // A line cut by the bound starts inside a character as often as not: skip to the next one.
        if (first && m_cut)
            while (!line.empty() && (static_cast<unsigned char>(line.front()) & 0xC0) == 0x80)
                line.remove_prefix(1);
        if (line.find_first_not_of(" \t") != std::string_view::npos)
            all.push_back((first && m_cut ? "\u2026" : "") + escaped(line));
        first = false;
        start = end + 1;
    }
    if (all.size() > k_words_lines)
        all.erase(all.begin(), all.end() - static_cast<std::ptrdiff_t>(k_words_lines));
    return all;
}

std::vector<std::string> ungiven_variables(const std::vector<std::string>& lines,
                                           const std::vector<std::string>& given) {
    std::vector<std::string> found;
    for (const std::string& line : lines) {
        size_t i = 0;
        while (i < line.size() && found.size() < 3) {
            if (!word_char(line[i])) {
                ++i;
                continue;
            }
            size_t end = i;
            while (end < line.size() && word_char(line[end]))
                ++end;
            std::string word = line.substr(i, end - i);
            i = end;
            bool capital = std::any_of(word.begin(), word.end(),
                                       [](char c) { return c >= 'A' && c <= 'Z'; });
            bool shaped = word.size() >= 3 && capital && !(word[0] >= '0' && word[0] <= '9')
                && std::all_of(word.begin(), word.end(), variable_char);
            if (!shaped || standard_variable(word)
                || std::find(found.begin(), found.end(), word) != found.end()
                || std::find(given.begin(), given.end(), word) != given.end())
                continue;
            if (std::getenv(word.c_str()) != nullptr) // NOLINT(concurrency-mt-unsafe)
                found.push_back(word);
        }
    }
    return found;
}

} // namespace sion::mcpd
