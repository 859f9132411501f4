// SPDX-License-Identifier: MIT
// libedit through dlopen: el_gets with a prompt of ours, and a history kept in a private file.
#include "lib/line_editor.hpp"

#include "lib/loaded_libs.hpp"

#include <fcntl.h>
#include <histedit.h>
#include <sys/stat.h>
#include <termios.h>
#include <unistd.h>

#include <cerrno>
#include <clocale>
#include <cstdio>

namespace sion {


struct LineEditor::State {
    const EditApi* api = nullptr;
    std::FILE* in = nullptr;
    std::FILE* out = nullptr;
    EditLine* el = nullptr;
    History* history = nullptr;
    std::string history_file;
    std::string prompt;
    bool interrupted = false; // ^C was typed in the line being read

    State() = default;
    State(const State&) = delete;
    State& operator=(const State&) = delete;

    ~State() {
        if (el != nullptr)
            api->end(el);
        if (history != nullptr)
            api->history_end(history);
        if (in != nullptr)
            std::fclose(in);
        if (out != nullptr)
            std::fclose(out);
    }

    // The history written again, whole, to a file only its owner may read.
    void save() const {
        int fd = ::open(history_file.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW,
                        0600);
        if (fd < 0)
            return;
        (void)::fchmod(fd, 0600);
        std::FILE* f = ::fdopen(fd, "w");
        if (f == nullptr) {
            ::close(fd);
            return;
        }
        HistEvent ev{};
        api->history(history, &ev, H_SAVE_FP, f);
        std::fclose(f);
    }
};

namespace {

LineEditor::State& state_of(EditLine* el) {
    void* data = nullptr;
    (*edit_api())->get(el, EL_CLIENTDATA, &data);
    return *static_cast<LineEditor::State*>(data);
}

// The prompt of the read under way.
char* prompt_of(EditLine* el) {
    return state_of(el).prompt.data();
}

// ^C while a line is edited: the line is given up. It is a key read like any other, not a signal
// (the terminal's ISIG is off while libedit edits), so that it cannot come between a check and the
// read that would wait for it.
unsigned char interrupt_key(EditLine* el, int /*key*/) {
    state_of(el).interrupted = true;
    return CC_NEWLINE;
}

} // namespace

LineEditor::LineEditor(std::unique_ptr<State> state) : m_state(std::move(state)) {}

LineEditor::LineEditor(LineEditor&&) noexcept = default;
LineEditor& LineEditor::operator=(LineEditor&&) noexcept = default;
LineEditor::~LineEditor() = default;

Result<LineEditor> LineEditor::open(int in, int out, std::string history_file) {
    SION_TRY(const EditApi* api, edit_api());
    // libedit edits characters, not bytes, as the locale's LC_CTYPE says (UTF-8 on most systems).
    (void)std::setlocale(LC_CTYPE, ""); // NOLINT(concurrency-mt-unsafe): before any thread reads
    auto state = std::make_unique<State>();
    state->api = api;
    state->history_file = std::move(history_file);
    int in_copy = ::fcntl(in, F_DUPFD_CLOEXEC, 3);
    int out_copy = ::fcntl(out, F_DUPFD_CLOEXEC, 3);
    if (in_copy >= 0)
        state->in = ::fdopen(in_copy, "r");
    if (out_copy >= 0)
        state->out = ::fdopen(out_copy, "w");
    if (state->in == nullptr || state->out == nullptr) {
        int e = errno;
        if (state->in == nullptr && in_copy >= 0)
            ::close(in_copy);
        if (state->out == nullptr && out_copy >= 0)
            ::close(out_copy);
        return sys_error(Exit::os, e, "cannot open the terminal for editing");
    }
    state->history = api->history_init();
    state->el = api->init("sion", state->in, state->out, state->out);
    if (state->history == nullptr || state->el == nullptr)
        return make_error(Exit::os, "cannot start line editing on the terminal");
    HistEvent ev{};
    api->history(state->history, &ev, H_SETSIZE, k_history_lines);
    api->history(state->history, &ev, H_SETUNIQUE, 1);
    api->history(state->history, &ev, H_LOAD, state->history_file.c_str());
    api->set(state->el, EL_CLIENTDATA, state.get());
    api->set(state->el, EL_PROMPT, prompt_of);
    api->set(state->el, EL_EDITOR, "emacs");
    api->set(state->el, EL_SETTY, "-d", "-isig", nullptr);
    api->set(state->el, EL_ADDFN, "sion-interrupt", "give up the line", interrupt_key);
    api->set(state->el, EL_BIND, "^C", "sion-interrupt", nullptr);
    api->set(state->el, EL_HIST, api->history, state->history);
    return LineEditor(std::move(state));
}

LineEditor::Read LineEditor::read(std::string_view prompt) {
    State& s = *m_state;
    s.prompt = std::string(prompt);
    s.interrupted = false;
    // libedit shows the prompt before it puts the terminal in its own mode: what is typed right
    // after the prompt would meet the line discipline first, which takes ^C as a signal that
    // comes before the read that would see it, and ^D as an end that is then lost. So the
    // terminal is put in a mode like libedit's (no line editing, echo or signals) before; libedit
    // keeps the cooked mode it found at the start, and restores it when the line is read.
    termios now{};
    int fd = ::fileno(s.in);
    if (::tcgetattr(fd, &now) == 0) {
        termios raw = now;
        raw.c_lflag &= ~static_cast<tcflag_t>(ICANON | ECHO | ISIG | IEXTEN);
        raw.c_cc[VMIN] = 1;
        raw.c_cc[VTIME] = 0;
        (void)::tcsetattr(fd, TCSANOW, &raw);
    }
    int count = 0;
    errno = 0;
    const char* line = s.api->gets(s.el, &count);
    Read r;
    if (s.interrupted || (line == nullptr && count < 0 && errno == EINTR)) {
        r.interrupted = true; // ^C, or a signal sent from elsewhere
        if (line == nullptr)
            s.api->reset(s.el); // the line given up, and the terminal as libedit found it
        return r;
    }
    if (line == nullptr || count <= 0)
        return r;
    std::string text(line, static_cast<size_t>(count));
    if (!text.empty() && text.back() == '\n')
        text.pop_back();
    if (text.find_first_not_of(" \t") != std::string::npos) {
        HistEvent ev{};
        s.api->history(s.history, &ev, H_ENTER, text.c_str());
        s.save();
    }
    r.line = std::move(text);
    return r;
}

} // namespace sion
