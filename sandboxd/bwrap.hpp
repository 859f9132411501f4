// SPDX-License-Identifier: MIT
// Starting bubblewrap: finding it, choosing who runs it, opening what the layout binds, and running
// one command in a fresh sandbox (exec) or starting the warm sandbox's init (serve).
//
// Who runs bwrap: this process's user, except that root never does: it stages what the sandbox
// binds and runs bwrap as k_host_id (stage.hpp), re-executed as `sion-sandbox become [--cgroup
// DIR…]
// [--workspace DIR --stage PATH…] UID GID -- bwrap …`, which joins the sandbox's cgroups when there
// are any (cgroup.hpp), stages, drops to UID and GID and execs bwrap, so that every spawn still
// goes through lib/child.
//
// What bwrap binds it finds by path, as the user it runs as: a user's bwrap must be able to reach
// the workspace, the --sandbox-read directories and this program (bwrap 0.8 resolves even a
// descriptor's path with realpath(3), so passing descriptors would not spare that); root's reaches
// them staged.
#pragma once

#include "lib/child.hpp"
#include "lib/fd.hpp"
#include "lib/proto/sandbox_exec.hpp"
#include "lib/result.hpp"
#include "sandboxd/cgroup.hpp"
#include "sandboxd/config.hpp"
#include "sandboxd/mounts.hpp"

#include <sys/types.h>

#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace sion::sandboxd {

// The first executable "bwrap" on $PATH. Exit::unavailable:
//   "cannot find bwrap: install bubblewrap (apt-get install bubblewrap)"
[[nodiscard]] Result<std::string> find_bwrap();

// Who runs bwrap: this process's user, or k_host_id with what it binds staged when that is root.
struct BwrapUser {
    uid_t uid = 0;
    gid_t gid = 0;
    bool staged = false;
};

[[nodiscard]] BwrapUser bwrap_user();

// A bwrap start, prepared: the descriptors it is given stay open while this lives.
struct Launch {
    ChildSpec spec;      // argv: [become …] bwrap <layout>; the caller appends "--" and init
    std::vector<Fd> fds; // owned; spec.extra_fds borrows them
    bool staged = false; // root's: bwrap runs as k_host_id, through `become`
    uid_t uid = 0;       // who runs bwrap
    gid_t gid = 0;
    int env_fd = -1; // where init --exec reads the extra environment (--env-fd), or -1
    // The sandbox's cgroups, where they can be made (bwrap is started in them through
    // `become --cgroup`); removed when dropped, so it must outlive bwrap.
    std::optional<SandboxCgroup> cgroup;
    // The limits init sets: the config's, with memory 0 (no RLIMIT_DATA) when the cgroup bounds
    // the sandbox's memory.
    Limits limits;
};

// The fd number inside the sandbox where init finds its status pipe (exec), when one is given.
inline constexpr int k_status_fd = 3;

// Prepares bwrap for `config`. The command's environment is sandbox_env() with TERM from this
// process, set by bwrap, then `extra` (NAME, value) replacing or adding entries, set by init
// --exec: `extra` travels in a memory file (Launch::env_fd in bwrap and init, an env_block()),
// never on bwrap's command line; the warm init gets each command's in its request
// instead, so `extra` is for init --exec only. `status_fd` (a pipe's write end, borrowed) becomes
// fd k_status_fd in bwrap and init, unless it is -1. `proxy_socket`, when not empty, is bound at
// k_proxy_inside; `trust`, when not empty, is bound at k_ca_bundle_inside and k_egress_ca_inside
// and named by egress_trust_environment()'s variables. The sandbox gets cgroups of its own with pids.max = config.limits.processes
// and the memory limit config.limits.memory where they can be made (find_cgroup_parent()); where
// none can, RLIMIT_NPROC bounds its processes and RLIMIT_DATA each one's memory. Errors:
// Exit::unavailable (no bwrap; the Docker backend, which is not bwrap's), Exit::os.
[[nodiscard]] Result<Launch>
prepare_launch(const Config& config, const std::vector<std::pair<std::string, std::string>>& extra,
               int status_fd, const std::string& proxy_socket = {},
               const EgressTrust& trust = {});

// The arguments after bwrap's layout for one command: "--", init --exec reporting on k_status_fd
// (and reading its extra environment on `env_fd` unless it is -1), with --proxy-socket
// k_proxy_inside when `forward`, the limits, "--" and `argv`.
[[nodiscard]] std::vector<std::string> run_init_argv(const Limits& limits, bool forward,
                                                     const std::vector<std::string>& argv,
                                                     int env_fd = -1);

// Reads the status line init --exec wrote (report_line()) into `r`'s exit, signal, cpu_ms and
// max_rss_kib; false when `text` holds none (init never ran the command).
[[nodiscard]] bool read_status(const std::string& text, proto::ExecResult& r);

// Runs one command in a fresh sandbox (init --exec as its pid 1) within config's limits and the
// request's timeout. `input`: bytes for the command's stdin, or nullopt to pass this process's.
// The result's output is cut at config.limits.output. Errors: Exit::unavailable when bwrap is
// missing or cannot make the sandbox (its message, and the fix when it is known), Exit::config
// when root's workspace cannot be idmapped (stage.hpp), Exit::os and Exit::io. Not for a declared
// network with hosts, which needs the warm sandbox's proxy (warm.hpp).
[[nodiscard]] Result<proto::ExecResult> exec_once(const Config& config,
                                                  const proto::ExecRequest& request,
                                                  const std::optional<std::string>& input);

// What `sion-sandbox become UID GID -- PROGRAM ARGS…` does once it joined the cgroups its --cgroup
// options name (join_cgroup()) and staged what its --workspace and --stage name (stage()): unless
// UID and GID are the effective ones already, drops every supplementary group and sets the group
// and user ids (real, effective, saved); then execs PROGRAM (a path). Returns only on failure
// (Exit::os, Exit::no_perm).
[[nodiscard]] Error become(uid_t uid, gid_t gid, const std::vector<std::string>& argv);

} // namespace sion::sandboxd
