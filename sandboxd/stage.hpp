// SPDX-License-Identifier: MIT
// Who a command is when root starts the sandbox: never host root. bwrap runs as k_host_id (uid and
// gid), an id no account should have, so that no process of a command has host uid 0 whatever the
// workspace's owner; what it writes in the workspace still comes out as the owner's, through an
// idmapped mount of the workspace (Linux 5.12 or later, on a file system that supports them: ext4,
// xfs, btrfs, tmpfs since 6.3, overlayfs since 5.19), as systemd-nspawn and Incus do.
//
// Staging: `sion-sandbox become --workspace DIR [--stage PATH]… UID GID -- bwrap …`, as root, in a
// mount namespace of its own (a slave of the host's: nothing it mounts is seen outside, and it ends
// with bwrap): a tmpfs on k_stage_dir holds the workspace, idmapped so that its owner's uid and its
// group are k_host_id, at staged_path(0), and each PATH (a --sandbox-read directory, this program,
// a socket) bound as it is at staged_path(1), staged_path(2)…; then it drops to k_host_id and execs
// bwrap, which binds the staged paths where the layout wants them. Root opens the sources, so the
// unprivileged bwrap needs to reach none of their directories; what a staged directory holds is
// read as k_host_id reads it (what others may not read stays unreadable). The workspace and the
// staged paths are mounted nosuid and nodev.
//
// A machine where the workspace cannot be idmapped (an older kernel, a file system without the
// support, no right to make mounts) is refused: become exits Exit::config with one line naming the
// cause and the fix, and never runs the command as root instead.
#pragma once

#include "lib/fd.hpp"
#include "lib/result.hpp"

#include <sys/types.h>

#include <string>
#include <vector>

namespace sion::sandboxd {

// The host's uid and gid of every command root starts in a bubblewrap sandbox.
inline constexpr unsigned k_host_id = 2000010001;

// Where become's own mount namespace holds what it staged (a tmpfs over the host's).
inline constexpr const char* k_stage_dir = "/run";

// Where become stages its i-th path: 0 the workspace, then each --stage in order.
[[nodiscard]] std::string staged_path(size_t i);

// become's options for staging `workspace` and `paths`, in staged_path()'s order.
[[nodiscard]] std::vector<std::string> stage_args(const std::string& workspace,
                                                  const std::vector<std::string>& paths);

// What become does before it drops to k_host_id (call it as root, single-threaded): the mount
// namespace, the tmpfs, the idmapped workspace and the other paths bound. Errors:
//   Exit::config "cannot map the workspace '/w' to uid 2000010001: …: <why and the fix>"
//   Exit::no_input "cannot stage '/x' for the sandbox: No such file or directory"
//   Exit::os for the namespace and the tmpfs
[[nodiscard]] Status stage(const std::string& workspace, const std::vector<std::string>& paths);

// A user namespace whose uid `inside` and gid `group_inside` are k_host_id outside, as the
// descriptor of its /proc/PID/ns/user (made by a child that ends once it is open). Root only.
// Exit::os.
[[nodiscard]] Result<Fd> idmap_userns(uid_t inside, gid_t group_inside);

// A detached copy of `workspace` (and what is mounted beneath it), idmapped so that its owner and
// its group are k_host_id, nosuid and nodev, to be attached with move_mount(2). Root only. The
// errors of stage() for the workspace.
[[nodiscard]] Result<Fd> idmapped_tree(const std::string& workspace);

} // namespace sion::sandboxd
