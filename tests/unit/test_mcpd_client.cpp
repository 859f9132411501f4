// SPDX-License-Identifier: MIT
// mcpd::Client on a real loop against tests/fixtures/mcp/scripted.py, a server that logs what it
// reads: the probe and its fallbacks (refused, garbage, no answer), the remembered era tried first,
// input_required rounds and their limits, the 2025 era's requests (elicitation, roots/list),
// timeouts that cancel, progress that restarts the timer, time spent asking a person not counted,
// an over-long message, and a server that dies mid-call. After every test the loop closes cleanly.
#include "mcpd/client.hpp"

#include <gtest/gtest.h>
#include <unistd.h>

#include <csignal>
#include <cstdlib>
#include <filesystem>
#include <algorithm>
#include <fstream>
#include <optional>
#include <string>
#include <vector>

namespace sion::mcpd {
namespace {

namespace fs = std::filesystem;
using namespace std::chrono_literals;

const bool k_sigpipe_ignored = [] { return ::signal(SIGPIPE, SIG_IGN) != SIG_ERR; }();

fs::path source_dir() {
    const char* dir = std::getenv("SION_TEST_SOURCE_DIR"); // NOLINT(concurrency-mt-unsafe)
    return dir != nullptr ? fs::path(dir) : fs::path(".");
}

Json parse(std::string_view text) {
    auto json = Json::parse(text);
    EXPECT_TRUE(json) << text;
    return json ? std::move(*json) : Json::object();
}

Json accept(int n) {
    return parse(R"({"action":"accept","content":{"n":)" + std::to_string(n) + "}}");
}

class ClientTest : public testing::Test {
protected:
    void SetUp() override {
        ASSERT_TRUE(k_sigpipe_ignored);
        ASSERT_EQ(uv_loop_init(&m_loop), 0);
        char dir[] = "/tmp/sion-mcpd-client.XXXXXX";
        ASSERT_NE(::mkdtemp(dir), nullptr);
        m_dir = dir;
    }

    void TearDown() override {
        if (m_client)
            m_client->close();
        m_client.reset();
        uv_run(&m_loop, UV_RUN_DEFAULT);
        EXPECT_EQ(uv_loop_close(&m_loop), 0) << "a handle was left open";
        fs::remove_all(m_dir);
    }

    void start(const std::string& mode, ClientOptions options = {}, ClientEvents events = {}) {
        ChildSpec spec;
        spec.argv = {"python3", (source_dir() / "tests/fixtures/mcp/scripted.py").string(), mode,
                     (m_dir / "log").string()};
        spec.env = env_keep({"PATH"});
        spec.in = Stdio::pipe();
        spec.out = Stdio::pipe();
        spec.err = Stdio::inherit();
        if (options.name.empty())
            options.name = "scripted";
        auto client = Client::start(&m_loop, spec, std::move(options), std::move(events));
        ASSERT_TRUE(client) << client.error().message();
        m_client = std::move(*client);
    }

    // Runs the loop until `done` is set, 60 s at most (then the test fails).
    template <typename T> void run_until(const std::optional<T>& done) {
        uv_timer_t guard;
        uv_timer_init(&m_loop, &guard);
        uv_timer_start(&guard, [](uv_timer_t*) {}, 100, 100);
        uint64_t deadline = uv_now(&m_loop) + 60000;
        while (!done && uv_now(&m_loop) < deadline)
            uv_run(&m_loop, UV_RUN_ONCE);
        uv_close(reinterpret_cast<uv_handle_t*>(&guard), nullptr);
        uv_run(&m_loop, UV_RUN_NOWAIT);
        EXPECT_TRUE(done) << "no answer within 60 s";
    }

    Result<Connected> connect() {
        std::optional<Result<Connected>> got;
        m_client->connect([&](Result<Connected> c) { got = std::move(c); });
        run_until(got);
        return got ? std::move(*got) : Error(Exit::software, "no answer");
    }

    Result<Json> call(std::string_view tool, std::string_view arguments = "{}") {
        Json params = Json::object();
        params.set("name", tool);
        params.set("arguments", parse(arguments));
        std::optional<Result<Json>> got;
        m_client->request("tools/call", std::move(params), [&](Result<Json> r) { got = std::move(r); });
        run_until(got);
        return got ? std::move(*got) : Error(Exit::software, "no answer");
    }

    // The text of a tools/call result's first block.
    static std::string text_of(const Result<Json>& r) {
        EXPECT_TRUE(r) << r.error().message();
        if (!r)
            return {};
        return std::string(r->view().get("content").at(0).string_or("text", "").value_or(""));
    }

    // Ends the server and waits until it has ended: what it read is all logged then.
    void finish() {
        m_client->close();
        uv_run(&m_loop, UV_RUN_DEFAULT);
    }

    // What the server read, in order.
    std::vector<Json> logged() const {
        std::vector<Json> out;
        std::ifstream in(m_dir / "log");
        for (std::string line; std::getline(in, line);)
            out.push_back(parse(line));
        return out;
    }

    std::vector<std::string> methods() const {
        std::vector<std::string> out;
        for (const Json& m : logged())
            out.emplace_back(m.view().string_or("method", "(answer)").value_or("?"));
        return out;
    }

    uv_loop_t m_loop{};
    fs::path m_dir;
    std::unique_ptr<Client> m_client;
};

TEST_F(ClientTest, AModernServerIsFoundByTheProbeAndEveryRequestCarriesTheVersion) {
    start("modern");
    auto c = connect();
    ASSERT_TRUE(c) << c.error().message();
    EXPECT_EQ(c->protocol, "2026-07-28");
    EXPECT_EQ(c->server_name, "scripted");
    EXPECT_EQ(c->server_version, "2.0");
    EXPECT_EQ(text_of(call("echo", R"({"message":"hi"})")), "hi");
    auto log = logged();
    ASSERT_EQ(log.size(), 2U);
    EXPECT_EQ(methods(), (std::vector<std::string>{"server/discover", "tools/call"}));
    for (const Json& m : log) {
        JsonView meta = m.view().get("params").get("_meta");
        EXPECT_EQ(meta.string("io.modelcontextprotocol/protocolVersion").value_or(""), "2026-07-28");
        EXPECT_TRUE(meta.get("io.modelcontextprotocol/clientCapabilities").is_object());
    }
    EXPECT_TRUE(log[1].view().get("params").get("_meta").get("progressToken").is_string());
}

TEST_F(ClientTest, AProbeRefusedWithMethodNotFoundFallsBackToTheHandshake) {
    start("refuses-probe");
    auto c = connect();
    ASSERT_TRUE(c) << c.error().message();
    EXPECT_EQ(c->protocol, "2025-11-25");
    EXPECT_EQ(text_of(call("echo", R"({"message":"hi"})")), "hi");
    // notifications/initialized only once initialize was answered, and nothing of 2026 after.
    EXPECT_EQ(methods(), (std::vector<std::string>{"server/discover", "initialize",
                                                   "notifications/initialized", "tools/call"}));
    auto log = logged();
    ASSERT_EQ(log.size(), 4U);
    JsonView meta = log[3].view().get("params").get("_meta");
    EXPECT_FALSE(meta.get("io.modelcontextprotocol/protocolVersion").exists());
    EXPECT_TRUE(meta.get("progressToken").is_string());
}

TEST_F(ClientTest, AProbeAnsweredWithSomethingNotModernFallsBackToTheHandshake) {
    start("garbage-probe");
    auto c = connect();
    ASSERT_TRUE(c) << c.error().message();
    EXPECT_EQ(c->protocol, "2025-11-25");
}

TEST_F(ClientTest, AProbeNotAnsweredFallsBackAfterHalfTheTimeout) {
    ClientOptions o;
    o.timeout = 4s; // the probe gets 2 s, the handshake the rest: time for a slow start
    start("silent-probe", o);
    auto c = connect();
    ASSERT_TRUE(c) << c.error().message();
    EXPECT_EQ(c->protocol, "2025-11-25");
}

TEST_F(ClientTest, AServerAnsweringNothingFailsToConnectWithinTheTimeout) {
    ClientOptions o;
    o.name = "mute";
    o.timeout = 2s;
    start("silent", o);
    auto c = connect();
    ASSERT_FALSE(c);
    EXPECT_EQ(c.error().exit(), Exit::unavailable);
    EXPECT_EQ(c.error().message(),
              "MCP server mute answered neither server/discover nor initialize within 2 s");
    finish();
    EXPECT_EQ(methods(), (std::vector<std::string>{"server/discover", "notifications/cancelled",
                                                   "initialize", "notifications/cancelled"}));
}

TEST_F(ClientTest, ClosedWhileConnectingItSaysSo) {
    start("silent-probe");
    std::optional<Result<Connected>> got;
    m_client->connect([&](Result<Connected> c) { got = std::move(c); });
    m_client->close();
    run_until(got);
    ASSERT_TRUE(got && !*got);
    EXPECT_EQ(got->error().exit(), Exit::unavailable);
    EXPECT_EQ(got->error().message(), "MCP server scripted was closed");
}

TEST_F(ClientTest, TheEraSpokenAtReviewIsTriedFirst) {
    ClientOptions o;
    o.try_first = "2025-06-18";
    start("modern", o);
    auto c = connect();
    ASSERT_TRUE(c) << c.error().message();
    EXPECT_EQ(c->protocol, "2025-11-25");
    auto sent = methods();
    ASSERT_FALSE(sent.empty());
    EXPECT_EQ(sent[0], "initialize");
}

TEST_F(ClientTest, AModernServerRememberedAsModernIsProbed) {
    ClientOptions o;
    o.try_first = "2026-07-28";
    start("refuses-probe", o);
    auto c = connect();
    ASSERT_TRUE(c) << c.error().message();
    auto sent = methods();
    ASSERT_FALSE(sent.empty());
    EXPECT_EQ(sent[0], "server/discover");
}

TEST_F(ClientTest, InputRequiredRoundsAreAnsweredAndTheCallMadeAgain) {
    ClientOptions o;
    o.can_elicit = true;
    int asked = 0;
    ClientEvents e;
    e.elicit = [&](Json params, Answer answer) {
        EXPECT_TRUE(params.view().get("message").is_string());
        answer(accept(++asked));
    };
    start("modern", o, e);
    ASSERT_TRUE(connect());
    std::string text = text_of(call("ask", R"({"asks":2,"rounds":3})"));
    EXPECT_EQ(asked, 6);
    Json rounds = parse(text);
    ASSERT_EQ(rounds.view().size(), 3U) << text;
    for (JsonView round : rounds.view()) {
        EXPECT_EQ(round.get("q0").string("action").value_or(""), "accept");
        EXPECT_EQ(round.get("q1").string("action").value_or(""), "accept");
    }
    // Each retry carries the responses and the server's requestState, and the capability.
    auto log = logged();
    ASSERT_EQ(log.size(), 5U);
    JsonView retry = log[2].view().get("params");
    EXPECT_TRUE(retry.get("inputResponses").is_object());
    EXPECT_TRUE(retry.get("requestState").is_object());
    EXPECT_TRUE(retry.get("_meta").get("io.modelcontextprotocol/clientCapabilities").get(
        "elicitation").exists());
}

TEST_F(ClientTest, FiveThingsARoundAtMost) {
    ClientOptions o;
    o.can_elicit = true;
    ClientEvents e;
    e.elicit = [](Json, Answer answer) { answer(accept(1)); };
    start("modern", o, e);
    ASSERT_TRUE(connect());
    m_client->set_timeout(1s);
    EXPECT_EQ(parse(text_of(call("ask", R"({"asks":5,"rounds":1})"))).view().size(), 1U);
    auto six = call("ask", R"({"asks":6,"rounds":1})");
    ASSERT_FALSE(six);
    EXPECT_EQ(six.error().exit(), Exit::data);
    EXPECT_EQ(six.error().message(),
              "MCP server scripted asked for 6 things in one round, more than 5");
}

TEST_F(ClientTest, EightRoundsACallAtMost) {
    ClientOptions o;
    o.can_elicit = true;
    ClientEvents e;
    e.elicit = [](Json, Answer answer) { answer(accept(1)); };
    start("modern", o, e);
    ASSERT_TRUE(connect());
    m_client->set_timeout(1s);
    EXPECT_EQ(parse(text_of(call("ask", R"({"asks":1,"rounds":8})"))).view().size(), 8U);
    auto nine = call("ask", R"({"asks":1,"rounds":9})");
    ASSERT_FALSE(nine);
    EXPECT_EQ(nine.error().exit(), Exit::data);
    EXPECT_EQ(nine.error().message(),
              "MCP server scripted asked for input more than 8 times in one call");
}

TEST_F(ClientTest, WithNoOneToAskItSaysSoAndDeclines) {
    int asked = 0;
    ClientEvents e;
    e.elicit = [&](Json, Answer answer) { answer(accept(++asked)); };
    start("modern", {}, e);
    ASSERT_TRUE(connect());
    Json rounds = parse(text_of(call("ask", R"({"asks":1,"rounds":1})")));
    EXPECT_EQ(asked, 0);
    EXPECT_EQ(rounds.view().at(0).get("q0").string("action").value_or(""), "decline");
    auto log = logged();
    ASSERT_FALSE(log.empty());
    JsonView caps = log[0].view().get("params").get("_meta").get(
        "io.modelcontextprotocol/clientCapabilities");
    EXPECT_TRUE(caps.is_object());
    EXPECT_FALSE(caps.get("elicitation").exists());
    EXPECT_FALSE(caps.get("sampling").exists());
}

TEST_F(ClientTest, A2025ServerAsksWithRequestsOfItsOwnFiveACallAtMost) {
    ClientOptions o;
    o.can_elicit = true;
    int asked = 0;
    ClientEvents e;
    e.elicit = [&](Json, Answer answer) { answer(accept(++asked)); };
    start("refuses-probe", o, e);
    ASSERT_TRUE(connect());
    Json two = parse(text_of(call("ask", R"({"asks":2})")));
    ASSERT_EQ(two.view().size(), 2U);
    EXPECT_EQ(two.view().at(0).string("action").value_or(""), "accept");
    Json six = parse(text_of(call("ask", R"({"asks":6})")));
    ASSERT_EQ(six.view().size(), 6U);
    EXPECT_EQ(asked, 7);
    EXPECT_TRUE(six.view().at(5).get("error").is_object()) << six.dump();
    EXPECT_EQ(six.view().at(5).get("error").string("message").value_or(""),
              "more than 5 requests in one call");
    // It was told the client can be asked.
    auto log = logged();
    ASSERT_GT(log.size(), 1U);
    EXPECT_TRUE(log[1].view().get("params").get("capabilities").get("elicitation").exists());
}

TEST_F(ClientTest, RootsListIsAnsweredWithTheRoot) {
    ClientOptions o;
    o.root = "file:///work/notes";
    start("refuses-probe", o);
    ASSERT_TRUE(connect());
    Json roots = parse(text_of(call("roots")));
    ASSERT_EQ(roots.view().size(), 1U);
    EXPECT_EQ(roots.view().at(0).get("roots").at(0).string("uri").value_or(""),
              "file:///work/notes");
    auto log = logged();
    ASSERT_GT(log.size(), 1U);
    EXPECT_TRUE(log[1].view().get("params").get("capabilities").get("roots").exists());
}

TEST_F(ClientTest, ATimeoutCancelsTheCallAndFailsItAsUnanswered) {
    start("refuses-probe");
    ASSERT_TRUE(connect());
    m_client->set_timeout(1s); // connected first: a loaded machine starts Python slowly
    auto r = call("never");
    ASSERT_FALSE(r);
    EXPECT_EQ(r.error().exit(), Exit::unavailable);
    EXPECT_EQ(r.error().message(), "MCP server scripted did not answer 'tools/call' within 1 s");
    // The server still answers, and was told the call was abandoned, naming its id.
    EXPECT_EQ(text_of(call("echo", R"({"message":"after"})")), "after");
    // The call, then its cancellation naming its id, then the next call. (On a loaded machine the
    // server may start too slowly for the 2026 probe, which is then cancelled too: the call is
    // found by name.)
    auto log = logged();
    auto at = std::find_if(log.begin(), log.end(), [](const Json& m) {
        return m.view().get("params").string("name").value_or("") == "never";
    });
    ASSERT_EQ(log.end() - at, 3);
    EXPECT_EQ((at + 1)->view().string("method").value_or(""), "notifications/cancelled");
    EXPECT_EQ(canonical_json((at + 1)->view().get("params").get("requestId")),
              canonical_json(at->view().get("id")));
    EXPECT_EQ((at + 2)->view().get("params").string("name").value_or(""), "echo");
    EXPECT_TRUE(m_client->alive());
}

TEST_F(ClientTest, ProgressRestartsTheTimer) {
    start("refuses-probe");
    ASSERT_TRUE(connect());
    m_client->set_timeout(1s);
    // Five notifications 0.4 s apart: two seconds in all, never a second without one.
    EXPECT_EQ(text_of(call("progress", R"({"count":5})")), "done");
}

TEST_F(ClientTest, TimeSpentAskingAPersonIsNotCounted) {
    ClientOptions o;
    o.can_elicit = true;
    ClientEvents e;
    uv_timer_t later;
    uv_timer_init(&m_loop, &later);
    Answer pending;
    later.data = &pending;
    e.elicit = [&](Json, Answer answer) {
        pending = std::move(answer);
        uv_timer_start(&later, [](uv_timer_t* t) { (*static_cast<Answer*>(t->data))(accept(1)); },
                       2500, 0);
    };
    start("modern", o, e);
    ASSERT_TRUE(connect());
    m_client->set_timeout(1s);
    EXPECT_EQ(parse(text_of(call("ask", R"({"asks":1,"rounds":1})"))).view().size(), 1U);
    uv_close(reinterpret_cast<uv_handle_t*>(&later), nullptr);
    finish();
}

TEST_F(ClientTest, AnOverlongMessageFailsTheOpenCallAndTheServerGoesOn) {
    start("refuses-probe");
    ASSERT_TRUE(connect());
    auto r = call("big", R"({"mib":33})");
    ASSERT_FALSE(r);
    EXPECT_EQ(r.error().exit(), Exit::unavailable);
    EXPECT_NE(r.error().message().find("over the 32 MiB limit"), std::string::npos)
        << r.error().message();
    EXPECT_EQ(text_of(call("echo", R"({"message":"still here"})")), "still here");
    // A long one under the limit is a result like any other.
    EXPECT_EQ(text_of(call("big", R"({"mib":2})")).size(), size_t{2} << 20);
}

TEST_F(ClientTest, AServerThatDiesMidCallFailsItAsUnansweredSayingHowItEnded) {
    int ended = 0;
    std::string why;
    ClientEvents e;
    e.ended = [&](const Error& error) {
        ++ended;
        why = error.message();
    };
    start("refuses-probe", {}, e);
    ASSERT_TRUE(connect());
    auto r = call("die");
    ASSERT_FALSE(r);
    EXPECT_EQ(r.error().exit(), Exit::unavailable);
    EXPECT_EQ(r.error().message(), "MCP server scripted ended (its program exited with status 3)");
    EXPECT_EQ(ended, 1);
    EXPECT_EQ(why, r.error().message());
    EXPECT_FALSE(m_client->alive());
    auto again = call("echo", R"({"message":"x"})");
    ASSERT_FALSE(again);
    EXPECT_EQ(again.error().message(), "MCP server scripted is not running");
}

TEST_F(ClientTest, ListAllGathersEveryPage) {
    start("modern");
    ASSERT_TRUE(connect());
    std::optional<Result<Json>> got;
    m_client->list_all("tools/list", "tools", [&](Result<Json> r) { got = std::move(r); });
    run_until(got);
    ASSERT_TRUE(got && *got);
    EXPECT_EQ((*got)->view().size(), 7U);
}

TEST_F(ClientTest, WhatTheServerSaysIsRedactedOfItsSecrets) {
    ClientOptions options;
    int asked = 0;
    options.secrets = [&asked] {
        ++asked;
        return std::vector<std::string>{"sk-0123456789abcdef", "short"};
    };
    start("refuses-probe", std::move(options));
    ASSERT_TRUE(connect());
    EXPECT_EQ(asked, 1);
    EXPECT_EQ(text_of(call("echo",
                           R"({"message":"key sk-0123456789abcdef, KEY SK-0123456789AB, short"})")),
              "key [redacted], KEY [redacted], short");
    auto refused = call("sk-0123456789abcdef");
    ASSERT_FALSE(refused);
    EXPECT_EQ(refused.error().exit(), Exit::data);
    EXPECT_EQ(refused.error().message(),
              "MCP server scripted refused 'tools/call': unknown tool: [redacted] (-32602)");
}

} // namespace
} // namespace sion::mcpd
