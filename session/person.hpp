// SPDX-License-Identifier: MIT
// The person a session may ask before a call: on the terminal (/dev/tty), whatever stdin and stdout
// are. A session with no terminal, or run for a program (--json), has no one to ask. The unit tests
// of the call pipeline stand in for the person by overriding what it is asked.
#pragma once

#include "lib/fd.hpp"

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace sion::session {

class Person {
public:
    // The terminal, unless `for_program` (--json); "absent" otherwise, with why.
    [[nodiscard]] static Person find(bool for_program);

    // No one to ask.
    Person() : m_absent("no terminal") {}
    Person(Person&&) = default;
    Person& operator=(Person&&) = default;
    virtual ~Person() = default;

    [[nodiscard]] virtual bool present() const { return m_tty.get() >= 0; }

    // Whether the person sees the transcript where they are asked (the terminal is standard
    // output too, or questions go there), so that a question need not repeat the call's line.
    [[nodiscard]] virtual bool sees_transcript() const;

    // Why no one can be asked: "no terminal", "--json".
    [[nodiscard]] virtual const std::string& absent_why() const { return m_absent; }

    // Asks `question` ("shell {…}: … Run it? [y/N] ") and reads the answer: true for y or yes (any
    // case), false for anything else, the end of input included.
    [[nodiscard]] virtual bool allows(std::string_view question);

    // Shows `prompt` and reads a line of answer, without its newline (at most 4 KiB of it kept);
    // nullopt at the end of input, or with no one to ask.
    // With `within_ms`, an answer not given by then is nullopt too.
    [[nodiscard]] virtual std::optional<std::string>
    ask(std::string_view prompt, std::optional<int64_t> within_ms = std::nullopt);

    // Shows `text` on the terminal, as it is.
    virtual void say(std::string_view text);

private:
    Person(Fd tty, std::string absent) : m_tty(std::move(tty)), m_absent(std::move(absent)) {}

    Fd m_tty;
    std::string m_absent;
};

} // namespace sion::session
