// SPDX-License-Identifier: MIT
// Asking on /dev/tty, one line of answer.
#include "session/person.hpp"

#include "lib/text.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <cctype>
#include <cerrno>

namespace sion::session {

Person Person::find(bool for_program) {
    if (for_program)
        return Person(Fd(), "--json");
    int fd = ::open("/dev/tty", O_RDWR | O_CLOEXEC | O_NOCTTY);
    if (fd < 0)
        return Person(Fd(), "no terminal");
    return Person(Fd(fd), {});
}

bool Person::allows(std::string_view question) {
    std::string answer = ascii_lower(ask(question).value_or(""));
    while (!answer.empty() && std::isspace(static_cast<unsigned char>(answer.back())) != 0)
        answer.pop_back();
    return answer == "y" || answer == "yes";
}

std::optional<std::string> Person::ask(std::string_view prompt) {
    if (!present() || !write_all(m_tty.get(), prompt))
        return std::nullopt;
    std::string answer;
    char c = 0;
    while (true) {
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
