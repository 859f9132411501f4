// SPDX-License-Identifier: MIT
// Files only the user may read and change: written whole and atomically, and a lock that serialises
// the commands that read, change and write one. Nothing here prints or exits.
#pragma once

#include "lib/fd.hpp"
#include "lib/result.hpp"

#include <string>
#include <string_view>

namespace sion {

// Creates the directory `dir` with mode 0700 (whatever the umask) if it does not exist; its parent
// must. An existing one is left as it is (check_private judges it). Errors: Exit::os or
// Exit::no_perm "cannot create directory 'D': <errno text>".
[[nodiscard]] Status ensure_private_directory(const std::string& dir);

// Replaces `path` with `data`: a new file beside it (mode 0600, O_EXCL, not through a link) is
// written, fsynced and renamed over `path`, then the directory is fsynced. A crash at any point
// leaves the old file or the new one. Messages name `path`, not the temporary file, which is
// removed on failure.
[[nodiscard]] Status write_private_file(const std::string& path, std::string_view data);

// Writes `data` to `path` as write_private_file does, unless something is at `path` already: then
// it returns false and changes nothing, even when another process made it meanwhile (the rename
// does not replace, with link(2) where the filesystem has no RENAME_NOREPLACE).
[[nodiscard]] Result<bool> create_private_file(const std::string& path, std::string_view data);

// Makes a rename into `path`'s directory durable by fsyncing that directory. Errors: Exit::os
// "cannot open directory 'D': <errno text>", Exit::io "cannot sync directory 'D': <errno text>".
[[nodiscard]] Status sync_directory_of(const std::string& path);

// An exclusive flock(2) on the directory `dir`, held until the Fd is closed; it waits for another
// holder. Errors: Exit::os "cannot lock directory 'D': <errno text>".
[[nodiscard]] Result<Fd> lock_directory(const std::string& dir);

} // namespace sion
