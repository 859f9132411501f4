// SPDX-License-Identifier: MIT
// File descriptor ownership and whole reads and writes.
#include "lib/fd.hpp"

#include <fcntl.h>
#include <pthread.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cerrno>
#include <csignal>
#include <ctime>

namespace sion {

Fd& Fd::operator=(Fd&& other) noexcept {
    if (this != &other)
        reset(other.release());
    return *this;
}

int Fd::release() {
    int fd = m_fd;
    m_fd = -1;
    return fd;
}

void Fd::reset(int fd) {
    if (m_fd >= 0)
        ::close(m_fd); // close(2) errors on a descriptor we own leave nothing to retry
    m_fd = fd;
}

Result<Pipe> Pipe::make() {
    int fds[2];
    if (::pipe2(fds, O_CLOEXEC) != 0)
        return sys_error(Exit::os, errno, "cannot create pipe");
    return Pipe{Fd(fds[0]), Fd(fds[1])};
}

Status write_all(int fd, std::string_view data) {
    while (!data.empty()) {
        ssize_t n = ::write(fd, data.data(), data.size());
        if (n < 0) {
            if (errno == EINTR)
                continue;
            return sys_error(Exit::io, errno, "write error");
        }
        data.remove_prefix(static_cast<size_t>(n));
    }
    return {};
}

ssize_t write_without_sigpipe(int fd, const void* data, size_t size) {
    sigset_t pipe_set;
    sigset_t old;
    sigset_t pending;
    sigemptyset(&pipe_set);
    sigaddset(&pipe_set, SIGPIPE);
    pthread_sigmask(SIG_BLOCK, &pipe_set, &old);
    sigpending(&pending);
    bool was_pending = sigismember(&pending, SIGPIPE) == 1;
    ssize_t n = ::write(fd, data, size);
    int err = errno;
    if (n < 0 && err == EPIPE && !was_pending) {
        const timespec zero{};
        while (sigtimedwait(&pipe_set, nullptr, &zero) < 0 && errno == EINTR) {
        }
    }
    pthread_sigmask(SIG_SETMASK, &old, nullptr);
    errno = err;
    return n;
}

Result<Fd> memory_file(std::string_view text, const char* name) {
    Fd fd(::memfd_create(name, MFD_CLOEXEC));
    if (!fd)
        return sys_error(Exit::os, errno, "cannot make a memory file for %s", name);
    SION_CHECK(write_all(fd.get(), text));
    if (::lseek(fd.get(), 0, SEEK_SET) != 0)
        return sys_error(Exit::os, errno, "cannot rewind the memory file for %s", name);
    return fd;
}

Result<std::string> read_all(int fd, size_t limit) {
    std::string out;
    char buf[65536];
    for (;;) {
        ssize_t n = ::read(fd, buf, sizeof buf);
        if (n < 0) {
            if (errno == EINTR)
                continue;
            return sys_error(Exit::io, errno, "read error");
        }
        if (n == 0)
            return out;
        if (out.size() + static_cast<size_t>(n) > limit)
            return make_error(Exit::data, "input is longer than %zu bytes", limit);
        out.append(buf, static_cast<size_t>(n));
    }
}

Status set_nonblocking(int fd, bool on) {
    int flags = ::fcntl(fd, F_GETFL);
    if (flags < 0)
        return sys_error(Exit::os, errno, "cannot get file status flags");
    flags = on ? (flags | O_NONBLOCK) : (flags & ~O_NONBLOCK);
    if (::fcntl(fd, F_SETFL, flags) < 0)
        return sys_error(Exit::os, errno, "cannot set file status flags");
    return {};
}

} // namespace sion
