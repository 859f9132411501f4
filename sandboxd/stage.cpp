// SPDX-License-Identifier: MIT
// Staging as root: the idmapped workspace and the other sources in a mount namespace of become's
// own, where the unprivileged bwrap reaches them.
#include "sandboxd/stage.hpp"

#include "lib/text.hpp"

#include <fcntl.h>
#include <sched.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace sion::sandboxd {

namespace {

constexpr const char* k_stage_options = "mode=0755,size=64k,nr_inodes=1024";

// Writes `text` to /proc/PID/`file`.
Status write_proc(pid_t pid, const char* file, const std::string& text) {
    std::string path = format("/proc/%d/%s", static_cast<int>(pid), file);
    Fd fd(::open(path.c_str(), O_WRONLY | O_CLOEXEC));
    if (!fd)
        return sys_error(Exit::os, errno, "cannot open '%s'", path.c_str());
    if (::write(fd.get(), text.data(), text.size()) != static_cast<ssize_t>(text.size()))
        return sys_error(Exit::os, errno, "cannot write '%s'", path.c_str());
    return {};
}

// Waits for the namespace's child, which ends when its pipe closes.
void reap(pid_t pid) {
    while (::waitpid(pid, nullptr, 0) < 0 && errno == EINTR) {
    }
}

// Why the workspace could not be idmapped, and the fix.
Error idmap_refused(const std::string& workspace, const char* call, int err) {
    const char* why = nullptr;
    switch (err) {
    case ENOSYS:
        why = "this kernel has no idmapped mounts (Linux 5.12 and later have them): run "
              "sion-sandbox as a user other than root, or on a newer kernel";
        break;
    case EINVAL:
    case EOPNOTSUPP:
        why = "its file system does not support idmapped mounts: give a workspace on ext4, xfs, "
              "btrfs or tmpfs, or run sion-sandbox as a user other than root";
        break;
    case EPERM:
    case EACCES:
        why = "this process may not make mounts (a container without CAP_SYS_ADMIN?): run "
              "sion-sandbox as a user other than root";
        break;
    default:
        why = "run sion-sandbox as a user other than root";
        break;
    }
    return make_error(Exit::config, "cannot map the workspace '%s' to uid %u (%s: %s): %s",
                      workspace.c_str(), k_host_id, call, std::strerror(err), why);
}

// A detached copy of `path` (what is mounted beneath a directory too), nosuid and nodev.
Result<Fd> plain_tree(const std::string& path) {
    Fd tree(::open_tree(AT_FDCWD, path.c_str(), OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC | AT_RECURSIVE));
    if (!tree)
        return sys_error(errno == ENOENT ? Exit::no_input : Exit::os, errno,
                         "cannot stage '%s' for the sandbox", path.c_str());
    mount_attr attr{};
    attr.attr_set = MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV;
    if (::mount_setattr(tree.get(), "", AT_EMPTY_PATH | AT_RECURSIVE, &attr, sizeof attr) != 0)
        return sys_error(Exit::os, errno, "cannot stage '%s' for the sandbox", path.c_str());
    return tree;
}

// Puts `tree` at staged_path(i): on a directory or a file made for it, as the tree is one or not.
Status attach(const Fd& tree, size_t i, const std::string& source) {
    struct stat st {};
    if (::fstat(tree.get(), &st) != 0)
        return sys_error(Exit::os, errno, "cannot inspect '%s'", source.c_str());
    std::string at = staged_path(i);
    int made = S_ISDIR(st.st_mode) ? ::mkdir(at.c_str(), 0755)
                                   : ::mknod(at.c_str(), S_IFREG | 0444, 0);
    if (made != 0)
        return sys_error(Exit::os, errno, "cannot make '%s' to stage '%s'", at.c_str(),
                         source.c_str());
    if (::move_mount(tree.get(), "", AT_FDCWD, at.c_str(), MOVE_MOUNT_F_EMPTY_PATH) != 0)
        return sys_error(Exit::os, errno, "cannot stage '%s' for the sandbox", source.c_str());
    return {};
}

} // namespace

std::string staged_path(size_t i) { return format("%s/%zu", k_stage_dir, i); }

std::vector<std::string> stage_args(const std::string& workspace,
                                    const std::vector<std::string>& paths) {
    std::vector<std::string> args = {"--workspace", workspace};
    for (const std::string& path : paths)
        args.insert(args.end(), {"--stage", path});
    return args;
}

Result<Fd> idmap_userns(uid_t inside, gid_t group_inside) {
    SION_TRY(Pipe ready, Pipe::make());
    SION_TRY(Pipe hold, Pipe::make());
    pid_t pid = ::fork();
    if (pid < 0)
        return sys_error(Exit::os, errno, "cannot fork to make a user namespace");
    if (pid == 0) {
        // Async-signal-safe calls only: the parent may have threads. The pipe's write end is the
        // parent's alone, so that its closing ends this child.
        ::close(hold.write.get());
        char byte = ::unshare(CLONE_NEWUSER) == 0 ? 'y' : 'n';
        if (::write(ready.write.get(), &byte, 1) != 1)
            ::_exit(1);
        while (::read(hold.read.get(), &byte, 1) < 0 && errno == EINTR) {
        }
        ::_exit(0);
    }
    ready.write.reset();
    hold.read.reset();
    char byte = 0;
    ssize_t n = 0;
    while ((n = ::read(ready.read.get(), &byte, 1)) < 0 && errno == EINTR) {
    }
    auto made = [&]() -> Result<Fd> {
        if (n != 1 || byte != 'y')
            return make_error(Exit::os, "cannot make a user namespace for the workspace's mapping");
        SION_CHECK(write_proc(pid, "uid_map", format("%u %u 1\n", static_cast<unsigned>(inside),
                                                     k_host_id)));
        SION_CHECK(write_proc(pid, "gid_map", format("%u %u 1\n",
                                                     static_cast<unsigned>(group_inside),
                                                     k_host_id)));
        std::string ns = format("/proc/%d/ns/user", static_cast<int>(pid));
        Fd fd(::open(ns.c_str(), O_RDONLY | O_CLOEXEC));
        if (!fd)
            return sys_error(Exit::os, errno, "cannot open '%s'", ns.c_str());
        return fd;
    }();
    hold.write.reset();
    reap(pid);
    return made;
}

Result<Fd> idmapped_tree(const std::string& workspace) {
    Fd tree(::open_tree(AT_FDCWD, workspace.c_str(),
                        OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC | AT_RECURSIVE));
    if (!tree)
        return idmap_refused(workspace, "open_tree", errno);
    struct stat st {};
    if (::fstat(tree.get(), &st) != 0)
        return sys_error(Exit::os, errno, "cannot inspect the workspace '%s'", workspace.c_str());
    SION_TRY(Fd userns, idmap_userns(st.st_uid, st.st_gid));
    mount_attr attr{};
    attr.attr_set = MOUNT_ATTR_IDMAP | MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV;
    attr.userns_fd = static_cast<uint64_t>(userns.get());
    if (::mount_setattr(tree.get(), "", AT_EMPTY_PATH | AT_RECURSIVE, &attr, sizeof attr) != 0)
        return idmap_refused(workspace, "mount_setattr", errno);
    return tree;
}

Status stage(const std::string& workspace, const std::vector<std::string>& paths) {
    // Every source is opened before the tmpfs covers k_stage_dir, where one of them may be.
    std::vector<Fd> trees;
    SION_TRY(Fd root, idmapped_tree(workspace));
    trees.push_back(std::move(root));
    for (const std::string& path : paths) {
        SION_TRY(Fd tree, plain_tree(path));
        trees.push_back(std::move(tree));
    }
    if (::unshare(CLONE_NEWNS) != 0)
        return sys_error(Exit::os, errno, "cannot make a mount namespace for the sandbox");
    if (::mount(nullptr, "/", nullptr, MS_REC | MS_SLAVE, nullptr) != 0)
        return sys_error(Exit::os, errno, "cannot keep the sandbox's mounts from the host");
    if (::mount("sion-stage", k_stage_dir, "tmpfs", MS_NOSUID | MS_NODEV | MS_NOEXEC,
                k_stage_options) != 0)
        return sys_error(Exit::os, errno, "cannot mount a tmpfs on '%s' to stage the sandbox",
                         k_stage_dir);
    SION_CHECK(attach(trees[0], 0, workspace));
    for (size_t i = 0; i < paths.size(); ++i)
        SION_CHECK(attach(trees[i + 1], i + 1, paths[i]));
    return {};
}

} // namespace sion::sandboxd
