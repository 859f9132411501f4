// SPDX-License-Identifier: MIT
// lib/oauth_loopback: the listener on 127.0.0.1 (the port asked for, another when it is taken or
// an error when no other may be), the browser's return with its state (strangers answered 400
// and ignored), an address pasted, the time limit, query values, and the PKCE pair.
#include "lib/oauth_loopback.hpp"

#include "lib/base64.hpp"
#include "lib/hash.hpp"
#include "lib/http.hpp"

#include <gtest/gtest.h>

#include <thread>

namespace sion::oauth_loopback {
namespace {

using namespace std::chrono_literals;

int get(const std::string& url) {
    HttpRequest r;
    r.url = url;
    r.timeout = 10s;
    auto sent = http_send(r);
    EXPECT_TRUE(sent) << sent.error().message();
    return sent ? sent->status : 0;
}

TEST(OauthLoopback, APortTakenGivesAnotherOrAnError) {
    auto first = Listener::listen(0, false);
    ASSERT_TRUE(first) << first.error().message();
    EXPECT_GT(first->port(), 0);
    EXPECT_EQ(first->address("/cb"), "http://127.0.0.1:" + std::to_string(first->port()) + "/cb");
    auto other = Listener::listen(first->port(), true);
    ASSERT_TRUE(other) << other.error().message();
    EXPECT_NE(other->port(), first->port());
    auto refused = Listener::listen(first->port(), false);
    ASSERT_FALSE(refused);
    EXPECT_EQ(refused.error().exit(), Exit::unavailable);
    EXPECT_EQ(refused.error().message().rfind(
                  "cannot listen on 127.0.0.1:" + std::to_string(first->port())
                      + " for the browser's return: ",
                  0),
              0U)
        << refused.error().message();
}

TEST(OauthLoopback, TheBrowsersReturnWithItsState) {
    auto listener = Listener::listen(0, false);
    ASSERT_TRUE(listener);
    std::string base = listener->address("");
    std::vector<int> statuses;
    std::thread browser([&] {
        statuses.push_back(get(base + "/elsewhere?state=s%201"));
        statuses.push_back(get(base + "/cb?code=c&state=another"));
        statuses.push_back(get(base + "/cb"));
        statuses.push_back(get(base + "/cb?code=c%2B1&state=s+1"));
    });
    auto back = listener->wait("/cb", "s 1", -1, 20s);
    browser.join();
    ASSERT_TRUE(back) << back.error().message();
    EXPECT_EQ(*back, base + "/cb?code=c%2B1&state=s+1");
    EXPECT_EQ(statuses, (std::vector<int>{400, 400, 400, 200}));
    EXPECT_EQ(query_value(*back, "code"), "c+1");
}

TEST(OauthLoopback, AnAddressPastedOrNothingInTime) {
    auto listener = Listener::listen(0, false);
    ASSERT_TRUE(listener);
    auto pipe = Pipe::make();
    ASSERT_TRUE(pipe);
    ASSERT_TRUE(write_all(pipe->write.get(), "\n  \n http://127.0.0.1:1/cb?code=x&state=s\r\n"));
    auto pasted = listener->wait("/cb", "s", pipe->read.get(), 20s);
    ASSERT_TRUE(pasted) << pasted.error().message();
    EXPECT_EQ(*pasted, "http://127.0.0.1:1/cb?code=x&state=s");
    pipe->write.reset(); // the input ends: only the browser could answer now
    auto none = listener->wait("/cb", "s", pipe->read.get(), 300ms);
    ASSERT_FALSE(none);
    EXPECT_EQ(none.error().exit(), Exit::timeout);
    EXPECT_EQ(none.error().message(), "no answer to the authorization came within 0 seconds");
}

TEST(OauthLoopback, QueryValues) {
    EXPECT_EQ(query_value("http://h/p?a=1&b=x%20y&a=2#b=3", "a"), "1");
    EXPECT_EQ(query_value("http://h/p?a=1&b=x%20y&a=2#b=3", "b"), "x y");
    EXPECT_EQ(query_value("code=1&state=2", "state"), "2");
    EXPECT_EQ(query_value("http://h/p?flag&a=", "flag"), "");
    EXPECT_EQ(query_value("http://h/p", "a"), "");
}

TEST(OauthLoopback, PkceIsS256OfARandomVerifier) {
    auto p = make_pkce();
    auto q = make_pkce();
    ASSERT_TRUE(p && q);
    EXPECT_EQ(p->verifier.size(), 43U);
    EXPECT_EQ(p->state.size(), 32U);
    EXPECT_EQ(p->challenge, base64url_encode(sha256(p->verifier)));
    EXPECT_NE(p->verifier, q->verifier);
    EXPECT_NE(p->state, q->state);
}

} // namespace
} // namespace sion::oauth_loopback
