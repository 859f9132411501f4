// SPDX-License-Identifier: MIT
// mcpd::Client over HTTP against a server in the test (tests/unit/http_test_server.hpp), for exact
// control of the wire: the x-mcp-header rules and the headers of the 2026-07-28 era, the fallback
// to a 2025 session and its re-opening on 404, -32022's versions, a stream resumed with
// Last-Event-ID, HTTP+SSE and its endpoint's origin, and what is refused: redirects, HTML, 401.
#include "mcpd/client.hpp"
#include "mcpd/http_headers.hpp"
#include "mcpd/transport_http.hpp"
#include "tests/unit/http_test_server.hpp"

#include <gtest/gtest.h>

#include <condition_variable>
#include <csignal>
#include <deque>
#include <map>
#include <mutex>
#include <optional>

namespace sion::mcpd {
namespace {

using test::Received;
using test::respond;
using test::TestServer;

Json parse(std::string_view text) {
    auto json = Json::parse(text);
    EXPECT_TRUE(json) << text;
    return json ? std::move(*json) : Json::object();
}

// The value of header `name` in a request's head ("" when absent).
std::string header(const Received& r, std::string_view name) {
    std::string head = r.head;
    size_t at = 0;
    while ((at = head.find("\r\n", at)) != std::string::npos) {
        at += 2;
        size_t colon = head.find(':', at);
        size_t end = head.find("\r\n", at);
        if (colon == std::string::npos || end == std::string::npos || colon > end)
            continue;
        if (strcasecmp(head.substr(at, colon - at).c_str(), std::string(name).c_str()) == 0) {
            size_t v = head.find_first_not_of(' ', colon + 1);
            return head.substr(v, end - v);
        }
    }
    return {};
}

std::string verb(const Received& r) {
    return r.head.substr(0, r.head.find(' '));
}

std::string method_of(const Received& r) {
    if (r.body.empty())
        return {};
    return std::string(parse(r.body).view().string_or("method", "").value_or(""));
}

int64_t id_of(const Received& r) {
    if (r.body.empty())
        return 0;
    return parse(r.body).view().integer_or("id", 0).value_or(0);
}

std::string result(int64_t id, const std::string& json) {
    return R"({"jsonrpc":"2.0","id":)" + std::to_string(id) + R"(,"result":)" + json + "}";
}

std::string json_ok(const std::string& body, const std::string& extra = "") {
    return respond(200, "OK", "Content-Type: application/json\r\n" + extra, body);
}

const std::string k_modern_discover =
    R"({"supportedVersions":["2026-07-28"],"capabilities":{"tools":{}},"_meta":{"io.modelcontextprotocol/serverInfo":{"name":"t","version":"1"}}})";
const std::string k_initialized =
    R"({"protocolVersion":"2025-11-25","capabilities":{"tools":{}},"serverInfo":{"name":"old","version":"2"}})";

// DPoP hooks that prove with the latest nonce given ("proof-GET-n2"), keeping it in `nonce`.
ClientEvents dpop_events(std::string& nonce) {
    ClientEvents events;
    events.authorization = [] { return std::string("DPoP token"); };
    events.proof = [&nonce](const std::string& method, const std::string&) {
        return "proof-" + method + "-" + nonce;
    };
    events.nonce = [&nonce](const std::string&, const std::string& given) {
        nonce = given;
        return true;
    };
    return events;
}

class HttpClientTest : public testing::Test {
protected:
    void SetUp() override {
        ASSERT_NE(::signal(SIGPIPE, SIG_IGN), SIG_ERR);
        ASSERT_EQ(uv_loop_init(&m_loop), 0);
    }

    void TearDown() override {
        if (m_client)
            m_client->close();
        m_client.reset();
        uv_run(&m_loop, UV_RUN_DEFAULT);
        EXPECT_EQ(uv_loop_close(&m_loop), 0) << "a handle was left open";
        m_server.reset();
    }

    // Serves each request with `handler`, recording it.
    void serve(std::function<void(const Received&, int fd)> handler) {
        m_server = std::make_unique<TestServer>(
            [this, handler = std::move(handler)](const Received& r, int fd, const TestServer&) {
                {
                    std::lock_guard lock(m_mutex);
                    m_seen.push_back(r);
                }
                handler(r, fd);
            });
    }

    void reach(ClientOptions options = {}, ClientEvents events = {}, std::string path = "/mcp") {
        if (options.name.empty())
            options.name = "web";
        options.timeout = std::chrono::milliseconds(10000);
        HttpTarget target{m_server->url(path), {}};
        target.headers.add("X-Test", "yes");
        auto client = Client::reach(&m_loop, std::move(target), std::move(options), std::move(events));
        ASSERT_TRUE(client) << client.error().message();
        m_client = std::move(*client);
    }

    template <typename T> void run_until(const std::optional<T>& done) {
        uint64_t deadline = uv_now(&m_loop) + 20000;
        uv_timer_t guard;
        uv_timer_init(&m_loop, &guard);
        uv_timer_start(&guard, [](uv_timer_t*) {}, 50, 50);
        while (!done && uv_now(&m_loop) < deadline)
            uv_run(&m_loop, UV_RUN_ONCE);
        uv_close(reinterpret_cast<uv_handle_t*>(&guard), nullptr);
        uv_run(&m_loop, UV_RUN_NOWAIT);
        EXPECT_TRUE(done) << "no answer within 20 s";
    }

    Result<Connected> connect() {
        std::optional<Result<Connected>> got;
        m_client->connect([&](Result<Connected> c) { got = std::move(c); });
        run_until(got);
        return got ? std::move(*got) : Error(Exit::software, "no answer");
    }

    Result<Json> request(std::string_view method, std::string_view params) {
        std::optional<Result<Json>> got;
        m_client->request(method, parse(params), [&](Result<Json> r) { got = std::move(r); });
        run_until(got);
        return got ? std::move(*got) : Error(Exit::software, "no answer");
    }

    std::vector<Received> seen() {
        std::lock_guard lock(m_mutex);
        return m_seen;
    }

    // The requests seen whose JSON-RPC method is `method`.
    std::vector<Received> seen(std::string_view method) {
        std::vector<Received> out;
        for (const Received& r : seen())
            if (method_of(r) == method)
                out.push_back(r);
        return out;
    }

    // What the server's threads write is declared first, so that it outlives them.
    std::mutex m_mutex;
    std::vector<Received> m_seen;
    uv_loop_t m_loop{};
    std::unique_ptr<TestServer> m_server;
    std::unique_ptr<Client> m_client;
};

// -- the header rules ----------------------------------------------------------------------------

TEST(HttpHeaders, MarksAtAnyDepthOfPrimitiveTypes) {
    Json schema = parse(R"({"type":"object","properties":{
        "region":{"type":"string","x-mcp-header":"Region"},
        "n":{"type":"integer","x-mcp-header":"Count"},
        "opts":{"type":"object","properties":{"dry":{"type":"boolean","x-mcp-header":"Dry-Run"}}},
        "plain":{"type":"string"}}})");
    auto marks = header_marks(schema);
    ASSERT_TRUE(marks) << marks.error().message();
    ASSERT_EQ(marks->size(), 3U);
    EXPECT_EQ((*marks)[2].name, "Dry-Run");
    EXPECT_EQ((*marks)[2].path, (std::vector<std::string>{"opts", "dry"}));
}

TEST(HttpHeaders, MarksThatBreakTheRules) {
    auto broken = [](std::string_view schema) {
        auto marks = header_marks(parse(schema));
        return marks ? std::string("(kept)") : marks.error().message();
    };
    EXPECT_EQ(broken(R"({"properties":{"a":{"type":"string","x-mcp-header":"A B"}}})"),
              "its x-mcp-header 'A B' is not an HTTP token");
    EXPECT_EQ(broken(R"({"properties":{"a":{"type":"string","x-mcp-header":""}}})"),
              "its x-mcp-header '' is not an HTTP token");
    EXPECT_EQ(broken(R"({"properties":{"a":{"type":"string","x-mcp-header":"Id"},
                                      "b":{"type":"string","x-mcp-header":"ID"}}})"),
              "its x-mcp-header 'ID' is given twice");
    EXPECT_EQ(broken(R"({"properties":{"a":{"type":"number","x-mcp-header":"N"}}})"),
              "its x-mcp-header 'N' marks a property that is not a string, an integer or a "
              "boolean");
    EXPECT_EQ(broken(R"({"properties":{"a":{"type":"object","x-mcp-header":"O"}}})"),
              "its x-mcp-header 'O' marks a property that is not a string, an integer or a "
              "boolean");
    EXPECT_EQ(broken(R"({"properties":{"a":{"type":"string","x-mcp-header":7}}})"),
              "its x-mcp-header on 'a' is not a string");
}

TEST(HttpHeaders, ValuesThatCannotGoAsTheyAreAreEncoded) {
    EXPECT_EQ(header_value("us-west-2"), "us-west-2");
    EXPECT_EQ(header_value("us west 1"), "us west 1");
    EXPECT_EQ(header_value(""), "");
    EXPECT_EQ(header_value("\tindented"), "=?base64?CWluZGVudGVk?=");
    EXPECT_EQ(header_value("a\tb"), "=?base64?YQli?=");
    EXPECT_EQ(header_value("Zürich"), "=?base64?WsO8cmljaA==?=");
    EXPECT_EQ(header_value(" padded"), "=?base64?IHBhZGRlZA==?=");
    EXPECT_EQ(header_value("line\nbreak"), "=?base64?bGluZQpicmVhaw==?=");
    EXPECT_EQ(header_value("=?base64?eA==?="), "=?base64?PT9iYXNlNjQ/ZUE9PT89?=");
}

TEST(HttpHeaders, MirrorsMethodNameAndMarkedArguments) {
    auto marks = header_marks(parse(R"({"properties":{
        "region":{"type":"string","x-mcp-header":"Region"},
        "n":{"type":"integer","x-mcp-header":"Count"},
        "dry":{"type":"boolean","x-mcp-header":"Dry"},
        "gone":{"type":"string","x-mcp-header":"Gone"},
        "none":{"type":"string","x-mcp-header":"None"}}})"));
    ASSERT_TRUE(marks);
    HttpHeaders h;
    add_mirror_headers(h, "tools/call",
                       parse(R"({"name":"deploy","arguments":{"region":"eu","n":3,"dry":false,
                                 "none":null}})"),
                       *marks);
    EXPECT_EQ(h.get("Mcp-Method").value_or(""), "tools/call");
    EXPECT_EQ(h.get("Mcp-Name").value_or(""), "deploy");
    EXPECT_EQ(h.get("Mcp-Param-Region").value_or(""), "eu");
    EXPECT_EQ(h.get("Mcp-Param-Count").value_or(""), "3");
    EXPECT_EQ(h.get("Mcp-Param-Dry").value_or(""), "false");
    EXPECT_FALSE(h.has("Mcp-Param-Gone"));
    EXPECT_FALSE(h.has("Mcp-Param-None"));
    HttpHeaders r;
    add_mirror_headers(r, "resources/read", parse(R"({"uri":"file:///a b"})"), {});
    EXPECT_EQ(r.get("Mcp-Name").value_or(""), "file:///a b");
    HttpHeaders l;
    add_mirror_headers(l, "tools/list", parse("{}"), {});
    EXPECT_EQ(l.get("Mcp-Method").value_or(""), "tools/list");
    EXPECT_FALSE(l.has("Mcp-Name"));
}

TEST(HttpUrls, OriginsAndResolution) {
    EXPECT_EQ(url_origin("http://me@127.0.0.1:8812/mcp?x=1"), "http://127.0.0.1:8812");
    EXPECT_EQ(url_origin("HTTPS://Example.COM:443/x"), "https://example.com");
    EXPECT_EQ(url_origin("ftp://example.com/"), "");
    EXPECT_EQ(resolve_url("http://h:1/sse", "/message?s=1"), "http://h:1/message?s=1");
    EXPECT_EQ(resolve_url("http://h:1/a/sse", "message"), "http://h:1/a/message");
    EXPECT_EQ(resolve_url("http://h:1/sse", "//other:2/m"), "http://other:2/m");
    EXPECT_EQ(resolve_url("http://h:1/sse", "http://x:3/m"), "http://x:3/m");
}

// -- the 2026-07-28 era --------------------------------------------------------------------------

TEST_F(HttpClientTest, ModernRequestsCarryTheirHeaders) {
    serve([](const Received& r, int fd) {
        std::string m = method_of(r);
        int64_t id = id_of(r);
        if (m == "server/discover")
            TestServer::send_text(fd, json_ok(result(id, k_modern_discover)));
        else if (m == "tools/list")
            TestServer::send_text(
                fd, json_ok(result(id, R"({"tools":[{"name":"deploy","inputSchema":{"type":"object",
                    "properties":{"region":{"type":"string","x-mcp-header":"Region"},
                    "note":{"type":"string","x-mcp-header":"Note"}}}}]})")));
        else if (m == "tools/call")
            // As events: a notification first, then the answer.
            TestServer::send_text(
                fd, respond(200, "OK", "Content-Type: text/event-stream\r\n",
                            "data: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/message\","
                            "\"params\":{}}\n\n"
                            "data: "
                                + result(id, R"({"content":[{"type":"text","text":"done"}]})")
                                + "\n\n"));
        else
            TestServer::send_text(fd, respond(400, "Bad Request", "", ""));
    });
    reach();
    auto c = connect();
    ASSERT_TRUE(c) << c.error().message();
    EXPECT_EQ(c->protocol, "2026-07-28");
    EXPECT_EQ(c->transport, "http");
    ASSERT_TRUE(request("tools/list", "{}"));
    auto r = request("tools/call", R"({"name":"deploy","arguments":{"region":"eu","note":"Zürich"}})");
    ASSERT_TRUE(r) << r.error().message();
    EXPECT_EQ(r->view().get("content").at(0).string("text").value_or(""), "done");
    auto calls = seen("tools/call");
    ASSERT_EQ(calls.size(), 1U);
    const Received& call = calls[0];
    EXPECT_EQ(header(call, "MCP-Protocol-Version"), "2026-07-28");
    EXPECT_EQ(header(call, "Mcp-Method"), "tools/call");
    EXPECT_EQ(header(call, "Mcp-Name"), "deploy");
    EXPECT_EQ(header(call, "Mcp-Param-Region"), "eu");
    EXPECT_EQ(header(call, "Mcp-Param-Note"), "=?base64?WsO8cmljaA==?=");
    EXPECT_EQ(header(call, "X-Test"), "yes");
    EXPECT_EQ(header(call, "Mcp-Session-Id"), "");
    EXPECT_NE(header(call, "Accept").find("text/event-stream"), std::string::npos);
    Json body = parse(call.body);
    EXPECT_EQ(body.view().get("params").get("_meta").string("io.modelcontextprotocol/protocolVersion")
                  .value_or(""),
              "2026-07-28");
}

// -- the 2025 era: sessions ----------------------------------------------------------------------

TEST_F(HttpClientTest, ASessionForgottenIsOpenedAgainAndClosedWithDelete) {
    std::atomic<int> sessions{0};
    std::atomic<int> lists{0};
    serve([&](const Received& r, int fd) {
        std::string m = method_of(r);
        int64_t id = id_of(r);
        if (verb(r) == "DELETE" || verb(r) == "GET") {
            TestServer::send_text(fd, respond(verb(r) == "GET" ? 405 : 200, "X", "", ""));
        } else if (m == "server/discover") {
            TestServer::send_text(fd, respond(404, "Not Found", "Content-Type: text/html\r\n",
                                              "<html>no</html>"));
        } else if (m == "initialize") {
            int n = ++sessions;
            TestServer::send_text(fd, json_ok(result(id, k_initialized),
                                              "Mcp-Session-Id: s" + std::to_string(n) + "\r\n"));
        } else if (m == "notifications/initialized") {
            TestServer::send_text(fd, respond(202, "Accepted", "", ""));
        } else if (m == "tools/list" && ++lists == 1) {
            TestServer::send_text(fd, respond(404, "Not Found", "", "")); // the session is gone
        } else {
            TestServer::send_text(fd, json_ok(result(id, R"({"tools":[]})")));
        }
    });
    reach();
    auto c = connect();
    ASSERT_TRUE(c) << c.error().message();
    EXPECT_EQ(c->protocol, "2025-11-25");
    auto r = request("tools/list", "{}");
    ASSERT_TRUE(r) << r.error().message();
    auto listed = seen("tools/list");
    ASSERT_EQ(listed.size(), 2U);
    EXPECT_EQ(header(listed[0], "Mcp-Session-Id"), "s1");
    EXPECT_EQ(header(listed[1], "Mcp-Session-Id"), "s2");
    EXPECT_EQ(header(listed[1], "MCP-Protocol-Version"), "2025-11-25");
    EXPECT_EQ(seen("initialize").size(), 2U);
    m_client->close();
    uv_run(&m_loop, UV_RUN_DEFAULT);
    bool deleted = false;
    for (const Received& seen_one : seen())
        if (verb(seen_one) == "DELETE")
            deleted = header(seen_one, "Mcp-Session-Id") == "s2";
    EXPECT_TRUE(deleted);
}

TEST_F(HttpClientTest, UnsupportedVersionNamesTheOnesToOffer) {
    serve([](const Received& r, int fd) {
        std::string m = method_of(r);
        int64_t id = id_of(r);
        if (m == "server/discover")
            TestServer::send_text(
                fd, respond(400, "Bad Request", "Content-Type: application/json\r\n",
                            R"({"jsonrpc":"2.0","id":)" + std::to_string(id)
                                + R"(,"error":{"code":-32022,"message":"unsupported",)"
                                  R"("data":{"requested":"2026-07-28","supported":["2025-06-18"]}}})"));
        else if (m == "initialize")
            TestServer::send_text(
                fd, json_ok(result(id, R"({"protocolVersion":"2025-06-18","capabilities":{},
                                         "serverInfo":{"name":"mid","version":"1"}})")));
        else
            TestServer::send_text(fd, respond(202, "Accepted", "", ""));
    });
    reach();
    auto c = connect();
    ASSERT_TRUE(c) << c.error().message();
    EXPECT_EQ(c->protocol, "2025-06-18");
    auto init = seen("initialize");
    ASSERT_EQ(init.size(), 1U);
    EXPECT_EQ(parse(init[0].body).view().get("params").string("protocolVersion").value_or(""),
              "2025-06-18");
}

TEST_F(HttpClientTest, AStreamThatEndsEarlyIsResumedWithLastEventId) {
    serve([](const Received& r, int fd) {
        std::string m = method_of(r);
        int64_t id = id_of(r);
        if (m == "server/discover") {
            TestServer::send_text(fd, json_ok(result(id, k_modern_discover)));
        } else if (m == "tools/call") {
            TestServer::send_text(fd, respond(200, "OK", "Content-Type: text/event-stream\r\n",
                                              "id: ev-1\nretry: 100\ndata:\n\n"));
        } else if (verb(r) == "GET" && header(r, "Last-Event-ID") == "ev-1") {
            TestServer::send_text(
                fd, respond(200, "OK", "Content-Type: text/event-stream\r\n",
                            "id: ev-2\ndata: "
                                + result(1 + 1, R"({"content":[{"type":"text","text":"late"}]})")
                                + "\n\n"));
        } else {
            TestServer::send_text(fd, respond(405, "Method Not Allowed", "", ""));
        }
    });
    reach();
    ASSERT_TRUE(connect());
    auto r = request("tools/call", R"({"name":"slow","arguments":{}})");
    ASSERT_TRUE(r) << r.error().message();
    EXPECT_EQ(r->view().get("content").at(0).string("text").value_or(""), "late");
}

// A call's stream cut off, and its resumption refused: the call, which the server took, is never
// sent again. Only its stream is asked for again: with a fresh token, with the DPoP nonce it asks
// for; anything else leaves the call without an answer (it may have acted).
class ResumptionTest : public HttpClientTest {
protected:
    // The tools/call POST opens a stream that ends after one event; each GET resuming it is
    // answered by `resumed`.
    void serve_resumptions(std::function<void(const Received&, int fd)> resumed) {
        serve([resumed = std::move(resumed)](const Received& r, int fd) {
            std::string m = method_of(r);
            int64_t id = id_of(r);
            if (m == "server/discover")
                TestServer::send_text(fd, json_ok(result(id, k_modern_discover)));
            else if (m == "tools/call")
                TestServer::send_text(fd, respond(200, "OK", "Content-Type: text/event-stream\r\n",
                                                  "id: ev-1\nretry: 10\ndata:\n\n"));
            else if (verb(r) == "GET" && header(r, "Last-Event-ID") == "ev-1")
                resumed(r, fd);
            else
                TestServer::send_text(fd, respond(405, "Method Not Allowed", "", ""));
        });
    }

    static void send_answer(int fd) {
        TestServer::send_text(
            fd, respond(200, "OK", "Content-Type: text/event-stream\r\n",
                        "id: ev-2\ndata: " + result(2, R"({"content":[{"type":"text","text":"late"}]})")
                            + "\n\n"));
    }

    size_t gets() {
        size_t n = 0;
        for (const Received& r : seen())
            n += verb(r) == "GET" ? 1 : 0;
        return n;
    }
};

TEST_F(ResumptionTest, ARefusedTokenIsRenewedAndOnlyTheStreamAskedAgain) {
    serve_resumptions([](const Received& r, int fd) {
        if (header(r, "Authorization") != "Bearer fresh")
            TestServer::send_text(fd, respond(401, "Unauthorized",
                                              "WWW-Authenticate: Bearer error=\"invalid_token\"\r\n",
                                              ""));
        else
            send_answer(fd);
    });
    std::string token = "stale";
    int refusals = 0;
    ClientEvents events;
    events.authorization = [&] { return "Bearer " + token; };
    events.refused = [&](int, std::string, Retry retry) {
        ++refusals;
        token = "fresh";
        retry(true);
    };
    reach({}, std::move(events));
    ASSERT_TRUE(connect());
    auto r = request("tools/call", R"({"name":"pay","arguments":{}})");
    ASSERT_TRUE(r) << r.error().message();
    EXPECT_EQ(r->view().get("content").at(0).string("text").value_or(""), "late");
    EXPECT_EQ(refusals, 1);
    EXPECT_EQ(seen("tools/call").size(), 1U);
    EXPECT_EQ(gets(), 2U);
}

TEST_F(ResumptionTest, TheNonceAskedForIsGivenToTheStreamNotTheCall) {
    serve_resumptions([](const Received& r, int fd) {
        if (header(r, "DPoP").find("nonce-2") == std::string::npos)
            TestServer::send_text(
                fd, respond(401, "Unauthorized",
                            "WWW-Authenticate: DPoP error=\"use_dpop_nonce\"\r\nDPoP-Nonce: nonce-2\r\n",
                            ""));
        else
            send_answer(fd);
    });
    std::string nonce = "nonce-1";
    reach({}, dpop_events(nonce));
    ASSERT_TRUE(connect());
    auto r = request("tools/call", R"({"name":"pay","arguments":{}})");
    ASSERT_TRUE(r) << r.error().message();
    EXPECT_EQ(seen("tools/call").size(), 1U);
    EXPECT_EQ(gets(), 2U);
    EXPECT_EQ(header(seen().back(), "DPoP"), "proof-GET-nonce-2");
}

TEST_F(ResumptionTest, AForgottenSessionLeavesTheCallUnansweredNotSentAgain) {
    serve_resumptions([](const Received&, int fd) {
        TestServer::send_text(fd, respond(404, "Not Found", "", ""));
    });
    reach();
    ASSERT_TRUE(connect());
    auto r = request("tools/call", R"({"name":"pay","arguments":{}})");
    ASSERT_FALSE(r);
    EXPECT_EQ(r.error().exit(), Exit::unavailable);
    EXPECT_NE(r.error().message().find("refused to resume the stream of 'tools/call' (HTTP 404"),
              std::string::npos)
        << r.error().message();
    EXPECT_EQ(seen("tools/call").size(), 1U);
    EXPECT_EQ(seen("server/discover").size(), 1U);
}

TEST_F(HttpClientTest, AServersRequestOnAStreamIsAnsweredWithAPost) {
    std::mutex mutex;
    std::condition_variable answered;
    std::string answer;
    serve([&](const Received& r, int fd) {
        std::string m = method_of(r);
        int64_t id = id_of(r);
        if (m == "server/discover") {
            TestServer::send_text(fd, respond(405, "Method Not Allowed", "", ""));
        } else if (m == "initialize") {
            TestServer::send_text(fd, json_ok(result(id, k_initialized), "Mcp-Session-Id: s9\r\n"));
        } else if (m == "tools/call") {
            TestServer::send_text(fd, "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\n"
                                      "Connection: close\r\n\r\n");
            TestServer::send_text(
                fd, "event: message\ndata: {\"jsonrpc\":\"2.0\",\"id\":\"ask-1\",\"method\":"
                    "\"elicitation/create\",\"params\":{\"message\":\"Sure?\",\"requestedSchema\":"
                    "{\"type\":\"object\",\"properties\":{}}}}\n\n");
            std::unique_lock lock(mutex);
            answered.wait_for(lock, std::chrono::seconds(10), [&] { return !answer.empty(); });
            TestServer::send_text(
                fd, "event: message\ndata: "
                        + result(id, R"({"content":[{"type":"text","text":"thanks"}]})") + "\n\n");
        } else if (!r.body.empty() && parse(r.body).view().string("id").value_or("") == "ask-1") {
            TestServer::send_text(fd, respond(202, "Accepted", "", ""));
            std::lock_guard lock(mutex);
            answer = r.body + " session=" + header(r, "Mcp-Session-Id");
            answered.notify_all();
        } else {
            TestServer::send_text(fd, respond(202, "Accepted", "", ""));
        }
    });
    ClientOptions options;
    options.can_elicit = true;
    ClientEvents events;
    events.elicit = [](Json, Answer reply) { reply(parse(R"({"action":"accept","content":{}})")); };
    reach(options, std::move(events));
    ASSERT_TRUE(connect());
    auto r = request("tools/call", R"({"name":"confirm","arguments":{}})");
    ASSERT_TRUE(r) << r.error().message();
    EXPECT_EQ(r->view().get("content").at(0).string("text").value_or(""), "thanks");
    std::lock_guard lock(mutex);
    EXPECT_EQ(answer, R"({"jsonrpc":"2.0","id":"ask-1","result":{"action":"accept","content":{}}})"
                      " session=s9");
}

// -- HTTP+SSE ------------------------------------------------------------------------------------

// A 2024-11-05 server: GET /sse holds a stream open; what is POSTed to /message is answered on it.
class OldServer {
public:
    void handle(const Received& r, int fd, std::string endpoint) {
        std::string path = r.head.substr(r.head.find(' ') + 1);
        path = path.substr(0, path.find(' '));
        if (verb(r) == "GET" && path == "/sse") {
            TestServer::send_text(fd, "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\n"
                                      "Connection: close\r\n\r\n");
            TestServer::send_text(fd, "event: endpoint\ndata: " + endpoint + "\n\n");
            std::unique_lock lock(m_mutex);
            while (!m_done) {
                m_wake.wait_for(lock, std::chrono::milliseconds(50));
                while (!m_out.empty()) {
                    TestServer::send_text(fd, "event: message\ndata: " + m_out.front() + "\n\n");
                    m_out.pop_front();
                }
            }
            return;
        }
        if (verb(r) == "POST" && path.starts_with("/message")) {
            TestServer::send_text(fd, respond(202, "Accepted", "", ""));
            std::string m = method_of(r);
            int64_t id = id_of(r);
            if (m == "initialize")
                push(result(id, R"({"protocolVersion":"2024-11-05","capabilities":{"tools":{}},)"
                                R"("serverInfo":{"name":"older","version":"0.1"}})"));
            else if (m == "tools/list")
                push(result(id, R"({"tools":[{"name":"echo","inputSchema":{"type":"object"}}]})"));
            return;
        }
        TestServer::send_text(fd, respond(404, "Not Found", "", ""));
    }

    void push(std::string line) {
        std::lock_guard lock(m_mutex);
        m_out.push_back(std::move(line));
        m_wake.notify_all();
    }

    void stop() {
        std::lock_guard lock(m_mutex);
        m_done = true;
        m_wake.notify_all();
    }

private:
    std::mutex m_mutex;
    std::condition_variable m_wake;
    std::deque<std::string> m_out;
    bool m_done = false;
};

TEST_F(HttpClientTest, HttpSseAnswersComeOnTheStream) {
    OldServer old;
    serve([&](const Received& r, int fd) { old.handle(r, fd, "/message?sessionId=abc"); });
    reach({}, {}, "/sse");
    auto c = connect();
    ASSERT_TRUE(c) << c.error().message();
    EXPECT_EQ(c->protocol, "2024-11-05");
    EXPECT_EQ(c->transport, "sse");
    auto tools = request("tools/list", "{}");
    ASSERT_TRUE(tools) << tools.error().message();
    EXPECT_EQ(tools->view().get("tools").at(0).string("name").value_or(""), "echo");
    m_client->close();
    old.stop();
    uv_run(&m_loop, UV_RUN_DEFAULT);
    m_server.reset(); // its threads are done with `old`
}

// The GET of HTTP+SSE's stream refused for want of a DPoP nonce is sent again with it, once.
TEST_F(HttpClientTest, AStreamRefusedForANonceIsAskedAgainWithIt) {
    OldServer old;
    serve([&](const Received& r, int fd) {
        if (verb(r) == "GET" && header(r, "DPoP") != "proof-GET-n2") {
            TestServer::send_text(
                fd, respond(401, "Unauthorized",
                            "WWW-Authenticate: DPoP error=\"use_dpop_nonce\"\r\nDPoP-Nonce: n2\r\n",
                            ""));
            return;
        }
        old.handle(r, fd, "/message?sessionId=abc");
    });
    std::string nonce = "n1";
    reach({}, dpop_events(nonce), "/sse");
    auto c = connect();
    ASSERT_TRUE(c) << c.error().message();
    EXPECT_EQ(c->transport, "sse");
    size_t gets = 0;
    for (const Received& r : seen())
        gets += verb(r) == "GET" ? 1 : 0;
    EXPECT_EQ(gets, 2U);
    m_client->close();
    old.stop();
    uv_run(&m_loop, UV_RUN_DEFAULT);
    m_server.reset(); // its threads are done with `old`
}

// Each credential the client sends becomes a secret before the server has it: a renewed token
// and the one it replaced are redacted from what the server says, as the options' secrets are.
TEST_F(HttpClientTest, TheCredentialsSentAreRedactedFromWhatTheServerSays) {
    serve([](const Received& r, int fd) {
        std::string m = method_of(r);
        if (m == "server/discover") {
            TestServer::send_text(fd, json_ok(result(id_of(r), k_modern_discover)));
        } else if (header(r, "Authorization") == "Bearer stale-0123456789ab") {
            TestServer::send_text(
                fd, respond(401, "Unauthorized",
                            "WWW-Authenticate: Bearer error=\"invalid_token\"\r\n", ""));
        } else {
            std::string said = "sent " + header(r, "Authorization")
                               + ", not stale-0123456789ab, with X-Key given-0123456789";
            TestServer::send_text(fd,
                                  json_ok(result(id_of(r), R"({"content":[{"type":"text","text":")"
                                                               + said + R"("}]})")));
        }
    });
    std::string token = "stale-0123456789ab";
    ClientEvents events;
    events.authorization = [&] { return "Bearer " + token; };
    events.refused = [&](int, std::string, Retry retry) {
        token = "fresh-0123456789ab";
        retry(true);
    };
    ClientOptions options;
    options.secrets = [] { return std::vector<std::string>{"given-0123456789"}; };
    reach(std::move(options), std::move(events));
    ASSERT_TRUE(connect());
    auto r = request("tools/call", R"({"name":"tell","arguments":{}})");
    ASSERT_TRUE(r) << r.error().message();
    EXPECT_EQ(r->view().get("content").at(0).string("text").value_or(""),
              "sent Bearer [redacted], not [redacted], with X-Key [redacted]");
}

TEST_F(HttpClientTest, AnEndpointOfAnotherOriginIsRefused) {
    OldServer old;
    serve([&](const Received& r, int fd) { old.handle(r, fd, "http://127.0.0.2:9/message"); });
    reach({}, {}, "/sse");
    auto c = connect();
    old.stop();
    m_server.reset(); // its threads are done with `old`
    ASSERT_FALSE(c);
    EXPECT_EQ(c.error().exit(), Exit::data);
    EXPECT_NE(c.error().message().find("named an endpoint at http://127.0.0.2:9, another origin "
                                       "than its own"),
              std::string::npos)
        << c.error().message();
    for (const Received& r : seen())
        EXPECT_EQ(r.head.find("/message"), std::string::npos) << "posted to the other origin";
}

// -- refusals ------------------------------------------------------------------------------------

TEST_F(HttpClientTest, RedirectsAreNotFollowed) {
    serve([](const Received&, int fd) {
        TestServer::send_text(
            fd, respond(307, "Temporary Redirect", "Location: http://evil.example:8080/mcp\r\n", ""));
    });
    reach();
    auto c = connect();
    ASSERT_FALSE(c);
    EXPECT_EQ(c.error().exit(), Exit::data);
    EXPECT_NE(c.error().message().find("redirects to http://evil.example:8080"), std::string::npos)
        << c.error().message();
    EXPECT_EQ(m_server->requests(), 2) << "discover, then initialize";
}

TEST_F(HttpClientTest, HtmlIsNotAnAnswer) {
    serve([](const Received& r, int fd) {
        if (method_of(r) == "server/discover")
            TestServer::send_text(fd, json_ok(result(id_of(r), k_modern_discover)));
        else
            TestServer::send_text(fd, respond(200, "OK", "Content-Type: text/html\r\n",
                                              "<html><body>Sign in</body></html>"));
    });
    reach();
    ASSERT_TRUE(connect());
    auto r = request("tools/list", "{}");
    ASSERT_FALSE(r);
    EXPECT_EQ(r.error().exit(), Exit::data);
    EXPECT_EQ(r.error().message(),
              "MCP server web answered 'tools/list' with text/html, not a JSON-RPC answer (" +
                  m_server->url("/mcp") + ")");
}

TEST_F(HttpClientTest, UnauthorizedWithoutHooksNeedsAuthorization) {
    serve([](const Received&, int fd) {
        TestServer::send_text(fd, respond(401, "Unauthorized",
                                          "WWW-Authenticate: Bearer resource_metadata=\"x\"\r\n", ""));
    });
    reach();
    auto c = connect();
    ASSERT_FALSE(c);
    EXPECT_EQ(c.error().exit(), Exit::no_perm);
    EXPECT_EQ(c.error().message(), "the MCP server web needs authorization (HTTP 401): log in with `sion agent mcp login web`");
}

TEST_F(HttpClientTest, TheRefusedHookRetriesWithAFreshHeader) {
    serve([](const Received& r, int fd) {
        if (header(r, "Authorization") != "Bearer fresh") {
            TestServer::send_text(fd, respond(401, "Unauthorized",
                                              "WWW-Authenticate: Bearer error=\"invalid_token\"\r\n",
                                              ""));
            return;
        }
        TestServer::send_text(fd, json_ok(result(id_of(r), k_modern_discover)));
    });
    std::string token = "stale";
    std::vector<std::string> challenges;
    ClientEvents events;
    events.authorization = [&] { return "Bearer " + token; };
    events.refused = [&](int status, std::string www, Retry retry) {
        challenges.push_back(std::to_string(status) + " " + www);
        token = "fresh";
        retry(true);
    };
    reach({}, std::move(events));
    auto c = connect();
    ASSERT_TRUE(c) << c.error().message();
    ASSERT_EQ(challenges.size(), 1U);
    EXPECT_EQ(challenges[0], "401 Bearer error=\"invalid_token\"");
}

TEST_F(HttpClientTest, AServerThatCannotBeReachedIsUnavailable) {
    serve([](const Received&, int) {});
    std::string url = m_server->url("/mcp");
    m_server.reset(); // nothing listens there now
    ClientOptions options;
    options.name = "gone";
    auto client = Client::reach(&m_loop, {url, {}}, options, {});
    ASSERT_TRUE(client);
    m_client = std::move(*client);
    auto c = connect();
    ASSERT_FALSE(c);
    EXPECT_EQ(c.error().exit(), Exit::unavailable) << c.error().message();
}

} // namespace
} // namespace sion::mcpd
