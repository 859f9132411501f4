// SPDX-License-Identifier: MIT
// rpc::Connection, blocking, over pipes and socketpairs with a peer thread: call() keeps what
// arrives meanwhile for read(), serve() answers (-32601 for unknown methods), bad lines are
// answered and reading goes on, end of input between lines and inside one, and a write to a closed
// reader.
#include "lib/fd.hpp"
#include "lib/rpc/connection.hpp"

#include <gtest/gtest.h>
#include <signal.h>
#include <sys/socket.h>
#include <unistd.h>

#include <string>
#include <thread>
#include <vector>

namespace sion::rpc {
namespace {

// Programs ignore SIGPIPE (guard_standard_fds); so do these tests, or a write to a closed reader
// would kill the test instead of failing it.
const bool k_sigpipe_ignored = [] {
    ::signal(SIGPIPE, SIG_IGN);
    return true;
}();

// Two pipes: the Connection reads `in.read` and writes `out.write`; the peer the other ends.
struct Wires {
    Pipe to_conn = *Pipe::make();
    Pipe from_conn = *Pipe::make();

    int conn_in() const { return to_conn.read.get(); }

    int conn_out() const { return from_conn.write.get(); }
};

std::vector<std::string> lines_of(const std::string& text) {
    std::vector<std::string> out;
    size_t from = 0;
    while (from < text.size()) {
        size_t nl = text.find('\n', from);
        if (nl == std::string::npos) {
            out.push_back(text.substr(from) + "<no newline>");
            break;
        }
        out.push_back(text.substr(from, nl - from));
        from = nl + 1;
    }
    return out;
}

// The peer: writes `script`, closes its writing end, then reads everything the Connection writes
// until the test closes the Connection's writing end.
class Peer {
public:
    Peer(Wires& w, std::string script) {
        m_thread = std::thread([&w, script = std::move(script), this] {
            EXPECT_TRUE(write_all(w.to_conn.write.get(), script));
            w.to_conn.write.reset();
            auto got = read_all(w.from_conn.read.get(), size_t{64} << 20);
            EXPECT_TRUE(got);
            m_got = got ? *got : std::string();
        });
    }

    // Joins the thread: call after closing the Connection's writing end.
    std::vector<std::string> answers() {
        m_thread.join();
        return lines_of(m_got);
    }

private:
    std::thread m_thread;
    std::string m_got;
};

TEST(RpcConnection, ReadsEveryKindThenEndsBetweenLines) {
    Wires w;
    Peer peer(w, R"({"jsonrpc":"2.0","id":1,"method":"a","params":{"x":1}})"
                 "\n"
                 R"({"jsonrpc":"2.0","method":"n"})"
                 "\r\n\n  \n\t\n"
                 R"({"jsonrpc":"2.0","id":"r","result":[]})"
                 "\n");
    Connection c(w.conn_in(), w.conn_out());
    auto m = c.read();
    ASSERT_TRUE(m && *m);
    EXPECT_EQ((*m)->kind, Kind::request);
    EXPECT_EQ((*m)->method, "a");
    EXPECT_EQ(*(*m)->params.integer("x"), 1);
    m = c.read();
    ASSERT_TRUE(m && *m);
    EXPECT_EQ((*m)->kind, Kind::notification);
    m = c.read();
    ASSERT_TRUE(m && *m);
    EXPECT_EQ((*m)->kind, Kind::response);
    // End of input at the end of a line: nullopt, and again.
    m = c.read();
    ASSERT_TRUE(m);
    EXPECT_FALSE(*m);
    m = c.read();
    ASSERT_TRUE(m);
    EXPECT_FALSE(*m);
    w.from_conn.write.reset();
    EXPECT_TRUE(peer.answers().empty()) << "blank lines are not answered";
}

TEST(RpcConnection, CallKeepsInterleavedMessagesForRead) {
    Wires w;
    std::string sent;
    std::thread peer([&] {
        // Reads the call's request, then sends three other messages before its answer.
        char buf[4096];
        while (sent.find('\n') == std::string::npos) {
            ssize_t n = ::read(w.from_conn.read.get(), buf, sizeof buf);
            ASSERT_GT(n, 0);
            sent.append(buf, static_cast<size_t>(n));
        }
        EXPECT_TRUE(write_all(w.to_conn.write.get(),
                              R"({"jsonrpc":"2.0","method":"progress","params":{"p":1}})"
                              "\n"
                              R"({"jsonrpc":"2.0","id":"peer-1","method":"ask"})"
                              "\n"
                              R"({"jsonrpc":"2.0","id":99,"result":"not yours"})"
                              "\n"
                              R"({"jsonrpc":"2.0","id":1,"result":{"answer":42}})"
                              "\n"
                              R"({"jsonrpc":"2.0","method":"after"})"
                              "\n"));
        w.to_conn.write.reset();
    });
    Connection c(w.conn_in(), w.conn_out());
    Json params = Json::object();
    params.set("q", "life");
    auto answer = c.call("think", params);
    peer.join();
    ASSERT_TRUE(answer) << answer.error().message();
    EXPECT_EQ(answer->kind, Kind::response);
    EXPECT_EQ(*answer->id.as_int(), 1);
    EXPECT_EQ(*answer->result.integer("answer"), 42);
    EXPECT_EQ(sent, R"({"jsonrpc":"2.0","id":1,"method":"think","params":{"q":"life"}})"
                    "\n");
    std::vector<std::string> order;
    for (;;) {
        auto m = c.read();
        ASSERT_TRUE(m);
        if (!*m)
            break;
        order.push_back(std::string((*m)->method) + "/" + (*m)->id.dump());
    }
    EXPECT_EQ(order, (std::vector<std::string>{"progress/", "ask/\"peer-1\"", "/99", "after/"}));
}

TEST(RpcConnection, CallFailsWhenThePeerClosesFirst) {
    Wires w;
    Peer peer(w, R"({"jsonrpc":"2.0","method":"bye"})"
                 "\n");
    Connection c(w.conn_in(), w.conn_out());
    auto answer = c.call("think");
    ASSERT_FALSE(answer);
    EXPECT_EQ(answer.error().exit(), Exit::unavailable);
    EXPECT_EQ(answer.error().message(), "peer closed before answering 'think'");
    auto kept = c.read();
    ASSERT_TRUE(kept && *kept);
    EXPECT_EQ((*kept)->method, "bye");
    w.from_conn.write.reset();
    EXPECT_EQ(peer.answers(),
              (std::vector<std::string>{R"({"jsonrpc":"2.0","id":1,"method":"think"})"}));
}

TEST(RpcConnection, ServeAnswersAndUnknownMethodsGet32601) {
    Wires w;
    Peer peer(w, R"({"jsonrpc":"2.0","id":1,"method":"echo","params":{"v":"x"}})"
                 "\n"
                 R"({"jsonrpc":"2.0","id":"two","method":"nope"})"
                 "\n"
                 R"({"jsonrpc":"2.0","method":"note","params":[1]})"
                 "\n"
                 R"({"jsonrpc":"2.0","method":"unknown-note"})"
                 "\n"
                 R"({"jsonrpc":"2.0","id":5,"result":"an answer is dropped"})"
                 "\n"
                 R"({"jsonrpc":"2.0","id":3,"method":"fails"})"
                 "\n");
    Connection c(w.conn_in(), w.conn_out());
    Handlers h;
    std::vector<std::string> notes;
    h.requests["echo"] = [](const Message& m) { return Reply::ok(Json::copy_of(m.params)); };
    h.requests["fails"] = [](const Message&) {
        Json data = Json::object();
        data.set("why", "because");
        return Reply::fail(k_invalid_params, "invalid params: no", std::move(data));
    };
    h.notifications["note"] = [&](const Message& m) { notes.push_back(m.params.dump()); };
    auto st = c.serve(h);
    EXPECT_TRUE(st) << st.error().message();
    w.from_conn.write.reset();
    EXPECT_EQ(
        peer.answers(),
        (std::vector<std::string>{
            R"({"jsonrpc":"2.0","id":1,"result":{"v":"x"}})",
            R"({"jsonrpc":"2.0","id":"two","error":{"code":-32601,"message":"method not found: nope"}})",
            R"({"jsonrpc":"2.0","id":3,"error":{"code":-32602,"message":"invalid params: no","data":{"why":"because"}}})",
        }));
    EXPECT_EQ(notes, (std::vector<std::string>{"[1]"}));
}

TEST(RpcConnection, BadLinesAreAnsweredAndReadingGoesOn) {
    Wires w;
    std::string script = "garbage\n";
    script += std::string(100, 'x') + "\n";                           // over the cap of 64
    script += "{\"big\":\"" + std::string(10 << 20, 'y') + "\"}\r\n"; // far over it
    script += "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"\xff\"}\n"; // not UTF-8
    script += R"({"jsonrpc":"2.0","id":2,"method":"m",)"
              "\n"; // cut short
    script += R"([{"jsonrpc":"2.0","id":3,"method":"m"}])"
              "\n"; // a batch
    script += R"({"jsonrpc":"2.0","id":4,"method":"ok"})"
              "\n";
    Peer peer(w, script);
    Connection c(w.conn_in(), w.conn_out(), 64);
    auto m = c.read();
    ASSERT_TRUE(m && *m) << (m ? "end of input" : m.error().message());
    EXPECT_EQ((*m)->method, "ok");
    EXPECT_EQ(*(*m)->id.as_int(), 4);
    m = c.read();
    ASSERT_TRUE(m);
    EXPECT_FALSE(*m);
    w.from_conn.write.reset();
    EXPECT_EQ(
        peer.answers(),
        (std::vector<std::string>{
            R"({"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"parse error: invalid JSON at byte 0"}})",
            R"({"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"invalid request: line of 100 bytes is longer than 64"}})",
            R"({"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"invalid request: line of 10485771 bytes is longer than 64"}})",
            R"({"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"parse error: invalid UTF-8 at byte 34"}})",
            R"({"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"parse error: invalid JSON at byte 37"}})",
            R"({"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"invalid request: batches are not supported"}})",
        }));
}

TEST(RpcConnection, PeerClosingMidLineIsAnError) {
    for (std::string tail : {std::string(R"({"jsonrpc":"2.0","id":2,"meth)"), std::string(200, 'z'),
                             std::string("\r")}) {
        Wires w;
        Peer peer(w, R"({"jsonrpc":"2.0","method":"first"})"
                     "\n" + tail);
        Connection c(w.conn_in(), w.conn_out(), 64);
        auto m = c.read();
        ASSERT_TRUE(m && *m);
        EXPECT_EQ((*m)->method, "first");
        m = c.read();
        ASSERT_FALSE(m) << tail;
        EXPECT_EQ(m.error().exit(), Exit::io);
        EXPECT_EQ(m.error().message(), "peer closed mid-line");
        // Reported once; after it the input has ended.
        m = c.read();
        ASSERT_TRUE(m);
        EXPECT_FALSE(*m);
        w.from_conn.write.reset();
        EXPECT_TRUE(peer.answers().empty());
    }
}

TEST(RpcConnection, CallFailsWhenThePeerClosesMidLine) {
    Wires w;
    Peer peer(w, R"({"jsonrpc":"2.0","id":1,"res)");
    Connection c(w.conn_in(), w.conn_out());
    auto answer = c.call("m");
    ASSERT_FALSE(answer);
    EXPECT_EQ(answer.error().exit(), Exit::io);
    EXPECT_EQ(answer.error().message(), "peer closed mid-line");
    w.from_conn.write.reset();
    (void)peer.answers();
}

TEST(RpcConnection, WriteToAClosedReaderIsEpipeNotDeath) {
    ASSERT_TRUE(k_sigpipe_ignored);
    Wires w;
    w.from_conn.read.reset(); // nobody reads what the Connection writes
    Connection c(w.conn_in(), w.conn_out());
    auto st = c.notify("hello");
    ASSERT_FALSE(st);
    EXPECT_EQ(st.error().exit(), Exit::io);
    EXPECT_EQ(st.error().message(), "write error: Broken pipe");
    auto id = c.request("m");
    ASSERT_FALSE(id);
    EXPECT_EQ(id.error().message(), "write error: Broken pipe");
    auto answer = c.call("m");
    ASSERT_FALSE(answer);
    EXPECT_EQ(answer.error().message(), "write error: Broken pipe");
    // Answering a bad line fails the same way, and read() says so.
    ASSERT_TRUE(write_all(w.to_conn.write.get(), "junk\n"));
    auto m = c.read();
    ASSERT_FALSE(m);
    EXPECT_EQ(m.error().message(), "write error: Broken pipe");
}

TEST(RpcConnection, OverASocketpair) {
    int sv[2];
    ASSERT_EQ(::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv), 0);
    Fd mine(sv[0]);
    Fd theirs(sv[1]);
    std::thread server([&] {
        Connection s(theirs.get(), theirs.get()); // one descriptor both ways
        Handlers h;
        h.requests["add"] = [](const Message& m) {
            return Reply::ok(Json::integer(*m.params.at(0).as_int() + *m.params.at(1).as_int()));
        };
        EXPECT_TRUE(s.serve(h));
        theirs.reset(); // the client's read sees the end
    });
    Connection c(mine.get(), mine.get());
    for (int i = 0; i < 100; ++i) {
        Json args = Json::array();
        args.push(Json::integer(i)).push(Json::integer(1000));
        auto r = c.call("add", args);
        ASSERT_TRUE(r) << r.error().message();
        EXPECT_EQ(*r->id.as_int(), i + 1);
        EXPECT_EQ(*r->result.as_int(), i + 1000);
    }
    auto r = c.call("sub");
    ASSERT_TRUE(r);
    EXPECT_EQ(r->kind, Kind::error);
    EXPECT_EQ(r->error_code, k_method_not_found);
    EXPECT_EQ(r->error_message, "method not found: sub");
    ASSERT_EQ(::shutdown(mine.get(), SHUT_WR), 0);
    server.join();
    auto end = c.read();
    ASSERT_TRUE(end);
    EXPECT_FALSE(*end);
    // The peer has gone: writing now is EPIPE, an error.
    auto st = c.notify("late");
    ASSERT_FALSE(st);
    EXPECT_EQ(st.error().exit(), Exit::io);
}

TEST(RpcConnection, RequestIdsCount) {
    Wires w;
    Connection c(w.conn_in(), w.conn_out());
    EXPECT_EQ(*c.request("a"), 1);
    EXPECT_EQ(*c.request("b", Json::array()), 2);
    Message req = *decode(R"({"jsonrpc":"2.0","id":"x","method":"q"})").message;
    EXPECT_TRUE(c.reply(req, Reply::ok(Json::string("done"))));
    EXPECT_TRUE(c.reply(req, Reply::fail(-1, "no")));
    w.from_conn.write.reset();
    auto got = read_all(w.from_conn.read.get(), 1 << 20);
    ASSERT_TRUE(got);
    EXPECT_EQ(lines_of(*got),
              (std::vector<std::string>{
                  R"({"jsonrpc":"2.0","id":1,"method":"a"})",
                  R"({"jsonrpc":"2.0","id":2,"method":"b","params":[]})",
                  R"({"jsonrpc":"2.0","id":"x","result":"done"})",
                  R"({"jsonrpc":"2.0","id":"x","error":{"code":-1,"message":"no"}})",
              }));
}

TEST(RpcConnection, EncodeReply) {
    EXPECT_EQ(encode_reply(Json::integer(1).view(), Reply::ok(Json())),
              R"({"jsonrpc":"2.0","id":1,"result":null})"
              "\n");
    EXPECT_EQ(
        encode_reply(Json::integer(1).view(), Reply::fail(k_internal_error, "internal error")),
        R"({"jsonrpc":"2.0","id":1,"error":{"code":-32603,"message":"internal error"}})"
        "\n");
}

} // namespace
} // namespace sion::rpc
