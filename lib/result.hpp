// SPDX-License-Identifier: MIT
// Result<T>: a value or an Error, the subset of std::expected the project uses (g++ 12 has none).
//
// Library code returns [[nodiscard]] Result<T> and never prints, exits or throws. An Error carries the
// message in the house grammar without the program's prefix ("cannot open 'x': No such file or
// directory") and the exit code a program should end with if it gives up.
#pragma once

#include "lib/exit_code.hpp"

#include <string>
#include <utility>
#include <variant>

namespace sion {

class Error {
public:
    Error(Exit exit, std::string message) : m_exit(exit), m_message(std::move(message)) {}

    [[nodiscard]] Exit exit() const { return m_exit; }
    [[nodiscard]] const std::string& message() const { return m_message; }
    // A copy whose message is prefixed with what was being done: "reading 'x': " + message.
    [[nodiscard]] Error context(const std::string& what) const { return {m_exit, what + ": " + m_message}; }

private:
    Exit m_exit;
    std::string m_message;
};

// An Error whose message is built printf-style.
[[gnu::format(printf, 2, 3)]] Error make_error(Exit exit, const char* fmt, ...);
// An Error for a failed system call: the message, then ": " and strerror(err) (errno text last).
[[gnu::format(printf, 3, 4)]] Error sys_error(Exit exit, int err, const char* fmt, ...);

template <class T>
class [[nodiscard]] Result {
public:
    Result(T value) : m_v(std::in_place_index<0>, std::move(value)) {}     // NOLINT: implicit like expected
    Result(Error error) : m_v(std::in_place_index<1>, std::move(error)) {} // NOLINT: implicit like unexpected

    [[nodiscard]] bool has_value() const { return m_v.index() == 0; }
    explicit operator bool() const { return has_value(); }

    T& value() & { return std::get<0>(m_v); }
    const T& value() const& { return std::get<0>(m_v); }
    T&& value() && { return std::get<0>(std::move(m_v)); }
    T& operator*() & { return value(); }
    const T& operator*() const& { return value(); }
    T&& operator*() && { return std::move(*this).value(); }
    T* operator->() { return &value(); }
    const T* operator->() const { return &value(); }

    const Error& error() const& { return std::get<1>(m_v); }
    Error&& error() && { return std::get<1>(std::move(m_v)); }

    template <class U>
    T value_or(U&& fallback) const& {
        return has_value() ? value() : static_cast<T>(std::forward<U>(fallback));
    }

private:
    std::variant<T, Error> m_v;
};

template <>
class [[nodiscard]] Result<void> {
public:
    Result() = default;
    Result(Error error) : m_error(std::move(error)), m_failed(true) {} // NOLINT: implicit like unexpected

    [[nodiscard]] bool has_value() const { return !m_failed; }
    explicit operator bool() const { return has_value(); }
    void value() const {}
    const Error& error() const& { return m_error; }
    Error&& error() && { return std::move(m_error); }

private:
    Error m_error{Exit::ok, {}};
    bool m_failed = false;
};

using Status = Result<void>;

} // namespace sion

#define SION_CAT_(a, b) a##b
#define SION_CAT(a, b) SION_CAT_(a, b)

// SION_TRY(auto x, f()); — declares x from f()'s value, or returns f()'s error from the caller.
#define SION_TRY(decl, expr)                                                                       \
    auto SION_CAT(sion_try_, __LINE__) = (expr);                                                   \
    if (!SION_CAT(sion_try_, __LINE__))                                                            \
        return std::move(SION_CAT(sion_try_, __LINE__)).error();                                   \
    decl = std::move(*SION_CAT(sion_try_, __LINE__))

// SION_CHECK(f()); — returns f()'s error from the caller, for results without a value.
#define SION_CHECK(expr)                                                                           \
    do {                                                                                           \
        auto sion_check_ = (expr);                                                                 \
        if (!sion_check_)                                                                          \
            return std::move(sion_check_).error();                                                 \
    } while (0)
