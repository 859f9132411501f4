// SPDX-License-Identifier: MIT
// stderr messages in the house grammar, and the start/end rituals every program shares.
#include "lib/log.hpp"

#include "lib/text.hpp"

#include <fcntl.h>
#include <signal.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>

namespace sion {

namespace {

const char* g_program = "sion";

void emit(const std::string& message) {
    std::string line = std::string(g_program) + ": " + message + "\n";
    // One write, so concurrent writers do not interleave within a line; stderr failing is not
    // something we can report anywhere.
    ssize_t n = ::write(STDERR_FILENO, line.data(), line.size());
    (void)n;
}

} // namespace

void set_program_name(const char* name) { g_program = name; }

const char* program_name() { return g_program; }

void log_error(const char* fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    std::string msg = vformat(fmt, ap);
    va_end(ap);
    emit(msg);
}

void report(const Error& error) { emit(error.message()); }

void die(const Error& error) {
    report(error);
    std::fflush(stdout);
    std::_Exit(to_int(error.exit()));
}

void guard_standard_fds() {
    for (int fd = 0; fd < 3; ++fd) {
        if (::fcntl(fd, F_GETFD) != -1 || errno != EBADF)
            continue;
        int opened = ::open("/dev/null", fd == 0 ? O_RDONLY : O_WRONLY);
        if (opened != fd && opened >= 0)
            ::close(opened); // a lower fd was free after all; the loop has filled it
    }
    ::signal(SIGPIPE, SIG_IGN);
}

void die_of_stdout_error(int err) {
    if (err == EPIPE) {
        // What SIGPIPE's default would have done at the write: nothing said, nothing flushed.
        ::signal(SIGPIPE, SIG_DFL);
        sigset_t pipe_set;
        sigemptyset(&pipe_set);
        sigaddset(&pipe_set, SIGPIPE);
        ::pthread_sigmask(SIG_UNBLOCK, &pipe_set, nullptr);
        ::raise(SIGPIPE);
        std::_Exit(128 + SIGPIPE);
    }
    die(sys_error(Exit::io, err, "write error"));
}

int write_stdout(std::string_view data) {
    while (!data.empty()) {
        ssize_t n = ::write(STDOUT_FILENO, data.data(), data.size());
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0)
            return errno;
        data.remove_prefix(static_cast<size_t>(n));
    }
    return 0;
}

int finish_stdout(int status) {
    errno = 0;
    if (std::fflush(stdout) != 0 || std::ferror(stdout)) {
        int err = errno != 0 ? errno : EIO;
        if (err == EPIPE)
            die_of_stdout_error(err);
        report(sys_error(Exit::io, err, "write error"));
        return status == 0 ? to_int(Exit::io) : status;
    }
    return status;
}

} // namespace sion
