// SPDX-License-Identifier: MIT
// Messages to stderr in the house grammar, "prog: what 'subject': why", one line each.
//
// For programs' mains and their command layers only: library code returns Errors and never prints.
#pragma once

#include "lib/result.hpp"

namespace sion {

// Names the program for every message; call first thing in main with the program's name.
void set_program_name(const char* name);
[[nodiscard]] const char* program_name();

// "prog: <message>\n" on stderr, written with one write(2) so lines of processes sharing stderr
// do not interleave.
[[gnu::format(printf, 1, 2)]] void log_error(const char* fmt, ...);
void report(const Error& error);

// report(error) and exit with its code. Only for mains.
[[noreturn]] void die(const Error& error);

// The value of `result`, or die() with its error. Only for mains and their command layers.
template <class T>
[[nodiscard]] T or_die(Result<T> result) {
    if (!result)
        die(result.error());
    return std::move(*result);
}

inline void or_die(const Status& status) {
    if (!status)
        die(status.error());
}

// Makes fds 0-2 safe before anything is opened: each one that is closed is opened on /dev/null, so
// a file opened later never lands on a standard stream (curl's guard). Ignores SIGPIPE so a closed
// reader is an EPIPE error to report, not a silent death.
void guard_standard_fds();

// Flushes stdout and reports a write error ("write error: Broken pipe") with exit 74 if one
// happened; programs call it before returning from main.
[[nodiscard]] int finish_stdout(int status);

} // namespace sion
