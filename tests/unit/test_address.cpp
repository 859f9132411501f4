// SPDX-License-Identifier: MIT
// Unit tests of lib/address: every range's edges, mapped and scoped IPv6, junk; hosts resolved
// once (localhost without DNS, a stand-in resolver elsewhere); and the pin: a request whose name
// resolves to 127.0.0.2 goes there, through HttpClient and UvHttp both, curl never looking the
// name up itself, and a request whose name resolves where its rule forbids is never sent; then
// the rules of the two callers, lib/models/wire and mcpd/oauth, over names that resolve inside.
#include "lib/address.hpp"
#include "lib/http.hpp"
#include "lib/http_transfer.hpp"
#include "lib/models/wire.hpp"
#include "lib/uv_http.hpp"
#include "mcpd/oauth_url.hpp"
#include "tests/unit/http_test_server.hpp"

#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>

#include <atomic>
#include <chrono>
#include <optional>
#include <string>
#include <vector>

namespace sion {
namespace {

using namespace std::chrono_literals;

struct Case {
    const char* text;
    AddressKind kind;
};

constexpr AddressKind k_unspecified = AddressKind::unspecified;
constexpr AddressKind k_loopback = AddressKind::loopback;
constexpr AddressKind k_private = AddressKind::private_network;
constexpr AddressKind k_public = AddressKind::public_network;

TEST(Address, EveryRangeAndItsEdges) {
    for (const Case& c : {
             Case{"0.0.0.0", k_unspecified},          Case{"0.0.0.1", k_private},
             Case{"0.255.255.255", k_private},        Case{"1.0.0.0", k_public},
             Case{"9.255.255.255", k_public},         Case{"10.0.0.0", k_private},
             Case{"10.255.255.255", k_private},       Case{"11.0.0.0", k_public},
             Case{"100.63.255.255", k_public},        Case{"100.64.0.0", k_private},
             Case{"100.127.255.255", k_private},      Case{"100.128.0.0", k_public},
             Case{"126.255.255.255", k_public},       Case{"127.0.0.0", k_loopback},
             Case{"127.255.255.255", k_loopback},     Case{"128.0.0.0", k_public},
             Case{"169.253.255.255", k_public},       Case{"169.254.0.0", k_private},
             Case{"169.254.255.255", k_private},      Case{"169.255.0.0", k_public},
             Case{"172.15.255.255", k_public},        Case{"172.16.0.0", k_private},
             Case{"172.31.255.255", k_private},       Case{"172.32.0.0", k_public},
             Case{"191.255.255.255", k_public},       Case{"192.0.0.0", k_private},
             Case{"192.0.0.255", k_private},          Case{"192.0.1.0", k_public},
             Case{"192.167.255.255", k_public},       Case{"192.168.0.0", k_private},
             Case{"192.168.255.255", k_private},      Case{"192.169.0.0", k_public},
             Case{"198.17.255.255", k_public},        Case{"198.18.0.0", k_private},
             Case{"198.19.255.255", k_private},       Case{"198.20.0.0", k_public},
             Case{"223.255.255.255", k_public},       Case{"224.0.0.0", k_private},
             Case{"255.255.255.255", k_private},      Case{"8.8.8.8", k_public},
             Case{"::", k_unspecified},               Case{"::1", k_loopback},
             Case{"::2", k_public},                   Case{"fbff:ffff::", k_public},
             Case{"fc00::", k_private},               Case{"fdff:ffff::1", k_private},
             Case{"fe00::", k_public},                Case{"fe7f:ffff::", k_public},
             Case{"fe80::", k_private},               Case{"febf:ffff::1", k_private},
             Case{"fec0::", k_public},                Case{"ff02::1", k_private},
             Case{"2001:4860:4860::8888", k_public},
         }) {
        auto a = parse_address(c.text);
        ASSERT_TRUE(a) << c.text;
        EXPECT_EQ(a->kind, c.kind) << c.text;
        EXPECT_EQ(a->text, c.text);
        EXPECT_EQ(a->v6, std::string_view(c.text).find(':') != std::string_view::npos);
    }
}

TEST(Address, MappedAndNat64AreJudgedAsTheirIpv4) {
    for (const Case& c : {
             Case{"::ffff:127.0.0.1", k_loopback},
             Case{"::ffff:10.0.0.1", k_private},
             Case{"::ffff:172.16.0.1", k_private},
             Case{"::ffff:169.254.169.254", k_private},
             Case{"::ffff:0.0.0.0", k_unspecified},
             Case{"::ffff:8.8.8.8", k_public},
             Case{"64:ff9b::a00:5", k_private},  // 10.0.0.5
             Case{"64:ff9b::7f00:1", k_loopback}, // 127.0.0.1
             Case{"64:ff9b::808:808", k_public},  // 8.8.8.8
         }) {
        auto a = parse_address(c.text);
        ASSERT_TRUE(a) << c.text;
        EXPECT_EQ(a->kind, c.kind) << c.text;
    }
    // Written otherwise, the same address reads back as inet_ntop writes it.
    EXPECT_EQ(parse_address("0:0:0:0:0:ffff:0a00:0001")->text, "::ffff:10.0.0.1");
}

TEST(Address, AZoneIsDropped) {
    auto a = parse_address("fe80::1%eth0");
    ASSERT_TRUE(a);
    EXPECT_EQ(a->text, "fe80::1");
    EXPECT_EQ(a->kind, k_private);
    EXPECT_EQ(parse_address("::1%1")->kind, k_loopback);
}

TEST(Address, JunkIsNoAddress) {
    for (const char* junk : {"", "1.2.3", "1.2.3.4.5", "256.1.1.1", "1.2.3.4 ", " 1.2.3.4",
                             "1.2.3.4%eth0", "[::1]", "::g", "1::2::3", "localhost", "example.com",
                             "0x7f.1", "%eth0"})
        EXPECT_FALSE(parse_address(junk)) << "'" << junk << "'";
}

TEST(Address, OfASocketAddress) {
    sockaddr_in v4{};
    v4.sin_family = AF_INET;
    ASSERT_EQ(::inet_pton(AF_INET, "192.168.1.1", &v4.sin_addr), 1);
    auto a = address_of(reinterpret_cast<const sockaddr*>(&v4));
    ASSERT_TRUE(a);
    EXPECT_EQ(a->text, "192.168.1.1");
    EXPECT_EQ(a->kind, k_private);
    sockaddr_in6 v6{};
    v6.sin6_family = AF_INET6;
    ASSERT_EQ(::inet_pton(AF_INET6, "::ffff:127.0.0.1", &v6.sin6_addr), 1);
    EXPECT_EQ(address_of(reinterpret_cast<const sockaddr*>(&v6))->kind, k_loopback);
    sockaddr other{};
    other.sa_family = AF_UNIX;
    EXPECT_FALSE(address_of(&other));
}

// A stand-in for DNS that answers `answers` in turn (the last one again and again) and counts.
struct FakeDns {
    std::vector<std::vector<std::string>> answers;
    std::atomic<int> asked{0};

    Resolver resolver() {
        return [this](const std::string&) -> Result<std::vector<std::string>> {
            size_t i = static_cast<size_t>(asked++);
            return answers[std::min(i, answers.size() - 1)];
        };
    }
};

TEST(Resolve, LocalhostAndAddressesWithoutAsking) {
    FakeDns dns{{{"10.0.0.5"}}};
    for (const char* host : {"localhost", "api.localhost"}) {
        auto found = resolve_host(host, 1s, dns.resolver());
        ASSERT_TRUE(found) << found.error().message();
        ASSERT_EQ(found->size(), 2u);
        EXPECT_EQ((*found)[0].text, "127.0.0.1");
        EXPECT_EQ((*found)[1].text, "::1");
        for (const Address& a : *found)
            EXPECT_EQ(a.kind, k_loopback);
    }
    auto literal = resolve_host("fd00::1", 1s, dns.resolver());
    ASSERT_TRUE(literal);
    ASSERT_EQ(literal->size(), 1u);
    EXPECT_EQ((*literal)[0].kind, k_private);
    EXPECT_EQ(dns.asked, 0);
}

TEST(Resolve, NamesAskTheResolverOnceAndKeepEachAddressOnce) {
    FakeDns dns{{{"10.0.0.5", "8.8.8.8", "10.0.0.5", "::ffff:8.8.8.8"}}};
    auto found = resolve_host("api.example.test", 1s, dns.resolver());
    ASSERT_TRUE(found) << found.error().message();
    ASSERT_EQ(found->size(), 3u);
    EXPECT_EQ((*found)[0].kind, k_private);
    EXPECT_EQ((*found)[1].kind, k_public);
    EXPECT_EQ((*found)[2].text, "::ffff:8.8.8.8");
    EXPECT_EQ(dns.asked, 1);
}

TEST(Resolve, FailuresSayWhichName) {
    Resolver failing = [](const std::string&) -> Result<std::vector<std::string>> {
        return make_error(Exit::unavailable, "Name or service not known");
    };
    auto r = resolve_host("nowhere.test", 1s, failing);
    ASSERT_FALSE(r);
    EXPECT_EQ(r.error().exit(), Exit::unavailable);
    EXPECT_EQ(r.error().message(), "cannot resolve 'nowhere.test': Name or service not known");

    Resolver junk = [](const std::string&) -> Result<std::vector<std::string>> {
        return std::vector<std::string>{"not-an-address"};
    };
    r = resolve_host("junk.test", 1s, junk);
    ASSERT_FALSE(r);
    EXPECT_EQ(r.error().exit(), Exit::software);

    Resolver empty = [](const std::string&) -> Result<std::vector<std::string>> {
        return std::vector<std::string>{};
    };
    r = resolve_host("empty.test", 1s, empty);
    ASSERT_FALSE(r);
    EXPECT_EQ(r.error().message(), "cannot resolve 'empty.test': it has no address");
}

// getaddrinfo itself, given no time at all: whatever it would answer, the caller does not wait
// for it, and a name under .invalid never resolves.
TEST(Resolve, TheSystemLookupIsBounded) {
    auto r = resolve_host("sion-test.invalid", 0ms);
    ASSERT_FALSE(r);
    EXPECT_EQ(r.error().exit(), Exit::unavailable);
    EXPECT_EQ(r.error().message().rfind("cannot resolve 'sion-test.invalid': ", 0), 0u)
        << r.error().message();
}

TEST(Destination, SplitAsCurlReadsIt) {
    auto d = split_url("https://user:pw@API.example.test/v1?key=x");
    ASSERT_TRUE(d) << d.error().message();
    EXPECT_EQ(d->url, "https://API.example.test/v1");
    EXPECT_EQ(d->scheme, "https");
    EXPECT_EQ(d->port, 443);
    EXPECT_TRUE(d->named);
    d = split_url("http://[fd00::1]:8080/");
    ASSERT_TRUE(d);
    EXPECT_EQ(d->host, "fd00::1");
    EXPECT_EQ(d->port, 8080);
    EXPECT_FALSE(d->named);
    EXPECT_EQ(split_url("http://x.test")->port, 80);
    for (const char* bad : {"ftp://x.test/", "x.test", "http://", "https://[::1/"}) {
        auto r = split_url(bad);
        ASSERT_FALSE(r) << bad;
        EXPECT_EQ(r.error().exit(), Exit::data) << bad;
    }
    EXPECT_EQ(split_url("file:///etc/passwd").error().message(),
              "bad URL 'file:///etc/passwd': not an http or https URL with a host");
    // Other schemes when asked for, each with its own port.
    constexpr std::string_view mail[] = {"imap", "imaps", "smtp", "smtps"};
    EXPECT_EQ(split_url("imaps://Mail.example.test", mail)->port, 993);
    EXPECT_EQ(split_url("imap://mail.example.test/INBOX", mail)->port, 143);
    EXPECT_EQ(split_url("smtps://mail.example.test", mail)->port, 465);
    EXPECT_EQ(split_url("smtp://mail.example.test:587", mail)->port, 587);
    EXPECT_EQ(split_url("imaps://mail.example.test", mail)->host, "mail.example.test");
    EXPECT_EQ(split_url("https://mail.example.test/", mail).error().message(),
              "bad URL 'https://mail.example.test/': not an imap, imaps, smtp or smtps URL with "
              "a host");
}

TEST(Destination, PinsNamesOnly) {
    FakeDns dns{{{"10.0.0.5", "fd00::1"}}};
    auto d = resolve_url("https://x.test/v1", 1s, dns.resolver());
    ASSERT_TRUE(d) << d.error().message();
    EXPECT_EQ(d->pin(), "x.test:443:10.0.0.5,[fd00::1]");
    d = resolve_url("http://10.0.0.5:8080/v1", 1s, dns.resolver());
    ASSERT_TRUE(d);
    EXPECT_EQ(d->pin(), "");
    EXPECT_EQ(dns.asked, 1);
    auto failed = resolve_url("https://y.test/v1?k=secret", 1s, [](const std::string&) {
        return Result<std::vector<std::string>>(make_error(Exit::unavailable, "no such name"));
    });
    ASSERT_FALSE(failed);
    EXPECT_EQ(failed.error().message(),
              "cannot reach 'https://y.test/v1': cannot resolve 'y.test': no such name");
}

// A server on 127.0.0.2, which no name resolves to here: it answers each request "ok" and notes
// which local address the connection came to and the Host it named.
class PinnedServer {
public:
    [[nodiscard]] int port() const { return m_server.port(); }

    [[nodiscard]] std::string url(const std::string& host) const {
        return "http://" + host + ":" + std::to_string(port()) + "/v1";
    }

    // Connections taken so far.
    [[nodiscard]] int connections() const { return m_server.accepted(); }

    // What the last request said.
    std::string local_address;
    std::string head;

private:
    void note(const test::Received& request, int fd) {
        sockaddr_storage local{};
        socklen_t len = sizeof local;
        ::getsockname(fd, reinterpret_cast<sockaddr*>(&local), &len);
        local_address = address_of(reinterpret_cast<sockaddr*>(&local))->text;
        head = request.head;
        test::TestServer::send_text(fd, test::respond(200, "OK", "", "ok"));
    }

    test::TestServer m_server{[this](const test::Received& r, int fd,
                                     const test::TestServer&) { note(r, fd); },
                              "127.0.0.2"};
};

HttpRequest pinned_request(const PinnedServer& server, FakeDns& dns,
                           std::optional<Destination>* seen) {
    HttpRequest request;
    request.url = server.url("rebind.test");
    request.timeout = 10s;
    request.resolver = dns.resolver();
    request.reach = [seen](const Destination& where) -> Status {
        if (seen != nullptr)
            *seen = where;
        for (const Address& a : where.addresses)
            if (a.kind == AddressKind::private_network)
                return make_error(Exit::config, "refusing '%s': %s is a private address",
                                  where.url.c_str(), a.text.c_str());
        return {};
    };
    return request;
}

// The name resolves once, to 127.0.0.2; a second answer (a private address: a rebinding) is
// never asked for, and curl connects where the first pointed although it cannot resolve the name.
TEST(Pin, HttpClientConnectsOnlyToTheCheckedAddress) {
    PinnedServer server;
    FakeDns dns{{{"127.0.0.2"}, {"10.0.0.5"}}};
    std::optional<Destination> seen;
    auto response = http_send(pinned_request(server, dns, &seen));
    ASSERT_TRUE(response) << response.error().message();
    EXPECT_EQ(response->status, 200);
    EXPECT_EQ(response->body, "ok");
    EXPECT_EQ(dns.asked, 1);
    EXPECT_EQ(server.connections(), 1);
    EXPECT_EQ(server.local_address, "127.0.0.2");
    EXPECT_NE(server.head.find("Host: rebind.test:" + std::to_string(server.port())),
              std::string::npos)
        << server.head;
    ASSERT_TRUE(seen);
    EXPECT_EQ(seen->pin(), "rebind.test:" + std::to_string(server.port()) + ":127.0.0.2");
}

TEST(Pin, ARefusedAddressSendsNothing) {
    PinnedServer server;
    FakeDns dns{{{"127.0.0.2", "10.0.0.5"}}};
    auto response = http_send(pinned_request(server, dns, nullptr));
    ASSERT_FALSE(response);
    EXPECT_EQ(response.error().exit(), Exit::config);
    EXPECT_EQ(response.error().message(),
              "refusing '" + server.url("rebind.test") + "': 10.0.0.5 is a private address");
    EXPECT_EQ(server.connections(), 0);
}

TEST(Pin, NoReachThroughAProxy) {
    PinnedServer server;
    FakeDns dns{{{"127.0.0.2"}}};
    HttpRequest request = pinned_request(server, dns, nullptr);
    request.proxy = "http://127.0.0.1:9";
    auto response = http_send(request);
    ASSERT_FALSE(response);
    EXPECT_EQ(response.error().exit(), Exit::software);
    EXPECT_EQ(dns.asked, 0);
}

sockaddr_in v4_of(const char* text) {
    sockaddr_in sa{};
    sa.sin_family = AF_INET;
    EXPECT_EQ(::inet_pton(AF_INET, text, &sa.sin_addr), 1);
    return sa;
}

// Should curl ever connect elsewhere than the pin says, its socket is refused.
TEST(Pin, NoSocketToAnAddressNotChecked) {
    PinnedServer server;
    FakeDns dns{{{"127.0.0.2"}}};
    HttpRequest request = pinned_request(server, dns, nullptr);
    auto easy = CurlEasy::make();
    ASSERT_TRUE(easy) << easy.error().message();
    HttpTransfer checked(request);
    ASSERT_TRUE(checked.configure(easy->get()));
    sockaddr_in pinned = v4_of("127.0.0.2");
    sockaddr_in other = v4_of("127.0.0.3");
    EXPECT_TRUE(checked.may_connect(reinterpret_cast<const sockaddr*>(&pinned)));
    EXPECT_FALSE(checked.may_connect(reinterpret_cast<const sockaddr*>(&other)));

    HttpRequest plain;
    plain.url = server.url("127.0.0.2");
    HttpTransfer unchecked(plain);
    EXPECT_TRUE(unchecked.may_connect(reinterpret_cast<const sockaddr*>(&other)));
}

TEST(Pin, UvHttpConnectsOnlyToTheCheckedAddress) {
    PinnedServer server;
    FakeDns dns{{{"127.0.0.2"}, {"10.0.0.5"}}};
    uv_loop_t loop{};
    ASSERT_EQ(uv_loop_init(&loop), 0);
    {
        auto made = UvHttp::make(&loop);
        ASSERT_TRUE(made) << made.error().message();
        std::unique_ptr<UvHttp> http = std::move(*made);
        std::optional<Result<HttpResponse>> outcome;
        http->start(pinned_request(server, dns, nullptr), [&](Result<HttpResponse> r) {
            outcome.emplace(std::move(r));
            http->close();
        });
        uv_run(&loop, UV_RUN_DEFAULT);
        ASSERT_TRUE(outcome);
        ASSERT_TRUE(*outcome) << outcome->error().message();
        EXPECT_EQ((*outcome)->body, "ok");
    }
    EXPECT_EQ(uv_run(&loop, UV_RUN_DEFAULT), 0);
    EXPECT_EQ(uv_loop_close(&loop), 0);
    EXPECT_EQ(dns.asked, 1);
    EXPECT_EQ(server.connections(), 1);
    EXPECT_EQ(server.local_address, "127.0.0.2");
}

// --- the callers' rules ------------------------------------------------------------------------

TEST(WireReach, ANameIsJudgedByWhereItResolves) {
    using models::Reach;
    FakeDns lan{{{"10.0.0.5"}}};
    Status s = models::check_reach("https://api.example.test/v1?key=x", Reach::remote,
                                   lan.resolver());
    ASSERT_FALSE(s);
    EXPECT_EQ(s.error().exit(), Exit::config);
    EXPECT_EQ(s.error().message(), "refusing 'https://api.example.test/v1': 10.0.0.5 is a private "
                                   "address, which only local: reaches");
    EXPECT_TRUE(models::check_reach("http://ollama.example.test/v1", Reach::network,
                                    lan.resolver()));
    FakeDns internet{{{"8.8.8.8"}}};
    s = models::check_reach("http://api.example.test/v1", Reach::remote, internet.resolver());
    ASSERT_FALSE(s);
    EXPECT_EQ(s.error().message(),
              "refusing 'http://api.example.test/v1': plain http goes only to this machine: use "
              "https");
    s = models::check_reach("http://0.0.0.0:8080/v1", Reach::network);
    ASSERT_FALSE(s);
    EXPECT_EQ(s.error().exit(), Exit::config);
    EXPECT_EQ(s.error().message(), "refusing 'http://0.0.0.0:8080/v1': 0.0.0.0 is no server's "
                                   "address");
    s = models::check_reach("http://[::]:8080/v1", Reach::remote);
    ASSERT_FALSE(s);
    EXPECT_EQ(s.error().message(), "refusing 'http://[::]:8080/v1': :: is a private address, "
                                   "which only local: reaches");
}

TEST(WireReach, SendGoesOnlyWhereTheNameFirstResolved) {
    PinnedServer server;
    FakeDns dns{{{"127.0.0.2"}, {"10.0.0.5"}}};
    models::Wire wire(models::Reach::remote);
    wire.resolve_with(dns.resolver());
    models::WireRequest request;
    request.url = server.url("rebind.test");
    auto reply = wire.send(request);
    ASSERT_TRUE(reply) << reply.error().message();
    EXPECT_EQ(reply->body, "ok");
    EXPECT_EQ(dns.asked, 1);
    EXPECT_EQ(server.connections(), 1);
    EXPECT_EQ(server.local_address, "127.0.0.2");
}

TEST(WireReach, SendRefusesANameThatResolvesToAPrivateAddress) {
    PinnedServer server;
    FakeDns dns{{{"10.0.0.5"}}};
    models::Wire wire(models::Reach::remote);
    wire.resolve_with(dns.resolver());
    models::WireRequest request;
    request.url = server.url("rebind.test");
    auto reply = wire.send(request);
    ASSERT_FALSE(reply);
    EXPECT_EQ(reply.error().exit(), Exit::config);
    EXPECT_EQ(reply.error().message(), "refusing '" + server.url("rebind.test")
                                           + "': 10.0.0.5 is a private address, which only "
                                             "local: reaches");
    EXPECT_EQ(server.connections(), 0);
}

Destination at(const std::string& url, std::vector<std::string> addresses) {
    Destination d = *split_url(url);
    for (const std::string& a : addresses)
        d.addresses.push_back(*parse_address(a));
    return d;
}

Status oauth_rule(const char* server, const char* target, std::vector<std::string> addresses) {
    auto rule = mcpd::oauth::reach_rule(*mcpd::oauth::parse_url(server),
                                        *mcpd::oauth::parse_url(target), "token endpoint");
    return rule(at(target, std::move(addresses)));
}

TEST(OauthReach, ANameIsJudgedByWhereItResolves) {
    // 203.0.113.7 is a public address (TEST-NET-3): no lookup of the server's name.
    const char* public_server = "https://203.0.113.7/mcp";
    EXPECT_TRUE(oauth_rule(public_server, "https://auth.example.test/token", {"8.8.8.8"}));
    Status s = oauth_rule(public_server, "https://auth.example.test/token?x=1",
                          {"8.8.8.8", "10.0.0.5"});
    ASSERT_FALSE(s);
    EXPECT_EQ(s.error().exit(), Exit::no_perm);
    EXPECT_EQ(s.error().message(), "refusing token endpoint at 'https://auth.example.test/token': "
                                   "it is at a private address and the MCP server is not");
    s = oauth_rule(public_server, "https://auth.example.test/token", {"::ffff:127.0.0.1"});
    ASSERT_FALSE(s);
    EXPECT_EQ(s.error().message(), "refusing token endpoint at 'https://auth.example.test/token': "
                                   "it is on this machine and the MCP server is not");
    const char* here = "http://127.0.0.1:8812/mcp";
    EXPECT_TRUE(oauth_rule(here, "http://auth.test:9000/token", {"127.0.0.1"}));
    EXPECT_TRUE(oauth_rule("http://localhost:8812/mcp", "http://auth.test:9000/token", {"::1"}));
    s = oauth_rule(here, "http://auth.test:9000/token", {"127.0.0.1", "192.168.1.1"});
    ASSERT_FALSE(s);
    EXPECT_EQ(s.error().message(),
              "refusing token endpoint at 'http://auth.test:9000/token': plain HTTP is used only "
              "when the MCP server and it are both on this machine");
    s = oauth_rule(here, "https://auth.test/token", {"0.0.0.0"});
    ASSERT_FALSE(s);
    EXPECT_EQ(s.error().message(),
              "refusing token endpoint at 'https://auth.test/token': 0.0.0.0 is no server's address");
    // As written, 0.0.0.0 is refused even beside a server on this machine.
    s = mcpd::oauth::check_reach(*mcpd::oauth::parse_url(here),
                                 *mcpd::oauth::parse_url("http://0.0.0.0:9000/token"), "x");
    ASSERT_FALSE(s);
    EXPECT_EQ(s.error().exit(), Exit::no_perm);
}

} // namespace
} // namespace sion
