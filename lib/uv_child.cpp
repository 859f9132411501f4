// SPDX-License-Identifier: MIT
// run() on libuv: the child's pipes are uv_pipe_t, its exit is a uv_poll_t on a pidfd, its time
// limit a uv_timer_t. Impl keeps itself alive while its handles are open, so close callbacks never
// touch freed memory.
#include "lib/uv_child.hpp"

#include "lib/fd.hpp"

#include <fcntl.h>
#include <poll.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <csignal>
#include <initializer_list>
#include <optional>
#include <utility>
#include <vector>

namespace sion {

namespace {

using namespace std::chrono_literals;

// libuv's errors on Unix are negated errnos: strerror gives the house's text ("Broken pipe"); the
// few errors of libuv's own keep its text.
Error uv_error(Exit exit, int status, const std::string& what) {
    if (status > -1000)
        return sys_error(exit, -status, "%s", what.c_str());
    return make_error(exit, "%s: %s", what.c_str(), uv_strerror(status));
}

uv_handle_t* as_handle(void* h) {
    return static_cast<uv_handle_t*>(h);
}

uv_stream_t* as_stream(uv_pipe_t* p) {
    return reinterpret_cast<uv_stream_t*>(p);
}

// Initialised (its data points at the run) and not yet asked to close.
bool is_open(const void* h) {
    const auto* handle = static_cast<const uv_handle_t*>(h);
    return handle->data != nullptr && uv_is_closing(handle) == 0;
}

// uv_buf_t lengths are unsigned int: a larger input goes in several buffers.
constexpr size_t k_max_buf = size_t{1} << 30;

} // namespace

struct UvRun::Impl {
    uv_loop_t* loop;
    Child child;
    std::string name;
    Fd pid_watch; // a duplicate of the child's pidfd, which `exited` polls: closed after its handle
    std::string input;
    size_t limit;
    std::chrono::milliseconds time_limit;
    std::function<void(Result<RunResult>)> done;
    RunResult result;
    std::optional<Error> failure; // the first error, which `done` gets instead of the result
    uv_pipe_t in{};
    uv_pipe_t out{};
    uv_pipe_t err{};
    uv_poll_t exited{};
    uv_timer_t limit_timer{};
    uv_timer_t grace_timer{};
    uv_write_t write_req{};
    std::array<char, 65536> buf{};
    uint64_t grace_end = 0; // uv_now() when the pipes are closed at the latest, once reaped
    int open_handles = 0;
    bool reaped = false;
    bool timed_out = false;
    bool finished = false;
    std::shared_ptr<Impl> keep_alive; // set while handles are open

    Impl(uv_loop_t* l, Child c, const ChildSpec& spec, std::string in_bytes, size_t max,
         std::function<void(Result<RunResult>)> cb)
        : loop(l), child(std::move(c)), name(spec.argv[0]), input(std::move(in_bytes)), limit(max),
          time_limit(spec.time_limit), done(std::move(cb)) {}

    Status open_pipe(uv_pipe_t* p, Fd& fd);
    Status open_handles_all();
    Status start();
    Status start_input();
    void on_written(int status);
    void on_read(uv_stream_t* s, ssize_t n);
    void take(std::string& text, bool& truncated, uint64_t& total, size_t n) const;
    void on_exited(int status);
    void on_limit();
    void arm_grace();
    [[nodiscard]] bool output_waiting() const;
    void on_grace();
    void close_outputs();
    void close_handle(void* h);
    void close_all();
    void fail(Error e);
    void maybe_finish();
    void abandon() noexcept;
    void handle_closed() noexcept;
};

// Takes `fd` into the handle, which closes it when it closes.
Status UvRun::Impl::open_pipe(uv_pipe_t* p, Fd& fd) {
    const std::string what = "cannot watch the pipes of '" + name + "'";
    if (int rc = uv_pipe_init(loop, p, 0); rc != 0)
        return uv_error(Exit::os, rc, what);
    p->data = this;
    ++open_handles;
    if (int rc = uv_pipe_open(p, fd.get()); rc != 0)
        return uv_error(Exit::os, rc, what);
    static_cast<void>(fd.release());
    return {};
}

Status UvRun::Impl::open_handles_all() {
    SION_CHECK(open_pipe(&in, child.in()));
    SION_CHECK(open_pipe(&out, child.out()));
    SION_CHECK(open_pipe(&err, child.err()));
    const std::string what = "cannot watch '" + name + "'";
    for (uv_timer_t* t : {&limit_timer, &grace_timer}) {
        if (int rc = uv_timer_init(loop, t); rc != 0)
            return uv_error(Exit::os, rc, what);
        t->data = this;
        ++open_handles;
    }
    // Its own fd: the Child closes its pidfd when it reaps, and the handle must close first.
    pid_watch.reset(::fcntl(child.pidfd(), F_DUPFD_CLOEXEC, 3));
    if (!pid_watch)
        return sys_error(Exit::os, errno, "%s", what.c_str());
    if (int rc = uv_poll_init(loop, &exited, pid_watch.get()); rc != 0)
        return uv_error(Exit::os, rc, what);
    exited.data = this;
    ++open_handles;
    return {};
}

Status UvRun::Impl::start() {
    SION_CHECK(start_input());
    auto alloc = [](uv_handle_t* h, size_t, uv_buf_t* b) noexcept {
        auto* run = static_cast<Impl*>(h->data);
        *b = uv_buf_init(run->buf.data(), static_cast<unsigned>(run->buf.size()));
    };
    auto on_read = [](uv_stream_t* s, ssize_t n, const uv_buf_t*) noexcept {
        static_cast<Impl*>(s->data)->on_read(s, n);
    };
    const std::string what = "cannot read from '" + name + "'";
    for (uv_pipe_t* p : {&out, &err})
        if (int rc = uv_read_start(as_stream(p), alloc, on_read); rc != 0)
            return uv_error(Exit::io, rc, what);
    auto on_exit = [](uv_poll_t* h, int status, int) noexcept {
        static_cast<Impl*>(h->data)->on_exited(status);
    };
    if (int rc = uv_poll_start(&exited, UV_READABLE, on_exit); rc != 0)
        return uv_error(Exit::os, rc, "cannot watch '" + name + "'");
    if (time_limit.count() > 0) {
        uv_update_time(loop); // the limit counts from now, not from when the loop last woke
        auto on_limit = [](uv_timer_t* t) noexcept { static_cast<Impl*>(t->data)->on_limit(); };
        // libuv clamps a deadline past the end of its clock.
        auto ms = static_cast<uint64_t>(time_limit.count());
        if (int rc = uv_timer_start(&limit_timer, on_limit, ms, 0); rc != 0)
            return uv_error(Exit::os, rc, "cannot time '" + name + "'");
    }
    return {};
}

Status UvRun::Impl::start_input() {
    if (input.empty()) {
        close_handle(&in); // end of file at once
        return {};
    }
    std::vector<uv_buf_t> bufs; // libuv copies the array; the bytes stay in `input` until written
    for (size_t at = 0; at < input.size(); at += k_max_buf) {
        size_t n = std::min(k_max_buf, input.size() - at);
        bufs.push_back(uv_buf_init(input.data() + at, static_cast<unsigned>(n)));
    }
    write_req.data = this;
    auto on_written = [](uv_write_t* req, int status) noexcept {
        static_cast<Impl*>(req->data)->on_written(status);
    };
    int rc = uv_write(&write_req, as_stream(&in), bufs.data(), static_cast<unsigned>(bufs.size()),
                      on_written);
    if (rc == UV_EPIPE) {
        close_handle(&in); // the child closed its stdin already: that is its business
        return {};
    }
    if (rc != 0)
        return uv_error(Exit::io, rc, "cannot write to '" + name + "'");
    return {};
}

void UvRun::Impl::on_written(int status) {
    // EPIPE: the child did not want the rest. ECANCELED: the run closed stdin itself.
    if (status < 0 && status != UV_EPIPE && status != UV_ECANCELED)
        fail(uv_error(Exit::io, status, "cannot write to '" + name + "'"));
    input = std::string(); // libuv is done with the bytes
    close_handle(&in);
}

void UvRun::Impl::take(std::string& text, bool& truncated, uint64_t& total, size_t n) const {
    total += n;
    size_t keep = std::min(n, limit - std::min(limit, text.size()));
    text.append(buf.data(), keep);
    if (keep < n)
        truncated = true;
}

void UvRun::Impl::on_read(uv_stream_t* s, ssize_t n) {
    bool is_out = s == as_stream(&out);
    if (n > 0) {
        if (is_out)
            take(result.out, result.out_truncated, result.out_total, static_cast<size_t>(n));
        else
            take(result.err, result.err_truncated, result.err_total, static_cast<size_t>(n));
        if (reaped)
            arm_grace(); // a grandchild still writes: quiet starts again
        return;
    }
    if (n == 0)
        return; // nothing this time (EAGAIN)
    if (n != UV_EOF)
        fail(uv_error(Exit::io, static_cast<int>(n), "cannot read from '" + name + "'"));
    close_handle(is_out ? &out : &err);
    maybe_finish();
}

void UvRun::Impl::on_exited(int status) {
    if (status < 0) {
        // The pidfd cannot be polled: make sure the child ends, and wait for it here.
        fail(uv_error(Exit::os, status, "cannot watch '" + name + "'"));
        static_cast<void>(child.kill_group(SIGKILL));
    }
    // Not blocking when the pidfd polls readable: the child has exited. The Child's own deadline
    // plays no part then; the time limit is limit_timer's.
    auto wait = status < 0 ? std::chrono::milliseconds::max() : 0ms;
    Result<std::optional<ExitStatus>> st = child.wait_for(wait);
    if (st && !st->has_value())
        return; // not yet: a wakeup without an exit
    reaped = true;
    close_handle(&exited);
    uv_timer_stop(&limit_timer);
    if (!st) {
        fail(std::move(st).error());
    } else {
        static_cast<ExitStatus&>(result) = **st;
        result.timed_out = timed_out;
    }
    if (is_open(&out) || is_open(&err)) {
        grace_end = uv_now(loop) + static_cast<uint64_t>(k_pipe_grace_max.count());
        arm_grace();
    }
    maybe_finish();
}

void UvRun::Impl::on_limit() {
    // Timers run before I/O in a loop iteration: a child that has just exited on its own is not
    // counted as timed out; on_exited reaps it next.
    pollfd p{pid_watch.get(), POLLIN, 0};
    if (::poll(&p, 1, 0) > 0)
        return;
    timed_out = true;
    if (Status st = child.kill_group(SIGKILL); !st)
        fail(std::move(st).error());
}

void UvRun::Impl::arm_grace() {
    uint64_t now = uv_now(loop);
    uint64_t left = grace_end > now ? grace_end - now : 0;
    uint64_t wait = std::min(static_cast<uint64_t>(k_pipe_quiet.count()), left);
    auto on_grace = [](uv_timer_t* t) noexcept { static_cast<Impl*>(t->data)->on_grace(); };
    uv_timer_start(&grace_timer, on_grace, wait, 0); // cannot fail with a callback
}

// Bytes or an end of file waiting in an output pipe that the loop has not read yet: timers run
// before I/O, so a loop that was busy must not close a pipe with data in it.
bool UvRun::Impl::output_waiting() const {
    std::array<pollfd, 2> fds{{{-1, POLLIN, 0}, {-1, POLLIN, 0}}};
    size_t i = 0;
    for (const uv_pipe_t* p : {&out, &err}) {
        uv_os_fd_t fd = -1;
        if (is_open(p) && uv_fileno(reinterpret_cast<const uv_handle_t*>(p), &fd) == 0)
            fds.at(i).fd = fd;
        ++i;
    }
    return ::poll(fds.data(), fds.size(), 0) > 0;
}

void UvRun::Impl::on_grace() {
    if (uv_now(loop) < grace_end && output_waiting()) {
        arm_grace();
        return;
    }
    close_outputs();
}

void UvRun::Impl::close_outputs() {
    close_handle(&out);
    close_handle(&err);
    maybe_finish();
}

void UvRun::Impl::close_handle(void* h) {
    if (!is_open(h))
        return;
    uv_close(as_handle(h), [](uv_handle_t* closed) noexcept {
        static_cast<Impl*>(closed->data)->handle_closed();
    });
}

void UvRun::Impl::close_all() {
    for (void* h :
         std::initializer_list<void*>{&in, &out, &err, &exited, &limit_timer, &grace_timer})
        close_handle(h);
}

void UvRun::Impl::fail(Error e) {
    if (!failure)
        failure = std::move(e);
}

void UvRun::Impl::maybe_finish() {
    if (finished || !reaped || is_open(&out) || is_open(&err))
        return;
    finished = true;
    close_all(); // stdin too: a grandchild may hold it without reading
    // Moved out first: `cb` may drop the UvRun, which clears `done`.
    auto cb = std::move(done);
    done = nullptr;
    if (!cb)
        return;
    if (failure)
        cb(std::move(*failure));
    else
        cb(std::move(result));
}

void UvRun::Impl::abandon() noexcept {
    done = nullptr;
    if (finished)
        return;
    if (!reaped)
        static_cast<void>(child.kill_group(SIGKILL)); // on_exited reaps it
    else
        close_outputs(); // in its grace: nobody waits for the pipes any more
}

void UvRun::Impl::handle_closed() noexcept {
    if (--open_handles == 0)
        keep_alive.reset(); // may free this: nothing after
}

Result<std::shared_ptr<UvRun>> run_on_loop(uv_loop_t* loop, ChildSpec spec, std::string input,
                                           size_t output_limit,
                                           std::function<void(Result<RunResult>)> done) {
    spec.in = Stdio::pipe();
    spec.out = Stdio::pipe();
    spec.err = Stdio::pipe();
    SION_TRY(Child child, Child::spawn(spec));
    auto impl = std::make_shared<UvRun::Impl>(loop, std::move(child), spec, std::move(input),
                                              output_limit, std::move(done));
    impl->keep_alive = impl;
    Status st = impl->open_handles_all();
    if (st)
        st = impl->start();
    if (!st) {
        impl->done = nullptr;
        impl->finished = true;
        // Killed and reaped now, as promised; the handles close on the loop.
        static_cast<void>(impl->child.kill_group(SIGKILL));
        static_cast<void>(impl->child.wait());
        impl->close_all();
        if (impl->open_handles == 0)
            impl->keep_alive.reset();
        return std::move(st).error();
    }
    return std::shared_ptr<UvRun>(new UvRun(std::move(impl)));
}

UvRun::~UvRun() {
    m_impl->abandon();
}

void UvRun::kill(int signal) {
    if (!m_impl->reaped) {
        if (Status st = m_impl->child.kill_group(signal); !st)
            m_impl->fail(std::move(st).error());
    }
}

pid_t UvRun::pid() const {
    return m_impl->child.pid();
}

} // namespace sion
