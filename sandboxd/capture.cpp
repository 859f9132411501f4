// SPDX-License-Identifier: MIT
// Running a child to its end with its output capped and counted.
#include "sandboxd/capture.hpp"

#include <poll.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <climits>
#include <csignal>
#include <string_view>

namespace sion::sandboxd {

namespace {

constexpr size_t k_chunk = 65536;
constexpr size_t k_status_max = 65536;

struct Stream {
    Fd* fd;
    std::string* text;
    uint64_t* total;
    size_t keep;
};

Status feed(Fd& fd, std::string_view& input) {
    ssize_t n = write_without_sigpipe(fd.get(), input.data(), std::min(input.size(), k_chunk));
    if (n < 0) {
        if (errno == EINTR || errno == EAGAIN)
            return {};
        if (errno != EPIPE)
            return sys_error(Exit::io, errno, "cannot write to the sandbox");
        input = {}; // the command did not want the rest
    } else {
        input.remove_prefix(static_cast<size_t>(n));
    }
    if (input.empty())
        fd.reset();
    return {};
}

Status drain(const Stream& s) {
    std::array<char, k_chunk> buf; // NOLINT(cppcoreguidelines-pro-type-member-init): read fills it
    ssize_t n = ::read(s.fd->get(), buf.data(), buf.size());
    if (n < 0) {
        if (errno == EINTR || errno == EAGAIN)
            return {};
        return sys_error(Exit::io, errno, "cannot read from the sandbox");
    }
    if (n == 0) {
        s.fd->reset();
        return {};
    }
    auto got = static_cast<size_t>(n);
    *s.total += got;
    size_t room = s.keep - std::min(s.keep, s.text->size());
    s.text->append(buf.data(), std::min(got, room));
    return {};
}

int poll_timeout(std::optional<Child::Clock::time_point> end) {
    if (!end)
        return -1;
    auto left = std::chrono::ceil<std::chrono::milliseconds>(*end - Child::Clock::now()).count();
    return static_cast<int>(std::clamp<decltype(left)>(left, 0, INT_MAX));
}

// Moves bytes until every pipe is closed (true) or the time limit runs out (false).
Result<bool> pump(Child& child, std::string_view input, Fd& status, Captured& c, uint64_t cap) {
    for (Fd* fd : {&child.in(), &child.out(), &child.err(), &status})
        if (*fd)
            SION_CHECK(set_nonblocking(fd->get(), true));
    uint64_t status_total = 0;
    const std::array<Stream, 3> streams{{{&child.out(), &c.out, &c.out_total, cap},
                                         {&child.err(), &c.err, &c.err_total, cap},
                                         {&status, &c.report, &status_total, k_status_max}}};
    for (;;) {
        if (!child.in() && !child.out() && !child.err() && !status)
            return true;
        auto deadline = child.deadline();
        if (deadline && Child::Clock::now() >= *deadline)
            return false;
        std::array<pollfd, 4> fds{{{child.in().get(), POLLOUT, 0},
                                   {child.out().get(), POLLIN, 0},
                                   {child.err().get(), POLLIN, 0},
                                   {status.get(), POLLIN, 0}}};
        int n = ::poll(fds.data(), fds.size(), poll_timeout(deadline));
        if (n < 0 && errno != EINTR)
            return sys_error(Exit::os, errno, "cannot poll the sandbox's pipes");
        if (n <= 0)
            continue;
        if (fds[0].revents != 0)
            SION_CHECK(feed(child.in(), input));
        for (size_t i = 1; i < 4; ++i)
            if (fds[i].revents != 0)
                SION_CHECK(drain(streams[i - 1]));
    }
}

} // namespace

Result<Captured> capture(CaptureSpec spec) {
    Fd status(spec.status_fd);
    spec.child.out = Stdio::pipe();
    spec.child.err = Stdio::pipe();
    if (spec.input)
        spec.child.in = Stdio::pipe();
    auto start = Child::Clock::now();
    SION_TRY(Child child, Child::spawn(spec.child));
    spec.close_after_spawn.clear();
    std::string_view input = spec.input ? std::string_view(*spec.input) : std::string_view{};
    if (spec.input && input.empty())
        child.in().reset();
    Captured c;
    SION_TRY(bool finished, pump(child, input, status, c, spec.cap));
    if (!finished)
        SION_CHECK(child.kill_group(SIGKILL));
    child.in().reset();
    child.out().reset();
    child.err().reset();
    SION_TRY(ExitStatus exit, child.wait());
    static_cast<ExitStatus&>(c) = exit;
    c.timed_out = c.timed_out || !finished;
    c.wall = std::chrono::duration_cast<std::chrono::milliseconds>(Child::Clock::now() - start);
    return c;
}

} // namespace sion::sandboxd
