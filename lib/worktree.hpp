// SPDX-License-Identifier: MIT
// A subagent's worktree (seed 000, "Subagents that change code"): the HEAD of its parent's
// repository checked out in a directory of its own under the user's cache, and, once the subagent
// is done, what it changed there committed on a branch sion/<name> of that repository.
//
// Git runs on this machine and the subagent's sandbox could have changed any file of the checkout,
// so nothing in the checkout is trusted:
// - The checkout holds no .git, and git is never asked to find a repository: the repository's git
//   directory is named outright (GIT_DIR), as found before any agent worked. A .git the subagent
//   planted is neither read nor committed. Git in the sandbox finds no repository.
// - Git never reads a file of the checkout. Files are written here from `git cat-file --batch`, as
//   the repository stores them, and read back here, each opened beneath the checkout with no link
//   followed (a link is committed as a link). So no filter, text conversion or ident expansion runs
//   either way, whatever .gitattributes says, and Git LFS files are checked out as their pointers.
// - New files are those `git ls-files --others --exclude-standard` lists (it reads .gitignore files
//   as data); the commit is made with `git fast-import` (no index, no hooks, no signing) and the
//   branch created with `git update-ref`, which refuses to move a branch that exists.
// - Every git runs with no GIT_* variable of the environment, in the C locale, and with hooks
//   (core.hooksPath=/dev/null), the file-system monitor (core.fsmonitor=false), commit signing and
//   automatic maintenance (gc.auto=0, maintenance.auto=false) off. The commands run are rev-parse,
//   ls-tree, cat-file, ls-files, fast-import, diff-tree, for-each-ref and update-ref, none of which
//   runs a program the repository's configuration names once those are off.
// - Run by root in a repository of another user's, the git commands that write to it run as that
//   user (setpriv), so what they add to the repository stays its owner's.
//
// A file changed is told from one left as it was by its inode, size, modification and change
// times, recorded as the checkout wrote it; make() returns only once the file system's clock has
// passed the last of them, so no later write can leave them as they were.
#pragma once

#include "lib/result.hpp"

#include <sys/types.h>

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace sion {

// Where a workspace's repository is, looked at (lstat and a read of `workspace`/.git) before any
// agent works in the workspace.
struct WorkspaceRepository {
    std::string git_dir; // its git directory, when the workspace is a repository's root
    std::string why_not; // otherwise, why it gives no worktree
};

// `workspace` (absolute, resolved) is a repository's root when it holds a .git directory, or a .git
// file of a linked worktree ("gitdir: …"). Otherwise why_not is "the workspace W is a folder of the
// git repository at R, not its root" or "the workspace W is not in a git repository".
[[nodiscard]] WorkspaceRepository find_workspace_repository(const std::string& workspace);

// $XDG_CACHE_HOME/sion-worktrees (an absolute XDG_CACHE_HOME only), else ~/.cache/sion-worktrees,
// made 0700 when missing; an existing one must be a directory of the user's, not a link.
[[nodiscard]] Result<std::string> worktrees_dir();

class Worktree {
public:
    // HEAD of the repository at `git_dir` checked out in a new directory `dir`/<name>-XXXXXX.
    // `name` is a subagent's: 1 to 32 of a-z, 0-9 and '-'. Errors say what failed, git's own words
    // after a colon ("cannot check out HEAD of '/r/.git': git rev-parse: fatal: …"); nothing is
    // left behind.
    [[nodiscard]] static Result<Worktree> make(const std::string& git_dir, std::string_view name,
                                               const std::string& dir);

    Worktree(Worktree&& other) noexcept;
    Worktree& operator=(Worktree&& other) noexcept;
    Worktree(const Worktree&) = delete;
    Worktree& operator=(const Worktree&) = delete;
    ~Worktree(); // remove()

    [[nodiscard]] const std::string& path() const { return m_path; }

    // The commit checked out.
    [[nodiscard]] const std::string& base() const { return m_base; }

    struct Committed {
        std::string branch; // "sion/fix", "sion/fix-2" when that was taken; "" if nothing changed
        std::string stat;   // "1 file changed, 1 insertion(+)"
    };

    // What changed in the checkout since make(), committed on top of base() by "sion subagent
    // <name>" with `message`, on a new branch sion/<name>, or sion/<name>-2 (-3, …) when that is
    // taken. Nothing changed (or only ignored files, or files written back as they were): no
    // commit and no branch. Files above 1 GiB are an error (Exit::data) and nothing is committed.
    [[nodiscard]] Result<Committed> commit(std::string_view message);

    // Removes the checkout (no link in it followed). Idempotent.
    void remove();

    // Leaves the checkout where it is: neither remove() nor the destructor will remove it.
    void keep() { m_path.clear(); }

    // A file as the checkout wrote it.
    struct Tracked {
        std::string path;
        std::string mode; // "100644", "100755", "120000" or "160000" (a submodule: a directory)
        std::string oid;
        ino_t ino = 0;
        off_t size = 0;
        int64_t mtime_ns = 0;
        int64_t ctime_ns = 0;
    };

private:
    Worktree() = default;

    std::string m_git_dir;
    std::string m_name;
    std::string m_path; // "" once removed
    std::string m_base;
    std::vector<Tracked> m_tracked; // sorted by path
};

} // namespace sion
