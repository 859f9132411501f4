// SPDX-License-Identifier: MIT
// Child: the one way the project spawns a process: posix_spawn, its own process group, set fds.
//
// Contract:
// - A child gets fds 0-2 plus exactly the extra fds its spec names; every other fd is closed in
//   it, whatever its close-on-exec flag in the parent. Its environment is exactly spec.env.
// - argv[0] is resolved like execvp(3), but against the PATH of spec.env (not the parent's), from
//   the child's working directory; without a PATH in spec.env the search path is "/bin:/usr/bin".
//   A file without a "#!" line is not handed to /bin/sh (posix_spawn does not do that either).
// - The child leads its own process group, starts with an empty signal mask and signals 1-31 at
//   their default action (a parent that ignores SIGPIPE does not pass that on).
// - A time limit is enforced by whoever waits: when it runs out, the whole process group gets
//   SIGKILL.
// - A Child that is dropped (destroyed or assigned over) before it was reaped kills its process
//   group with SIGKILL and reaps the child. Only waitpid(pid) and wait4(pid) are used, never a
//   wait for any child (-1), which would steal an event loop's children.
// - Reaping reports what the child used (ExitStatus::cpu_ms, max_rss_kib, wall_ms), from wait4(2):
//   its CPU time and peak memory include those of the descendants it waited for itself (a command
//   run as a grandchild under a wrapper is counted), not those of orphans it left behind. The
//   kernel adds to a process's peak, at exec, the memory it shared with its parent: a descendant
//   forked (not posix_spawn'd) by a large process reports at least that process's size.
// - Errors: a program that is not found is Exit::not_found (127), one that cannot be executed is
//   Exit::cannot_exec (126), with messages like "cannot run 'foo': No such file or directory".
//   Nothing here prints, exits or throws.
// - Threads: a Child is used by one thread at a time. spawn() and run() may be called from
//   several threads at once (fds are close-on-exec and nothing global is changed).
#pragma once

#include "lib/fd.hpp"
#include "lib/result.hpp"

#include <sys/types.h>

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace sion {

// What one of the child's fds 0-2 is connected to.
struct Stdio {
    enum class Kind { inherit, pipe, null, fd };
    Kind kind = Kind::inherit;
    int fd = -1; // Kind::fd only: a parent fd, borrowed for the duration of spawn()

    // The parent's own fd of the same number (/dev/null if the parent has it closed).
    [[nodiscard]] static Stdio inherit() { return {Kind::inherit, -1}; }

    // A new pipe; the parent's end is Child::in(), out() or err().
    [[nodiscard]] static Stdio pipe() { return {Kind::pipe, -1}; }

    // /dev/null, opened read-write.
    [[nodiscard]] static Stdio null() { return {Kind::null, -1}; }

    // A duplicate of the parent's `parent_fd`.
    [[nodiscard]] static Stdio from_fd(int parent_fd) { return {Kind::fd, parent_fd}; }
};

// A parent fd the child gets as fd number `child_fd` (3 or more).
struct ExtraFd {
    int parent_fd = -1; // borrowed for the duration of spawn(); may equal child_fd
    int child_fd = -1;
};

struct ChildSpec {
    std::vector<std::string> argv;  // argv[0] names the program (see the contract above)
    std::vector<std::string> env;   // exactly the child's environment: "NAME=value" entries
    std::string cwd;                // the child's working directory; empty: the parent's
    Stdio in, out, err;             // fds 0, 1 and 2
    std::vector<ExtraFd> extra_fds; // fds 3 and up
    std::chrono::milliseconds time_limit{0}; // wall clock from spawn; zero: no limit
};

// How a child ended.
struct ExitStatus {
    int status = 0;         // as the shell's $?: the exit code, or 128 + the signal
    int exit_code = -1;     // the exit code if it exited, else -1
    int signal = 0;         // the signal that ended it, else 0
    bool timed_out = false; // the time limit ran out and the process group was killed
    // What it used, from wait4(2) when it was reaped:
    int64_t wall_ms = 0;     // wall clock from just before spawning to the reap
    int64_t cpu_ms = 0;      // user + system CPU time, its own and its waited-for descendants'
    int64_t max_rss_kib = 0; // ru_maxrss: the largest peak resident set of it or such a descendant
};

// "NAME=value" for each of `names` that is set in the current environment, in the order given.
[[nodiscard]] std::vector<std::string> env_keep(const std::vector<std::string>& names);

// Sets NAME to `value` in `env`, replacing an entry for NAME or adding one at the end.
void env_set(std::vector<std::string>& env, std::string_view name, std::string_view value);

class Child {
public:
    using Clock = std::chrono::steady_clock;

    // Starts the program `spec` describes. Returns once the program runs (or fails to start).
    [[nodiscard]] static Result<Child> spawn(const ChildSpec& spec);

    Child(const Child&) = delete;
    Child& operator=(const Child&) = delete;
    Child(Child&& other) noexcept;
    Child& operator=(Child&& other) noexcept;
    ~Child();

    // The child's pid, which is also its process group id; -1 once reaped.
    [[nodiscard]] pid_t pid() const { return m_pid; }

    // A pidfd for the child, owned by the Child: it polls readable (POLLIN) once the child has
    // exited, so an event loop (a libuv uv_poll_t) can watch it and then call wait(), which will
    // not block. -1 once reaped.
    [[nodiscard]] int pidfd() const { return m_pidfd.get(); }

    // The parent's ends of the pipes asked for with Stdio::pipe() (empty Fds otherwise): write to
    // in(), read from out() and err(). Close in() (reset or move it away) to give the child end of
    // file. They are close-on-exec and blocking; the caller may make them non-blocking.
    [[nodiscard]] Fd& in() { return m_in; }

    [[nodiscard]] Fd& out() { return m_out; }

    [[nodiscard]] Fd& err() { return m_err; }

    // When the time limit runs out, if there is one.
    [[nodiscard]] std::optional<Clock::time_point> deadline() const { return m_deadline; }

    // Waits for the child to end and reaps it. If the time limit runs out first, kills the process
    // group and reports timed_out. Once reaped, returns the same status again.
    [[nodiscard]] Result<ExitStatus> wait();

    // Like wait(), but gives up after `timeout` and returns std::nullopt if the child still runs.
    // A zero timeout only checks.
    [[nodiscard]] Result<std::optional<ExitStatus>> wait_for(std::chrono::milliseconds timeout);

    // Sends `signal` to the child's whole process group. Does nothing once the child is reaped.
    [[nodiscard]] Status kill_group(int signal);

private:
    Child() = default;
    [[nodiscard]] Result<std::optional<ExitStatus>>
    wait_until(std::optional<Clock::time_point> until);
    [[nodiscard]] Result<ExitStatus> reap(bool timed_out);
    void drop() noexcept;

    pid_t m_pid = -1;
    Fd m_pidfd;
    Fd m_in, m_out, m_err;
    Clock::time_point m_spawned{};
    std::optional<Clock::time_point> m_deadline;
    std::optional<ExitStatus> m_status;
};

// What run() collected.
struct RunResult : ExitStatus {
    std::string out, err;
    // The child wrote more than the limit; the rest was read and dropped.
    bool out_truncated = false;
    bool err_truncated = false;
    // How many bytes each stream produced in all, kept or dropped ("how much was cut").
    uint64_t out_total = 0;
    uint64_t err_total = 0;
};

// The first line `program` ("sion-hooks") wrote on stderr, its "sion-hooks: " left off, for a
// message of the caller's; "sion-hooks exited 2" when it wrote none.
[[nodiscard]] std::string first_said(const RunResult& r, std::string_view program);

// This process's whole environment, as ChildSpec::env takes it: for a child of sion's own that
// reads what this one was given ($SION_HOME, providers' keys, SION_EXEC_PATH).
[[nodiscard]] std::vector<std::string> own_environment();

inline constexpr size_t k_default_output_limit = size_t{16} << 20;

// Spawns `spec` with pipes on fds 0-2 (whatever spec.in, out and err say), writes `input` to its
// stdin and closes it, and collects stdout and stderr at the same time, keeping at most
// `output_limit` bytes of each (reading on, so the child never blocks on a full pipe). A child that
// closes its stdin before reading all of `input` is not an error. When the time limit runs out, the
// process group is killed and what was collected so far is returned with timed_out set; otherwise
// run() returns once the child has exited and both pipes are closed, so a grandchild that keeps
// them open keeps run() waiting (give it a time limit). Errors are those of spawning, polling and
// reading. For the same on a libuv loop, many at once, see lib/uv_child.hpp.
[[nodiscard]] Result<RunResult> run(ChildSpec spec, std::string_view input,
                                    size_t output_limit = k_default_output_limit);

} // namespace sion
