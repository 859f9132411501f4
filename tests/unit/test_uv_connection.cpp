// SPDX-License-Identifier: MIT
// rpc::UvConnection on one libuv loop: two connections over two pipes (many requests in flight,
// answered out of order; notifications and requests both ways at once), a peer that closes with
// calls pending or in the middle of a line, input from and output to regular files, bad lines
// answered, write errors, close() flushing, and after every test a loop that ends and closes
// cleanly.
#include "lib/fd.hpp"
#include "lib/rpc/uv_connection.hpp"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <string>
#include <vector>

namespace sion::rpc {
namespace {

const bool k_sigpipe_ignored = [] {
    ::signal(SIGPIPE, SIG_IGN);
    return true;
}();

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

// A regular file holding `content`, already unlinked, read from its start.
Fd temp_file(const std::string& content) {
    const char* dir = std::getenv("TMPDIR");
    std::string path =
        std::string(dir != nullptr && *dir != '\0' ? dir : "/tmp") + "/sion-uv-test.XXXXXX";
    Fd fd(::mkostemp(path.data(), O_CLOEXEC));
    EXPECT_TRUE(fd) << "cannot create a temporary file";
    ::unlink(path.c_str());
    EXPECT_TRUE(write_all(fd.get(), content));
    EXPECT_EQ(::lseek(fd.get(), 0, SEEK_SET), 0);
    return fd;
}

// What a regular file holds from its start, or what a pipe holds until its end.
std::string read_file(int fd) {
    if (::lseek(fd, 0, SEEK_SET) != 0) {
        EXPECT_EQ(errno, ESPIPE);
    }
    auto got = read_all(fd, size_t{64} << 20);
    EXPECT_TRUE(got);
    return got ? *got : std::string();
}

bool fd_is_closed(int fd) {
    return ::fcntl(fd, F_GETFD) == -1 && errno == EBADF;
}

Json object_with(std::string_view key, int64_t value) {
    Json j = Json::object();
    j.set(key, value);
    return j;
}

class UvConnectionTest : public ::testing::Test {
protected:
    void SetUp() override {
        ASSERT_TRUE(k_sigpipe_ignored);
        ASSERT_EQ(uv_loop_init(&m_loop), 0);
        ::alarm(120); // a hang fails the test instead of stalling the run
    }

    void TearDown() override {
        // Connections the test dropped close here; then nothing may be left on the loop.
        EXPECT_EQ(uv_run(&m_loop, UV_RUN_DEFAULT), 0);
        EXPECT_EQ(uv_loop_close(&m_loop), 0) << "a handle or request outlived its connection";
        ::alarm(0);
    }

    // Runs the loop until nothing is left on it: every connection has closed.
    void run() {
        EXPECT_EQ(uv_run(&m_loop, UV_RUN_DEFAULT), 0);
        EXPECT_EQ(uv_loop_alive(&m_loop), 0);
    }

    std::unique_ptr<UvConnection> open(int in, int out, UvHandlers h,
                                       size_t max = k_default_max_line) {
        auto c = UvConnection::open(&m_loop, in, out, std::move(h), max);
        EXPECT_TRUE(c) << c.error().message();
        return c ? std::move(*c) : nullptr;
    }

    // Two connections that talk to each other over two pipes.
    void connect(UvHandlers ha, UvHandlers hb) {
        auto ab = Pipe::make();
        auto ba = Pipe::make();
        ASSERT_TRUE(ab && ba);
        a = open(ba->read.release(), ab->write.release(), std::move(ha));
        b = open(ab->read.release(), ba->write.release(), std::move(hb));
        ASSERT_TRUE(a && b);
    }

    uv_loop_t m_loop{};
    std::unique_ptr<UvConnection> a;
    std::unique_ptr<UvConnection> b;
};

TEST_F(UvConnectionTest, HundredRequestsInFlightAnsweredOutOfOrder) {
    std::vector<std::pair<int64_t, Responder>> held;
    UvHandlers hb;
    hb.requests["work"] = [&](Message m, Responder respond) {
        held.emplace_back(*m.params.integer("n"), std::move(respond));
        if (held.size() < 100)
            return;
        // All are waiting: answer the odd ones backwards, then the even ones forwards.
        auto answer = [](std::pair<int64_t, Responder>& h) {
            Json r = object_with("n", h.first);
            r.set("twice", 2 * h.first);
            h.second(Reply::ok(std::move(r)));
        };
        for (auto it = held.rbegin(); it != held.rend(); ++it)
            if (it->first % 2 == 1)
                answer(*it);
        for (auto& h : held)
            if (h.first % 2 == 0)
                answer(h);
    };
    connect({}, std::move(hb));
    std::vector<int64_t> finished;
    for (int64_t i = 0; i < 100; ++i) {
        a->call("work", object_with("n", i), [&, i](Result<Message> r) {
            ASSERT_TRUE(r) << r.error().message();
            EXPECT_EQ(r->kind, Kind::response);
            EXPECT_EQ(*r->result.integer("n"), i);
            EXPECT_EQ(*r->result.integer("twice"), 2 * i);
            finished.push_back(i);
            if (finished.size() == 100) {
                a->close();
                b->close();
            }
        });
    }
    run();
    std::vector<int64_t> want;
    for (int64_t i = 99; i >= 1; i -= 2)
        want.push_back(i);
    for (int64_t i = 0; i < 100; i += 2)
        want.push_back(i);
    EXPECT_EQ(finished, want);
}

TEST_F(UvConnectionTest, NotificationsBothWays) {
    std::vector<std::string> at_a, at_b;
    UvHandlers ha, hb;
    hb.notifications["ping"] = [&](Message m) {
        at_b.push_back("ping " + m.params.dump());
        b->notify("pong", object_with("k", *m.params.integer("k") + 1));
    };
    ha.notifications["pong"] = [&](Message m) {
        at_a.push_back("pong " + m.params.dump());
        if (at_a.size() == 3) {
            a->close();
            b->close();
        }
    };
    connect(std::move(ha), std::move(hb));
    a->notify("nobody-listens"); // an unknown notification is dropped, not answered
    for (int k = 0; k < 3; ++k)
        a->notify("ping", object_with("k", k * 10));
    run();
    EXPECT_EQ(at_b, (std::vector<std::string>{R"(ping {"k":0})", R"(ping {"k":10})",
                                              R"(ping {"k":20})"}));
    EXPECT_EQ(at_a, (std::vector<std::string>{R"(pong {"k":1})", R"(pong {"k":11})",
                                              R"(pong {"k":21})"}));
}

TEST_F(UvConnectionTest, RequestsInBothDirectionsAtOnce) {
    int done = 0;
    auto finish = [&] {
        if (++done == 101) {
            a->close();
            b->close();
        }
    };
    UvHandlers ha, hb;
    ha.requests["triple"] = [](Message m, Responder r) {
        r(Reply::ok(Json::integer(3 * *m.params.integer("n"))));
    };
    hb.requests["double"] = [](Message m, Responder r) {
        r(Reply::ok(Json::integer(2 * *m.params.integer("n"))));
    };
    connect(std::move(ha), std::move(hb));
    for (int64_t i = 0; i < 50; ++i) {
        a->call("double", object_with("n", i), [&, i](Result<Message> r) {
            ASSERT_TRUE(r) << r.error().message();
            EXPECT_EQ(*r->result.as_int(), 2 * i);
            finish();
        });
        b->call("triple", object_with("n", i), [&, i](Result<Message> r) {
            ASSERT_TRUE(r) << r.error().message();
            EXPECT_EQ(*r->result.as_int(), 3 * i);
            finish();
        });
    }
    // And each side asks for what the other does not have.
    a->call("triple", {}, [&](Result<Message> r) {
        ASSERT_TRUE(r);
        EXPECT_EQ(r->kind, Kind::error);
        EXPECT_EQ(r->error_code, k_method_not_found);
        EXPECT_EQ(r->error_message, "method not found: triple");
        finish();
    });
    run();
    EXPECT_EQ(done, 101);
}

TEST_F(UvConnectionTest, PeerClosingFailsPendingCalls) {
    std::vector<Responder> held;
    std::vector<std::string> events;
    UvHandlers ha, hb;
    hb.requests["hang"] = [&](Message, Responder r) {
        held.push_back(std::move(r));
        if (held.size() == 3)
            b->close(); // never answered
    };
    ha.on_end = [&](Status st) {
        events.push_back(st ? "end ok" : "end " + st.error().message());
        // Calls after the end fail at once.
        a->call("late", {}, [&](Result<Message> r) {
            ASSERT_FALSE(r);
            EXPECT_EQ(r.error().exit(), Exit::unavailable);
            events.push_back(r.error().message());
        });
        a->close();
    };
    connect(std::move(ha), std::move(hb));
    for (int i = 0; i < 3; ++i)
        a->call("hang", {}, [&](Result<Message> r) {
            ASSERT_FALSE(r);
            EXPECT_EQ(r.error().exit(), Exit::unavailable);
            events.push_back(r.error().message());
        });
    run();
    EXPECT_EQ(events, (std::vector<std::string>{
                          "peer closed before answering 'hang'",
                          "peer closed before answering 'hang'",
                          "peer closed before answering 'hang'",
                          "end ok",
                          "connection closed before sending 'late'",
                      }));
    // Answering on a closed connection does nothing.
    for (auto& r : held)
        r(Reply::ok(Json::null()));
}

TEST_F(UvConnectionTest, CloseFailsPendingCalls) {
    Status b_end = make_error(Exit::software, "on_end not called");
    UvHandlers hb;
    hb.requests["hang"] = [](Message, Responder) {};
    hb.on_end = [&](Status st) {
        b_end = st;
        b->close();
    };
    connect({}, std::move(hb));
    std::vector<std::string> failed;
    a->call("hang", {}, [&](Result<Message> r) {
        ASSERT_FALSE(r);
        EXPECT_EQ(r.error().exit(), Exit::unavailable);
        failed.push_back(r.error().message());
    });
    a->close();
    EXPECT_EQ(failed, (std::vector<std::string>{"connection closed before answering 'hang'"}));
    a->close(); // twice is fine
    run();
    EXPECT_TRUE(b_end) << b_end.error().message();
}

TEST_F(UvConnectionTest, PeerClosingMidLineEndsWithAnError) {
    for (std::string tail :
         {std::string(R"({"jsonrpc":"2.0","id":1,"meth)"), std::string(300, 'x')}) {
        auto in = Pipe::make();
        auto out = Pipe::make();
        ASSERT_TRUE(in && out);
        ASSERT_TRUE(write_all(in->write.get(), R"({"jsonrpc":"2.0","method":"n"})"
                                               "\n" + tail));
        in->write.reset();
        int notes = 0;
        std::vector<std::string> ends;
        UvHandlers h;
        h.notifications["n"] = [&](Message) { ++notes; };
        h.on_end = [&](Status st) {
            ends.push_back(st ? "ok" : st.error().message());
            EXPECT_TRUE(st || st.error().exit() == Exit::io);
            a->close();
        };
        a = open(in->read.release(), out->write.release(), std::move(h), 100);
        ASSERT_TRUE(a);
        run();
        EXPECT_EQ(notes, 1);
        EXPECT_EQ(ends, (std::vector<std::string>{"peer closed mid-line"})) << tail;
        EXPECT_EQ(read_file(out->read.get()), "") << "nothing is answered";
        EXPECT_TRUE(a->write_status());
        a.reset();
    }
}

TEST_F(UvConnectionTest, InputAndOutputAsRegularFiles) {
    std::string input;
    std::string want;
    for (int i = 0; i < 5000; ++i) {
        input += R"({"jsonrpc":"2.0","id":)" + std::to_string(i)
                 + R"(,"method":"echo","params":{"i":)" + std::to_string(i) + "}}\n";
        want += R"({"jsonrpc":"2.0","id":)" + std::to_string(i) + R"(,"result":{"i":)"
                + std::to_string(i) + "}}\n";
    }
    Fd in = temp_file(input);
    Fd out = temp_file("");
    int in_fd = in.get();
    int out_fd = ::dup(out.get()); // the connection closes its own; the test reads this one
    ASSERT_GE(out_fd, 0);
    Status end = make_error(Exit::software, "on_end not called");
    UvHandlers h;
    h.requests["echo"] = [](Message m, Responder r) { r(Reply::ok(Json::copy_of(m.params))); };
    h.on_end = [&](Status st) {
        end = st;
        a->close();
    };
    a = open(in.release(), out_fd, std::move(h));
    ASSERT_TRUE(a);
    run();
    EXPECT_TRUE(end) << end.error().message();
    EXPECT_TRUE(a->write_status());
    EXPECT_TRUE(read_file(out.get()) == want) << "the answers differ";
    EXPECT_TRUE(fd_is_closed(in_fd)) << "the connection closes the file it read";
    EXPECT_TRUE(fd_is_closed(out_fd)) << "and the one it wrote";
}

TEST_F(UvConnectionTest, EmptyInputFromDevNull) {
    Fd in(::open("/dev/null", O_RDONLY | O_CLOEXEC));
    ASSERT_TRUE(in);
    auto out = Pipe::make();
    ASSERT_TRUE(out);
    std::vector<std::string> ends;
    UvHandlers h;
    h.on_end = [&](Status st) {
        ends.push_back(st ? "ok" : st.error().message());
        a->close();
    };
    a = open(in.release(), out->write.release(), std::move(h));
    ASSERT_TRUE(a);
    run();
    EXPECT_EQ(ends, (std::vector<std::string>{"ok"}));
    EXPECT_EQ(read_file(out->read.get()), "");
}

TEST_F(UvConnectionTest, BadLinesAreAnsweredAndReadingGoesOn) {
    std::string input = "garbage\n";
    input += std::string(1000, 'x') + "\n";
    input += "{\"s\":\"" + std::string(2 << 20, 'y') + "\"}\n";
    input += "{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":\"\xc0\xaf\"}\n";
    input += R"({"jsonrpc":"2.0","id":4,"method":"nope"})"
             "\n";
    input += "\n   \n";
    input += R"({"jsonrpc":"2.0","id":77,"result":"an answer to nothing"})"
             "\n";
    input += R"({"jsonrpc":"2.0","id":"str","error":{"code":1,"message":"also nothing"}})"
             "\n";
    input += R"({"jsonrpc":"2.0","method":"unknown-notification"})"
             "\n";
    input += R"({"jsonrpc":"2.0","id":5,"method":"echo","params":["still here"]})"
             "\r\n";
    auto out = Pipe::make();
    ASSERT_TRUE(out);
    UvHandlers h;
    h.requests["echo"] = [](Message m, Responder r) { r(Reply::ok(Json::copy_of(m.params))); };
    h.on_end = [&](Status st) {
        EXPECT_TRUE(st) << st.error().message();
        a->close();
    };
    a = open(temp_file(input).release(), out->write.release(), std::move(h), 100);
    ASSERT_TRUE(a);
    run();
    EXPECT_EQ(
        lines_of(read_file(out->read.get())),
        (std::vector<std::string>{
            R"({"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"parse error: invalid JSON at byte 0"}})",
            R"({"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"invalid request: line of 1000 bytes is longer than 100"}})",
            R"({"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"invalid request: line of 2097160 bytes is longer than 100"}})",
            R"({"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"parse error: invalid UTF-8 at byte 34"}})",
            R"({"jsonrpc":"2.0","id":4,"error":{"code":-32601,"message":"method not found: nope"}})",
            R"({"jsonrpc":"2.0","id":5,"result":["still here"]})",
        }));
}

TEST_F(UvConnectionTest, CloseFlushesWrittenLines) {
    const std::string filler(1000, 'f');
    int got = 0;
    bool intact = true;
    Status b_end = make_error(Exit::software, "on_end not called");
    UvHandlers hb;
    hb.notifications["bulk"] = [&](Message m) {
        intact = intact && *m.params.integer("i") == got && *m.params.string("f") == filler;
        ++got;
    };
    hb.on_end = [&](Status st) {
        b_end = st;
        b->close();
    };
    connect({}, std::move(hb));
    for (int64_t i = 0; i < 2000; ++i) { // 2 MB: far more than a pipe holds
        Json p = object_with("i", i);
        p.set("f", filler);
        a->notify("bulk", p);
    }
    a->close();
    a->notify("after-close"); // does nothing
    run();
    EXPECT_EQ(got, 2000);
    EXPECT_TRUE(intact);
    EXPECT_TRUE(b_end) << b_end.error().message();
    EXPECT_TRUE(a->write_status());
}

TEST_F(UvConnectionTest, WriteToAClosedReaderEndsWithAnError) {
    auto in = Pipe::make();
    auto out = Pipe::make();
    ASSERT_TRUE(in && out);
    out->read.reset(); // nobody reads the answers
    ASSERT_TRUE(write_all(in->write.get(), R"({"jsonrpc":"2.0","id":1,"method":"echo"})"
                                           "\n"
                                           R"({"jsonrpc":"2.0","id":2,"method":"echo"})"
                                           "\n"));
    int asked = 0;
    std::vector<std::string> ends;
    UvHandlers h;
    h.requests["echo"] = [&](Message, Responder r) {
        ++asked;
        r(Reply::ok(Json::null()));
    };
    h.on_end = [&](Status st) {
        ends.push_back(st ? "ok" : st.error().message());
        EXPECT_TRUE(st || st.error().exit() == Exit::io);
        a->close();
        in->write.reset(); // input stays open until now: the end comes from the write
    };
    a = open(in->read.release(), out->write.release(), std::move(h));
    ASSERT_TRUE(a);
    run();
    EXPECT_EQ(ends, (std::vector<std::string>{"write error: Broken pipe"}));
    ASSERT_FALSE(a->write_status());
    EXPECT_EQ(a->write_status().error().message(), "write error: Broken pipe");
    EXPECT_GE(asked, 1);
}

TEST_F(UvConnectionTest, WriteErrorAfterInputEndedIsKept) {
    auto in = Pipe::make();
    auto out = Pipe::make();
    ASSERT_TRUE(in && out);
    out->read.reset();
    ASSERT_TRUE(write_all(in->write.get(), R"({"jsonrpc":"2.0","id":1,"method":"later"})"
                                           "\n"));
    in->write.reset();
    std::vector<Responder> held;
    std::vector<std::string> ends;
    UvHandlers h;
    h.requests["later"] = [&](Message, Responder r) { held.push_back(std::move(r)); };
    h.on_end = [&](Status st) {
        ends.push_back(st ? "ok" : st.error().message());
        // Input ended cleanly; the answer still goes out, and fails as the close flushes it.
        for (auto& r : held)
            r(Reply::ok(Json::null()));
        a->close();
    };
    a = open(in->read.release(), out->write.release(), std::move(h));
    ASSERT_TRUE(a);
    run();
    EXPECT_EQ(ends, (std::vector<std::string>{"ok"}));
    ASSERT_FALSE(a->write_status());
    EXPECT_EQ(a->write_status().error().exit(), Exit::io);
    EXPECT_EQ(a->write_status().error().message(), "write error: Broken pipe");
}

TEST_F(UvConnectionTest, WriteErrorToARegularFileOutput) {
    if (::access("/dev/full", W_OK) != 0)
        GTEST_SKIP() << "no /dev/full";
    auto in = Pipe::make();
    ASSERT_TRUE(in);
    ASSERT_TRUE(write_all(in->write.get(), R"({"jsonrpc":"2.0","id":1,"method":"m"})"
                                           "\n"));
    std::vector<std::string> ends;
    UvHandlers h;
    h.on_end = [&](Status st) {
        ends.push_back(st ? "ok" : st.error().message());
        a->close();
        in->write.reset();
    };
    a = open(in->read.release(), ::open("/dev/full", O_WRONLY | O_CLOEXEC), std::move(h));
    ASSERT_TRUE(a);
    run();
    EXPECT_EQ(ends, (std::vector<std::string>{"write error: No space left on device"}));
    EXPECT_FALSE(a->write_status());
}

TEST_F(UvConnectionTest, NothingIsDispatchedAfterOnEnd) {
    if (::access("/dev/full", W_OK) != 0)
        GTEST_SKIP() << "no /dev/full";
    auto in = Pipe::make();
    ASSERT_TRUE(in);
    std::string three;
    for (int i = 1; i <= 3; ++i)
        three += R"({"jsonrpc":"2.0","id":)" + std::to_string(i)
                 + R"(,"method":"count"})"
                   "\n";
    ASSERT_TRUE(write_all(in->write.get(), three));
    int asked = 0;
    int ends = 0;
    UvHandlers h;
    h.requests["count"] = [&](Message, Responder r) {
        ++asked;
        r(Reply::ok(Json::null())); // fails: the output is full
    };
    h.on_end = [&](Status st) {
        ++ends;
        EXPECT_FALSE(st);
    };
    a = open(in->read.release(), ::open("/dev/full", O_WRONLY | O_CLOEXEC), std::move(h));
    ASSERT_TRUE(a);
    // The owner has not closed yet, but input stopped at the end: the loop runs dry.
    EXPECT_EQ(uv_run(&m_loop, UV_RUN_DEFAULT), 0);
    EXPECT_EQ(asked, 1) << "requests after the failed answer were dispatched";
    EXPECT_EQ(ends, 1);
    a->close();
    in->write.reset();
    run();
}

TEST_F(UvConnectionTest, OverASocketpair) {
    int sv[2];
    ASSERT_EQ(::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv), 0);
    UvHandlers hb;
    hb.requests["echo"] = [](Message m, Responder r) { r(Reply::ok(Json::copy_of(m.params))); };
    hb.on_end = [&](Status st) {
        EXPECT_TRUE(st);
        b->close();
    };
    a = open(sv[0], ::fcntl(sv[0], F_DUPFD_CLOEXEC, 3), {});
    b = open(sv[1], ::fcntl(sv[1], F_DUPFD_CLOEXEC, 3), std::move(hb));
    ASSERT_TRUE(a && b);
    int answered = 0;
    for (int64_t i = 0; i < 10; ++i)
        a->call("echo", object_with("i", i), [&, i](Result<Message> r) {
            ASSERT_TRUE(r);
            EXPECT_EQ(*r->result.integer("i"), i);
            if (++answered == 10)
                a->close(); // B sees the end of its input and closes too
        });
    run();
    EXPECT_EQ(answered, 10);
}

TEST_F(UvConnectionTest, OpenFailuresCloseTheDescriptorsAndTheLoop) {
    auto p = Pipe::make();
    ASSERT_TRUE(p);
    int same = p->read.release();
    auto r = UvConnection::open(&m_loop, same, same, {});
    ASSERT_FALSE(r);
    EXPECT_EQ(r.error().exit(), Exit::software);
    EXPECT_EQ(r.error().message(), "reading and writing messages need two descriptors");
    EXPECT_TRUE(fd_is_closed(same));

    // A directory is nothing to read messages from; the pipe opened before it is closed too.
    auto q = Pipe::make();
    ASSERT_TRUE(q);
    int dir = ::open(".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    ASSERT_GE(dir, 0);
    int pipe_fd = q->read.release();
    r = UvConnection::open(&m_loop, pipe_fd, dir, {});
    ASSERT_FALSE(r);
    EXPECT_EQ(r.error().exit(), Exit::io);
    EXPECT_EQ(r.error().message(),
              "cannot use fd " + std::to_string(dir) + " for messages: unsupported kind of file");
    r = UvConnection::open(&m_loop, ::open(".", O_RDONLY | O_DIRECTORY | O_CLOEXEC),
                           q->write.release(), {});
    ASSERT_FALSE(r);
    run();
    EXPECT_TRUE(fd_is_closed(dir));
    EXPECT_TRUE(fd_is_closed(pipe_fd));
}

TEST_F(UvConnectionTest, DroppingAConnectionClosesIt) {
    connect({}, {});
    a->call("never", {}, [](Result<Message> r) {
        ASSERT_FALSE(r);
        EXPECT_EQ(r.error().message(), "connection closed before answering 'never'");
    });
    a.reset();
    b.reset();
    run();
}

} // namespace
} // namespace sion::rpc
