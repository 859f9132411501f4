// SPDX-License-Identifier: MIT
// A console's input (sion-run chat): what the person types, a line at a time. At a terminal, lines
// are edited and kept in a history (lib/line_editor.hpp), the person's questions are asked there
// (session/person.hpp), and Ctrl-C stops the run under way. Otherwise standard input is read as
// it comes, by a thread of its own, so that a line that comes while a run is under way is heard
// then: "/stop" stops the run, and any other line answers the question asked then, if one is,
// or waits to be the next message.
#pragma once

#include "lib/line_editor.hpp"
#include "session/person.hpp"

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <thread>

namespace sion::run_cmd {

class ConsoleInput {
public:
    // At the terminal when standard input is one (its history in `history_file`); from standard
    // input otherwise. SIGINT is caught from now on: it asks to stop the run under way.
    [[nodiscard]] static Result<std::unique_ptr<ConsoleInput>>
    open(const std::string& history_file);

    ConsoleInput(const ConsoleInput&) = delete;
    ConsoleInput& operator=(const ConsoleInput&) = delete;
    ~ConsoleInput() = default;

    [[nodiscard]] bool at_terminal() const { return m_editor.has_value(); }

    struct Line {
        std::optional<std::string> text; // nullopt at the end of input
        bool interrupted = false;        // Ctrl-C at the prompt: nothing was said
    };

    // The person's next message or command, with `prompt` shown at a terminal.
    [[nodiscard]] Line next(std::string_view prompt);

    // A run begins: what asked the last one to stop is forgotten.
    void run_begins();
    // Whether the person asked the run under way to stop: Ctrl-C (SIGINT) since it began, or a
    // line "/stop" come since (taken from the lines waiting, wherever it is among them). Once true,
    // true until the next run begins.
    [[nodiscard]] bool stop_asked();

    // Who the session asks: the terminal, or the lines standard input gives next (questions shown
    // on standard output). Its answers are read through this console, which outlives it.
    [[nodiscard]] std::unique_ptr<session::Person> person();

    // The next line, waiting at most `within_ms` (nullopt: until the input ends); nullopt when
    // none came. Standard input only.
    [[nodiscard]] std::optional<std::string> answer(std::optional<int64_t> within_ms);

    // The most a line may hold; the rest of a longer one is dropped, and said so.
    static constexpr size_t k_max_line = size_t{1} << 20;

    // What standard input's reader and the console share: the reader is detached, for it may be
    // blocked reading when the console ends.
    struct Lines {
        std::mutex mutex;
        std::condition_variable came;
        std::deque<std::string> lines;
        bool ended = false;
    };

private:
    ConsoleInput() = default;

    std::optional<LineEditor> m_editor;
    bool m_stop = false; // under m_in->mutex
    std::shared_ptr<Lines> m_in = std::make_shared<Lines>();
};

} // namespace sion::run_cmd
