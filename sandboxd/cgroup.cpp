// SPDX-License-Identifier: MIT
// Finding where a sandbox's cgroups can be made, making them with their limits, joining them and
// removing them.
#include "sandboxd/cgroup.hpp"

#include "lib/fd.hpp"
#include "lib/text.hpp"

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <csignal>
#include <cstdlib>
#include <thread>

namespace sion::sandboxd {

namespace {

constexpr size_t k_file_max = size_t{1} << 20;
// The pause between tries at removing a cgroup: from the first up to the last, doubling. Killed
// processes usually leave within a millisecond or two; a session's end waits for them.
constexpr std::chrono::microseconds k_first_removal_pause{500};
constexpr std::chrono::microseconds k_last_removal_pause{10000};

std::vector<std::string_view> split(std::string_view text, char sep) {
    std::vector<std::string_view> parts;
    for (;;) {
        size_t at = text.find(sep);
        parts.push_back(text.substr(0, at));
        if (at == std::string_view::npos)
            return parts;
        text.remove_prefix(at + 1);
    }
}

bool has_word(std::string_view text, std::string_view word, char sep) {
    for (std::string_view part : split(text, sep))
        if (part == word)
            return true;
    return false;
}

// The cgroup's directory beneath a mount of its hierarchy whose root is `root`, or "".
std::string beneath(std::string_view mountpoint, std::string_view root, std::string_view path) {
    if (root == "/")
        root = "";
    if (path.substr(0, root.size()) != root ||
        (path.size() > root.size() && path[root.size()] != '/'))
        return "";
    path.remove_prefix(root.size());
    if (path == "/")
        path = "";
    return std::string(mountpoint) + std::string(path);
}

// A mount's root, mount point and, past the "-", its type and super options.
struct Mount {
    std::string_view root, point, type, options;
};

std::vector<Mount> cgroup_mounts(std::string_view mountinfo) {
    std::vector<Mount> mounts;
    for (std::string_view line : split(mountinfo, '\n')) {
        std::vector<std::string_view> f = split(line, ' ');
        size_t dash = 6;
        while (dash < f.size() && f[dash] != "-")
            ++dash;
        if (dash + 3 >= f.size() || f[4].find('\\') != std::string_view::npos)
            continue; // an escaped mount point is none of the cgroup file systems'
        if (f[dash + 1] == "cgroup" || f[dash + 1] == "cgroup2")
            mounts.push_back({f[3], f[4], f[dash + 1], f[dash + 3]});
    }
    return mounts;
}

Result<std::string> read_file(const std::string& path) {
    Fd fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC));
    if (!fd)
        return sys_error(Exit::os, errno, "cannot read '%s'", path.c_str());
    return read_all(fd.get(), k_file_max);
}

// One write of `text` to a cgroup's file: 0, or the errno it failed with.
int write_file(const std::string& path, std::string_view text) {
    Fd fd(::open(path.c_str(), O_WRONLY | O_CLOEXEC));
    if (!fd)
        return errno;
    ssize_t n = ::write(fd.get(), text.data(), text.size());
    if (n < 0)
        return errno;
    return static_cast<size_t>(n) == text.size() ? 0 : EIO;
}

// Whether cgroups with `controller`'s limits can be made in `parent`; v2's controller enabled for
// its children if it can be.
Status usable(const CgroupParent& parent, std::string_view controller) {
    if (::access(parent.dir.c_str(), W_OK) != 0)
        return sys_error(Exit::unavailable, errno, "cannot make a cgroup in '%s'", parent.dir.c_str());
    if (parent.version == 1)
        return {};
    std::string control = parent.dir + "/cgroup.subtree_control";
    SION_TRY(std::string enabled, read_file(control));
    if (has_word(enabled.substr(0, enabled.find('\n')), controller, ' '))
        return {};
    SION_TRY(std::string available, read_file(parent.dir + "/cgroup.controllers"));
    std::string name(controller);
    if (!has_word(available.substr(0, available.find('\n')), controller, ' '))
        return make_error(Exit::unavailable, "the %s controller is not available in '%s'",
                          name.c_str(), parent.dir.c_str());
    if (int err = write_file(control, "+" + name); err != 0)
        return sys_error(Exit::unavailable, err, "cannot enable %s in '%s'", name.c_str(),
                         control.c_str());
    return {};
}

// A number from a line "NAME N" of a cgroup's keyed file, or 0.
uint64_t keyed_value(const std::string& path, std::string_view name) {
    auto text = read_file(path);
    if (!text)
        return 0;
    for (std::string_view line : split(*text, '\n')) {
        std::vector<std::string_view> f = split(line, ' ');
        if (f.size() == 2 && f[0] == name)
            return std::strtoull(std::string(f[1]).c_str(), nullptr, 10);
    }
    return 0;
}

} // namespace

std::vector<CgroupParent> cgroup_candidates(std::string_view controller,
                                          std::string_view proc_cgroup,
                                          std::string_view mountinfo) {
    std::string v2_path, v1_path;
    for (std::string_view line : split(proc_cgroup, '\n')) {
        std::vector<std::string_view> f = split(line, ':');
        if (f.size() < 3)
            continue;
        // The path may hold colons of its own.
        std::string_view path = line.substr(f[0].size() + f[1].size() + 2);
        if (f[0] == "0" && f[1].empty())
            v2_path = path;
        else if (has_word(f[1], controller, ','))
            v1_path = path;
    }
    std::vector<CgroupParent> out;
    std::vector<Mount> mounts = cgroup_mounts(mountinfo);
    for (const Mount& m : mounts)
        if (m.type == "cgroup2" && !v2_path.empty()) {
            if (std::string dir = beneath(m.point, m.root, v2_path); !dir.empty()) {
                out.push_back({dir, 2});
                break;
            }
        }
    for (const Mount& m : mounts)
        if (m.type == "cgroup" && !v1_path.empty() && has_word(m.options, controller, ',')) {
            if (std::string dir = beneath(m.point, m.root, v1_path); !dir.empty()) {
                out.push_back({dir, 1});
                break;
            }
        }
    return out;
}

Result<CgroupParent> find_cgroup_parent(std::string_view controller) {
    auto cgroup = read_file("/proc/self/cgroup");
    auto mountinfo = read_file("/proc/self/mountinfo");
    if (!cgroup || !mountinfo)
        return Error(Exit::unavailable, (!cgroup ? cgroup : mountinfo).error().message());
    std::string name(controller);
    Error why(Exit::unavailable, format("no cgroup hierarchy has the %s controller", name.c_str()));
    for (const CgroupParent& candidate : cgroup_candidates(controller, *cgroup, *mountinfo)) {
        Status ok = usable(candidate, controller);
        if (ok)
            return candidate;
        why = Error(Exit::unavailable, ok.error().message());
    }
    return why;
}

namespace {

// rmdir fails with EBUSY while a process is left: those are killed, and it is tried again.
void remove_dir(const std::string& dir) {
    auto deadline = std::chrono::steady_clock::now() + k_cgroup_removal;
    auto pause = k_first_removal_pause;
    while (::rmdir(dir.c_str()) != 0 && errno == EBUSY &&
           std::chrono::steady_clock::now() < deadline) {
        if (auto procs = read_file(dir + "/cgroup.procs"))
            for (std::string_view pid : split(*procs, '\n'))
                if (!pid.empty())
                    ::kill(static_cast<pid_t>(std::atol(std::string(pid).c_str())), SIGKILL);
        std::this_thread::sleep_for(pause);
        pause = std::min(2 * pause, k_last_removal_pause);
    }
}

// Removes the cgroups under `parent` left by a sion-sandbox that was killed: "sion-sandbox-PID-N"
// whose PID has ended, with what may still be ending in them.
void remove_stale(const std::string& parent) {
    DIR* dir = ::opendir(parent.c_str());
    if (dir == nullptr)
        return;
    constexpr std::string_view k_prefix = "sion-sandbox-";
    while (const dirent* entry = ::readdir(dir)) {
        std::string_view name = entry->d_name;
        if (name.substr(0, k_prefix.size()) != k_prefix)
            continue;
        long pid = std::atol(std::string(name.substr(k_prefix.size())).c_str());
        if (pid > 0 && ::kill(static_cast<pid_t>(pid), 0) != 0 && errno == ESRCH)
            remove_dir(parent + "/" + std::string(name));
    }
    ::closedir(dir);
}

// A new "sion-sandbox-PID-N" beneath `parent`, after removing those killed sion-sandboxes left.
Result<std::string> make_dir(const std::string& parent, unsigned n) {
    remove_stale(parent);
    std::string dir = format("%s/sion-sandbox-%ld-%u", parent.c_str(), static_cast<long>(::getpid()), n);
    if (::mkdir(dir.c_str(), 0755) != 0)
        return sys_error(Exit::unavailable, errno, "cannot make the cgroup '%s'", dir.c_str());
    return dir;
}

Status set_limit(const std::string& dir, const char* file, uint64_t value) {
    if (int err = write_file(dir + "/" + file, std::to_string(value)); err != 0)
        return sys_error(Exit::unavailable, err, "cannot set %s in '%s'", file, dir.c_str());
    return {};
}

// No swap beyond the memory limit, where the kernel accounts swap at all (the file is there).
Status set_no_swap(const std::string& dir, int version, uint64_t memory) {
    const char* file = version == 2 ? "memory.swap.max" : "memory.memsw.limit_in_bytes";
    if (::access((dir + "/" + file).c_str(), F_OK) != 0)
        return {};
    return set_limit(dir, file, version == 2 ? 0 : memory);
}

} // namespace

Result<SandboxCgroup> SandboxCgroup::make(const Result<CgroupParent>& pids,
                                          const Result<CgroupParent>& memory, uint64_t processes,
                                          uint64_t memory_bytes) {
    static std::atomic<unsigned> made{0};
    bool with_memory = memory && memory_bytes > 0;
    if (!pids && !with_memory)
        return Error(Exit::unavailable, (memory_bytes > 0 ? memory : pids).error().message());
    unsigned n = made++;
    SandboxCgroup cgroup;
    if (pids) {
        SION_TRY(cgroup.m_pids, make_dir(pids->dir, n));
        SION_CHECK(set_limit(cgroup.m_pids, "pids.max", processes));
    }
    if (with_memory) {
        // Best effort: without it, RLIMIT_DATA bounds each process instead.
        Status ok = cgroup.make_memory(*memory, n, memory_bytes, pids && memory->dir == pids->dir);
        if (!ok)
            cgroup.m_memory_why = ok.error().message();
    } else if (memory_bytes > 0) {
        cgroup.m_memory_why = memory.error().message();
    }
    if (cgroup.dirs().empty())
        return Error(Exit::unavailable, cgroup.m_memory_why);
    return cgroup;
}

Status SandboxCgroup::make_memory(const CgroupParent& parent, unsigned n, uint64_t bytes,
                                  bool shared) {
    std::string dir;
    if (shared) {
        dir = m_pids;
    } else {
        SION_TRY(dir, make_dir(parent.dir, n));
    }
    Status ok = set_limit(dir, parent.version == 2 ? "memory.max" : "memory.limit_in_bytes", bytes);
    if (ok)
        ok = set_no_swap(dir, parent.version, bytes);
    if (!ok) {
        if (!shared)
            remove_dir(dir);
        return ok;
    }
    m_memory = dir;
    m_memory_version = parent.version;
    return {};
}

SandboxCgroup::SandboxCgroup(SandboxCgroup&& other) noexcept
    : m_pids(std::move(other.m_pids)), m_memory(std::move(other.m_memory)),
      m_memory_why(std::move(other.m_memory_why)), m_memory_version(other.m_memory_version) {
    other.m_pids.clear();
    other.m_memory.clear();
}

SandboxCgroup& SandboxCgroup::operator=(SandboxCgroup&& other) noexcept {
    if (this != &other) {
        remove();
        m_pids = std::move(other.m_pids);
        m_memory = std::move(other.m_memory);
        m_memory_why = std::move(other.m_memory_why);
        m_memory_version = other.m_memory_version;
        other.m_pids.clear();
        other.m_memory.clear();
    }
    return *this;
}

SandboxCgroup::~SandboxCgroup() { remove(); }

std::vector<std::string> SandboxCgroup::dirs() const {
    std::vector<std::string> out;
    if (!m_pids.empty())
        out.push_back(m_pids);
    if (!m_memory.empty() && m_memory != m_pids)
        out.push_back(m_memory);
    return out;
}

uint64_t SandboxCgroup::oom_kills() const {
    if (m_memory.empty())
        return 0;
    return keyed_value(m_memory + (m_memory_version == 2 ? "/memory.events" : "/memory.oom_control"),
                       "oom_kill");
}

void SandboxCgroup::remove() {
    for (const std::string& dir : dirs())
        remove_dir(dir);
    m_pids.clear();
    m_memory.clear();
}

// v1's tasks moves the calling thread alone, which spares the kernel the lock that moving a whole
// process takes, and its wait for an RCU grace period: 8 ms and more at each sandbox's start, where
// tasks takes 0.05. The caller is single-threaded, so its thread is the process. v2 has no tasks
// file (its cgroup.threads is for threaded subtrees), and a delegation may not have handed it over:
// cgroup.procs then.
Status join_cgroup(const std::string& dir) {
    int err = write_file(dir + "/tasks", "0");
    if (err != 0)
        err = write_file(dir + "/cgroup.procs", "0");
    if (err != 0)
        return sys_error(err == EACCES || err == EPERM ? Exit::no_perm : Exit::os, err,
                         "cannot join the cgroup '%s'", dir.c_str());
    return {};
}

} // namespace sion::sandboxd
