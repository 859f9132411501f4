// SPDX-License-Identifier: MIT
// A directory that file tools cannot leave (a session's workspace, a documents server's folder).
// Every path is resolved beneath it by the kernel — openat2(2) with RESOLVE_BENEATH and
// RESOLVE_NO_MAGICLINKS, from a directory fd held open — so neither "..", an absolute path, a link
// planted in it nor one swapped in while a tool works leads outside. Links that stay inside are
// followed. Writes go to a new file beside the target, in the target's directory as opened beneath
// the root, and are renamed over it there (renameat): a link at the target is replaced, never
// written through.
//
// Every member that takes a path takes it as a model wrote it — relative to the root
// ("src/main.rs"), or absolute under the root or under /workspace as the sandbox shows it — and
// normalises it with relative() first. Errors are one line for the model, naming the path as given,
// and the workspace as "the " + the last name of `shown_as`: relative() says
// Exit::no_perm "'../x' is outside the workspace"; the others say what they could not do first:
// "cannot read '../x': '../x' is outside the workspace" (Exit::no_perm, also for a link that leads
// out, EXDEV), "cannot read 'x': No such file or directory" (Exit::no_input), Exit::data for a path
// of the wrong kind ("cannot write 'src': it is a directory"), Exit::io for the rest.
//
// What holds, and what does not:
// - A link is followed only when it is relative and stays beneath the root; an absolute link is
//   taken to lead outside, even one naming a place inside (the sandbox's /workspace is not the
//   root's path here). /proc's magic links (/proc/self/root, /proc/N/fd/M) are never followed.
// - A hard link is a name inside the root: reading it reads the file it names wherever that file
//   was linked from. Writing never changes a file in place (a new file is renamed over the name),
//   so a write through a hard link replaces the name and leaves the other file as it was.
// - A directory opened beneath the root stays open while it is written in: a process that moves it
//   elsewhere in the root moves the write with it, still inside. Moving it out of the root takes
//   write access outside the root, which the sandbox does not have.
//
// With Links::refused (a documents server's folder) no link is followed at all, not even one that
// stays inside: every lookup adds RESOLVE_NO_SYMLINKS, a path that is a link or passes through one
// is Exit::no_perm "cannot read 'x': it is a symbolic link, or in a folder that is one", and a write
// whose target is a link is refused the same way rather than replacing it. Where openat2 is
// refused (a seccomp filter: sion-sandbox's refuses it with ENOSYS), such a Confined looks paths
// up one name at a time with openat(2) and O_NOFOLLOW instead, which follows no link either; one
// that follows links inside cannot, and open() fails with Exit::unavailable.
//
// Threads: a Confined may be used from several threads at once (it only holds an fd).
#pragma once

#include "lib/fd.hpp"
#include "lib/result.hpp"

#include <sys/types.h>

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace sion {

// Directories a tree walk passes over, by name: version control's (.git .hg .svn .bzr _darcs .jj),
// dependencies' (node_modules bower_components .venv .tox .nox .eggs .yarn .pnpm-store .bundle),
// builds' and tools' caches (target __pycache__ .mypy_cache .pytest_cache .ruff_cache .cache
// .gradle .next .nuxt .svelte-kit .parcel-cache .turbo .terraform .dart_tool .stack-work
// dist-newstyle zig-cache .zig-cache zig-out CMakeFiles). "build", "dist", "out", "vendor" and
// "venv" are not among them: each is a real source directory in enough projects (build scripts,
// committed bundles, vendored Go modules) that passing them over by name would hide code; a build
// or a virtual environment is passed over by its marker instead (Confined::walk).
[[nodiscard]] bool passed_over(std::string_view dir_name);

class Confined {
public:
    // Whether links that stay beneath the root are followed (the code tools), or none is.
    enum class Links { inside, refused };

    // The directory `root` (absolute), opened O_PATH. `shown_as` is what the model calls it
    // ("/workspace"), accepted as a prefix by relative() and used in messages ("the workspace").
    [[nodiscard]] static Result<Confined> open(const std::string& root,
                                               std::string shown_as = "/workspace",
                                               Links links = Links::inside);

    [[nodiscard]] const std::string& root() const { return m_root; }

    // `given` as a path relative to the root, normalised ("a/./b" is "a/b"; "" and "." are the root
    // itself, as "."). ".." that would climb above the root, and absolute paths other than the
    // root's or `shown_as`'s, are Exit::no_perm. Nothing is looked up.
    [[nodiscard]] Result<std::string> relative(std::string_view given) const;

    // open(2) of `rel` beneath the root with `flags` (O_CLOEXEC added).
    [[nodiscard]] Result<Fd> open_at(std::string_view rel, int flags, mode_t mode = 0) const;

    struct Entry {
        std::string rel; // relative to the root
        bool is_dir = false;
        bool is_file = false; // a regular file
        bool is_link = false;
        uint64_t size = 0;
        mode_t mode = 0;
    };

    // lstat of `rel` (a link is described, not followed); Exit::no_input when it does not exist.
    [[nodiscard]] Result<Entry> stat(std::string_view rel) const;

    // The bytes of the regular file `rel`, at most `limit` (more is Exit::data "cannot read 'x': it
    // is larger than N bytes"). A directory or anything not a regular file is Exit::data; a FIFO is
    // not waited on, and is refused too.
    [[nodiscard]] Result<std::string> read(std::string_view rel, size_t limit) const;
    // The same into `buffer`, which is only grown (never shrunk or cleared), so that a caller reading
    // many files allocates only as the largest grows: the number of bytes read into its start, or
    // std::nullopt when the file is larger than `limit` (not an error here).
    [[nodiscard]] Result<std::optional<size_t>> read_into(std::string_view rel, size_t limit,
                                                          std::string& buffer) const;

    // A new text for `rel`, written beside it (mode: the old file's, else 0666 less the umask) and
    // fsynced, not yet in place. commit() renames it over `rel`; a Staged dropped uncommitted
    // removes its file. apply_patch stages every file first, so a patch that does not fit changes
    // nothing.
    class Staged {
    public:
        Staged(Staged&& other) noexcept;
        Staged& operator=(Staged&& other) noexcept;
        Staged(const Staged&) = delete;
        Staged& operator=(const Staged&) = delete;
        ~Staged();
        [[nodiscard]] Status commit();

    private:
        friend class Confined;

        Staged(Fd dir, std::string temp, std::string name, std::string given)
            : m_dir(std::move(dir)), m_temp(std::move(temp)), m_name(std::move(name)),
              m_given(std::move(given)) {}

        void drop();
        Fd m_dir;            // the target's directory, opened beneath the root
        std::string m_temp;  // the new file's name in it; "" once committed or dropped
        std::string m_name;  // the target's name in it
        std::string m_given; // the path as given, for messages
    };

    // Creates `rel`'s missing directories (beneath the root) and stages `content` for it. The new
    // file is "<name>.sion-<12 hex digits>" beside the target (".sion-<hex>.tmp" for a name too
    // long for that). commit() fails when called twice.
    [[nodiscard]] Result<Staged> stage(std::string_view rel, std::string_view content) const;
    // stage() and commit() at once.
    [[nodiscard]] Status write(std::string_view rel, std::string_view content) const;
    // Removes the file (not a directory) `rel`.
    [[nodiscard]] Status remove(std::string_view rel) const;

    // Every entry below the directory `rel` ("." for all; the directory itself is not visited),
    // depth first, in the order of their paths sorted bytewise ("a.rs" before "a/b.rs", so what is
    // visited comes sorted), passing over the directories passed_over() names and those marked as
    // build output (holding CACHEDIR.TAG, CMakeCache.txt or pyvenv.cfg), not following links to
    // directories (a link is visited as a link) and entering at most 64 levels. `rel` itself may be
    // a passed-over directory, or a link that stays inside: it was asked for. `visit` returns false
    // to stop. A directory that cannot be opened (gone, swapped for a link meanwhile) is passed
    // over. At most `max_entries` are visited (Exit::data "cannot list 'x': more than N entries"
    // past that, so a huge tree is an answer, not a hang). An entry says what kind of file it is,
    // as the directory's listing says it (looked up only where the filesystem does not say); its
    // size and permission bits are not looked up (0), so a walk costs no stat(2) a file.
    [[nodiscard]] Status walk(std::string_view rel, const std::function<bool(const Entry&)>& visit,
                              size_t max_entries = 1000000) const;
    // The same, `visit` telling whether to enter a directory it was shown.
    enum class Visit { go_on, skip_dir, stop };
    [[nodiscard]] Status walk(std::string_view rel, const std::function<Visit(const Entry&)>& visit,
                              size_t max_entries = 1000000) const;

private:
    Confined(Fd fd, std::string root, std::string shown_as, uint64_t resolve)
        : m_fd(std::move(fd)), m_root(std::move(root)), m_shown_as(std::move(shown_as)),
          m_resolve(resolve) {}

    [[nodiscard]] std::string outside(std::string_view given) const;
    // "cannot <verb> 'given': why" for a failed lookup or call.
    [[nodiscard]] Error fail(const char* verb, std::string_view given, int err) const;

    Fd m_fd; // O_PATH | O_DIRECTORY
    std::string m_root;
    std::string m_shown_as;
    uint64_t m_resolve; // openat2's RESOLVE_* flags for every lookup beneath the root
};

} // namespace sion
