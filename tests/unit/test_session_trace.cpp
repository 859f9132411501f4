// SPDX-License-Identifier: MIT
// The run's trace (session/trace.hpp): spans kept and read back, redacted, drawn as a waterfall;
// the tools' running span and time spent elsewhere; and the exporter (lib/otlp_export.hpp) against
// a collector that takes its batches, one that refuses them and one that is not there.
#include "http_test_server.hpp"
#include "lib/db_schema.hpp"
#include "lib/otlp_export.hpp"
#include "session/trace.hpp"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

namespace sion::session {
namespace {

#define ASSERT_OK(r) ASSERT_TRUE(r) << (r).error().message()

constexpr int64_t k_at = 1'796'642'612'000'000'000; // 2026-12-07 11:23:32 UTC

Db store() {
    auto db = Db::open(":memory:");
    EXPECT_TRUE(db);
    EXPECT_TRUE(migrate_state(*db));
    EXPECT_TRUE(
        db->exec("INSERT INTO profiles (name, models, autonomy, created) VALUES "
                 "('coder', '[]', 2, 0);"
                 "INSERT INTO agents (id, profile, created) VALUES "
                 "('aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa', 'coder', 0);"
                 "INSERT INTO sessions (id, agent, profile, task, settings, state, started) "
                 "VALUES ('0123456789abcdef', "
                 "'aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa', "
                 "'coder', 't', '{}', 'done', 0);"));
    return std::move(*db);
}

otlp::Span span(std::string id, std::string parent, std::string name, int64_t from_ms,
                int64_t to_ms) {
    otlp::Span s;
    s.trace_id = "4bf92f3577b34da6a3ce929d0e0e4736";
    s.span_id = std::move(id);
    s.parent_id = std::move(parent);
    s.name = std::move(name);
    s.start_ns = k_at + from_ms * 1'000'000;
    s.end_ns = k_at + to_ms * 1'000'000;
    return s;
}

TEST(Trace, SpansAreKeptWithTheSessionAndReadBack) {
    Db db = store();
    Trace trace;
    trace.set_secrets({"sk-test-0123456789abcdef"});
    otlp::Span root = trace.begin_root(
        "invoke_agent sion", otlp::Link{"0af7651916cd43dd8448eb211c80319c", "b7ad6b7169203331"});
    EXPECT_EQ(root.span_id, trace.root());
    EXPECT_EQ(root.trace_id, trace.id());
    otlp::Span call = trace.begin("execute_tool shell", trace.root());
    call.attributes.set("gen_ai.tool.call.result", "the key is sk-test-0123456789abcdef");
    call.attributes.set("sion.tainted", true);
    call.error = true;
    call.status_message = "refused sk-test-0123456789abcdef";
    trace.end(std::move(call));
    trace.end(std::move(root));
    trace.store(db, "0123456789abcdef");
    trace.store(db, "0123456789abcdef"); // nothing new: nothing stored twice

    auto spans = load_spans(db, "0123456789abcdef");
    ASSERT_OK(spans);
    ASSERT_EQ(spans->size(), 2U);
    const otlp::Span& r = (*spans)[0];
    const otlp::Span& c = (*spans)[1];
    EXPECT_EQ(r.name, "invoke_agent sion");
    EXPECT_EQ(r.parent_id, "");
    ASSERT_EQ(r.links.size(), 1U);
    EXPECT_EQ(r.links[0].trace_id, "0af7651916cd43dd8448eb211c80319c");
    EXPECT_EQ(r.links[0].span_id, "b7ad6b7169203331");
    EXPECT_FALSE(r.error);
    EXPECT_LE(r.start_ns, c.start_ns);
    EXPECT_LE(c.end_ns, r.end_ns);
    EXPECT_EQ(c.parent_id, r.span_id);
    EXPECT_TRUE(c.error);
    EXPECT_EQ(c.status_message, "refused [redacted]");
    EXPECT_EQ(c.attributes.view().dump(),
              R"({"gen_ai.tool.call.result":"the key is [redacted]","sion.tainted":true})");
    EXPECT_EQ(load_spans(db, "fedcba9876543210")->size(), 0U);
}

TEST(Trace, AWaterfallIsASpanALineOnOneTimeScale) {
    std::vector<otlp::Span> spans;
    spans.push_back(span("00000000000000a1", "", "invoke_agent sion", 0, 1000));
    spans.push_back(span("00000000000000a2", "00000000000000a1", "chat claude-sonnet-4-5", 0, 250));
    spans.push_back(span("00000000000000a3", "00000000000000a1", "execute_tool shell", 500, 1000));
    spans.push_back(span("00000000000000a4", "00000000000000a3", "call", 750, 1000));
    // A span whose parent is not kept is drawn at the top.
    spans.push_back(span("00000000000000a5", "00000000000000ff", "orphan", 250, 500));
    spans[1].error = true;
    spans[1].status_message = "HTTP 529:\nOverloaded";
    // Another trace, later: after the first.
    otlp::Span later = span("00000000000000b1", "", "invoke_agent sion", 2000, 2003);
    later.trace_id = "5bf92f3577b34da6a3ce929d0e0e4736";
    spans.insert(spans.begin(), std::move(later));
    EXPECT_EQ(draw_waterfall(spans, 8),
              "trace 4bf92f3577b34da6a3ce929d0e0e4736  2026-12-07 11:23:32 UTC  1.00 s\n"
              "invoke_agent sion         1.00 s  |████████|\n"
              "  chat claude-sonnet-4-5  250 ms  |██      |  ! HTTP 529: Overloaded\n"
              "  execute_tool shell      500 ms  |    ████|\n"
              "    call                  250 ms  |      ██|\n"
              "orphan                    250 ms  |  ██    |\n"
              "trace 5bf92f3577b34da6a3ce929d0e0e4736  2026-12-07 11:23:34 UTC  3.0 ms\n"
              "invoke_agent sion  3.0 ms  |████████|\n");
    EXPECT_EQ(draw_waterfall({}, 8), "");
}

TEST(Trace, LongNamesAreCut) {
    std::string name(80, 'x');
    std::vector<otlp::Span> one;
    one.push_back(span("00000000000000a1", "", name, 0, 1));
    std::string drawn = draw_waterfall(one, 4);
    EXPECT_NE(drawn.find(std::string(55, 'x') + "…  1.0 ms  |████|\n"), std::string::npos) << drawn;
}

TEST(Trace, AToolRunsUnderItsSpanAndGathersTimeSpentElsewhere) {
    EXPECT_EQ(running_traceparent(), "");
    note_elsewhere({"sandbox", 1, 2, Json::object()}); // no call runs: nobody is told
    {
        RunningUnder outer("4bf92f3577b34da6a3ce929d0e0e4736", "00f067aa0ba902b7");
        EXPECT_EQ(running_traceparent(), "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01");
        note_elsewhere({"sandbox", 1, 2, Json::object()});
        {
            RunningUnder inner("4bf92f3577b34da6a3ce929d0e0e4736", "00f067aa0ba902b8");
            EXPECT_EQ(running_traceparent(),
                      "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b8-01");
            note_elsewhere({"mcp server", 3, 4, Json::object()});
            std::string other_thread = "unset";
            std::thread([&] { other_thread = running_traceparent(); }).join();
            EXPECT_EQ(other_thread, "");
            auto inner_spent = inner.take_elsewhere();
            ASSERT_EQ(inner_spent.size(), 1U);
            EXPECT_EQ(inner_spent[0].name, "mcp server");
        }
        EXPECT_EQ(running_traceparent(), "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01");
        auto spent = outer.take_elsewhere();
        ASSERT_EQ(spent.size(), 1U);
        EXPECT_EQ(spent[0].name, "sandbox");
    }
    EXPECT_EQ(running_traceparent(), "");
}

TEST(Trace, ProvidersAreNamedAsGenAIsConventionsNameThem) {
    EXPECT_EQ(genai_provider("anthropic"), "anthropic");
    EXPECT_EQ(genai_provider("openai-responses"), "openai");
    EXPECT_EQ(genai_provider("bedrock"), "aws.bedrock");
    EXPECT_EQ(genai_provider("gemini"), "gcp.gemini");
    EXPECT_EQ(genai_provider("vertex"), "gcp.vertex_ai");
    EXPECT_EQ(genai_provider("mistral"), "mistral_ai");
    EXPECT_EQ(genai_provider("xai"), "x_ai");
    EXPECT_EQ(genai_provider("script"), "script");
}

// --- the exporter ------------------------------------------------------------------------------

// What a collector was sent, and how it answers.
struct Collector {
    explicit Collector(int status)
        : server([this, status](const test::Received& r, int fd, const test::TestServer&) {
              {
                  std::lock_guard<std::mutex> hold(lock);
                  heads.push_back(r.head);
                  bodies.push_back(r.body);
              }
              test::TestServer::send_text(fd, test::respond(status, "X", "", "{}"));
          }) {}

    std::mutex lock;
    std::vector<std::string> heads;
    std::vector<std::string> bodies;
    test::TestServer server; // last: its threads stop before the members above go
};

otlp::Export where(const std::string& url, bool json) {
    otlp::Export e;
    e.endpoint = url;
    e.json = json;
    e.headers = {{"x-team", "a"}};
    e.timeout_ms = 5000;
    return e;
}

std::vector<otlp::Span> some(size_t n) {
    std::vector<otlp::Span> out;
    for (size_t i = 0; i < n; ++i)
        out.push_back(span(format("%016zx", i + 1), "", format("s%zu", i), 0, 1));
    return out;
}

TEST(Exporter, SendsWhatWaitsInBatchesAndWhatIsLeftWhenDestroyed) {
    Collector collector(200);
    std::atomic<int> failures{0};
    {
        otlp::Exporter exporter(where(collector.server.url("/v1/traces"), true), otlp::Origin{},
                                [&](const std::string&) { ++failures; });
        exporter.add(some(2));
        exporter.add({});
        exporter.add(some(600)); // more than a batch
    }
    EXPECT_EQ(failures, 0);
    std::lock_guard<std::mutex> hold(collector.lock);
    ASSERT_GE(collector.bodies.size(), 2U);
    size_t spans = 0;
    for (size_t i = 0; i < collector.bodies.size(); ++i) {
        EXPECT_NE(collector.heads[i].find("POST /v1/traces "), std::string::npos);
        EXPECT_NE(collector.heads[i].find("x-team: a\r\n"), std::string::npos)
            << collector.heads[i];
        EXPECT_NE(collector.heads[i].find("Content-Type: application/json\r\n"), std::string::npos);
        auto body = Json::parse(collector.bodies[i]);
        ASSERT_OK(body);
        size_t n =
            body->view().get("resourceSpans").at(0).get("scopeSpans").at(0).get("spans").size();
        EXPECT_LE(n, otlp::Exporter::k_batch);
        spans += n;
    }
    EXPECT_EQ(spans, 602U);
}

TEST(Exporter, TellsTheFirstFailureOnceAndSendsNoMore) {
    Collector collector(503);
    std::mutex lock;
    std::vector<std::string> told;
    {
        otlp::Exporter exporter(where(collector.server.url("/v1/traces"), false), otlp::Origin{},
                                [&](const std::string& why) {
                                    std::lock_guard<std::mutex> hold(lock);
                                    told.push_back(why);
                                });
        exporter.add(some(1));
        for (int i = 0; i < 500; ++i) { // a bound on waiting, 25 s
            {
                std::lock_guard<std::mutex> hold(lock);
                if (!told.empty())
                    break;
            }
            std::this_thread::sleep_for(std::chrono::milliseconds(50));
        }
        exporter.add(some(3));
    }
    ASSERT_EQ(told.size(), 1U);
    EXPECT_EQ(told[0], "'" + collector.server.url("/v1/traces") + "' answered HTTP 503");
    std::lock_guard<std::mutex> hold(collector.lock);
    ASSERT_EQ(collector.bodies.size(), 1U);
    EXPECT_NE(collector.heads[0].find("Content-Type: application/x-protobuf\r\n"),
              std::string::npos);
    EXPECT_EQ(collector.bodies[0], otlp::encode_protobuf(otlp::Origin{}, some(1)));
}

TEST(Exporter, ACollectorThatIsNotThereCostsOneLine) {
    // A port held (bound, not listening) for the test's time: a connection to it is refused.
    Fd held(::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0));
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t len = sizeof addr;
    ASSERT_EQ(::bind(held.get(), reinterpret_cast<sockaddr*>(&addr), len), 0);
    ASSERT_EQ(::getsockname(held.get(), reinterpret_cast<sockaddr*>(&addr), &len), 0);
    std::string url = format("http://127.0.0.1:%d/v1/traces", ntohs(addr.sin_port));
    std::vector<std::string> told;
    {
        otlp::Exporter exporter(where(url, false), otlp::Origin{},
                                [&](const std::string& why) { told.push_back(why); });
        exporter.add(some(5));
    }
    ASSERT_EQ(told.size(), 1U);
    EXPECT_NE(told[0].find("cannot reach '" + url + "'"), std::string::npos) << told[0];
}

} // namespace
} // namespace sion::session
