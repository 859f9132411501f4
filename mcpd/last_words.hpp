// SPDX-License-Identifier: MIT
// What a server's process last wrote to its standard error, kept for the operator's own commands
// (add, review, resources, prompts): when the server fails there, its last lines are shown on the
// operator's terminal, with a hint naming a variable of the operator's that its words name and that
// it was not given. Never stored, never given to a model: a server may print secrets there.
//
// Bounded: the last k_words_bytes bytes it wrote are kept, and of them the last k_words_lines lines.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

namespace sion::mcpd {

inline constexpr size_t k_words_bytes = 2048;
inline constexpr size_t k_words_lines = 10;

class LastWords {
public:
    // Keeps `bytes` after those kept, dropping the oldest beyond k_words_bytes.
    void add(std::string_view bytes);

    // The last lines, oldest first, at most k_words_lines: blank lines left out, control characters
    // escaped (\e, \x7f, …) so that nothing the server wrote acts on the terminal; a line cut at
    // its start by the bound begins with "…".
    [[nodiscard]] std::vector<std::string> lines() const;

    [[nodiscard]] bool empty() const { return m_kept.empty(); }

private:
    std::string m_kept;
    bool m_cut = false; // bytes before m_kept were dropped
};

// `text` on one line for a terminal, control characters escaped as lines() escapes them, cut to its
// first `max_chars` characters and "…" when longer.
[[nodiscard]] std::string shown_line(std::string_view text, size_t max_chars);

// The variables that `lines` name (words of capitals, digits and '_', with a capital and at least
// three characters), that are set in this process's environment and that the server is not given
// (`given`: the names it gets), in the order first named, at most three. Never their values.
// Never one that nobody gives with --env: PATH, HOME, LANG, TMPDIR, USER, LOGNAME, SHELL, PWD,
// OLDPWD, TERM, SHLVL, MAIL, HOSTNAME and _, those starting LC_, XDG_, SSH_, SUDO_ or TERM_, and
// sion's own SION_*.
[[nodiscard]] std::vector<std::string> ungiven_variables(const std::vector<std::string>& lines,
                                                         const std::vector<std::string>& given);

} // namespace sion::mcpd
