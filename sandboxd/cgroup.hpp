// SPDX-License-Identifier: MIT
// A bubblewrap sandbox's own cgroup with pids.max: the bound on its number of processes where the
// kernel lets this process make one, since RLIMIT_NPROC does not bind root's processes.
//
// Where: beneath the cgroup this process is in (/proc/self/cgroup), in the hierarchy that has the
// pids controller (/proc/self/mountinfo): cgroup v2 when its cgroup.subtree_control lists pids (or
// takes "+pids", as a hierarchy's root does), else cgroup v1's pids hierarchy. The sandbox's cgroup
// is a child made with mkdir, "sion-sandbox-PID-N": root may make it, and so may a user the
// directory was delegated to; anyone else keeps RLIMIT_NPROC alone.
//
// Joining: the process that starts bwrap moves itself into the cgroup (v1's tasks, else
// cgroup.procs) before it execs (`sion-sandbox become --cgroup DIR`, join_cgroup()), so every
// process of the sandbox, bwrap's own included, counts from the first. pids.max counts processes
// and threads; fork(2) beyond it fails with EAGAIN, as it does at RLIMIT_NPROC.
//
// Removing: a SandboxCgroup that is dropped kills whatever is left in it and removes it, trying for
// k_cgroup_removal at most. One that a killed sion-sandbox left (its PID ended) is removed by the
// next make() beneath the same parent, once it is empty.
#pragma once

#include "lib/result.hpp"

#include <chrono>
#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace sion::sandboxd {

// Where sandboxes' cgroups are made: a directory of a hierarchy with the pids controller.
struct PidsParent {
    std::string dir;   // "/sys/fs/cgroup/pids" or "/sys/fs/cgroup/user.slice/…"
    int version = 2;   // 1 or 2
};

// The candidates in the order they are tried, from the text of /proc/self/cgroup and
// /proc/self/mountinfo: the v2 cgroup first, then v1's pids cgroup. A hierarchy whose mount shows
// another part of the tree (its root is not above this cgroup) is left out.
[[nodiscard]] std::vector<PidsParent> pids_candidates(std::string_view proc_cgroup,
                                                      std::string_view mountinfo);

// The first candidate of this process in which a cgroup can be made with pids.max (v2: enabling
// pids for its children when it is not yet). Exit::unavailable with why none can, as
// "no cgroup hierarchy has the pids controller" or "cannot enable pids in '…': Device or resource
// busy" (the last reason tried).
[[nodiscard]] Result<PidsParent> find_pids_parent();

inline constexpr std::chrono::milliseconds k_cgroup_removal{5000};

// One sandbox's cgroup; move-only. See the removal above.
class SandboxCgroup {
public:
    // Makes a new child of `parent` with pids.max = `max`. Exit::unavailable when it cannot.
    [[nodiscard]] static Result<SandboxCgroup> make(const PidsParent& parent, uint64_t max);

    SandboxCgroup(SandboxCgroup&& other) noexcept;
    SandboxCgroup& operator=(SandboxCgroup&& other) noexcept;
    SandboxCgroup(const SandboxCgroup&) = delete;
    SandboxCgroup& operator=(const SandboxCgroup&) = delete;
    ~SandboxCgroup();

    [[nodiscard]] const std::string& dir() const { return m_dir; }

private:
    explicit SandboxCgroup(std::string dir) : m_dir(std::move(dir)) {}
    void remove();
    static void remove_stale(const std::string& parent);

    std::string m_dir;
};

// Moves the calling process, which must be single-threaded, into the cgroup `dir`. Exit::no_perm
// or Exit::os:
//   "cannot join the cgroup '…': Permission denied"
[[nodiscard]] Status join_cgroup(const std::string& dir);

} // namespace sion::sandboxd
