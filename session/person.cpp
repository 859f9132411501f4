// SPDX-License-Identifier: MIT
// Asking on /dev/tty, one line of answer.
#include "session/person.hpp"

#include "lib/text.hpp"

#include <fcntl.h>
#include <poll.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <chrono>

namespace sion::session {

Person Person::find(bool for_program) {
    if (for_program)
        return Person(Fd(), "--json");
    int fd = ::open("/dev/tty", O_RDWR | O_CLOEXEC | O_NOCTTY);
    if (fd < 0)
        return Person(Fd(), "no terminal");
    return Person(Fd(fd), {});
}

bool Person::sees_transcript() const {
    return ::isatty(STDOUT_FILENO) == 1;
}

bool Person::allows(std::string_view question) {
    std::string answer = ascii_lower(ask(question).value_or(""));
    while (!answer.empty() && std::isspace(static_cast<unsigned char>(answer.back())) != 0)
        answer.pop_back();
    return answer == "y" || answer == "yes";
}

std::optional<std::string> Person::ask(std::string_view prompt, std::optional<int64_t> within_ms) {
    if (!present() || !write_all(m_tty.get(), prompt))
        return std::nullopt;
    using Clock = std::chrono::steady_clock;
    auto deadline = Clock::now() + std::chrono::milliseconds(within_ms.value_or(0));
    std::string answer;
    char c = 0;
    while (true) {
        if (within_ms) {
            auto left =
                std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now());
            if (left.count() <= 0) {
                (void)write_all(m_tty.get(), "\n"); // no one answered: the question is over
                return std::nullopt;
            }
            pollfd p{m_tty.get(), POLLIN, 0};
            if (::poll(&p, 1, static_cast<int>(std::min<int64_t>(left.count(), 60'000))) <= 0)
                continue; // interrupted, or not yet: the time left is measured again
        }
        ssize_t n = ::read(m_tty.get(), &c, 1);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0) {
            (void)write_all(m_tty.get(), "\n"); // the end of input ends the question's line too
            return std::nullopt;
        }
        if (c == '\n')
            return answer;
        if (answer.size() < 4096)
            answer += c;
    }
}

void Person::say(std::string_view text) {
    if (present())
        (void)write_all(m_tty.get(), text);
}

} // namespace sion::session
