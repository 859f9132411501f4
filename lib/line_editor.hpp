// SPDX-License-Identifier: MIT
// Lines read at a terminal with editing and history: libedit (Debian libedit2), loaded when a
// console first reads, as libcurl is (lib/curl_api.hpp), so that no other start of sion-run pays
// for it or for the terminal libraries it brings.
//
// The history is kept in a file of mode 0600 (it may hold what a person pasted), written again
// after each line entered, so a console killed loses none of it; at most k_history_lines are kept,
// a line the same as the one before it once.
//
// Threads: one LineEditor is used by one thread at a time.
#pragma once

#include "lib/result.hpp"

#include <memory>
#include <optional>
#include <string>
#include <string_view>

namespace sion {

inline constexpr int k_history_lines = 1000;

class LineEditor {
public:
    // Editing on `in` and `out`, which must be a terminal, its history read from `history_file`
    // (a file that cannot be read is started anew). Exit::unavailable "cannot load
    // 'libedit.so.2' (install the Debian package libedit2): …" without the library.
    [[nodiscard]] static Result<LineEditor> open(int in, int out, std::string history_file);

    LineEditor(LineEditor&&) noexcept;
    LineEditor& operator=(LineEditor&&) noexcept;
    ~LineEditor();

    struct Read {
        std::optional<std::string> line; // without its newline; nullopt at the end of input
        bool interrupted = false;        // a signal came while reading (the line is dropped)
    };

    // Shows `prompt` and reads a line with editing. A line that is not blank joins the history.
    [[nodiscard]] Read read(std::string_view prompt);

    struct State; // libedit's, and what its callbacks share: line_editor.cpp's alone

private:
    explicit LineEditor(std::unique_ptr<State> state);

    std::unique_ptr<State> m_state;
};

} // namespace sion
