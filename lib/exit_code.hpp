// SPDX-License-Identifier: MIT
// The exit codes every sion program uses (STYLE.md, "Errors and messages"); each man page lists them.
#pragma once

namespace sion {

// What a program's exit status means. A wrapper whose status could collide with its child's
// also prints a JSON result (exit, signal, timed_out), which is then authoritative.
enum class Exit : int {
    ok = 0,
    no = 1,             // a plain "no": denied, blocked, no route
    usage = 64,         // the command line is wrong
    data = 65,          // bad input
    no_input = 66,      // an input file is missing
    unavailable = 69,   // a service or peer is unavailable
    software = 70,      // internal error
    os = 71,            // a system call failed
    io = 74,            // an I/O error
    temp_fail = 75,     // try again
    no_perm = 77,       // permission denied
    config = 78,        // bad configuration
    timeout = 124,      // a time limit ran out
    cannot_exec = 126,  // found but could not be executed
    not_found = 127,    // a program was not found
    signal_base = 128,  // 128 + n: killed by signal n
};

constexpr int to_int(Exit e) { return static_cast<int>(e); }

} // namespace sion
