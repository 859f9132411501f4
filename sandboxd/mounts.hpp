// SPDX-License-Identifier: MIT
// The bubblewrap layout: what a command sees (seed "A shell in a sandbox", the table), as bwrap's
// arguments, and the files synthesized for it (/etc/passwd, /etc/group, /etc/hosts).
//
// The machine's programs read-only (/usr, and /bin, /sbin, /lib* as the host has them: symbolic
// links where /usr is merged), a whitelist of /etc (k_etc_whitelist; /etc/ssl/private is not in
// it), --sandbox-read directories read-only at their own paths, the workspace at /workspace
// writable, a private /tmp and /dev/shm of fixed sizes, a new /proc and a minimal read-only /dev,
// this program read-only at k_exe_inside, and nothing else: the root is a read-only tmpfs. User
// 10001 (sandbox) in its own user, pid, ipc, uts, cgroup and (but for --network host) net
// namespaces, no capabilities, no new user namespaces, a new session, killed with its parent, under
// the seccomp filter (seccomp.hpp). In /proc, as Docker has it: /proc/sys, /proc/sysrq-trigger,
// /proc/irq and /proc/bus read-only, and /proc/kcore, /proc/keys and /proc/timer_list masked.
#pragma once

#include "sandboxd/config.hpp"

#include "lib/fd.hpp"

#include <string>
#include <utility>
#include <vector>

namespace sion::sandboxd {

inline constexpr const char* k_exe_inside = "/run/sion/sion-sandbox";
inline constexpr const char* k_workspace_inside = "/workspace";
inline constexpr unsigned k_sandbox_id = 10001;
inline constexpr uint64_t k_tmp_size = uint64_t{256} << 20;
inline constexpr uint64_t k_shm_size = uint64_t{64} << 20;
inline constexpr const char* k_sandbox_path =
    "/usr/local/bin:/usr/bin:/bin:/usr/local/sbin:/usr/sbin:/sbin";

// The entries of /etc shown read-only when the host has them (copied or bound: see EtcCopy).
extern const std::vector<std::string> k_etc_whitelist;
// More of them with --network host: how to reach names.
extern const std::vector<std::string> k_etc_host_network;

// The top-level entries the layout mirrors (/bin, /sbin, /lib, /lib32, /lib64, /libx32): for each
// one the host has, its symbolic link's target, or "" for a directory.
struct HostRoot {
    std::vector<std::pair<std::string, std::string>> entries;
    std::vector<std::string> proc_masked; // of /proc/kcore, /proc/keys, /proc/timer_list, those there
};

// Looks at the host's root and /proc. Entries missing or of another type are left out.
[[nodiscard]] HostRoot probe_host_root();

// A file of the host's /etc copied into the sandbox (bwrap's --file, onto the read-only root)
// instead of bound: each bind costs bwrap a read of the whole mount table to make it read-only, a
// copy only the file's read. The content and permission bits are the host's; the owner is the
// sandbox's user, who cannot change a thing on the read-only root.
struct EtcCopy {
    std::string path; // the same on the host and in the sandbox
    unsigned mode = 0;
    int fd = -1; // its number in bwrap's process
};

// The entries of the host's /etc the layout shows (k_etc_whitelist and, with --network host,
// k_etc_host_network and /etc/hosts), in the order they are laid out.
[[nodiscard]] std::vector<std::string> etc_paths(const Config& config);

// Of `paths`, those that are regular files anyone may read (through a symbolic link too, as a bind
// follows it), open for reading, each with its EtcCopy but for the number. The rest (directories,
// missing entries, files only some may read) are left out, to be bound as before.
[[nodiscard]] std::vector<std::pair<EtcCopy, Fd>>
open_copies(const std::vector<std::string>& paths);

// What bwrap is given besides Config's paths: where this program is (bound at k_exe_inside), the
// descriptors (numbers in bwrap's process) of pipes holding passwd, group and hosts, the declared
// network's proxy socket (bound at k_proxy_inside) when there is one, and the copies of
// etc_paths() (an entry without one is bound). Paths, not descriptors, for what is bound: bwrap
// resolves a descriptor's path and binds that path anyway.
struct Layout {
    // Where bwrap finds the workspace, the --sandbox-read directories and the channel when not at
    // Config's paths (staged, as root: stage.hpp); empty: at Config's.
    std::string workspace;
    std::vector<std::string> reads;
    std::string channel;
    std::string skill;
    std::string exe;
    int seccomp = -1; // the filter (seccomp.hpp), for bwrap's --seccomp
    int passwd = -1;
    int group = -1;
    int hosts = -1;
    std::string proxy_socket;
    int ca_bundle = -1; // EgressTrust's, bound at k_ca_bundle_inside and k_egress_ca_inside
    int egress_ca = -1;
    std::vector<EtcCopy> etc;
};

// What a sandbox whose proxy ends TLS for its grants trusts (grants.hpp), PEM: empty for none.
struct EgressTrust {
    std::string bundle;    // the roots the proxy trusts, and the authority's certificate
    std::string authority; // the authority's certificate alone
};

inline constexpr const char* k_proxy_inside = "/run/sion/proxy.sock";

// bwrap's options for `config`, up to but not including "--" and the command, which is the
// sandbox's pid 1 (init, exec and serve alike). `env` is the command's environment ("NAME=value"),
// set with --clearenv and --setenv.
[[nodiscard]] std::vector<std::string> layout_args(const Config& config, const HostRoot& root,
                                                   const Layout& layout,
                                                   const std::vector<std::string>& env);

// The environment a command starts with: PATH, HOME=/workspace, USER and LOGNAME sandbox,
// SHELL=/bin/sh, LANG=C.UTF-8, and TERM when `term` is not empty.
[[nodiscard]] std::vector<std::string> sandbox_env(const std::string& term);

// The synthesized files.
[[nodiscard]] std::string passwd_text();
[[nodiscard]] std::string group_text();
[[nodiscard]] std::string hosts_text();

} // namespace sion::sandboxd
