// SPDX-License-Identifier: MIT
// A session's sandbox lock: taken, an earlier run's sandbox ended, and the holders named.
#include "session/sandbox_lock.hpp"

#include "session/store.hpp"
#include "lib/json.hpp"
#include "lib/processes.hpp"
#include "lib/text.hpp"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <optional>
#include <thread>

namespace sion::session {

namespace {

constexpr std::chrono::milliseconds k_poll{20};

// Who the file names: the run and its sandbox ("" when not named, or unreadable).
struct Holders {
    std::string run;
    std::string sandbox;
};

Holders read_holders(int fd) {
    std::string text(512, '\0');
    ssize_t n = ::pread(fd, text.data(), text.size(), 0);
    text.resize(n > 0 ? static_cast<size_t>(n) : 0);
    auto json = Json::parse(std::string_view(text).substr(0, text.find('\n')));
    if (!json)
        return {};
    return {std::string(json->view().string_or("run", "").value_or("")),
            std::string(json->view().string_or("sandbox", "").value_or(""))};
}

// Whether `fd` is the file at `path` still (not removed or replaced since it was opened).
bool still_at(int fd, const std::string& path) {
    struct stat opened = {};
    struct stat named = {};
    return ::fstat(fd, &opened) == 0 && ::lstat(path.c_str(), &named) == 0
           && opened.st_dev == named.st_dev && opened.st_ino == named.st_ino;
}

std::string pid_of(const std::string& name) {
    return name.substr(0, name.find(':'));
}

} // namespace

Result<SandboxLock> SandboxLock::take(const std::string& home, std::string_view session) {
    std::string dir = home + "/sandboxes";
    if (::mkdir(dir.c_str(), 0700) != 0 && errno != EEXIST)
        return sys_error(Exit::os, errno, "cannot make directory '%s'", dir.c_str());
    std::string path =
        format("%s/%.*s.lock", dir.c_str(), static_cast<int>(session.size()), session.data());
    std::string id(session);
    std::string note;
    std::optional<std::chrono::steady_clock::time_point> unnamed_since;
    while (true) {
        Fd fd(::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0600));
        if (!fd)
            return sys_error(Exit::os, errno, "cannot open '%s'", path.c_str());
        if (::flock(fd.get(), LOCK_EX | LOCK_NB) == 0) {
            if (still_at(fd.get(), path))
                return SandboxLock(std::move(fd), std::move(path), std::move(note));
            continue; // removed by the run that held it: lock the file there now
        }
        if (errno != EWOULDBLOCK && errno != EINTR)
            return sys_error(Exit::os, errno, "cannot lock '%s'", path.c_str());
        Holders holders = read_holders(fd.get());
        if (process_alive(holders.run))
            return make_error(Exit::temp_fail, "session %s is running (pid %s)", id.c_str(),
                              pid_of(holders.run).c_str());
        if (auto sandbox = named_process(holders.sandbox)) {
            auto ended = end_process_tree(*sandbox, k_sandbox_grace, k_sandbox_bound);
            if (!ended)
                return Error(ended.error().exit(),
                             format("session %s's sandbox from an earlier run is still running "
                                    "(pid %ld): ",
                                    id.c_str(), static_cast<long>(sandbox->pid))
                                 + ended.error().message());
            note = format("session %s's sandbox from an earlier run was still running (pid %ld): "
                          "ended it",
                          id.c_str(), static_cast<long>(sandbox->pid));
            continue;
        }
        // A holder the file does not name: a sandbox whose run was killed before it named it,
        // ending on its own (its parent-death signal), or one that ended already.
        auto now = std::chrono::steady_clock::now();
        if (!unnamed_since)
            unnamed_since = now;
        else if (now - *unnamed_since >= k_sandbox_bound)
            return make_error(Exit::temp_fail,
                              "session %s's sandbox from an earlier run is still running: it "
                              "did not end within %g s",
                              id.c_str(), std::chrono::duration<double>(k_sandbox_bound).count());
        if (note.empty())
            note = format("session %s's sandbox from an earlier run was still running: waited "
                          "for it to end",
                          id.c_str());
        std::this_thread::sleep_for(k_poll);
    }
}

SandboxLock& SandboxLock::operator=(SandboxLock&& other) noexcept {
    if (this != &other) {
        release();
        m_fd = std::move(other.m_fd);
        m_path = std::move(other.m_path);
        m_note = std::move(other.m_note);
    }
    return *this;
}

SandboxLock::~SandboxLock() {
    release();
}

void SandboxLock::release() {
    if (!m_fd)
        return;
    ::unlink(m_path.c_str()); // still held: whoever waits for it locks the next file
    m_fd.reset();
}

Status SandboxLock::record(pid_t sandbox) {
    Json names = Json::object();
    names.set("run", std::string_view(this_process()));
    if (auto who = process_id(sandbox))
        names.set("sandbox", std::string_view(process_name(*who)));
    std::string line = names.dump() + "\n";
    if (::ftruncate(m_fd.get(), 0) != 0
        || ::pwrite(m_fd.get(), line.data(), line.size(), 0) != static_cast<ssize_t>(line.size()))
        return sys_error(Exit::io, errno, "cannot write '%s'", m_path.c_str());
    return {};
}

} // namespace sion::session
