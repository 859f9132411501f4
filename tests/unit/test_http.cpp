// SPDX-License-Identifier: MIT
// Unit tests of lib/http against a tiny HTTP/1.1 server on 127.0.0.1 inside the test process.
#include "lib/curl_api.hpp"
#include "lib/fd.hpp"
#include "lib/http.hpp"
#include "tests/unit/http_test_server.hpp"

#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>

#include <atomic>
#include <chrono>
#include <cstdlib>
#include <stdexcept>
#include <string>
#include <thread>

namespace sion {
namespace {

using namespace std::chrono_literals;

using test::chunk;
using test::Received;
using test::respond;
using test::TestServer;

// Answers every request with its own head and body.
void echo(const Received& request, int fd, const TestServer&) {
    TestServer::send_text(fd, respond(200, "OK", "Content-Type: text/plain\r\n",
                                      request.head + "\r\n" + request.body));
}

HttpRequest get(const std::string& url) {
    HttpRequest request;
    request.url = url;
    request.timeout = 10s;
    return request;
}

TEST(HttpHeadersTest, CaseInsensitiveAndRepeated) {
    HttpHeaders headers;
    headers.add("Set-Cookie", "a=1");
    headers.add("Content-Type", "text/plain");
    headers.add("set-cookie", "b=2");
    EXPECT_EQ(headers.get("content-TYPE").value_or("?"), "text/plain");
    EXPECT_EQ(headers.get_all("SET-COOKIE"), (std::vector<std::string_view>{"a=1", "b=2"}));
    EXPECT_FALSE(headers.get("Content"));
    EXPECT_TRUE(headers.get_all("x").empty());
}

TEST(RedactUrl, DropsUserInfoQueryAndFragment) {
    EXPECT_EQ(redact_url("https://user:pw@host:8443/v1/x?key=s3cret#frag"),
              "https://host:8443/v1/x");
    EXPECT_EQ(redact_url("http://host/a@b"), "http://host/a@b");
    EXPECT_EQ(redact_url("http://u@host"), "http://host");
    EXPECT_EQ(redact_url("not a url?x"), "not a url");
}

TEST(HttpToken, TakesTcharsOnly) {
    EXPECT_TRUE(is_http_token("X-Amz-Date"));
    EXPECT_TRUE(is_http_token("!#$%&'*+-.^_`|~09azAZ"));
    EXPECT_FALSE(is_http_token(""));
    EXPECT_FALSE(is_http_token("Bad Name"));
    EXPECT_FALSE(is_http_token("a:b"));
    EXPECT_FALSE(is_http_token("caf\xc3\xa9"));
}

TEST(CurlApi, LoadedOnceOnFirstUse) {
    auto first = curl_api();
    ASSERT_TRUE(first) << first.error().message();
    auto again = curl_api();
    ASSERT_TRUE(again);
    EXPECT_EQ(*first, *again);
    EXPECT_EQ(*first, &curl());
    EXPECT_NE((*first)->easy_init, nullptr);
    EXPECT_NE((*first)->getdate, nullptr);
}

TEST(CurlApi, AMissingLibraryNamesThePackage) {
    auto missing = load_curl_api("libcurl-not-here.so.4");
    ASSERT_FALSE(missing);
    EXPECT_EQ(missing.error().exit(), Exit::unavailable);
    EXPECT_EQ(missing.error().message().rfind("cannot load 'libcurl-not-here.so.4' (install the "
                                              "Debian package libcurl4): libcurl-not-here.so.4: ",
                                              0),
              0U)
        << missing.error().message();
    // A library without curl's functions.
    auto other = load_curl_api("libc.so.6");
    ASSERT_FALSE(other);
    EXPECT_EQ(other.error().exit(), Exit::unavailable);
    EXPECT_NE(other.error().message().find("curl_global_init"), std::string::npos)
        << other.error().message();
}

TEST(CurlEasyTest, MoveOnlyOwner) {
    auto easy = CurlEasy::make();
    ASSERT_TRUE(easy);
    void* handle = easy->get();
    EXPECT_NE(handle, nullptr);
    CurlEasy moved(std::move(*easy));
    EXPECT_EQ(moved.get(), handle);
    EXPECT_FALSE(*easy); // NOLINT(bugprone-use-after-move): moved-from is documented empty
    CurlEasy other = std::move(CurlEasy::make()).value();
    other = std::move(moved);
    EXPECT_EQ(other.get(), handle);
}

TEST(Http, GetSendsHeaders) {
    TestServer server(echo);
    HttpRequest request = get(server.url("/echo?x=1"));
    request.headers.add("X-Test", "hello");
    request.headers.add("X-Empty", "");
    auto response = http_send(request);
    ASSERT_TRUE(response) << response.error().message();
    EXPECT_EQ(response->status, 200);
    EXPECT_EQ(response->headers.get("content-type").value_or("?"), "text/plain");
    const std::string& seen = response->body;
    EXPECT_EQ(seen.rfind("GET /echo?x=1 HTTP/1.1\r\n", 0), 0U) << seen;
    EXPECT_NE(seen.find("\r\nX-Test: hello\r\n"), std::string::npos) << seen;
    EXPECT_NE(seen.find("\r\nX-Empty:"), std::string::npos) << seen;
    EXPECT_EQ(seen.find("Expect:"), std::string::npos) << seen;
}

TEST(Http, PostSendsBody) {
    TestServer server(echo);
    HttpRequest request = get(server.url("/post"));
    request.method = "POST";
    request.body = R"({"a":1})";
    request.headers.add("Content-Type", "application/json");
    auto response = http_send(request);
    ASSERT_TRUE(response) << response.error().message();
    const std::string& seen = response->body;
    EXPECT_EQ(seen.rfind("POST /post HTTP/1.1\r\n", 0), 0U) << seen;
    EXPECT_NE(seen.find("\r\nContent-Length: 7\r\n"), std::string::npos) << seen;
    EXPECT_NE(seen.find("\r\nContent-Type: application/json\r\n"), std::string::npos) << seen;
    EXPECT_EQ(seen.substr(seen.size() - 7), R"({"a":1})");

    HttpRequest put = get(server.url("/put"));
    put.method = "PUT";
    put.body = "data";
    auto put_response = http_send(put);
    ASSERT_TRUE(put_response) << put_response.error().message();
    EXPECT_EQ(put_response->body.rfind("PUT /put HTTP/1.1\r\n", 0), 0U);
    EXPECT_EQ(put_response->body.find("Content-Type"), std::string::npos) << put_response->body;
}

TEST(Http, ResponseHeadersParsed) {
    TestServer server([](const Received&, int fd, const TestServer&) {
        TestServer::send_text(fd, respond(200, "OK",
                                          "Set-Cookie: a=1\r\nX-Mixed-Case:  spaced value \r\n"
                                          "Set-Cookie: b=2\r\n",
                                          "ok"));
    });
    auto response = http_send(get(server.url("/")));
    ASSERT_TRUE(response) << response.error().message();
    EXPECT_EQ(response->headers.get_all("set-cookie"),
              (std::vector<std::string_view>{"a=1", "b=2"}));
    EXPECT_EQ(response->headers.get("x-mixed-case").value_or("?"), "spaced value");
    EXPECT_EQ(response->headers.get("Content-Length").value_or("?"), "2");
    EXPECT_EQ(response->body, "ok");
}

TEST(Http, InterimResponseIsDropped) {
    TestServer server([](const Received&, int fd, const TestServer&) {
        TestServer::send_text(fd, "HTTP/1.1 103 Early Hints\r\nLink: </style.css>\r\n\r\n"
                                      + respond(200, "OK", "X-Final: yes\r\n", "body"));
    });
    HttpRequest request = get(server.url("/"));
    std::vector<int> heads;
    request.on_headers = [&](const HttpResponse& head) {
        heads.push_back(head.status);
        return true;
    };
    auto response = http_send(request);
    ASSERT_TRUE(response) << response.error().message();
    EXPECT_EQ(heads, std::vector<int>{200});
    EXPECT_EQ(response->status, 200);
    EXPECT_FALSE(response->headers.has("Link"));
    EXPECT_EQ(response->headers.get("x-final").value_or("?"), "yes");
    EXPECT_EQ(response->body, "body");
}

TEST(Http, NotFoundIsAResponseNotAnError) {
    TestServer server([](const Received&, int fd, const TestServer&) {
        TestServer::send_text(fd, respond(404, "Not Found", "", "no such thing"));
    });
    auto response = http_send(get(server.url("/missing")));
    ASSERT_TRUE(response) << response.error().message();
    EXPECT_EQ(response->status, 404);
    EXPECT_EQ(response->body, "no such thing");
}

TEST(Http, RedirectIsNotFollowed) {
    TestServer server([](const Received&, int fd, const TestServer&) {
        TestServer::send_text(fd,
                              respond(301, "Moved Permanently", "Location: /elsewhere\r\n", ""));
    });
    auto response = http_send(get(server.url("/old")));
    ASSERT_TRUE(response) << response.error().message();
    EXPECT_EQ(response->status, 301);
    EXPECT_EQ(response->headers.get("location").value_or("?"), "/elsewhere");
    EXPECT_EQ(server.requests(), 1);
}

// The server sends each chunk only once the client has taken the one before, so the body
// cannot arrive all at once at the end.
TEST(Http, StreamedBodyArrivesChunkByChunk) {
    std::atomic<int> calls{0};
    std::atomic<bool> lockstep{true};
    TestServer server([&](const Received&, int fd, const TestServer& self) {
        TestServer::send_text(fd, "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\n"
                                  "Transfer-Encoding: chunked\r\n\r\n");
        for (int i = 0; i < 3; ++i) {
            TestServer::send_text(fd, chunk("data: " + std::to_string(i) + "\n\n"));
            if (!self.wait_for([&] { return calls > i; }))
                lockstep = false;
            std::this_thread::sleep_for(10ms);
        }
        TestServer::send_text(fd, "0\r\n\r\n");
    });
    HttpRequest request = get(server.url("/events"));
    int status_seen = 0;
    std::string streamed;
    request.on_headers = [&](const HttpResponse& head) {
        status_seen = head.status;
        EXPECT_EQ(calls, 0);
        return head.headers.get("content-type") == "text/event-stream";
    };
    request.on_body = [&](std::string_view data) {
        streamed += data;
        ++calls;
        return true;
    };
    auto response = http_send(request);
    ASSERT_TRUE(response) << response.error().message();
    EXPECT_EQ(status_seen, 200);
    EXPECT_GE(calls, 3);
    EXPECT_TRUE(lockstep) << "a chunk was not delivered before the next was sent";
    EXPECT_EQ(streamed, "data: 0\n\ndata: 1\n\ndata: 2\n\n");
    EXPECT_TRUE(response->body.empty());
}

TEST(Http, CallbacksCanStopTheTransfer) {
    TestServer server([](const Received&, int fd, const TestServer&) {
        TestServer::send_text(fd, "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n");
        for (int i = 0; i < 5; ++i) {
            if (!TestServer::send_text(fd, chunk("part")))
                return;
            std::this_thread::sleep_for(20ms);
        }
        TestServer::send_text(fd, "0\r\n\r\n");
    });
    HttpRequest request = get(server.url("/"));
    int calls = 0;
    request.on_body = [&](std::string_view) { return ++calls < 1; };
    auto response = http_send(request);
    ASSERT_FALSE(response);
    EXPECT_EQ(response.error().exit(), Exit::data);
    EXPECT_EQ(response.error().message(),
              "cannot read '" + server.url("/") + "': the receiver stopped the transfer");
    EXPECT_EQ(calls, 1);

    HttpRequest refused = get(server.url("/"));
    refused.on_headers = [](const HttpResponse&) { return false; };
    EXPECT_EQ(http_send(refused).error().exit(), Exit::data);

    HttpRequest throwing = get(server.url("/"));
    throwing.on_body = [](std::string_view) -> bool { throw std::runtime_error("boom"); };
    auto thrown = http_send(throwing);
    ASSERT_FALSE(thrown);
    EXPECT_EQ(thrown.error().exit(), Exit::software);
}

TEST(Http, TimeoutAgainstAServerThatNeverAnswers) {
    TestServer server(
        [](const Received&, int, const TestServer& self) { self.wait_for([] { return false; }); });
    HttpRequest request = get(server.url("/slow?token=s3cret"));
    request.timeout = 300ms;
    auto response = http_send(request);
    ASSERT_FALSE(response);
    EXPECT_EQ(response.error().exit(), Exit::timeout);
    EXPECT_EQ(response.error().message().rfind(
                  "cannot reach '" + server.url("/slow") + "': Timeout was reached", 0),
              0U)
        << response.error().message();
}

// A transfer told to stop ends though the server says nothing more: go_on is asked while it waits.
TEST(Http, GoOnStopsATransferThatWaits) {
    TestServer server([](const Received&, int fd, const TestServer& self) {
        TestServer::send_text(fd, "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n");
        TestServer::send_text(fd, chunk("first"));
        self.wait_for([] { return false; });
    });
    HttpRequest request = get(server.url("/stream"));
    request.timeout = 60s;
    std::atomic<bool> stop{false};
    int asked = 0;
    request.on_body = [&](std::string_view) {
        stop = true; // the person says /stop once the first part is in
        return true;
    };
    request.go_on = [&] {
        ++asked;
        return !stop.load();
    };
    auto response = http_send(request);
    ASSERT_FALSE(response);
    EXPECT_EQ(response.error().exit(), Exit::temp_fail);
    EXPECT_EQ(response.error().message(),
              "cannot read '" + server.url("/stream") + "': the transfer was stopped");
    EXPECT_GT(asked, 0);
}

TEST(Http, ConnectionRefused) {
    // A bound socket that does not listen holds the port and refuses connections.
    Fd sock(::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0));
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t len = sizeof addr;
    ASSERT_EQ(::bind(sock.get(), reinterpret_cast<sockaddr*>(&addr), len), 0);
    ASSERT_EQ(::getsockname(sock.get(), reinterpret_cast<sockaddr*>(&addr), &len), 0);
    auto response =
        http_send(get("http://127.0.0.1:" + std::to_string(ntohs(addr.sin_port)) + "/"));
    ASSERT_FALSE(response);
    EXPECT_EQ(response.error().exit(), Exit::unavailable) << response.error().message();
}

TEST(Http, MaxResponseSizeExceeded) {
    TestServer server([](const Received& request, int fd, const TestServer&) {
        std::string big(100000, 'x');
        if (request.head.find("/chunked") == std::string::npos) {
            TestServer::send_text(fd, respond(200, "OK", "", big));
            return;
        }
        TestServer::send_text(fd, "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n");
        TestServer::send_text(fd, chunk(big) + "0\r\n\r\n");
    });
    for (const char* path : {"/sized", "/chunked"}) {
        HttpRequest request = get(server.url(path));
        request.max_response_size = 1000;
        auto response = http_send(request);
        ASSERT_FALSE(response) << path;
        EXPECT_EQ(response.error().exit(), Exit::data);
        EXPECT_EQ(response.error().message(),
                  "cannot read '" + server.url(path) + "': the response is larger than 1000 bytes");
    }
    HttpRequest exact = get(server.url("/chunked"));
    exact.max_response_size = 100000;
    EXPECT_EQ(http_send(exact).value().body.size(), 100000U);
}

TEST(Http, HttpsToAPlainPortFailsCleanly) {
    TestServer server(echo);
    HttpRequest request = get("https://127.0.0.1:" + std::to_string(server.port()) + "/");
    request.timeout = 5s;
    auto response = http_send(request);
    ASSERT_FALSE(response);
    EXPECT_EQ(response.error().exit(), Exit::unavailable) << response.error().message();
}

TEST(Http, ProxyEnvironmentIsIgnored) {
    TestServer server(echo);
    // NOLINTBEGIN(concurrency-mt-unsafe): no other thread reads the environment meanwhile
    ASSERT_EQ(::setenv("http_proxy", "http://127.0.0.1:9", 1), 0);
    ASSERT_EQ(::setenv("ALL_PROXY", "http://127.0.0.1:9", 1), 0);
    auto response = http_send(get(server.url("/direct")));
    ::unsetenv("http_proxy");
    ::unsetenv("ALL_PROXY");
    // NOLINTEND(concurrency-mt-unsafe)
    ASSERT_TRUE(response) << response.error().message();
    EXPECT_EQ(response->body.rfind("GET /direct HTTP/1.1\r\n", 0), 0U);
}

TEST(Http, BadRequestsAreRefusedBeforeSending) {
    TestServer server(echo);
    HttpRequest injected = get(server.url("/"));
    injected.headers.add("X-Evil", "a\r\nX-Injected: 1");
    EXPECT_EQ(http_send(injected).error().exit(), Exit::data);
    HttpRequest bad_name = get(server.url("/"));
    bad_name.headers.add("Bad Name", "x");
    EXPECT_EQ(http_send(bad_name).error().exit(), Exit::data);
    HttpRequest bad_method = get(server.url("/"));
    bad_method.method = "GET /x HTTP/1.1\r\n";
    EXPECT_EQ(http_send(bad_method).error().exit(), Exit::data);
    for (const char* url : {"file:///etc/passwd", "ftp://127.0.0.1/", "gopher://127.0.0.1/"}) {
        auto response = http_send(get(url));
        ASSERT_FALSE(response) << url;
        EXPECT_EQ(response.error().exit(), Exit::data) << response.error().message();
    }
    EXPECT_EQ(server.requests(), 0);
}

TEST(Http, ClientReusedAcrossRequests) {
    TestServer server(echo);
    auto client = HttpClient::make();
    ASSERT_TRUE(client);
    for (int i = 0; i < 3; ++i) {
        auto response = client->send(get(server.url("/" + std::to_string(i))));
        ASSERT_TRUE(response) << response.error().message();
        EXPECT_EQ(response->body.rfind("GET /" + std::to_string(i) + " ", 0), 0U);
    }
    HttpRequest head = get(server.url("/head"));
    head.method = "HEAD";
    auto response = client->send(head);
    ASSERT_TRUE(response) << response.error().message();
    EXPECT_EQ(response->status, 200);
    EXPECT_TRUE(response->body.empty());
}

} // namespace
} // namespace sion
