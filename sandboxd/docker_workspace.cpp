// SPDX-License-Identifier: MIT
// A Docker container's user and workspace: the owner's, or k_host_id's with the workspace idmapped.
#include "sandboxd/docker_workspace.hpp"

#include "sandboxd/stage.hpp"

#include "lib/text.hpp"

#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdlib>

namespace sion::sandboxd {

namespace {

constexpr std::string_view k_prefix = "docker-";

void unmount(const std::string& dir) {
    std::string at = dir + "/workspace";
    (void)::umount2(at.c_str(), MNT_DETACH);
    ::rmdir(at.c_str());
    ::rmdir(dir.c_str());
}

// Removes the mounts of sion-sandboxes that ended without removing theirs.
void remove_stale() {
    DIR* dir = ::opendir(k_docker_mounts);
    if (dir == nullptr)
        return;
    while (const dirent* e = ::readdir(dir)) {
        std::string_view name = e->d_name;
        if (name.substr(0, k_prefix.size()) != k_prefix)
            continue;
        long pid = std::strtol(std::string(name.substr(k_prefix.size())).c_str(), nullptr, 10);
        if (pid > 0 && ::kill(static_cast<pid_t>(pid), 0) != 0 && errno == ESRCH)
            unmount(std::string(k_docker_mounts) + "/" + std::string(name));
    }
    ::closedir(dir);
}

Status make_dir(const std::string& path, mode_t mode) {
    if (::mkdir(path.c_str(), mode) != 0 && errno != EEXIST)
        return sys_error(Exit::os, errno, "cannot make '%s' for the workspace's mount", path.c_str());
    struct stat st {};
    if (::lstat(path.c_str(), &st) != 0 || !S_ISDIR(st.st_mode) || st.st_uid != 0)
        return make_error(Exit::os, "cannot use '%s' for the workspace's mount: not root's directory",
                          path.c_str());
    return {};
}

} // namespace

Result<DockerWorkspace> DockerWorkspace::open(const Config& config) {
    struct stat st {};
    if (::stat(config.workspace.c_str(), &st) != 0)
        return sys_error(Exit::no_input, errno, "cannot use the workspace '%s'",
                         config.workspace.c_str());
    if (!S_ISDIR(st.st_mode))
        return make_error(Exit::no_input, "cannot use the workspace '%s': Not a directory",
                          config.workspace.c_str());
    DockerWorkspace w;
    w.uid = st.st_uid;
    w.gid = st.st_gid;
    w.source = config.workspace;
    if (st.st_uid != 0)
        return w;
    if (::geteuid() != 0)
        return make_error(Exit::config,
                          "the workspace '%s' is root's, and its commands would run as root: give a "
                          "workspace of another user's, or run sion-sandbox as root, which maps it "
                          "to uid %u",
                          config.workspace.c_str(), k_host_id);
    remove_stale();
    SION_TRY(Fd tree, idmapped_tree(config.workspace));
    SION_CHECK(make_dir(k_docker_mounts, 0700));
    static std::atomic<unsigned> counter{0};
    std::string dir = format("%s/%s%d-%u", k_docker_mounts, std::string(k_prefix).c_str(),
                             static_cast<int>(::getpid()), ++counter);
    SION_CHECK(make_dir(dir, 0700));
    w.m_mount = dir;
    std::string at = dir + "/workspace";
    SION_CHECK(make_dir(at, 0700));
    if (::move_mount(tree.get(), "", AT_FDCWD, at.c_str(), MOVE_MOUNT_F_EMPTY_PATH) != 0)
        return sys_error(Exit::os, errno, "cannot mount the workspace '%s' for the container",
                         config.workspace.c_str());
    w.uid = k_host_id;
    w.gid = k_host_id;
    w.source = at;
    return w;
}

DockerWorkspace::DockerWorkspace(DockerWorkspace&& other) noexcept
    : uid(other.uid), gid(other.gid), source(std::move(other.source)),
      m_mount(std::move(other.m_mount)) {
    other.m_mount.clear();
}

DockerWorkspace::~DockerWorkspace() {
    if (!m_mount.empty())
        unmount(m_mount);
}

} // namespace sion::sandboxd
