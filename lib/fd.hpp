// SPDX-License-Identifier: MIT
// Fd: a move-only owner of a file descriptor; Pipe: both ends of a pipe, close-on-exec.
#pragma once

#include "lib/result.hpp"

#include <sys/types.h>

#include <cstddef>
#include <string>
#include <string_view>

namespace sion {

class Fd {
public:
    Fd() = default;
    explicit Fd(int fd) : m_fd(fd) {}
    Fd(const Fd&) = delete;
    Fd& operator=(const Fd&) = delete;
    Fd(Fd&& other) noexcept : m_fd(other.release()) {}
    Fd& operator=(Fd&& other) noexcept;
    ~Fd() { reset(); }

    [[nodiscard]] int get() const { return m_fd; }
    explicit operator bool() const { return m_fd >= 0; }
    // Gives up ownership: the caller closes the fd.
    [[nodiscard]] int release();
    // Closes the fd held, if any, and holds `fd` instead.
    void reset(int fd = -1);

private:
    int m_fd = -1;
};

struct Pipe {
    Fd read;
    Fd write;

    // pipe2(O_CLOEXEC).
    [[nodiscard]] static Result<Pipe> make();
};

// Writes all of `data`, retrying on EINTR and short writes. EPIPE is an error, not a signal
// (programs ignore SIGPIPE).
[[nodiscard]] Status write_all(int fd, std::string_view data);

// One write(2) with SIGPIPE blocked, and a SIGPIPE it raised taken back, so a pipe whose reader left
// is an EPIPE error even in a process that does not ignore the signal. Returns what write(2) does.
[[nodiscard]] ssize_t write_without_sigpipe(int fd, const void* data, size_t size);

// Reads until end of file, at most `limit` bytes; more is an error (Exit::data).
[[nodiscard]] Result<std::string> read_all(int fd, size_t limit);

// A memory file (memfd_create, close-on-exec) holding `text`, read from its start: for a child that
// reads a file at a path (/proc/self/fd/N) or a descriptor after it starts; a pipe would hold only
// 64 KiB before it had a reader. `name` is for messages and /proc. Exit::os.
[[nodiscard]] Result<Fd> memory_file(std::string_view text, const char* name);

// Sets or clears O_NONBLOCK.
[[nodiscard]] Status set_nonblocking(int fd, bool on);

} // namespace sion
