// SPDX-License-Identifier: MIT
// Pre-flight: what is checked before anything runs in a sandbox (seed "What the runtime checks
// first"). Each refusal is Exit::config with one line in the seed's words; paths appear as the
// user wrote them (Config's *_as_given), and are compared once resolved.
#pragma once

#include "sandboxd/config.hpp"

#include "lib/result.hpp"

#include <string>
#include <string_view>

namespace sion::sandboxd {

// The workspace may neither hold $SION_HOME nor lie inside it:
//   "the workspace ~/.sion/.. and ~/.sion (wallets, sessions, skills) overlap: give a workspace
//    apart from it"
[[nodiscard]] Status check_workspace(const Config& config);

// No --sandbox-read directory may show $SION_HOME, whole or in part:
//   "the directory ~ given with --sandbox-read and ~/.sion (wallets, sessions, skills) overlap:
//    give a directory apart from it"
[[nodiscard]] Status check_reads(const Config& config);

// Every check above, in order; the first refusal.
[[nodiscard]] Status preflight(const Config& config);

// What `sion-sandbox check` asks besides the refusals above. Each runs a program and waits for it
// (within 15 s, or the configuration's time limit for the command); none prints.

// The version `bwrap --version` prints ("bubblewrap 0.8.0" gives "0.8.0"). Exit::unavailable when
// it cannot be run or says something else.
[[nodiscard]] Result<std::string> bwrap_version(const std::string& bwrap);

// Whether `bwrap` (a path), run by whoever runs it (bwrap_user()), can make a user namespace:
// `bwrap --unshare-user --ro-bind / / -- true`. Exit::unavailable, naming the fix:
//   "user namespaces refused (bwrap: setting up uid map: Permission denied): allow them with
//    sysctl kernel.unprivileged_userns_clone=1"
[[nodiscard]] Status check_userns(const std::string& bwrap);

// The fix for user namespaces that bwrap could not make, from the kernel's settings under
// `proc_sys` (kernel/unprivileged_userns_clone, user/max_user_namespaces,
// kernel/apparmor_restrict_unprivileged_userns) and bwrap's words; the general fix when neither
// tells: "allow them with sysctl kernel.unprivileged_userns_clone=1, or on Ubuntu 24.04 with sysctl
// kernel.apparmor_restrict_unprivileged_userns=0 or an AppArmor profile for bwrap".
[[nodiscard]] std::string userns_fix(std::string_view bwrap_error,
                                     const std::string& proc_sys = "/proc/sys");

// Runs `id -u` in the sandbox `config` describes (exec_one()) and returns what it printed, trimmed.
// Exit::unavailable when the sandbox cannot be made (exec_one()'s message) or the command fails:
//   "id -u exited 1 in the sandbox: <its first line on stderr>"
[[nodiscard]] Result<std::string> run_trivial_command(const Config& config);

// What bounds a bubblewrap sandbox's processes and memory for `config`, said as check says it, a
// line each: cgroups of each sandbox's own (they are made and removed to be sure), else
// RLIMIT_NPROC for the user who runs bwrap, never root (bwrap_user()), and RLIMIT_DATA a process.
[[nodiscard]] std::vector<std::string> bounds(const Config& config);

// Who a command is, said as check says it: as root, k_host_id with the workspace idmapped to its
// owner (stage.hpp); otherwise the user who runs sion-sandbox.
[[nodiscard]] std::string who_runs(const Config& config);

} // namespace sion::sandboxd
