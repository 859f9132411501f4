// SPDX-License-Identifier: MIT
// Processes as /proc shows them: who a process is (its pid and when it started, so that a process
// given the same pid later is not taken for it), what it started, and ending it with all it
// started.
//
// Contract:
// - A ProcessId names one process for the life of the boot: its pid and its start time (field 22
//   of /proc/PID/stat, clock ticks since boot). A process that has exited and is not yet reaped (a
//   zombie) no longer runs.
// - Every signal sent here goes to a process whose start time was read again just before, so a
//   stranger that took a pid over is never signalled (the window between that read and kill(2)
//   is the kernel's own: a pidfd would close it, /proc cannot).
// - Nothing here prints, exits or throws. Functions that wait sleep in the calling thread.
#pragma once

#include "lib/result.hpp"

#include <sys/types.h>

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace sion {

struct ProcessId {
    pid_t pid = -1;
    uint64_t start = 0; // clock ticks after boot

    friend bool operator==(const ProcessId&, const ProcessId&) = default;
};

// Who `pid` is now; std::nullopt when it names no process, or a zombie.
[[nodiscard]] std::optional<ProcessId> process_id(pid_t pid);

// This boot's id (/proc/sys/kernel/random/boot_id), "" when it cannot be read: a start time and
// a pid name a process only within one boot.
[[nodiscard]] std::string boot_id();

// Whether `who` still runs: its pid names a process (not a zombie) that started when it did.
[[nodiscard]] bool still_runs(const ProcessId& who);

// `root` and every process descended from it, each parent before its children; empty when `root`
// no longer runs.
[[nodiscard]] std::vector<ProcessId> process_tree(const ProcessId& root);

// How end_process_tree() ended what it ended.
struct TreeEnding {
    bool killed = false; // SIGKILL was needed: `root` had not ended the tree within the grace
};

// Ends `root` and everything descended from it: SIGTERM to `root` (and SIGCONT, so that a stopped
// one takes it), for it to end what it started; after `grace`, SIGKILL to every process of the
// tree still running, those orphaned since included; then waits until none runs, for `bound` at
// most. A `root` that no longer runs is nothing to end.
// Errors: Exit::no_perm when a process may not be signalled ("cannot signal pid 12:
// Operation not permitted"); Exit::temp_fail when processes still run at the bound ("2 processes
// did not end within 5 s").
[[nodiscard]] Result<TreeEnding> end_process_tree(const ProcessId& root,
                                                  std::chrono::milliseconds grace,
                                                  std::chrono::milliseconds bound);

} // namespace sion
