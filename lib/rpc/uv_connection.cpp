// SPDX-License-Identifier: MIT
// The pipes protocol on libuv. Impl keeps itself alive while its handles are open, so close
// callbacks never touch freed memory; Responders hold it weakly.
#include "lib/rpc/uv_connection.hpp"

#include "lib/fd.hpp"
#include "lib/text.hpp"

#include <unistd.h>

#include <array>

namespace sion::rpc {

namespace {

struct WriteReq {
    uv_write_t req;
    std::string data;
};

// libuv's errors on Unix are negated errnos: strerror gives the house's text ("Broken pipe"), where
// uv_strerror would give its own ("broken pipe"). The few errors of libuv's own keep its text.
Error uv_error(int status, const char* what) {
    if (status > -1000)
        return sys_error(Exit::io, -status, "%s", what);
    return make_error(Exit::io, "%s: %s", what, uv_strerror(status));
}

} // namespace

struct UvConnection::Impl : std::enable_shared_from_this<UvConnection::Impl> {
    struct Pending {
        std::string method;
        std::function<void(Result<Message>)> done;
    };

    uv_loop_t* loop = nullptr;
    int in_fd = -1;
    int out_fd = -1;
    bool in_is_file = false;
    bool out_is_file = false;
    bool in_held = false;  // a handle holds in_fd and closes it
    bool out_held = false;
    uv_any_handle in_h{};
    uv_any_handle out_h{};
    uv_fs_t fs_req{};
    uv_shutdown_t shutdown_req{};
    std::array<char, 65536> buf{};
    LineReader reader;
    UvHandlers handlers;
    std::map<int64_t, Pending> pending;
    int64_t next_id = 1;
    int open_handles = 0;
    bool reading_file = false; // a uv_fs_read is outstanding
    bool ended = false;
    bool closing = false;
    Status write_status; // ok, or the first write that failed
    std::shared_ptr<Impl> keep_alive; // set while handles are open

    explicit Impl(size_t max_line) : reader(max_line) {}

    uv_stream_t* in_stream() { return reinterpret_cast<uv_stream_t*>(&in_h); }
    uv_stream_t* out_stream() { return reinterpret_cast<uv_stream_t*>(&out_h); }

    Status open_stream(int fd, uv_any_handle* h, bool* is_file, bool* held);
    void close_loose_fds();
    Status start();
    void on_bytes(std::string_view bytes);
    void dispatch(Message m);
    void write(std::string line);
    void write_failed(Error e);
    void end(Status why);
    void fail_pending(const char* why);
    void read_file();
    void handle_closed();
};

Status UvConnection::Impl::open_stream(int fd, uv_any_handle* h, bool* is_file, bool* held) {
    uv_handle_type type = uv_guess_handle(fd);
    if (type == UV_FILE) {
        *is_file = true;
        return {};
    }
    const std::string what = format("cannot use fd %d for messages", fd);
    if (type == UV_TTY) {
        if (int rc = uv_tty_init(loop, &h->tty, fd, 0); rc != 0)
            return uv_error(rc, what.c_str());
    } else if (type == UV_NAMED_PIPE || type == UV_TCP) {
        if (int rc = uv_pipe_init(loop, &h->pipe, 0); rc != 0)
            return uv_error(rc, what.c_str());
        h->handle.data = this; // initialised: close() must close it even if opening fails
        ++open_handles;
        if (int rc = uv_pipe_open(&h->pipe, fd); rc != 0)
            return uv_error(rc, what.c_str());
    } else {
        return make_error(Exit::io, "%s: unsupported kind of file", what.c_str());
    }
    if (h->handle.data == nullptr) {
        h->handle.data = this;
        ++open_handles;
    }
    *held = true;
    return {};
}

// What no handle holds is closed here: regular files, and a descriptor whose handle failed to open.
// libuv leaves 0-2 open, and so does this.
void UvConnection::Impl::close_loose_fds() {
    if (!in_held && in_fd > STDERR_FILENO && !reading_file) {
        ::close(in_fd);
        in_fd = -1;
    }
    if (!out_held && out_fd > STDERR_FILENO) {
        ::close(out_fd);
        out_fd = -1;
    }
}

Status UvConnection::Impl::start() {
    if (in_is_file) {
        read_file();
        return {};
    }
    auto alloc = [](uv_handle_t* h, size_t, uv_buf_t* out) {
        auto* conn = static_cast<Impl*>(h->data);
        *out = uv_buf_init(conn->buf.data(), static_cast<unsigned>(conn->buf.size()));
    };
    auto on_read = [](uv_stream_t* s, ssize_t n, const uv_buf_t*) {
        auto* conn = static_cast<Impl*>(s->data);
        if (n > 0) {
            conn->on_bytes({conn->buf.data(), static_cast<size_t>(n)});
        } else if (n == UV_EOF) {
            uv_read_stop(s);
            conn->end(conn->reader.mid_line() ? make_error(Exit::io, "peer closed mid-line") : Status{});
        } else if (n < 0) {
            uv_read_stop(s);
            conn->end(uv_error(static_cast<int>(n), "read error"));
        }
    };
    int rc = uv_read_start(in_stream(), alloc, on_read);
    if (rc != 0)
        return uv_error(rc, "cannot read messages");
    return {};
}

void UvConnection::Impl::read_file() {
    uv_buf_t b = uv_buf_init(buf.data(), static_cast<unsigned>(buf.size()));
    fs_req.data = this;
    reading_file = true;
    auto on_read = [](uv_fs_t* req) {
        auto* conn = static_cast<Impl*>(req->data);
        ssize_t n = req->result;
        uv_fs_req_cleanup(req);
        conn->reading_file = false;
        if (conn->closing) {
            conn->close_loose_fds(); // close() left the file open for this read
        } else {
            if (n > 0) {
                conn->on_bytes({conn->buf.data(), static_cast<size_t>(n)});
                if (!conn->closing && !conn->ended)
                    conn->read_file();
            } else if (n == 0) {
                conn->end(conn->reader.mid_line() ? make_error(Exit::io, "peer closed mid-line")
                                                  : Status{});
            } else {
                conn->end(uv_error(static_cast<int>(n), "read error"));
            }
        }
        conn->handle_closed(); // this read's hold; may free conn
    };
    ++open_handles; // the request keeps the connection alive like a handle
    int rc = uv_fs_read(loop, &fs_req, in_fd, &b, 1, -1, on_read);
    if (rc != 0) {
        --open_handles;
        reading_file = false;
        end(uv_error(rc, "read error"));
    }
}

void UvConnection::Impl::on_bytes(std::string_view bytes) {
    reader.feed(bytes);
    // Keep this alive while handlers run: one may close the connection.
    std::shared_ptr<Impl> keep = shared_from_this();
    while (!closing && !ended) {
        auto line = reader.next();
        if (!line)
            break;
        if (line->overlong) {
            write(encode_failure(overlong_failure(line->length, reader.max_line())));
            if (handlers.on_overlong)
                handlers.on_overlong(line->length);
            continue;
        }
        if (line->text.find_first_not_of(" \t") == std::string_view::npos)
            continue;
        Decoded d = decode(line->text);
        if (d.failure) {
            write(encode_failure(*d.failure));
            if (handlers.on_undecodable)
                handlers.on_undecodable(line->text);
        } else
            dispatch(std::move(*d.message));
    }
}

void UvConnection::Impl::dispatch(Message m) {
    if (m.kind == Kind::request) {
        auto h = handlers.requests.find(m.method);
        if (h == handlers.requests.end()) {
            write(encode_error(m.id, k_method_not_found, "method not found: " + std::string(m.method)));
            return;
        }
        auto id = std::make_shared<Json>(Json::copy_of(m.id));
        std::weak_ptr<Impl> weak = weak_from_this();
        h->second(std::move(m), [weak, id](const Reply& r) {
            if (auto conn = weak.lock(); conn && !conn->closing)
                conn->write(encode_reply(id->view(), r));
        });
    } else if (m.kind == Kind::notification) {
        auto h = handlers.notifications.find(m.method);
        if (h != handlers.notifications.end())
            h->second(std::move(m));
    } else {
        auto id = m.id.as_int();
        auto p = id ? pending.find(*id) : pending.end();
        if (p == pending.end())
            return; // an answer to nothing we asked: dropped
        auto done = std::move(p->second.done);
        pending.erase(p);
        done(std::move(m));
    }
}

void UvConnection::Impl::write(std::string line) {
    if (!write_status)
        return; // a write failed: what follows a lost line must not arrive without it
    if (out_is_file) {
        if (auto st = write_all(out_fd, line); !st)
            write_failed(std::move(st).error());
        return;
    }
    auto* w = new WriteReq{{}, std::move(line)};
    w->req.data = this;
    uv_buf_t b = uv_buf_init(w->data.data(), static_cast<unsigned>(w->data.size()));
    int rc = uv_write(&w->req, out_stream(), &b, 1, [](uv_write_t* req, int status) {
        auto* wr = reinterpret_cast<WriteReq*>(req);
        auto* conn = static_cast<Impl*>(req->data);
        delete wr;
        if (status < 0 && status != UV_ECANCELED)
            conn->write_failed(uv_error(status, "write error"));
    });
    if (rc != 0) {
        delete w;
        write_failed(uv_error(rc, "write error"));
    }
}

void UvConnection::Impl::write_failed(Error e) {
    if (write_status)
        write_status = e;
    // Unless the owner is closing already (write_status() tells it then), it hears now: a peer that
    // cannot be answered is gone.
    if (!closing)
        end(std::move(e));
}

void UvConnection::Impl::fail_pending(const char* why) {
    auto waiting = std::move(pending);
    pending.clear();
    for (auto& [id, p] : waiting)
        p.done(make_error(Exit::unavailable, "%s before answering '%s'", why, p.method.c_str()));
}

void UvConnection::Impl::end(Status why) {
    if (ended)
        return;
    ended = true;
    std::shared_ptr<Impl> keep = shared_from_this();
    // No more input is taken: on_end is the last word on it.
    if (!in_is_file && in_h.handle.data != nullptr && !uv_is_closing(&in_h.handle))
        uv_read_stop(in_stream());
    fail_pending("peer closed");
    if (handlers.on_end)
        handlers.on_end(std::move(why));
}

void UvConnection::Impl::handle_closed() {
    if (--open_handles == 0)
        keep_alive.reset(); // may free this: nothing after
}

Result<std::unique_ptr<UvConnection>> UvConnection::open(uv_loop_t* loop, int in_fd, int out_fd,
                                                         UvHandlers handlers, size_t max_line) {
    if (in_fd == out_fd) {
        if (in_fd > STDERR_FILENO)
            ::close(in_fd); // the descriptors are ours even when opening fails
        return make_error(Exit::software, "reading and writing messages need two descriptors");
    }
    auto impl = std::make_shared<Impl>(max_line);
    impl->loop = loop;
    impl->in_fd = in_fd;
    impl->out_fd = out_fd;
    impl->handlers = std::move(handlers);
    impl->keep_alive = impl;
    auto conn = std::unique_ptr<UvConnection>(new UvConnection(impl));
    Status st = impl->open_stream(in_fd, &impl->in_h, &impl->in_is_file, &impl->in_held);
    if (st)
        st = impl->open_stream(out_fd, &impl->out_h, &impl->out_is_file, &impl->out_held);
    if (st)
        st = impl->start();
    if (!st)
        return std::move(st).error(); // conn's destructor closes what was opened
    return conn;
}

UvConnection::~UvConnection() { close(); }

Status UvConnection::write_status() const { return m_impl->write_status; }

int64_t UvConnection::call(std::string_view method, JsonView params,
                           std::function<void(Result<Message>)> done) {
    Impl& c = *m_impl;
    if (c.closing || c.ended) {
        done(make_error(Exit::unavailable, "connection closed before sending '%.*s'",
                        static_cast<int>(method.size()), method.data()));
        return 0;
    }
    int64_t id = c.next_id++;
    c.pending.emplace(id, Impl::Pending{std::string(method), std::move(done)});
    c.write(encode_request(id, method, params));
    return id;
}

void UvConnection::notify(std::string_view method, JsonView params) {
    if (!m_impl->closing && !m_impl->ended)
        m_impl->write(encode_notification(method, params));
}

void UvConnection::close() {
    Impl& c = *m_impl;
    if (c.closing)
        return;
    c.closing = true;
    c.fail_pending("connection closed");
    auto on_close = [](uv_handle_t* h) { static_cast<Impl*>(h->data)->handle_closed(); };
    if (!c.in_is_file) {
        if (uv_is_active(reinterpret_cast<uv_handle_t*>(&c.in_h)))
            uv_read_stop(c.in_stream());
        if (c.in_h.handle.data != nullptr)
            uv_close(&c.in_h.handle, on_close);
    } else if (c.reading_file) {
        uv_cancel(reinterpret_cast<uv_req_t*>(&c.fs_req)); // its callback releases it either way
    }
    if (!c.out_is_file && c.out_h.handle.data != nullptr) {
        // Let written lines reach the peer before the pipe closes.
        c.shutdown_req.data = &c;
        int rc = uv_shutdown(&c.shutdown_req, c.out_stream(), [](uv_shutdown_t* req, int) {
            auto* conn = static_cast<Impl*>(req->data);
            uv_close(&conn->out_h.handle, [](uv_handle_t* h) {
                static_cast<Impl*>(h->data)->handle_closed();
            });
        });
        if (rc != 0)
            uv_close(&c.out_h.handle, on_close);
    }
    c.close_loose_fds();
    if (c.open_handles == 0)
        c.keep_alive.reset();
}

} // namespace sion::rpc
