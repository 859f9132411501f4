// SPDX-License-Identifier: MIT
// $SION_HOME: where sion keeps its state, making sure only its user can change it, and whether
// another path (a workspace) overlaps it.
//
// "The user" is the process's effective uid. Permissions are judged by mode bits and owners; ACLs
// are not read. Nothing here prints or changes the process's state; the environment is read with
// getenv, so do not call these while another thread may change it.
#pragma once

#include "lib/result.hpp"

#include <string>

namespace sion {

// Where sion keeps its state: $SION_HOME if set and non-empty, else $HOME/.sion, else the passwd
// entry's home directory + "/.sion". Repeated and trailing slashes are dropped.
// Errors (Exit::config): "invalid SION_HOME 'x': not an absolute path" (HOME likewise), and "cannot
// find a home directory for uid N: set SION_HOME" when there is none.
[[nodiscard]] Result<std::string> resolve_home();

// Makes `home` (an absolute path) ready for sion's state.
//
// Missing, it is created with mode 0700, exactly, whatever the umask. Its parent must exist: a
// mistyped SION_HOME is an error (Exit::config), not a tree of new directories.
//
// Existing, it must be a directory itself, not a symbolic link (lstat; set SION_HOME to the link's
// target instead), owned by the user, and writable by neither its group nor others. Mode 0755 is
// fine (others may read it); 0775 and 0777 are not. A refused home is left as it is.
//
// Refusals are Exit::no_perm, one line naming what is wrong and the fix:
//   refusing SION_HOME '/x': others may write it (chmod 700 '/x')
//   refusing SION_HOME '/x': the group may write it (chmod 700 '/x')
//   refusing SION_HOME '/x': it is owned by uid 1000, not by you (chown 0 '/x')
//   refusing SION_HOME '/x': it is a symbolic link (set SION_HOME to the directory it points to)
//   refusing SION_HOME '/x': not a directory (move it aside)
[[nodiscard]] Status ensure_home(const std::string& home);

// resolve_home(), then ensure_home() on it; the path it made ready.
[[nodiscard]] Result<std::string> prepare_home();

// Checks that nobody but the user (or root) can change `path`, a file or directory whose contents
// sion trusts (hooks, routes, keys): neither `path` nor the directory holding it may be writable by
// group or others, both must be owned by the user or root, and `path` must not be a symbolic link.
// `what` names it in messages, which are Exit::no_perm:
//   refusing hooks file '/h/hooks.json': others may write it (chmod go-w '/h/hooks.json')
//   refusing hooks file '/h/hooks.json': others may write its directory (chmod go-w '/h')
// A missing `path` is Exit::no_input: cannot inspect hooks file 'P': No such file or directory.
[[nodiscard]] Status check_private(const std::string& path, const char* what);

// `path` made absolute against the current directory, with the symbolic links of its longest
// existing prefix resolved (realpath), and ".", ".." and repeated slashes of the rest resolved by
// name. The result has no trailing slash (except "/").
// Errors: a prefix that cannot be searched ("cannot resolve path 'P': Permission denied").
[[nodiscard]] Result<std::string> resolve_path(const std::string& path);

// Whether `a` and `b` overlap: the same, or one inside the other, once each is resolved as
// resolve_path does. "/a/b" and "/a/bc" do not overlap; "/" overlaps everything.
[[nodiscard]] Result<bool> paths_overlap(const std::string& a, const std::string& b);

} // namespace sion
