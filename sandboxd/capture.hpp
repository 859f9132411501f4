// SPDX-License-Identifier: MIT
// capture(): runs a child to its end under a wall-clock limit, feeding its stdin and collecting its
// stdout and stderr up to a cap each while counting every byte it wrote, plus the lines of a status
// pipe. Like lib/child's run(), with the counts the "[... N more bytes cut]" line needs.
//
// Errors are those of spawning (Exit::not_found, Exit::cannot_exec, Exit::os), polling and reading.
// Nothing here prints or exits. Used by one thread at a time per call; SIGPIPE from a child that
// closes its stdin early is taken back, never delivered.
#pragma once

#include "lib/child.hpp"
#include "lib/result.hpp"

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace sion::sandboxd {

struct CaptureSpec {
    ChildSpec child;                  // its out and err become pipes; time_limit is the wall clock
    std::optional<std::string> input; // bytes for its stdin (a pipe); nullopt: child.in as given
    uint64_t cap = 0;                 // bytes kept of stdout, and of stderr
    int status_fd = -1;               // a pipe's read end (taken), read to its end; -1: none
    std::vector<Fd> close_after_spawn; // closed once the child runs: the parent's copies of what
                                       // it was given (a status pipe's write end, above all)
};

struct Captured : ExitStatus {
    std::string out, err;             // at most `cap` bytes each
    uint64_t out_total = 0, err_total = 0; // what the child wrote, all of it
    std::string report;               // what came through the status pipe (at most 64 KiB)
    std::chrono::milliseconds wall{0};
};

// Spawns, feeds, collects until stdout, stderr and the status pipe are closed and the child has
// exited, or until its time limit runs out: then its process group is killed, what was collected
// is returned, and timed_out is set.
[[nodiscard]] Result<Captured> capture(CaptureSpec spec);

} // namespace sion::sandboxd
