// SPDX-License-Identifier: MIT
// A console's input: the terminal, edited, or standard input read by a thread as it comes.
#include "cmd/sion-run/console.hpp"

#include "lib/fd.hpp"
#include "lib/log.hpp"
#include "lib/text.hpp"

#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <chrono>
#include <cstdio>

namespace sion::run_cmd {

namespace {

// Set by SIGINT: Ctrl-C at the terminal, or a signal sent.
std::atomic<bool> g_interrupted{false};

extern "C" void on_sigint(int /*signal*/) {
    g_interrupted.store(true);
}

// A SIGINT interrupts what blocks (no SA_RESTART): the prompt's read gives up its line.
void catch_sigint() {
    struct sigaction sa {};

    sa.sa_handler = on_sigint;
    sigemptyset(&sa.sa_mask);
    sa.sa_flags = 0;
    (void)::sigaction(SIGINT, &sa, nullptr);
}

bool is_stop(const std::string& line) {
    return trim_space(line) == "/stop";
}

// Reads standard input a line at a time into `in`, until it ends.
void read_lines(const std::shared_ptr<ConsoleInput::Lines>& in) {
    std::string line;
    bool dropping = false; // the rest of a line too long is dropped
    char buffer[4096];
    auto take = [&](std::string text) {
        if (!text.empty() && text.back() == '\r')
            text.pop_back();
        std::lock_guard lock(in->mutex);
        in->lines.push_back(std::move(text));
        in->came.notify_all();
    };
    while (true) {
        ssize_t n = ::read(STDIN_FILENO, buffer, sizeof buffer);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            break;
        for (ssize_t i = 0; i < n; ++i) {
            char c = buffer[i];
            if (c == '\n') {
                if (!dropping)
                    take(std::move(line));
                line.clear();
                dropping = false;
            } else if (!dropping && line.size() == ConsoleInput::k_max_line) {
                log_error("a line of more than %zu bytes was not read: say it in parts",
                          ConsoleInput::k_max_line);
                line.clear();
                dropping = true;
            } else if (!dropping) {
                line += c;
            }
        }
    }
    if (!line.empty() && !dropping)
        take(std::move(line));
    std::lock_guard lock(in->mutex);
    in->ended = true;
    in->came.notify_all();
}

// The person of a console on standard input: questions on standard output, answered by the
// input's next line.
class LinesPerson final : public session::Person {
public:
    explicit LinesPerson(ConsoleInput& console) : m_console(console) {}

    [[nodiscard]] bool present() const override { return true; }

    [[nodiscard]] bool sees_transcript() const override { return true; }

    std::optional<std::string> ask(std::string_view prompt,
                                   std::optional<int64_t> within_ms) override {
        say(prompt);
        say("\n"); // the answer is the next line, not typed after the prompt
        return m_console.answer(within_ms);
    }

    void say(std::string_view text) override {
        std::fwrite(text.data(), 1, text.size(), stdout);
        std::fflush(stdout);
    }

private:
    ConsoleInput& m_console;
};

} // namespace

Result<std::unique_ptr<ConsoleInput>> ConsoleInput::open(const std::string& history_file) {
    std::unique_ptr<ConsoleInput> c(new ConsoleInput());
    catch_sigint();
    if (::isatty(STDIN_FILENO) == 1 && ::isatty(STDOUT_FILENO) == 1) {
        SION_TRY(LineEditor editor, LineEditor::open(STDIN_FILENO, STDOUT_FILENO, history_file));
        c->m_editor.emplace(std::move(editor));
        return c;
    }
    std::thread(read_lines, c->m_in).detach();
    return c;
}

bool ConsoleInput::stop_asked() {
    std::lock_guard lock(m_in->mutex);
    if (m_stop || g_interrupted.load())
        return m_stop = true;
    auto stop = std::find_if(m_in->lines.begin(), m_in->lines.end(), is_stop);
    if (stop == m_in->lines.end())
        return false;
    m_in->lines.erase(stop);
    return m_stop = true;
}

void ConsoleInput::run_begins() {
    std::lock_guard lock(m_in->mutex);
    m_stop = false;
    g_interrupted.store(false);
}

ConsoleInput::Line ConsoleInput::next(std::string_view prompt) {
    Line line;
    if (m_editor) {
        LineEditor::Read r = m_editor->read(prompt);
        bool signalled = g_interrupted.exchange(false);
        line.interrupted = r.interrupted || (!r.line && signalled);
        line.text = std::move(r.line);
        return line;
    }
    std::unique_lock lock(m_in->mutex);
    while (m_in->lines.empty() && !m_in->ended) {
        if (g_interrupted.exchange(false)) {
            line.interrupted = true;
            return line;
        }
        m_in->came.wait_for(lock, std::chrono::milliseconds(200));
    }
    if (!m_in->lines.empty()) {
        line.text = std::move(m_in->lines.front());
        m_in->lines.pop_front();
    }
    return line;
}

std::optional<std::string> ConsoleInput::answer(std::optional<int64_t> within_ms) {
    auto deadline =
        std::chrono::steady_clock::now() + std::chrono::milliseconds(within_ms.value_or(0));
    std::unique_lock lock(m_in->mutex);
    // A /stop is not an answer: it waits for the run to ask whether it should stop.
    auto answer = [this] {
        return std::find_if_not(m_in->lines.begin(), m_in->lines.end(), is_stop);
    };
    while (answer() == m_in->lines.end() && !m_in->ended) {
        if (!within_ms)
            m_in->came.wait(lock);
        else if (m_in->came.wait_until(lock, deadline) == std::cv_status::timeout)
            break;
    }
    auto it = answer();
    if (it == m_in->lines.end())
        return std::nullopt;
    std::string text = std::move(*it);
    m_in->lines.erase(it);
    return text;
}

std::unique_ptr<session::Person> ConsoleInput::person() {
    if (m_editor)
        return std::make_unique<session::Person>(session::Person::find(false));
    return std::make_unique<LinesPerson>(*this);
}

} // namespace sion::run_cmd
