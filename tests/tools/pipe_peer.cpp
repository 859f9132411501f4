// SPDX-License-Identifier: MIT
// pipe-peer: a test fixture, not installed: serves JSON-RPC 2.0 on stdin and stdout through
// rpc::UvConnection so that the end-to-end suites can drive the codec through real pipes.
//
// Methods: echo/say answers its params; echo/later answers them after params.ms milliseconds (a
// libuv timer), so answers come out in finish order. Exit: 0 at a clean end of input once every
// answer is out, 74 when the peer closed mid-line or a write failed, 64 for a bad command line.
#include "lib/cli.hpp"
#include "lib/log.hpp"
#include "lib/rpc/uv_connection.hpp"

#include <uv.h>

#include <cstdlib>
#include <memory>
#include <set>
#include <string>

namespace {

using namespace sion;
using rpc::Message;
using rpc::Reply;
using rpc::Responder;

const CommandSpec k_spec{
    "pipe-peer",
    "pipe-peer [--max-line BYTES]",
    "Serve echo/say and echo/later on stdin and stdout, one JSON-RPC 2.0 message a line. A test\n"
    "fixture for the codec's end-to-end suite; never installed.",
    {{"max-line", 0, "BYTES", "the longest line taken; longer ones get -32600 (default 1048576)"}},
};

class Peer;

// A deferred answer; timer.data points back at it, and it is freed in the timer's close callback.
struct Later {
    uv_timer_t timer{};
    Peer* peer;
    Responder respond;
    Json params;
};

class Peer {
public:
    explicit Peer(uv_loop_t* loop) : m_loop(loop) {}

    rpc::UvHandlers handlers() {
        rpc::UvHandlers h;
        h.requests["echo/say"] = [](Message m, Responder respond) {
            respond(Reply::ok(Json::copy_of(m.params)));
        };
        h.requests["echo/later"] = [this](Message m, Responder respond) {
            later(std::move(m), std::move(respond));
        };
        h.on_end = [this](Status st) { on_end(std::move(st)); };
        return h;
    }

    void attach(std::unique_ptr<rpc::UvConnection> conn) { m_conn = std::move(conn); }

    // What the run came to: the end of input, then whether every write made it.
    [[nodiscard]] Status outcome() const {
        if (!m_end)
            return m_end;
        return m_conn->write_status();
    }

private:
    void later(Message m, Responder respond) {
        auto ms = m.params.integer_or("ms", 0);
        if (!ms || *ms < 0) {
            respond(Reply::fail(rpc::k_invalid_params,
                                "invalid params: ms must be a non-negative integer"));
            return;
        }
        auto* l = new Later{{}, this, std::move(respond), Json::copy_of(m.params)};
        uv_timer_init(m_loop, &l->timer);
        l->timer.data = l;
        m_waiting.insert(l);
        auto fire = [](uv_timer_t* t) {
            auto* done = static_cast<Later*>(t->data);
            Peer* self = done->peer;
            done->respond(Reply::ok(std::move(done->params)));
            self->m_waiting.erase(done);
            close_later(done);
            self->finish_if_idle();
        };
        uv_timer_start(&l->timer, fire, static_cast<uint64_t>(*ms), 0);
    }

    static void close_later(Later* l) {
        uv_close(reinterpret_cast<uv_handle_t*>(&l->timer),
                 [](uv_handle_t* h) { delete static_cast<Later*>(h->data); });
    }

    void on_end(Status st) {
        m_input_ended = true;
        if (st) {
            finish_if_idle();
            return;
        }
        // Nothing more can be read (mid-line) or written: drop what waits and stop.
        m_end = std::move(st);
        for (Later* l : m_waiting)
            close_later(l);
        m_waiting.clear();
        m_conn->close();
    }

    // Input ended cleanly: close once the last deferred answer is out; close() flushes it.
    void finish_if_idle() {
        if (m_input_ended && m_waiting.empty())
            m_conn->close();
    }

    uv_loop_t* m_loop;
    std::unique_ptr<rpc::UvConnection> m_conn;
    std::set<Later*> m_waiting;
    bool m_input_ended = false;
    Status m_end;
};

size_t max_line(const Args& args) {
    auto v = args.value("max-line");
    if (!v)
        return rpc::k_default_max_line;
    char* end = nullptr;
    unsigned long long n =
        v->empty() || (*v)[0] < '0' || (*v)[0] > '9' ? 0 : std::strtoull(v->c_str(), &end, 10);
    if (n == 0 || end == nullptr || *end != '\0')
        die(usage_error("option '--max-line' needs a positive number of bytes, not '" + *v + "'"));
    return static_cast<size_t>(n);
}

} // namespace

int main(int argc, char** argv) {
    guard_standard_fds(); // and SIGPIPE ignored: a reader gone is a write error to report
    set_program_name("pipe-peer");
    Args args = parse_args_or_exit(k_spec, argc, argv);
    if (!args.operands().empty())
        die(usage_error("unexpected operand '" + args.operands().front() + "'"));
    const size_t max = max_line(args);

    uv_loop_t loop;
    if (int rc = uv_loop_init(&loop); rc != 0)
        die(make_error(Exit::os, "cannot start the event loop: %s", uv_strerror(rc)));
    Peer peer(&loop);
    auto conn = rpc::UvConnection::open(&loop, 0, 1, peer.handlers(), max);
    if (!conn)
        die(conn.error());
    peer.attach(std::move(*conn));
    uv_run(&loop, UV_RUN_DEFAULT);
    if (uv_loop_close(&loop) != 0)
        die(make_error(Exit::software, "internal error: the event loop did not close cleanly"));
    Status outcome = peer.outcome();
    if (!outcome)
        die(outcome.error());
    return 0;
}
