// SPDX-License-Identifier: MIT
// UvRun: run() on a libuv loop, for long-lived programs that run many commands at once (the
// sandbox's warm init, the Docker backend's serve mode).
//
// Contract:
// - run_on_loop() spawns `spec` with Child::spawn (its in, out and err are forced to pipes; the
//   rest of the spec, and every error of spawning, is as in lib/child.hpp), writes `input` to its
//   stdin and then closes it, and reads stdout and stderr, keeping at most `output_limit` bytes of
//   each: the rest is read and counted (out_total, err_total), never left to block the child. A
//   child that closes its stdin before reading all of `input` is not an error.
// - When spec.time_limit runs out, the child's process group gets SIGKILL and the result says
//   timed_out (with signal 9 and status 137).
// - The child is reaped with wait4(pid) when its pidfd says it exited; the result carries its
//   status, wall_ms, cpu_ms and max_rss_kib (see ExitStatus).
// - `done` is called once, on the loop, after the child is reaped and both output pipes reached
//   end of file or were closed. A grandchild that outlives the child and keeps the pipes open does
//   not hold the run: after the reap the pipes are read on until they have been quiet for
//   k_pipe_quiet (nothing read, nothing waiting), k_pipe_grace_max after the reap at the latest,
//   and are then closed; what is written after that is lost (the writer gets EPIPE or SIGPIPE).
//   Once the child is reaped its group is never signalled (its id could be reused).
// - `done` gets an Error instead of the result when reading, writing (other than EPIPE) or waiting
//   failed; the child is reaped all the same. It must not throw: it runs inside a libuv callback.
// - Errors of spawning and of setting up the handles are returned at once; `done` is then never
//   called, and the child, if it started, is killed and reaped before run_on_loop() returns.
// - Lifetime: the run keeps itself alive while its handles are open; the loop must run until they
//   have closed (uv_run returns 0 and uv_loop_close succeeds afterwards). Dropping the last
//   UvRun before `done` was called kills the process group (as dropping a Child does) and forgets
//   `done`, which is never called after that: the loop still reaps the child and closes the
//   handles. `done` may drop its own UvRun.
// - SIGPIPE: stdin is written with libuv, which uses write(2): the process must ignore SIGPIPE (as
//   every sion program does, guard_standard_fds), or a child that stops reading kills it.
// - Threads: everything happens on the loop's thread, run_on_loop() included.
#pragma once

#include "lib/child.hpp"
#include "lib/result.hpp"

#include <uv.h>

#include <chrono>
#include <csignal>
#include <cstddef>
#include <functional>
#include <memory>
#include <string>

namespace sion {

// After the reap, open output pipes are closed once they have been quiet this long...
inline constexpr std::chrono::milliseconds k_pipe_quiet{100};
// ...or this long after the reap, whichever comes first.
inline constexpr std::chrono::milliseconds k_pipe_grace_max{1000};

class UvRun;

[[nodiscard]] Result<std::shared_ptr<UvRun>>
run_on_loop(uv_loop_t* loop, ChildSpec spec, std::string input, size_t output_limit,
            std::function<void(Result<RunResult>)> done);

// One command running on a loop; see the contract above.
class UvRun {
public:
    UvRun(const UvRun&) = delete;
    UvRun& operator=(const UvRun&) = delete;
    UvRun(UvRun&&) = delete;
    UvRun& operator=(UvRun&&) = delete;
    // Kills the process group if the child still runs, and forgets `done` (see the contract).
    ~UvRun();

    // Sends `signal` (SIGKILL unless told) to the process group now, unless the child is reaped
    // already. `done` still comes, with the signal the child died of (and timed_out false).
    void kill(int signal = SIGKILL);

    // The child's pid (and process group id); -1 once it is reaped.
    [[nodiscard]] pid_t pid() const;

    struct Impl;

private:
    explicit UvRun(std::shared_ptr<Impl> impl) : m_impl(std::move(impl)) {}

    friend Result<std::shared_ptr<UvRun>> run_on_loop(uv_loop_t*, ChildSpec, std::string, size_t,
                                                      std::function<void(Result<RunResult>)>);

    std::shared_ptr<Impl> m_impl;
};

} // namespace sion
