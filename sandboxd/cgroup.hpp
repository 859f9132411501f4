// SPDX-License-Identifier: MIT
// A bubblewrap sandbox's own cgroups: pids.max, the bound on its number of processes, since
// RLIMIT_NPROC does not bind root's processes; and the memory controller's limit on what the whole
// sandbox holds in memory, which is what bounds memory where it can be had; where it cannot, each
// process's RLIMIT_DATA does (never RLIMIT_AS: programs such as Node reserve far more address
// space than they use, for V8's heap and WebAssembly, and fail at their start under it).
//
// Where: beneath the cgroup this process is in (/proc/self/cgroup), in the hierarchy that has the
// controller (/proc/self/mountinfo): cgroup v2 when its cgroup.subtree_control lists it (or takes
// "+pids" or "+memory", as a hierarchy's root does), else cgroup v1's hierarchy of that controller.
// With v2 one directory holds both; with v1 there is one in each hierarchy. A sandbox's cgroup is a
// child made with mkdir, "sion-sandbox-PID-N": root may make it, and so may a user the directory
// was delegated to; anyone else keeps the rlimits alone (RLIMIT_NPROC, RLIMIT_DATA).
//
// Limits: pids.max (fork(2) beyond it fails with EAGAIN, as it does at RLIMIT_NPROC; it counts
// processes and threads); memory.max with memory.swap.max 0 (v2), or memory.limit_in_bytes with
// memory.memsw.limit_in_bytes the same where swap is accounted (v1): past it the kernel reclaims
// what it can, then its OOM killer sends SIGKILL to the largest process of the sandbox, and
// oom_kills() counts that (memory.events' oom_kill, or v1's memory.oom_control).
//
// Joining: the process that starts bwrap moves itself into each cgroup (v1's tasks, else
// cgroup.procs) before it execs (`sion-sandbox become --cgroup DIR…`, join_cgroup()), so every
// process of the sandbox, bwrap's own included, counts from the first.
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

// Where sandboxes' cgroups are made: a directory of a hierarchy with the controller.
struct CgroupParent {
    std::string dir;   // "/sys/fs/cgroup/pids" or "/sys/fs/cgroup/user.slice/…"
    int version = 2;   // 1 or 2
};

// The candidates for `controller` ("pids" or "memory") in the order they are tried, from the text
// of /proc/self/cgroup and /proc/self/mountinfo: the v2 cgroup first, then v1's cgroup of that
// controller. A hierarchy whose mount shows another part of the tree (its root is not above this
// cgroup) is left out.
[[nodiscard]] std::vector<CgroupParent> cgroup_candidates(std::string_view controller,
                                                          std::string_view proc_cgroup,
                                                          std::string_view mountinfo);

// The first candidate of this process in which a cgroup can be made with `controller`'s limits
// (v2: enabling it for its children when it is not yet). Exit::unavailable with why none can, as
// "no cgroup hierarchy has the memory controller" or "cannot enable pids in '…': Device or
// resource busy" (the last reason tried).
[[nodiscard]] Result<CgroupParent> find_cgroup_parent(std::string_view controller);

inline constexpr std::chrono::milliseconds k_cgroup_removal{5000};

// One sandbox's cgroups; move-only. See the removal above.
class SandboxCgroup {
public:
    // Makes the sandbox's cgroups: with pids.max = `processes` beneath the pids controller's
    // parent, and with a memory limit of `memory_bytes` beneath the memory controller's (the same
    // directory when both parents are). Each parent may have been found or not; Exit::unavailable
    // when the pids cgroup cannot be made, or neither can. A memory cgroup that cannot be made is
    // left out, and memory_why() says why. `memory_bytes` 0: none.
    [[nodiscard]] static Result<SandboxCgroup> make(const Result<CgroupParent>& pids,
                                                    const Result<CgroupParent>& memory,
                                                    uint64_t processes, uint64_t memory_bytes);

    SandboxCgroup(SandboxCgroup&& other) noexcept;
    SandboxCgroup& operator=(SandboxCgroup&& other) noexcept;
    SandboxCgroup(const SandboxCgroup&) = delete;
    SandboxCgroup& operator=(const SandboxCgroup&) = delete;
    ~SandboxCgroup();

    // The directories to join: one, or one in each v1 hierarchy.
    [[nodiscard]] std::vector<std::string> dirs() const;
    [[nodiscard]] const std::string& pids_dir() const { return m_pids; }     // "" without
    [[nodiscard]] const std::string& memory_dir() const { return m_memory; } // "" without
    // Why there is no memory cgroup: "" when there is one, or none was asked for.
    [[nodiscard]] const std::string& memory_why() const { return m_memory_why; }
    // How often the kernel's OOM killer has killed a process of the sandbox (0 without memory).
    [[nodiscard]] uint64_t oom_kills() const;

private:
    SandboxCgroup() = default;
    void remove();
    Status make_memory(const CgroupParent& parent, unsigned n, uint64_t bytes, bool shared);

    std::string m_pids, m_memory, m_memory_why;
    int m_memory_version = 2;
};

// Moves the calling process, which must be single-threaded, into the cgroup `dir`. Exit::no_perm
// or Exit::os:
//   "cannot join the cgroup '…': Permission denied"
[[nodiscard]] Status join_cgroup(const std::string& dir);

} // namespace sion::sandboxd
