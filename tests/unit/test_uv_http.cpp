// SPDX-License-Identifier: MIT
// Unit tests of lib/uv_http: transfers on a libuv loop against the loopback server of
// tests/unit/http_test_server.hpp — many at once, streamed bodies, cancels and closes from inside
// callbacks, time-outs and limits, errors that match HttpClient's; every test ends with the loop
// closing cleanly.
#include "lib/uv_http.hpp"
#include "tests/unit/http_test_server.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <functional>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

namespace sion {
namespace {

using namespace std::chrono_literals;

using test::chunk;
using test::Received;
using test::respond;
using test::TestServer;

// Longer than any test should take: the watchdog then fails the test and closes the engine.
constexpr uint64_t k_watchdog_ms = 20000;

HttpRequest get(const std::string& url) {
    HttpRequest request;
    request.url = url;
    request.timeout = 10s;
    return request;
}

void echo(const Received& request, int fd, const TestServer&) {
    TestServer::send_text(fd, respond(200, "OK", "Content-Type: text/plain\r\n",
                                      request.head + "\r\n" + request.body));
}

// A chunked body of `chunk` sent again and again until the client goes (or the server stops).
void endless(const Received&, int fd, const TestServer& self) {
    TestServer::send_text(fd, "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n");
    while (!self.stopping() && TestServer::send_text(fd, chunk("data: tick\n\n")))
        std::this_thread::sleep_for(5ms);
}

class UvHttpTest : public ::testing::Test {
protected:
    void SetUp() override {
        ASSERT_EQ(uv_loop_init(&m_loop), 0);
        auto made = UvHttp::make(&m_loop);
        ASSERT_TRUE(made) << made.error().message();
        http = std::move(*made);
        ASSERT_EQ(uv_timer_init(&m_loop, &m_watchdog), 0);
        m_watchdog.data = this;
        uv_timer_start(
            &m_watchdog,
            [](uv_timer_t* t) {
                auto* self = static_cast<UvHttpTest*>(t->data);
                ADD_FAILURE() << "the watchdog fired: the test hung";
                if (self->http)
                    self->http->close();
            },
            k_watchdog_ms, 0);
        uv_unref(reinterpret_cast<uv_handle_t*>(&m_watchdog));
    }

    void TearDown() override {
        http.reset();
        uv_close(reinterpret_cast<uv_handle_t*>(&m_watchdog), nullptr);
        // Only closing handles are left: the loop ends, and closes with nothing open.
        EXPECT_EQ(uv_run(&m_loop, UV_RUN_DEFAULT), 0);
        EXPECT_EQ(uv_loop_close(&m_loop), 0);
    }

    // Runs the loop until `done` holds; false when the loop ran out of work first.
    bool run_until(const std::function<bool()>& done) {
        while (!done())
            if (uv_run(&m_loop, UV_RUN_ONCE) == 0 && !done())
                return false;
        return true;
    }

    // Runs until the loop has nothing left to do but the watchdog.
    void run_out() { uv_run(&m_loop, UV_RUN_DEFAULT); }

    std::unique_ptr<UvHttp> http;

private:
    uv_loop_t m_loop{};
    uv_timer_t m_watchdog{};
};

// The result of one transfer, kept by its `done`.
struct Outcome {
    int calls = 0;
    std::optional<Result<HttpResponse>> result;

    UvHttp::Done done() {
        return [this](Result<HttpResponse> r) {
            ++calls;
            result.emplace(std::move(r));
        };
    }
};

TEST_F(UvHttpTest, GetAndPost) {
    TestServer server(echo);
    Outcome got;
    Outcome posted;
    HttpRequest post = get(server.url("/post"));
    post.method = "POST";
    post.body = R"({"a":1})";
    post.headers.add("Content-Type", "application/json");
    http->start(get(server.url("/get?x=1")), got.done());
    http->start(post, posted.done());
    EXPECT_EQ(got.calls + posted.calls, 0) << "done was called from within start()";
    EXPECT_EQ(http->running(), 2U);
    ASSERT_TRUE(run_until([&] { return got.calls + posted.calls == 2; }));
    ASSERT_TRUE(*got.result) << got.result->error().message();
    EXPECT_EQ((*got.result)->status, 200);
    EXPECT_EQ((*got.result)->headers.get("content-type").value_or("?"), "text/plain");
    EXPECT_EQ((*got.result)->body.rfind("GET /get?x=1 HTTP/1.1\r\n", 0), 0U);
    ASSERT_TRUE(*posted.result) << posted.result->error().message();
    const std::string& seen = (*posted.result)->body;
    EXPECT_EQ(seen.rfind("POST /post HTTP/1.1\r\n", 0), 0U) << seen;
    EXPECT_NE(seen.find("\r\nContent-Type: application/json\r\n"), std::string::npos) << seen;
    EXPECT_EQ(seen.substr(seen.size() - 7), R"({"a":1})");
    EXPECT_EQ(http->running(), 0U);
    run_out(); // nothing of the engine keeps the loop alive once its transfers have ended
    EXPECT_EQ(got.calls + posted.calls, 2);
}

// Every request is held until all of them have arrived: they can only finish if they run at once.
TEST_F(UvHttpTest, ManyTransfersAtOnce) {
    constexpr int k_count = 24;
    std::atomic<int> arrived{0};
    TestServer server([&](const Received& request, int fd, const TestServer& self) {
        ++arrived;
        if (self.wait_for([&] { return arrived >= k_count; }))
            echo(request, fd, self);
    });
    std::vector<Outcome> outcomes(k_count);
    for (int i = 0; i < k_count; ++i)
        http->start(get(server.url("/" + std::to_string(i))), outcomes[i].done());
    EXPECT_EQ(http->running(), static_cast<size_t>(k_count));
    int finished = 0;
    ASSERT_TRUE(run_until([&] {
        finished = 0;
        for (const auto& o : outcomes)
            finished += o.calls;
        return finished == k_count;
    }));
    for (int i = 0; i < k_count; ++i) {
        const auto& r = *outcomes[i].result;
        ASSERT_TRUE(r) << r.error().message();
        EXPECT_EQ(r->body.rfind("GET /" + std::to_string(i) + " HTTP/1.1\r\n", 0), 0U);
        EXPECT_EQ(outcomes[i].calls, 1);
    }
}

// The server sends each event only once the client has taken the one before, so the body cannot
// arrive all at once at the end.
TEST_F(UvHttpTest, StreamedBodyArrivesChunkByChunk) {
    constexpr int k_events = 50;
    std::atomic<int> calls{0};
    std::atomic<bool> lockstep{true};
    TestServer server([&](const Received&, int fd, const TestServer& self) {
        TestServer::send_text(fd, "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\n"
                                  "Transfer-Encoding: chunked\r\n\r\n");
        for (int i = 0; i < k_events; ++i) {
            TestServer::send_text(fd, chunk("data: " + std::to_string(i) + "\n\n"));
            if (!self.wait_for([&] { return calls > i; }))
                lockstep = false;
        }
        TestServer::send_text(fd, "0\r\n\r\n");
    });
    HttpRequest request = get(server.url("/events"));
    std::string streamed;
    int heads = 0;
    request.on_headers = [&](const HttpResponse& head) {
        ++heads;
        EXPECT_EQ(calls, 0);
        return head.headers.get("content-type") == "text/event-stream";
    };
    request.on_body = [&](std::string_view data) {
        streamed += data;
        ++calls;
        return true;
    };
    Outcome out;
    http->start(request, out.done());
    ASSERT_TRUE(run_until([&] { return out.calls == 1; }));
    ASSERT_TRUE(*out.result) << out.result->error().message();
    EXPECT_EQ(heads, 1);
    EXPECT_TRUE(lockstep) << "an event was not delivered before the next was sent";
    std::string expected;
    for (int i = 0; i < k_events; ++i)
        expected += "data: " + std::to_string(i) + "\n\n";
    EXPECT_EQ(streamed, expected);
    EXPECT_TRUE((*out.result)->body.empty());
}

TEST_F(UvHttpTest, CancelFromInsideOnBody) {
    std::atomic<int> gone{0};
    TestServer server([&](const Received& request, int fd, const TestServer& self) {
        endless(request, fd, self);
        ++gone;
    });
    HttpRequest request = get(server.url("/stream"));
    UvHttp::Id id = 0;
    int chunks = 0;
    request.on_body = [&](std::string_view) {
        if (++chunks == 3)
            http->cancel(id);
        return true;
    };
    Outcome out;
    id = http->start(request, out.done());
    ASSERT_TRUE(run_until([&] { return chunks >= 3 && http->running() == 0; }));
    run_out();
    EXPECT_EQ(chunks, 3) << "on_body was called after the cancel";
    EXPECT_EQ(out.calls, 0);
    http->cancel(id); // an id that has ended is ignored
    EXPECT_TRUE(server.wait_for([&] { return gone == 1; })) << "the connection stayed open";
}

// One transfer's callbacks cancel the others: from on_headers, on_body and done.
TEST_F(UvHttpTest, CancelOthersFromEveryCallback) {
    TestServer server([](const Received& request, int fd, const TestServer& self) {
        if (request.head.find("/quick") != std::string::npos)
            echo(request, fd, self);
        else
            endless(request, fd, self);
    });
    Outcome a, b, c, d, quick;
    UvHttp::Id id_b = http->start(get(server.url("/b")), b.done());
    UvHttp::Id id_c = http->start(get(server.url("/c")), c.done());
    UvHttp::Id id_d = http->start(get(server.url("/d")), d.done());
    HttpRequest first = get(server.url("/a"));
    int chunks = 0;
    first.on_headers = [&](const HttpResponse&) {
        http->cancel(id_b);
        return true;
    };
    first.on_body = [&](std::string_view) {
        if (++chunks == 2)
            http->cancel(id_c);
        return chunks < 4; // then stops itself
    };
    http->start(first, a.done());
    http->start(get(server.url("/quick")), [&](Result<HttpResponse> r) {
        quick.done()(std::move(r));
        http->cancel(id_d);
    });
    ASSERT_TRUE(run_until([&] { return a.calls == 1 && quick.calls == 1; }));
    run_out();
    EXPECT_EQ(http->running(), 0U);
    EXPECT_EQ(b.calls + c.calls + d.calls, 0);
    ASSERT_FALSE(*a.result);
    EXPECT_EQ(a.result->error().message(),
              "cannot read '" + server.url("/a") + "': the receiver stopped the transfer");
    EXPECT_TRUE(*quick.result);
}

TEST_F(UvHttpTest, TimeoutAgainstAServerThatNeverAnswers) {
    TestServer server(
        [](const Received&, int, const TestServer& self) { self.wait_for([] { return false; }); });
    HttpRequest request = get(server.url("/slow?token=s3cret"));
    request.timeout = 300ms;
    Outcome out;
    http->start(request, out.done());
    ASSERT_TRUE(run_until([&] { return out.calls == 1; }));
    ASSERT_FALSE(*out.result);
    const Error& e = out.result->error();
    EXPECT_EQ(e.exit(), Exit::timeout);
    EXPECT_EQ(
        e.message().rfind("cannot reach '" + server.url("/slow") + "': Timeout was reached", 0), 0U)
        << e.message();
}

// The same errors, with the same messages, as HttpClient::send.
TEST_F(UvHttpTest, ErrorsMatchTheBlockingClient) {
    TestServer server([](const Received& request, int fd, const TestServer&) {
        if (request.head.find("/big") != std::string::npos) {
            TestServer::send_text(fd, "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n");
            TestServer::send_text(fd, chunk(std::string(100000, 'x')) + "0\r\n\r\n");
        } else if (request.head.find("/cut") != std::string::npos) {
            // Promises 100 bytes, sends 10 and closes.
            TestServer::send_text(fd, "HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\n0123456789");
        } else {
            TestServer::send_text(fd, respond(200, "OK", "", "fine"));
        }
    });
    std::vector<HttpRequest> requests;
    requests.push_back(get(server.url("/big")));
    requests.back().max_response_size = 1000;
    requests.push_back(get(server.url("/cut")));
    requests.push_back(get(server.url("/fine")));
    requests.back().headers.add("X-Evil", "a\r\nX-Injected: 1");
    requests.push_back(get(server.url("/fine")));
    requests.back().method = "GET / HTTP/1.1\r\n";
    requests.push_back(get("ftp://127.0.0.1/"));
    requests.push_back(get(server.url("/fine")));
    requests.back().on_headers = [](const HttpResponse&) -> bool {
        throw std::runtime_error("boom");
    };
    std::vector<Outcome> outcomes(requests.size());
    for (size_t i = 0; i < requests.size(); ++i)
        http->start(requests[i], outcomes[i].done());
    for (const auto& o : outcomes)
        EXPECT_EQ(o.calls, 0) << "done was called from within start()";
    ASSERT_TRUE(run_until([&] {
        for (const auto& o : outcomes)
            if (o.calls == 0)
                return false;
        return true;
    }));
    EXPECT_EQ(outcomes[0].result->error().message(),
              "cannot read '" + server.url("/big") + "': the response is larger than 1000 bytes");
    std::vector<Exit> exits{Exit::data, Exit::io,   Exit::data,
                            Exit::data, Exit::data, Exit::software};
    for (size_t i = 0; i < requests.size(); ++i) {
        const auto& r = *outcomes[i].result;
        ASSERT_FALSE(r) << i;
        EXPECT_EQ(outcomes[i].calls, 1);
        EXPECT_EQ(r.error().exit(), exits[i]) << i << ": " << r.error().message();
        auto blocking = http_send(requests[i]);
        ASSERT_FALSE(blocking) << i;
        EXPECT_EQ(r.error().exit(), blocking.error().exit()) << i;
        EXPECT_EQ(r.error().message(), blocking.error().message()) << i;
    }
}

TEST_F(UvHttpTest, ConnectionRefused) {
    int port = 0;
    {
        TestServer gone(echo);
        port = gone.port();
    }
    Outcome out;
    http->start(get("http://127.0.0.1:" + std::to_string(port) + "/"), out.done());
    ASSERT_TRUE(run_until([&] { return out.calls == 1; }));
    ASSERT_FALSE(*out.result);
    EXPECT_EQ(out.result->error().exit(), Exit::unavailable) << out.result->error().message();
}

// close() from inside a callback ends every transfer, calls no `done`, and leaves the loop nothing
// but closing handles (TearDown checks it closes).
TEST_F(UvHttpTest, CloseWithTransfersOpen) {
    TestServer server(endless);
    constexpr size_t k_count = 4;
    std::vector<Outcome> outcomes(k_count);
    std::vector<int> chunks(k_count);
    int total = 0;
    int at_close = -1;
    for (size_t i = 0; i < k_count; ++i) {
        HttpRequest request = get(server.url("/stream"));
        request.on_body = [&, i](std::string_view) {
            ++total;
            ++chunks[i];
            // Once every stream is under way.
            if (at_close < 0
                && std::all_of(chunks.begin(), chunks.end(), [](int n) { return n > 1; })) {
                at_close = total;
                http->close();
            }
            return true;
        };
        http->start(request, outcomes[i].done());
    }
    run_out();
    EXPECT_EQ(total, at_close) << "on_body was called after close()";
    EXPECT_EQ(http->running(), 0U);
    for (const auto& o : outcomes)
        EXPECT_EQ(o.calls, 0);
    Outcome late;
    http->start(get(server.url("/late")), late.done());
    run_out();
    EXPECT_EQ(late.calls, 0);
    EXPECT_EQ(server.requests(), static_cast<int>(k_count));
}

// Dropping the engine from inside a transfer's own callback, and with transfers that have not
// reached curl yet.
TEST_F(UvHttpTest, DropFromInsideCallbacks) {
    TestServer server(endless);
    Outcome pending;
    HttpRequest request = get(server.url("/stream"));
    int chunks = 0;
    request.on_body = [&](std::string_view) {
        if (++chunks == 2) {
            http->start(get(server.url("/never")), pending.done());
            http.reset();
        }
        return true;
    };
    Outcome out;
    http->start(request, out.done());
    run_out();
    EXPECT_EQ(chunks, 2);
    EXPECT_EQ(out.calls + pending.calls, 0);
}

TEST_F(UvHttpTest, DoneMayStartTheNextTransfer) {
    TestServer server(echo);
    std::vector<std::string> bodies;
    std::function<void(Result<HttpResponse>)> next = [&](Result<HttpResponse> r) {
        ASSERT_TRUE(r) << r.error().message();
        bodies.push_back(r->body.substr(0, r->body.find("\r\n")));
        if (bodies.size() < 3)
            http->start(get(server.url("/" + std::to_string(bodies.size()))), next);
    };
    http->start(get(server.url("/0")), next);
    run_out();
    EXPECT_EQ(bodies,
              (std::vector<std::string>{"GET /0 HTTP/1.1", "GET /1 HTTP/1.1", "GET /2 HTTP/1.1"}));
}

} // namespace
} // namespace sion
