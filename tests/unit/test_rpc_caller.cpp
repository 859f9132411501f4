// SPDX-License-Identifier: MIT
// rpc::Caller: calls from several threads over one connection, answered in whatever order the peer
// answers them, the peer's own requests answered one at a time meanwhile, and a peer that goes
// away failing every call, waiting or later, with the same error.
#include "lib/fd.hpp"
#include "lib/rpc/caller.hpp"

#include <gtest/gtest.h>
#include <signal.h>
#include <sys/socket.h>

#include <atomic>
#include <string>
#include <thread>
#include <vector>

namespace sion::rpc {
namespace {

const bool k_sigpipe_ignored = [] {
    ::signal(SIGPIPE, SIG_IGN);
    return true;
}();

// A socketpair: the Caller's Connection on one end, the test's peer on the other.
struct Ends {
    Fd ours;
    Fd theirs;

    Ends() {
        int sv[2];
        EXPECT_EQ(::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv), 0);
        ours = Fd(sv[0]);
        theirs = Fd(sv[1]);
    }
};

// The peer's side, over a Connection of its own.
Message next_request(Connection& peer) {
    for (;;) {
        auto m = peer.read();
        EXPECT_TRUE(m && *m);
        if (!m || !*m)
            return {};
        if ((*m)->kind == Kind::request)
            return std::move(**m);
    }
}

TEST(RpcCaller, ThreeCallsFromThreeThreadsAnsweredInReverse) {
    ASSERT_TRUE(k_sigpipe_ignored);
    Ends ends;
    Connection conn(ends.ours.get(), ends.ours.get());
    std::atomic<int> asked{0};
    Caller caller(conn, [&](const Message& request) {
        ++asked;
        Json r = Json::object();
        r.set("yes", std::string_view(request.method));
        EXPECT_TRUE(conn.reply(request, Reply::ok(std::move(r))));
    });
    std::thread peer([&] {
        Connection p(ends.theirs.get(), ends.theirs.get());
        std::vector<Message> got;
        for (int i = 0; i < 3; ++i)
            got.push_back(next_request(p));
        // Only once all three are in: the calls wait side by side. The peer asks its own first.
        auto up = p.call("ask/person");
        EXPECT_TRUE(up);
        if (up) {
            EXPECT_EQ(up->result.get("yes").as_string().value_or(""), "ask/person");
        }
        for (int i = 2; i >= 0; --i) {
            Json r = Json::object();
            r.set("echo", Json::copy_of(got[static_cast<size_t>(i)].params.get("n")));
            EXPECT_TRUE(p.reply(got[static_cast<size_t>(i)], Reply::ok(std::move(r))));
        }
    });
    std::vector<std::thread> callers;
    std::vector<int64_t> echoed(3, -1);
    for (int i = 0; i < 3; ++i)
        callers.emplace_back([&, i] {
            Json params = Json::object();
            params.set("n", i);
            auto answer = caller.call("work", params);
            ASSERT_TRUE(answer) << answer.error().message();
            echoed[static_cast<size_t>(i)] = answer->result.get("echo").as_int().value_or(-2);
        });
    for (auto& t : callers)
        t.join();
    peer.join();
    EXPECT_EQ(echoed, (std::vector<int64_t>{0, 1, 2}));
    EXPECT_EQ(asked.load(), 1);
    EXPECT_FALSE(caller.failure());
}

TEST(RpcCaller, APeerThatGoesAwayFailsEveryCallWaitingAndLater) {
    ASSERT_TRUE(k_sigpipe_ignored);
    Ends ends;
    Connection conn(ends.ours.get(), ends.ours.get());
    Caller caller(conn);
    std::thread peer([&] {
        Connection p(ends.theirs.get(), ends.theirs.get());
        for (int i = 0; i < 2; ++i)
            (void)next_request(p);
        ends.theirs.reset();
    });
    std::vector<std::string> failed(2);
    std::vector<std::thread> callers;
    for (int i = 0; i < 2; ++i)
        callers.emplace_back([&, i] {
            auto answer = caller.call("work");
            ASSERT_FALSE(answer);
            failed[static_cast<size_t>(i)] = answer.error().message();
        });
    for (auto& t : callers)
        t.join();
    peer.join();
    EXPECT_EQ(failed[0], failed[1]);
    EXPECT_EQ(failed[0], "it closed its output");
    auto later = caller.call("more");
    ASSERT_FALSE(later);
    EXPECT_EQ(later.error().message(), failed[0]);
    EXPECT_EQ(later.error().exit(), Exit::unavailable);
}

TEST(RpcCaller, APeerRequestWithoutAHandlerIsAnsweredMethodNotFound) {
    Ends ends;
    Connection conn(ends.ours.get(), ends.ours.get());
    Caller caller(conn);
    std::thread peer([&] {
        Connection p(ends.theirs.get(), ends.theirs.get());
        Message work = next_request(p);
        auto up = p.call("ask/person");
        ASSERT_TRUE(up);
        EXPECT_EQ(up->kind, Kind::error);
        EXPECT_EQ(up->error_message, "method not found: ask/person");
        EXPECT_TRUE(p.reply(work, Reply::ok(Json::object())));
    });
    auto answer = caller.call("work");
    peer.join();
    ASSERT_TRUE(answer);
    EXPECT_EQ(answer->kind, Kind::response);
}

TEST(RpcCaller, AnAnswerToThePeerMakesNoCallOfItsOwn) {
    Ends ends;
    Connection conn(ends.ours.get(), ends.ours.get());
    std::string refused;
    Caller* self = nullptr;
    Caller caller(conn, [&](const Message& request) {
        auto nested = self->call("more");
        refused = nested ? "answered" : nested.error().message();
        EXPECT_TRUE(conn.reply(request, Reply::ok(Json::object())));
    });
    self = &caller;
    std::thread peer([&] {
        Connection p(ends.theirs.get(), ends.theirs.get());
        Message work = next_request(p);
        EXPECT_TRUE(p.call("ask/person"));
        EXPECT_TRUE(p.reply(work, Reply::ok(Json::object())));
    });
    EXPECT_TRUE(caller.call("work"));
    peer.join();
    EXPECT_EQ(refused, "'more' asked while answering the peer's request");
}

} // namespace
} // namespace sion::rpc
