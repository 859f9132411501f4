// SPDX-License-Identifier: MIT
// Messages to stderr in the house grammar, "prog: what 'subject': why", one line each.
//
// For programs' mains and their command layers only: library code returns Errors and never prints.
#pragma once

#include "lib/result.hpp"

#include <string_view>

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
// a file opened later never lands on a standard stream (curl's guard). Ignores SIGPIPE, so that a
// pipe or socket closed under any write is an EPIPE error its caller handles; standard output's
// writers hand theirs to die_of_stdout_error().
void guard_standard_fds();

// Ends the program after a write to standard output failed with `err`. A reader that went away
// (EPIPE: `sion-run show S | head -n 1`) ends it quietly, killed by SIGPIPE as git and coreutils
// are (status 141 in the shell); any other error is reported, "write error: No space left on
// device", with exit 74.
[[noreturn]] void die_of_stdout_error(int err);

// Writes `data` whole to standard output with write(2): 0, or the errno of the write that failed,
// for die_of_stdout_error().
[[nodiscard]] int write_stdout(std::string_view data);

// Flushes stdout before main returns: `status`, or after a write error that happened, the quiet end
// of die_of_stdout_error() for EPIPE, or its report and 74 (the program's own failing status kept).
[[nodiscard]] int finish_stdout(int status);

} // namespace sion
