// SPDX-License-Identifier: MIT
// lib/models/wire: key rotation and rests on a clock the test moves (no sleeps), statuses turned
// into the model contract, retry hints, where base URLs may point, streamed and whole replies,
// keys kept out of messages; against a small HTTP server on 127.0.0.1 in the test process.
#include "lib/models/wire.hpp"
#include "tests/unit/http_test_server.hpp"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <cstdlib>
#include <functional>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

namespace sion::models {
namespace {

struct Reply {
    int status = 200;
    std::string headers;                 // extra header lines, each ending in \r\n
    std::vector<std::string> pieces{""}; // the body, written piece by piece
    bool cut = false;                    // close the connection before the body's end
};

// The shared loopback server, answering each request with what `answer` makes of its head
// (request line and headers) and keeping every head for seen().
class Server {
public:
    using Answer = std::function<Reply(const std::string& head)>;

    explicit Server(Answer answer)
        : m_answer(std::move(answer)),
          m_server([this](const test::Received& request, int fd, const test::TestServer&) {
              serve(request.head, fd);
          }) {}

    [[nodiscard]] std::string url() const { return m_server.url(); }

    // The value of `name` in each request's head, in order ("" where it had none).
    [[nodiscard]] std::vector<std::string> seen(const std::string& name) const {
        std::lock_guard lock(m_mutex);
        std::vector<std::string> out;
        for (const auto& head : m_heads) {
            std::string value;
            size_t at = head.find("\r\n" + name + ": ");
            if (at != std::string::npos) {
                at += name.size() + 4;
                value = head.substr(at, head.find("\r\n", at) - at);
            }
            out.push_back(value);
        }
        return out;
    }

private:
    void serve(const std::string& head, int fd) {
        {
            std::lock_guard lock(m_mutex);
            m_heads.push_back(head);
        }
        Reply r = m_answer(head);
        size_t total = 0;
        for (const auto& piece : r.pieces)
            total += piece.size();
        std::string out = "HTTP/1.1 " + std::to_string(r.status) + " X\r\n" + r.headers
                          + "Content-Length: " + std::to_string(total + (r.cut ? 10 : 0))
                          + "\r\nConnection: close\r\n\r\n";
        test::TestServer::send_text(fd, out);
        for (const auto& piece : r.pieces) {
            test::TestServer::send_text(fd, piece);
            std::this_thread::sleep_for(std::chrono::milliseconds(5));
        }
    }

    Answer m_answer;
    mutable std::mutex m_mutex;
    std::vector<std::string> m_heads;
    test::TestServer m_server; // last: its threads stop before the members above go
};

// A clock the test moves.
struct TestClock {
    int64_t now = 1'000'000;

    Clock clock() {
        return [this] { return now; };
    }
};

// The status a key gets: "ok…" keys 200, "limited…" 429, "refused…" 401.
Reply by_key(const std::string& head) {
    Reply r;
    if (head.find("Bearer limited") != std::string::npos) {
        r.status = 429;
        r.pieces = {R"({"error":{"message":"Rate limit reached"}})"};
    } else if (head.find("Bearer refused") != std::string::npos) {
        r.status = 401;
        r.pieces = {R"({"error":{"message":"Invalid key"}})"};
    } else {
        r.pieces = {"fine"};
    }
    return r;
}

// One call through with_keys: the key as a bearer token, the body as the answer's text.
Result<Answer> call(Wire& wire, KeyRing& keys, const std::string& url) {
    return wire.with_keys(keys, [&](const std::string& key) -> Result<Answer> {
        WireRequest w;
        w.url = url;
        w.headers.add("Authorization", "Bearer " + key);
        SION_TRY(WireReply reply, wire.send(w));
        Answer a;
        a.text = reply.body;
        return a;
    });
}

TEST(KeyRing, SplitsAtCommas) {
    KeyRing keys("K", " a, b,,c ,");
    ASSERT_EQ(keys.size(), 3U);
    EXPECT_EQ(keys.key(0), "a");
    EXPECT_EQ(keys.key(1), "b");
    EXPECT_EQ(keys.key(2), "c");
    EXPECT_TRUE(KeyRing("K", " , ").empty());
}

TEST(KeyRing, EachCallStartsWithTheNextKey) {
    KeyRing keys("K", "a,b,c");
    EXPECT_EQ(keys.next_call(0), (std::vector<size_t>{0, 1, 2}));
    EXPECT_EQ(keys.next_call(0), (std::vector<size_t>{1, 2, 0}));
    EXPECT_EQ(keys.next_call(0), (std::vector<size_t>{2, 0, 1}));
    keys.rest(1, 100, Error(Exit::unavailable, "HTTP 429: x"));
    EXPECT_EQ(keys.next_call(99), (std::vector<size_t>{0, 2}));
    EXPECT_EQ(keys.next_call(100), (std::vector<size_t>{1, 2, 0}));
}

TEST(Wire, ALimitedKeyRestsAMinuteAndTheCallGoesOn) {
    Server server(by_key);
    TestClock t;
    Wire wire(Reach::remote, t.clock());
    KeyRing keys("OPENAI_API_KEY", "limited1,ok2");
    auto a = call(wire, keys, server.url());
    ASSERT_TRUE(a) << a.error().message();
    EXPECT_EQ(a->text, "fine");
    EXPECT_EQ(server.seen("Authorization"),
              (std::vector<std::string>{"Bearer limited1", "Bearer ok2"}));
    // Resting, the limited key is passed over until its minute is up.
    for (int i = 0; i < 3; ++i)
        ASSERT_TRUE(call(wire, keys, server.url()));
    t.now += KeyRing::k_limited_rest_ms - 1;
    ASSERT_TRUE(call(wire, keys, server.url()));
    EXPECT_EQ(server.seen("Authorization").size(), 6U);
    EXPECT_EQ(server.seen("Authorization").back(), "Bearer ok2");
    t.now += 1;
    ASSERT_TRUE(call(wire, keys, server.url())); // starts with ok2 or limited1, ends on ok2
    ASSERT_TRUE(call(wire, keys, server.url()));
    auto seen = server.seen("Authorization");
    EXPECT_EQ(std::count(seen.begin(), seen.end(), "Bearer limited1"), 2);
}

TEST(Wire, ARefusedKeyRestsAnHour) {
    Server server(by_key);
    TestClock t;
    Wire wire(Reach::remote, t.clock());
    KeyRing keys("K", "refused1,ok2");
    ASSERT_TRUE(call(wire, keys, server.url()));
    t.now += KeyRing::k_refused_rest_ms - 1;
    for (int i = 0; i < 4; ++i)
        ASSERT_TRUE(call(wire, keys, server.url()));
    auto seen = server.seen("Authorization");
    EXPECT_EQ(std::count(seen.begin(), seen.end(), "Bearer refused1"), 1);
    t.now += 1;
    for (int i = 0; i < 2; ++i)
        ASSERT_TRUE(call(wire, keys, server.url()));
    seen = server.seen("Authorization");
    EXPECT_EQ(std::count(seen.begin(), seen.end(), "Bearer refused1"), 2);
}

TEST(Wire, WithOneKeyALimitedCallIsTheModelsFailure) {
    Server server(by_key);
    TestClock t;
    Wire wire(Reach::remote, t.clock());
    KeyRing keys("K", "limited1");
    auto a = call(wire, keys, server.url());
    ASSERT_FALSE(a);
    EXPECT_EQ(a.error().exit(), Exit::unavailable);
    EXPECT_EQ(a.error().message(), "HTTP 429: Rate limit reached");
    // Nothing rests: the next call asks again at once.
    EXPECT_FALSE(call(wire, keys, server.url()));
    EXPECT_EQ(server.seen("Authorization").size(), 2U);
}

TEST(Wire, EveryKeyRestingFailsAtOnce) {
    Server server(by_key);
    TestClock t;
    Wire wire(Reach::remote, t.clock());
    KeyRing keys("ANTHROPIC_API_KEY", "limited1,refused2");
    auto first = call(wire, keys, server.url());
    ASSERT_FALSE(first);
    EXPECT_EQ(server.seen("Authorization").size(), 2U);
    auto second = call(wire, keys, server.url());
    ASSERT_FALSE(second);
    EXPECT_EQ(server.seen("Authorization").size(), 2U);
    // The one that wakes first, the limited one, says why.
    EXPECT_EQ(second.error().exit(), Exit::unavailable);
    EXPECT_EQ(second.error().message(),
              "every key in ANTHROPIC_API_KEY is resting after HTTP 429: Rate limit reached");
    t.now += KeyRing::k_limited_rest_ms;
    EXPECT_FALSE(call(wire, keys, server.url()));
    EXPECT_EQ(server.seen("Authorization").size(), 3U);
}

TEST(Wire, ARetryHintLengthensARest) {
    Server server([](const std::string& head) {
        Reply r = by_key(head);
        if (r.status == 429)
            r.headers = "retry-after-ms: 120000\r\n";
        return r;
    });
    TestClock t;
    Wire wire(Reach::remote, t.clock());
    KeyRing keys("K", "limited1,ok2");
    ASSERT_TRUE(call(wire, keys, server.url()));
    EXPECT_EQ(wire.last_retry_ms(), 0); // of the last send, which succeeded
    t.now += 119'999;
    ASSERT_TRUE(call(wire, keys, server.url()));
    ASSERT_TRUE(call(wire, keys, server.url()));
    auto seen = server.seen("Authorization");
    EXPECT_EQ(std::count(seen.begin(), seen.end(), "Bearer limited1"), 1);
}

TEST(Wire, AModelAskedToWaitIsLeftAloneUntilThen) {
    std::atomic<int> status{503};
    Server server([&](const std::string&) {
        Reply r;
        r.status = status;
        r.headers = "retry-after: 5\r\n";
        r.pieces = {status == 503 ? R"({"error":{"message":"Busy"}})" : "fine"};
        return r;
    });
    TestClock t;
    Wire wire(Reach::remote, t.clock());
    KeyRing none;
    auto first = call(wire, none, server.url());
    ASSERT_FALSE(first);
    EXPECT_EQ(first.error().message(), "HTTP 503: Busy");
    status = 200;
    t.now += 4'999;
    auto quiet = call(wire, none, server.url());
    ASSERT_FALSE(quiet);
    EXPECT_EQ(quiet.error().message(), "HTTP 503: Busy");
    EXPECT_EQ(server.seen("Host").size(), 1U);
    t.now += 1;
    EXPECT_TRUE(call(wire, none, server.url()));
    EXPECT_EQ(server.seen("Host").size(), 2U);
}

TEST(Wire, AnAttemptsErrorIsRedactedOfItsKey) {
    // An error the provider made of a whole answer, after send(): the key cut, upper-cased, split.
    const std::string key = "sk-ant-api03-Zq8v2LmN4xR7tK1pW9yB3cD6fH0jS5gA-abc";
    Wire wire(Reach::remote);
    KeyRing keys("ANTHROPIC_API_KEY", key);
    auto failed = wire.with_keys(keys, [](const std::string& k) -> Result<Answer> {
        return Error(Exit::data, "HTTP 400: key " + k.substr(0, 16) + "… or KEY:"
                                     + std::string("ZQ8V2LMN4XR7TK1PW") + " or " + k.substr(20, 8)
                                     + "\n" + k.substr(28) + ".");
    });
    ASSERT_FALSE(failed);
    EXPECT_EQ(failed.error().exit(), Exit::data);
    EXPECT_EQ(failed.error().message(),
              "HTTP 400: key [redacted]… or KEY:[redacted] or [redacted].");
    // Without a key, nothing to take out.
    KeyRing none;
    auto plain = wire.with_keys(none, [](const std::string&) -> Result<Answer> {
        return Error(Exit::data, "HTTP 400: sk-ant-api03-Zq8v2LmN4xR7tK1pW9yB3cD6fH0jS5gA");
    });
    ASSERT_FALSE(plain);
    EXPECT_EQ(plain.error().message(), "HTTP 400: sk-ant-api03-Zq8v2LmN4xR7tK1pW9yB3cD6fH0jS5gA");
}

TEST(Wire, StatusesAndTheirMessages) {
    struct Case {
        int status;
        std::string body;
        Exit exit;
        std::string message;
    };

    std::vector<Case> cases = {
        {400,
         R"({"type":"error","error":{"type":"invalid_request_error","message":"max_tokens: required"}})",
         Exit::data, "HTTP 400: max_tokens: required"},
        {401, R"({"error":{"message":"Incorrect API key provided: secret-key-1234"}})",
         Exit::no_perm, "HTTP 401: Incorrect API key provided: [redacted]"},
        {402, R"({"message":"No credits"})", Exit::no_perm, "HTTP 402: No credits"},
        {403, "<html><body>Forbidden</body></html>", Exit::no_perm, "HTTP 403: Forbidden"},
        {404, R"({"error":"model not found"})", Exit::unavailable, "HTTP 404: model not found"},
        {429, "slow down\nplease", Exit::unavailable, "HTTP 429: slow down"},
        {500, "", Exit::unavailable, "HTTP 500: Internal Server Error"},
        {502, R"([{"error":{"code":502,"message":"Bad gateway"}}])", Exit::unavailable,
         "HTTP 502: Bad gateway"},
        {503, R"({"Message":"Service is down"})", Exit::unavailable, "HTTP 503: Service is down"},
        {504, R"({"detail":"Timed out\tupstream"})", Exit::unavailable,
         "HTTP 504: Timed out upstream"},
        {529, R"({"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}})",
         Exit::unavailable, "HTTP 529: Overloaded"},
    };
    for (const Case& c : cases) {
        Server server([&](const std::string&) {
            Reply r;
            r.status = c.status;
            r.pieces = {c.body};
            return r;
        });
        Wire wire(Reach::remote);
        WireRequest w;
        w.url = server.url() + "/v1/messages";
        w.headers.add("x-api-key", "secret-key-1234");
        auto reply = wire.send(w);
        ASSERT_FALSE(reply) << c.status;
        EXPECT_EQ(reply.error().exit(), c.exit) << c.status;
        EXPECT_EQ(reply.error().message(), c.message);
        EXPECT_EQ(wire.last_status(), c.status);
    }
}

TEST(Wire, UnreachableAndCutOffAreTheModelsFailure) {
    Wire wire(Reach::remote);
    int port = 0;
    {
        Server gone([](const std::string&) { return Reply{}; });
        port = std::stoi(gone.url().substr(gone.url().rfind(':') + 1));
    }
    WireRequest w;
    w.url = "http://127.0.0.1:" + std::to_string(port) + "/v1";
    auto reply = wire.send(w);
    ASSERT_FALSE(reply);
    EXPECT_EQ(reply.error().exit(), Exit::unavailable);
    EXPECT_EQ(wire.last_status(), 0);

    Server cut([](const std::string&) {
        Reply r;
        r.pieces = {"data: {}\n\n"};
        r.cut = true;
        return r;
    });
    w.url = cut.url();
    reply = wire.send(w);
    ASSERT_FALSE(reply);
    EXPECT_EQ(reply.error().exit(), Exit::unavailable);
    EXPECT_EQ(reply.error().message().substr(0, 24), "the answer was cut off: ");
}

TEST(Wire, StreamsEventByEventAndWholeOtherwise) {
    Server server([](const std::string& head) {
        Reply r;
        if (head.find("/stream") != std::string::npos) {
            r.headers = "Content-Type: text/event-stream\r\n";
            r.pieces = {"event: a\nda", "ta: 1\n\n: ping\n\nevent: b\r\ndata: 2\r\n\r\n",
                        "data: 3"};
        } else {
            r.headers = "Content-Type: application/json\r\n";
            r.pieces = {R"({"whole":)", "true}"};
        }
        return r;
    });
    Wire wire(Reach::remote);
    std::vector<std::string> events;
    WireRequest w;
    w.url = server.url() + "/stream";
    w.on_event = [&](const SseEvent& e) {
        events.push_back(e.type + "=" + e.data);
        return Status();
    };
    auto reply = wire.send(w);
    ASSERT_TRUE(reply) << reply.error().message();
    EXPECT_TRUE(reply->streamed);
    EXPECT_TRUE(reply->mid_event);
    EXPECT_EQ(events, (std::vector<std::string>{"a=1", "b=2"}));
    w.url = server.url() + "/whole";
    reply = wire.send(w);
    ASSERT_TRUE(reply);
    EXPECT_FALSE(reply->streamed);
    EXPECT_EQ(reply->body, R"({"whole":true})");
    // A handler's error ends the call with it.
    w.url = server.url() + "/stream";
    w.on_event = [](const SseEvent&) {
        return Status(make_error(Exit::unavailable, "overloaded_error: Overloaded"));
    };
    reply = wire.send(w);
    ASSERT_FALSE(reply);
    EXPECT_EQ(reply.error().message(), "overloaded_error: Overloaded");
    EXPECT_EQ(wire.last_status(), 200);
}

TEST(Wire, RetryHints) {
    HttpHeaders h;
    EXPECT_EQ(retry_hint_ms(h, 0), 0);
    h.add("retry-after", "7");
    EXPECT_EQ(retry_hint_ms(h, 0), 7000);
    h.add("retry-after-ms", "1500.5");
    EXPECT_EQ(retry_hint_ms(h, 0), 1500);
    HttpHeaders date;
    date.add("Retry-After", "Wed, 21 Oct 2015 07:28:00 GMT");
    EXPECT_EQ(retry_hint_ms(date, int64_t{1445412470} * 1000), 10'000);
    EXPECT_EQ(retry_hint_ms(date, int64_t{1445412490} * 1000), 0); // passed already
    HttpHeaders long_one;
    long_one.add("retry-after", "86400");
    EXPECT_EQ(retry_hint_ms(long_one, 0), 3'600'000);
    HttpHeaders junk;
    junk.add("retry-after", "soon");
    EXPECT_EQ(retry_hint_ms(junk, 0), 0);
}

TEST(Wire, WhereABaseUrlMayPoint) {
    EXPECT_TRUE(check_reach("http://127.0.0.1:8080/v1", Reach::remote));
    EXPECT_TRUE(check_reach("http://[::1]:8080/v1", Reach::remote));
    EXPECT_TRUE(check_reach("https://8.8.8.8/v1", Reach::remote));
    EXPECT_TRUE(check_reach("http://192.168.1.20:11434/v1", Reach::network));
    EXPECT_TRUE(check_reach("http://10.1.2.3/v1", Reach::network));

    struct Refused {
        const char* url;
        Reach reach;
        const char* message;
    };

    for (const Refused& r : {
             Refused{
                 "http://10.0.0.5:8080/v1?key=x", Reach::remote,
                 "refusing 'http://10.0.0.5:8080/v1': 10.0.0.5 is a private address, which only "
                 "local: reaches"},
             Refused{"https://169.254.169.254/", Reach::remote,
                     "refusing 'https://169.254.169.254/': 169.254.169.254 is a private address, "
                     "which only local: reaches"},
             Refused{"https://[fd00::1]/", Reach::remote,
                     "refusing 'https://[fd00::1]/': fd00::1 is a private address, which only "
                     "local: reaches"},
             Refused{"https://[::ffff:172.16.0.1]/", Reach::remote,
                     "refusing 'https://[::ffff:172.16.0.1]/': ::ffff:172.16.0.1 is a private "
                     "address, which only local: reaches"},
             Refused{"http://0.0.0.0:80/", Reach::remote,
                     "refusing 'http://0.0.0.0:80/': 0.0.0.0 is a private address, which only "
                     "local: reaches"},
             Refused{
                 "http://8.8.8.8/v1", Reach::remote,
                 "refusing 'http://8.8.8.8/v1': plain http goes only to this machine: use https"},
             Refused{"http://8.8.8.8/v1", Reach::network,
                     "refusing 'http://8.8.8.8/v1': plain http goes only to this machine and its "
                     "network: use https"},
             Refused{"ftp://127.0.0.1/", Reach::remote,
                     "refusing 'ftp://127.0.0.1/': not an http or https URL"},
         }) {
        Status s = check_reach(r.url, r.reach);
        ASSERT_FALSE(s) << r.url;
        EXPECT_EQ(s.error().exit(), Exit::config) << r.url;
        EXPECT_EQ(s.error().message(), r.message);
    }
}

TEST(Wire, BaseUrlsFromTheirVariables) {
    ::setenv("SION_TEST_BASE_URL", "http://127.0.0.1:9/v1//", 1);
    auto url = base_url_from("SION_TEST_BASE_URL", "https://example.com", Reach::remote);
    ASSERT_TRUE(url) << url.error().message();
    EXPECT_EQ(*url, "http://127.0.0.1:9/v1");
    ::setenv("SION_TEST_BASE_URL", "file:///etc/passwd", 1);
    url = base_url_from("SION_TEST_BASE_URL", "https://example.com", Reach::remote);
    ASSERT_FALSE(url);
    EXPECT_EQ(url.error().exit(), Exit::config);
    EXPECT_EQ(url.error().message(),
              "SION_TEST_BASE_URL 'file:///etc/passwd' is not an http or https URL");
    ::setenv("SION_TEST_BASE_URL", "http://192.168.0.9/v1", 1);
    EXPECT_FALSE(base_url_from("SION_TEST_BASE_URL", "", Reach::remote));
    EXPECT_TRUE(base_url_from("SION_TEST_BASE_URL", "", Reach::network));
    ::unsetenv("SION_TEST_BASE_URL");
    url = base_url_from("SION_TEST_BASE_URL", "https://api.example.com/v1/", Reach::remote);
    ASSERT_TRUE(url);
    EXPECT_EQ(*url, "https://api.example.com/v1");
}

TEST(Wire, ProviderMessages) {
    EXPECT_EQ(provider_message(R"({"error":{"message":"a\nb"}})"), "a b");
    EXPECT_EQ(provider_message(R"({"error":{"code":1}})"), "");
    EXPECT_EQ(provider_message(""), "");
    EXPECT_EQ(provider_message(std::string(1000, 'x')).size(), 300U);
    // Cut at a character boundary: no half of a character at the end.
    std::string long_text = "\"" + std::string(299, 'x') + "é\"";
    EXPECT_EQ(provider_message(R"({"message":)" + long_text + "}"), std::string(299, 'x'));
}

} // namespace
} // namespace sion::models
