// SPDX-License-Identifier: MIT
#include "mcpd/transport_stdio.hpp"

#include "mcpd/last_words.hpp"

#include "lib/fd.hpp"
#include "lib/text.hpp"

#include <csignal>
#include <cerrno>
#include <fcntl.h>
#include <optional>
#include <unistd.h>

namespace sion::mcpd {

namespace {

constexpr std::chrono::milliseconds k_kill_after{1000};
// How long a line that is not a message, before the server's first answer, waits for one.
constexpr std::chrono::milliseconds k_grace{2000};

template <typename T> void close_and_delete(T* handle) {
    uv_close(reinterpret_cast<uv_handle_t*>(handle),
             [](uv_handle_t* h) { delete reinterpret_cast<T*>(h); });
}

class StdioTransport final : public Transport,
                             public std::enable_shared_from_this<StdioTransport> {
public:
    StdioTransport(uv_loop_t* loop, std::string who, size_t max_message, TransportEvents events)
        : m_loop(loop), m_who(std::move(who)), m_events(std::move(events)),
          m_max_message(max_message) {}

    Status open(const ChildSpec& spec) {
        SION_TRY(Child child, Child::spawn(spec));
        m_child.emplace(std::move(child));
        int in = m_child->in().release();
        int out = m_child->out().release();
        SION_TRY(m_conn, rpc::UvConnection::open(m_loop, out, in, handlers(), m_max_message));
        m_conn_open = true;
        SION_CHECK(watch_exit());
        if (m_child->err().get() >= 0)
            SION_CHECK(watch_errors());
        m_keep_alive = shared_from_this();
        return {};
    }

    int64_t call(std::string_view method, JsonView params,
                 std::function<void(Result<rpc::Message>)> done) override {
        if (!m_conn) {
            done(Error(Exit::unavailable, m_who + " is not running"));
            return 0;
        }
        // A call the connection fails has failed because the server went: `ended` says how.
        std::weak_ptr<StdioTransport> weak = weak_from_this();
        return m_conn->call(method, params, [weak, done = std::move(done)](Result<rpc::Message> m) {
            if (!m)
                return;
            if (auto self = weak.lock()) {
                self->m_answered = true;
                self->stop_grace();
            }
            done(std::move(m));
        });
    }

    void notify(std::string_view method, JsonView params) override {
        if (m_conn)
            m_conn->notify(method, params);
    }

    void cancel(int64_t id, std::string_view reason) override {
        if (!m_conn || id == 0)
            return;
        Json cancel = Json::object();
        cancel.set("requestId", id);
        cancel.set("reason", reason);
        m_conn->notify("notifications/cancelled", cancel);
    }

    void close() override {
        if (m_closing)
            return;
        m_closing = true;
        shut();
        release();
    }

    std::string_view kind() const override { return "stdio"; }

    std::vector<std::string> last_words() const override { return m_words.lines(); }

private:
    rpc::UvHandlers handlers() {
        rpc::UvHandlers h = std::move(m_events.handlers);
        std::weak_ptr<StdioTransport> weak = weak_from_this();
        h.on_end = [weak](const Status& why) {
            auto self = weak.lock();
            if (!self)
                return;
            self->m_conn_open = false;
            self->m_conn.reset();
            self->m_output_closed = self->m_who + " closed its output"
                + (why ? std::string() : ": " + why.error().message());
            self->gone();
            self->release();
        };
        h.on_overlong = [weak](size_t length) {
            auto self = weak.lock();
            if (self && self->m_events.overflowed)
                self->m_events.overflowed(make_error(
                    Exit::unavailable, "%s sent a message of %zu bytes, over the %zu MiB limit",
                    self->m_who.c_str(), length, self->m_max_message >> 20));
        };
        h.on_undecodable = [weak](std::string_view line) {
            auto self = weak.lock();
            if (self && !self->m_answered && self->m_bad_line.empty())
                self->doubt_start(line);
        };
        return h;
    }

    // Before its first answer, a line that is not a message may be a program that is no server
    // of this protocol, which prints and waits: unless an answer follows within k_grace, it is
    // ended then rather than waited for (a server that writes a line of its own before answering
    // still works).
    void doubt_start(std::string_view line) {
        m_bad_line = shown_line(line, 80);
        if (m_bad_line.empty())
            m_bad_line = " ";
        m_grace = new uv_timer_t;
        uv_timer_init(m_loop, m_grace);
        m_grace->data = this;
        uv_timer_start(
            m_grace,
            [](uv_timer_t* t) {
                auto* self = static_cast<StdioTransport*>(t->data);
                auto keep = self->shared_from_this();
                self->stop_grace();
                if (!self->m_answered)
                    self->refuse_start();
                self->release();
            },
            static_cast<uint64_t>(k_grace.count()), 0);
    }

    void stop_grace() {
        if (!m_grace)
            return;
        uv_timer_stop(m_grace);
        close_and_delete(m_grace);
        m_grace = nullptr;
    }

    void refuse_start() {
        if (m_ended || m_closing)
            return;
        m_ended = true;
        if (m_errors && !read_errors())
            stop_errors();
        if (m_events.ended)
            m_events.ended(Error(Exit::data, m_who + " wrote a line that is not JSON-RPC on its "
                                                     "standard output and no answer: '"
                                     + m_bad_line + "'"));
        shut();
    }

    Status watch_exit() {
        int dup = ::fcntl(m_child->pidfd(), F_DUPFD_CLOEXEC, 3);
        if (dup < 0)
            return sys_error(Exit::os, errno, "cannot watch the server's process");
        m_pid_watch = Fd(dup);
        m_exited = new uv_poll_t;
        if (int rc = uv_poll_init(m_loop, m_exited, m_pid_watch.get()); rc != 0) {
            delete m_exited;
            m_exited = nullptr;
            return Error(Exit::os, std::string("cannot watch the server's process: ")
                                       + uv_strerror(rc));
        }
        m_exited->data = this;
        uv_poll_start(m_exited, UV_READABLE, [](uv_poll_t* h, int, int) {
            static_cast<StdioTransport*>(h->data)->reap();
        });
        return {};
    }

    Status watch_errors() {
        Fd& err = m_child->err();
        int flags = ::fcntl(err.get(), F_GETFL);
        if (flags < 0 || ::fcntl(err.get(), F_SETFL, flags | O_NONBLOCK) < 0)
            return sys_error(Exit::os, errno, "cannot read the server's errors");
        m_errors = new uv_poll_t;
        if (int rc = uv_poll_init(m_loop, m_errors, err.get()); rc != 0) {
            delete m_errors;
            m_errors = nullptr;
            return Error(Exit::os, std::string("cannot read the server's errors: ")
                                       + uv_strerror(rc));
        }
        m_errors->data = this;
        uv_poll_start(m_errors, UV_READABLE, [](uv_poll_t* h, int, int) {
            auto* self = static_cast<StdioTransport*>(h->data);
            auto keep = self->shared_from_this();
            if (!self->read_errors())
                self->stop_errors();
            self->release();
        });
        return {};
    }

    // Reads what the pipe holds now (64 KiB at most, so that a server that writes without end
    // cannot hold the loop); false once it has closed (or failed).
    bool read_errors() {
        if (!m_child || m_child->err().get() < 0)
            return false;
        char buf[4096];
        for (int reads = 0; reads < 16; ++reads) {
            ssize_t n = ::read(m_child->err().get(), buf, sizeof buf);
            if (n > 0) {
                m_words.add({buf, static_cast<size_t>(n)});
                continue;
            }
            if (n < 0 && errno == EINTR)
                continue;
            return n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK);
        }
        return true;
    }

    void stop_errors() {
        if (!m_errors)
            return;
        uv_poll_stop(m_errors);
        close_and_delete(m_errors);
        m_errors = nullptr;
        m_child->err().reset();
    }

    void reap() {
        auto self = shared_from_this(); // release() below may drop the last reference
        if (m_child) {
            auto status = m_child->wait_for(std::chrono::milliseconds(0));
            if (status && *status)
                m_exit_status = **status;
            else if (status)
                return; // not yet
        }
        if (m_exited) {
            uv_poll_stop(m_exited);
            close_and_delete(m_exited);
            m_exited = nullptr;
        }
        stop_timer();
        gone();
        release();
    }

    // The process ended or its output did: once both have, the server has ended; until then the
    // other is waited for, a second at most. What it wrote before it ended is read first.
    void gone() {
        if (m_ended || m_closing)
            return;
        if (!m_exited && !m_conn_open) {
            end();
            return;
        }
        if (m_kill_timer)
            return;
        start_timer([](uv_timer_t* t) {
            auto* self = static_cast<StdioTransport*>(t->data);
            if (self->m_exited) {
                self->m_killed = true;
                (void)self->m_child->kill_group(SIGKILL);
                return; // reap() follows
            }
            auto keep = self->shared_from_this();
            self->stop_timer();
            if (!self->m_closing)
                self->end();
            self->release();
        });
    }

    void end() {
        m_ended = true;
        if (m_errors && !read_errors()) // what it wrote before it went, for last_words()
            stop_errors();
        if (m_events.ended)
            m_events.ended(Error(Exit::unavailable, end_words()));
        shut();
    }

    std::string end_words() const {
        if (!m_output_closed.empty() && (m_killed || !m_exit_status))
            return m_output_closed;
        return m_who + " ended" + exit_words();
    }

    std::string exit_words() const {
        if (!m_exit_status)
            return {};
        if (m_exit_status->signal != 0)
            return format(" (killed by signal %d)", m_exit_status->signal);
        return format(" (its program exited with status %d)", m_exit_status->exit_code);
    }

    // The connection closed, and the process ended if it has not within a second: SIGTERM first,
    // SIGKILL a second later.
    void shut() {
        stop_grace();
        if (m_errors) {
            (void)read_errors();
            stop_errors();
        }
        if (m_conn) {
            m_conn->close();
            m_conn.reset();
            m_conn_open = false;
        }
        if (m_child && m_exited && !m_kill_timer)
            start_timer([](uv_timer_t* t) {
                auto* self = static_cast<StdioTransport*>(t->data);
                if (!self->m_exited)
                    return;
                (void)self->m_child->kill_group(SIGTERM);
                uv_timer_start(
                    t,
                    [](uv_timer_t* again) {
                        auto* me = static_cast<StdioTransport*>(again->data);
                        if (me->m_exited)
                            (void)me->m_child->kill_group(SIGKILL);
                    },
                    static_cast<uint64_t>(k_kill_after.count()), 0);
            });
    }

    // The one timer of the process's end: `fire` runs k_kill_after from now.
    void start_timer(uv_timer_cb fire) {
        m_kill_timer = new uv_timer_t;
        uv_timer_init(m_loop, m_kill_timer);
        m_kill_timer->data = this;
        uv_timer_start(m_kill_timer, fire, static_cast<uint64_t>(k_kill_after.count()), 0);
    }

    void stop_timer() {
        if (!m_kill_timer)
            return;
        uv_timer_stop(m_kill_timer);
        close_and_delete(m_kill_timer);
        m_kill_timer = nullptr;
    }

    // The handles are all closed: the loop can let this go.
    void release() {
        if (m_exited || m_errors || m_grace || m_conn_open || m_kill_timer || !m_closing || !m_keep_alive)
            return;
        auto closed = std::move(m_events.closed);
        m_keep_alive.reset(); // `this` lives on while the caller holds a reference
        if (closed)
            closed();
    }

    uv_loop_t* m_loop;
    std::string m_who;
    TransportEvents m_events;
    size_t m_max_message;
    std::optional<Child> m_child;
    Fd m_pid_watch;
    uv_poll_t* m_exited = nullptr;
    uv_poll_t* m_errors = nullptr; // its stderr, when kept
    LastWords m_words;
    uv_timer_t* m_kill_timer = nullptr;
    std::unique_ptr<rpc::UvConnection> m_conn;
    bool m_conn_open = false;
    bool m_ended = false;
    bool m_answered = false; // an answer to one of its calls has come
    std::string m_bad_line;  // the first line before it that was not a message, shown
    uv_timer_t* m_grace = nullptr;
    bool m_closing = false;
    std::optional<ExitStatus> m_exit_status;
    std::string m_output_closed; // how its output ended, once it has
    bool m_killed = false;       // by us, a second after its output closed
    std::shared_ptr<StdioTransport> m_keep_alive;
};

} // namespace

Result<std::shared_ptr<Transport>> start_stdio(uv_loop_t* loop, const ChildSpec& spec,
                                               std::string who, size_t max_message,
                                               TransportEvents events) {
    auto t = std::make_shared<StdioTransport>(loop, std::move(who), max_message, std::move(events));
    SION_CHECK(t->open(spec));
    return std::shared_ptr<Transport>(std::move(t));
}

} // namespace sion::mcpd
