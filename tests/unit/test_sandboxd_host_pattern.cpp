// SPDX-License-Identifier: MIT
// The declared network without sockets: host patterns (good and bad ones, each bad one named in
// its message), the check against them (case, trailing dot, ports, wildcards, addresses never
// allowed by a name), and proxy request heads (CONNECT, absolute-form rewritten for the origin,
// everything else refused with a reason).
#include "sandboxd/host_pattern.hpp"
#include "sandboxd/netproxy.hpp"
#include "sandboxd/netproxy_request.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

namespace sion::sandboxd {
namespace {

std::vector<HostRule> rules(const std::vector<std::string>& patterns) {
    auto r = parse_host_rules(patterns);
    EXPECT_TRUE(r) << r.error().message();
    return r ? *r : std::vector<HostRule>{};
}

TEST(HostRule, ParsesNamesPortsWildcardsAndAddresses) {
    struct Case {
        const char* pattern;
        const char* host;
        bool subdomains;
        int port;
    };

    for (const Case& c : std::vector<Case>{
             {"api.github.com", "api.github.com", false, 0},
             {"API.GitHub.com.", "api.github.com", false, 0},
             {"api.github.com:8443", "api.github.com", false, 8443},
             {"*.example.org", "example.org", true, 0},
             {"*.example.org:8080", "example.org", true, 8080},
             {"localhost", "localhost", false, 0},
             {"127.0.0.1:8080", "127.0.0.1", false, 8080},
             {"[::1]:8080", "::1", false, 8080},
             {"[0:0::1]", "::1", false, 0},
             {"::1", "::1", false, 0},
             {"my_host.internal", "my_host.internal", false, 0},
         }) {
        auto r = parse_host_rule(c.pattern);
        ASSERT_TRUE(r) << c.pattern << ": " << r.error().message();
        EXPECT_EQ(r->host, c.host) << c.pattern;
        EXPECT_EQ(r->subdomains, c.subdomains) << c.pattern;
        EXPECT_EQ(r->port, c.port) << c.pattern;
    }
}

TEST(HostRule, RefusesBadPatternsNamingThem) {
    struct Case {
        std::string pattern;
        const char* message;
    };

    for (const Case& c : std::vector<Case>{
             {"", "invalid host pattern '': empty host"},
             {"*", "invalid host pattern '*': '*' is not allowed in a host name"},
             {"*.", "invalid host pattern '*.': empty host"},
             {"a..b", "invalid host pattern 'a..b': empty label"},
             {"a b", "invalid host pattern 'a b': ' ' is not allowed in a host name"},
             {"*.*.example.org",
              "invalid host pattern '*.*.example.org': '*' is not allowed in a host name"},
             {"a*.example.org",
              "invalid host pattern 'a*.example.org': '*' is not allowed in a host name"},
             {"host:0", "invalid host pattern 'host:0': a port is a number from 1 to 65535"},
             {"host:65536",
              "invalid host pattern 'host:65536': a port is a number from 1 to 65535"},
             {"host:", "invalid host pattern 'host:': a port is a number from 1 to 65535"},
             {"host:http", "invalid host pattern 'host:http': a port is a number from 1 to 65535"},
             {"[::1", "invalid host pattern '[::1': '[' without ']'"},
             {"[::1]x", "invalid host pattern '[::1]x': only ':PORT' may follow ']'"},
             {"*.10.0.0.1",
              "invalid host pattern '*.10.0.0.1': '*.' goes before a name, not an address"},
             {"127.1", "invalid host pattern '127.1': the last label does not start with a letter"},
             {"2130706433",
              "invalid host pattern '2130706433': the last label does not start with a letter"},
             {"0x7f000001",
              "invalid host pattern '0x7f000001': the last label does not start with a letter"},
             {"fe80::1%eth0", "invalid host pattern 'fe80::1%eth0': not an IPv6 address"},
             {std::string(64, 'a') + ".org", "label longer than 63 bytes"},
             {std::string(250, 'a') + ".org", "name longer than 253 bytes"},
         }) {
        auto r = parse_host_rule(c.pattern);
        ASSERT_FALSE(r) << c.pattern;
        EXPECT_EQ(r.error().exit(), Exit::usage);
        EXPECT_NE(r.error().message().find(c.message), std::string::npos)
            << c.pattern << " -> " << r.error().message();
    }
    auto all = parse_host_rules({"api.github.com", "a..b"});
    ASSERT_FALSE(all);
    EXPECT_EQ(all.error().message(), "invalid host pattern 'a..b': empty label");
}

TEST(HostAllowed, ComparesNamesWithoutCaseOrTrailingDot) {
    auto r = rules({"api.github.com"});
    EXPECT_TRUE(host_allowed(r, "api.github.com", 443));
    EXPECT_TRUE(host_allowed(r, "API.GITHUB.COM.", 80));
    EXPECT_FALSE(host_allowed(r, "github.com", 443));
    EXPECT_FALSE(host_allowed(r, "xapi.github.com", 443));
    EXPECT_FALSE(host_allowed(r, "a.api.github.com", 443));
    EXPECT_FALSE(host_allowed(r, "api.github.com..", 443));
    EXPECT_FALSE(host_allowed({}, "api.github.com", 443));
}

TEST(HostAllowed, WithoutAPortOnly80And443) {
    auto r = rules({"example.com", "other.com:8443"});
    EXPECT_TRUE(host_allowed(r, "example.com", 80));
    EXPECT_TRUE(host_allowed(r, "example.com", 443));
    EXPECT_FALSE(host_allowed(r, "example.com", 8080));
    EXPECT_FALSE(host_allowed(r, "example.com", 22));
    EXPECT_TRUE(host_allowed(r, "other.com", 8443));
    EXPECT_FALSE(host_allowed(r, "other.com", 443));
    EXPECT_FALSE(host_allowed(r, "other.com", 80));
}

TEST(HostAllowed, WildcardIsAnySubdomainNotTheApex) {
    auto r = rules({"*.example.org"});
    EXPECT_TRUE(host_allowed(r, "a.example.org", 443));
    EXPECT_TRUE(host_allowed(r, "a.b.example.org", 443));
    EXPECT_TRUE(host_allowed(r, "A.Example.Org.", 80));
    EXPECT_FALSE(host_allowed(r, "example.org", 443));
    EXPECT_FALSE(host_allowed(r, "badexample.org", 443));
    EXPECT_FALSE(host_allowed(r, "a.badexample.org", 443));
    EXPECT_FALSE(host_allowed(r, "example.org.evil.com", 443));
    EXPECT_FALSE(host_allowed(r, ".example.org", 443));
    EXPECT_FALSE(host_allowed(r, "a.example.org", 8443));
}

TEST(HostAllowed, AddressesOnlyWhenDeclaredAsSuch) {
    auto by_name = rules({"localhost:8080"});
    EXPECT_TRUE(host_allowed(by_name, "localhost", 8080));
    EXPECT_FALSE(host_allowed(by_name, "127.0.0.1", 8080));
    EXPECT_FALSE(host_allowed(by_name, "::1", 8080));
    auto by_address = rules({"127.0.0.1:8080", "[::1]:8080"});
    EXPECT_TRUE(host_allowed(by_address, "127.0.0.1", 8080));
    EXPECT_TRUE(host_allowed(by_address, "0:0:0::1", 8080));
    EXPECT_FALSE(host_allowed(by_address, "localhost", 8080));
    // Spellings a resolver reads as 127.0.0.1 are no host at all.
    for (const char* disguised : {"127.1", "2130706433", "0x7f000001", "0177.0.0.1", "127.0.0.01"})
        EXPECT_FALSE(host_allowed(by_address, disguised, 8080)) << disguised;
}

TEST(HostPort, BracketsIpv6) {
    EXPECT_EQ(host_port("example.org", 443), "example.org:443");
    EXPECT_EQ(host_port("::1", 80), "[::1]:80");
}

TEST(ProxyEnvironment, PointsEveryProxyVariableAtTheForwarder) {
    auto env = proxy_environment(3128);
    for (const char* name :
         {"HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "http_proxy", "https_proxy", "all_proxy"}) {
        auto it =
            std::find_if(env.begin(), env.end(), [&](const auto& kv) { return kv.first == name; });
        ASSERT_NE(it, env.end()) << name;
        EXPECT_EQ(it->second, "http://127.0.0.1:3128");
    }
    auto no =
        std::find_if(env.begin(), env.end(), [](const auto& kv) { return kv.first == "NO_PROXY"; });
    ASSERT_NE(no, env.end());
    EXPECT_EQ(no->second, "localhost,127.0.0.1,::1");
    EXPECT_EQ(proxy_environment(3128, false).size(), 7u);
    auto node = std::find_if(env.begin(), env.end(),
                             [](const auto& kv) { return kv.first == "NODE_USE_ENV_PROXY"; });
    ASSERT_NE(node, env.end());
    EXPECT_EQ(node->second, "1");
}

TEST(FindHeadEnd, CrlfOrLfAndNotBefore) {
    EXPECT_EQ(find_head_end("GET / HTTP/1.1\r\nA: b\r\n\r\nbody"), 24u);
    EXPECT_EQ(find_head_end("GET / HTTP/1.1\nA: b\n\nbody"), 21u);
    EXPECT_EQ(find_head_end("GET / HTTP/1.1\r\nA: b\r\n"), std::string::npos);
    EXPECT_EQ(find_head_end("GET / HTTP/1.1\r\nA: b\r\n\r"), std::string::npos);
    std::string head = "CONNECT a:1 HTTP/1.1\r\n\r\n";
    EXPECT_EQ(find_head_end(head, head.size() - 3), head.size());
}

TEST(ProxyRequest, Connect) {
    auto r = parse_proxy_request(
        "CONNECT API.GitHub.com.:443 HTTP/1.1\r\nHost: api.github.com:443\r\n\r\n");
    ASSERT_TRUE(r) << r.error().message();
    EXPECT_TRUE(r->tunnel);
    EXPECT_EQ(r->host, "api.github.com");
    EXPECT_EQ(r->port, 443);
    EXPECT_TRUE(r->upstream_head.empty());
    auto v6 = parse_proxy_request("CONNECT [::1]:8443 HTTP/1.1\r\n\r\n");
    ASSERT_TRUE(v6) << v6.error().message();
    EXPECT_EQ(v6->host, "::1");
    EXPECT_EQ(v6->port, 8443);
}

TEST(ProxyRequest, AbsoluteFormIsRewrittenForTheOrigin) {
    auto r = parse_proxy_request("GET http://Example.ORG:8080/a/b?q=1 HTTP/1.1\r\n"
                                 "Host: elsewhere.com\r\n"
                                 "User-Agent: test\r\n"
                                 "Proxy-Connection: keep-alive\r\n"
                                 "Proxy-Authorization: Basic eDp5\r\n"
                                 "Connection: keep-alive, X-Hop\r\n"
                                 "Keep-Alive: timeout=5\r\n"
                                 "X-Hop: 1\r\n"
                                 "Accept:  */* \r\n\r\n");
    ASSERT_TRUE(r) << r.error().message();
    EXPECT_FALSE(r->tunnel);
    EXPECT_EQ(r->host, "example.org");
    EXPECT_EQ(r->port, 8080);
    EXPECT_EQ(r->upstream_head, "GET /a/b?q=1 HTTP/1.1\r\n"
                                "Host: example.org:8080\r\n"
                                "User-Agent: test\r\n"
                                "Accept: */*\r\n"
                                "Connection: close\r\n\r\n");
}

TEST(ProxyRequest, AbsoluteFormDefaultsAndUpgrade) {
    auto r = parse_proxy_request("POST http://example.org?x HTTP/1.0\n\n");
    ASSERT_TRUE(r) << r.error().message();
    EXPECT_EQ(r->port, 80);
    EXPECT_EQ(r->upstream_head,
              "POST /?x HTTP/1.0\r\nHost: example.org\r\nConnection: close\r\n\r\n");
    auto ws = parse_proxy_request(
        "GET http://[::1]/ws HTTP/1.1\r\nConnection: Upgrade\r\nUpgrade: websocket\r\n\r\n");
    ASSERT_TRUE(ws) << ws.error().message();
    EXPECT_EQ(
        ws->upstream_head,
        "GET /ws HTTP/1.1\r\nHost: [::1]\r\nUpgrade: websocket\r\nConnection: upgrade\r\n\r\n");
}

TEST(ProxyRequest, RefusesWhatIsNotAProxyRequest) {
    struct Case {
        const char* head;
        const char* message;
    };

    for (const Case& c : std::vector<Case>{
             {"\r\n\r\n", "an empty request"},
             {"HELLO\r\n\r\n", "the request line is not METHOD TARGET VERSION"},
             {"GET  http://a.org/ HTTP/1.1\r\n\r\n",
              "the request line is not METHOD TARGET VERSION"},
             {"GET http://a.org/ HTTP/2\r\n\r\n", "the version is not HTTP/1.1 or HTTP/1.0"},
             {"GET /index.html HTTP/1.1\r\nHost: a.org\r\n\r\n", "not a proxy request"},
             {"GET https://a.org/ HTTP/1.1\r\n\r\n", "https goes through CONNECT"},
             {"GET ftp://a.org/ HTTP/1.1\r\n\r\n", "the target is not http://HOST[:PORT]/PATH"},
             {"GET http://a.org@b.org/ HTTP/1.1\r\n\r\n", "a user name in the target"},
             {"GET http://a.org/#x HTTP/1.1\r\n\r\n", "a fragment in the target"},
             {"GET http://a.org:99999/ HTTP/1.1\r\n\r\n", "a bad port"},
             {"GET http://127.1/ HTTP/1.1\r\n\r\n",
              "bad host '127.1': the last label does not start"},
             {"CONNECT a.org HTTP/1.1\r\n\r\n", "CONNECT needs HOST:PORT"},
             {"CONNECT a.org: HTTP/1.1\r\n\r\n", "CONNECT needs HOST:PORT"},
             {"CONNECT a.org:0 HTTP/1.1\r\n\r\n", "a bad port"},
             {"CONNECT :443 HTTP/1.1\r\n\r\n", "bad host '': empty host"},
             {"CONNECT a.org:443 HTTP/1.1\r\n folded\r\n\r\n", "a folded header line"},
             {"CONNECT a.org:443 HTTP/1.1\r\nHost : a.org\r\n\r\n",
              "a header line that is not NAME: VALUE"},
             {"CONNECT a.org:443 HTTP/1.1\r\nNoColon\r\n\r\n",
              "a header line that is not NAME: VALUE"},
             {"CONNECT a.org:443 HTTP/1.1\rX: y\r\n\r\n", "a control byte inside a line"},
         }) {
        auto r = parse_proxy_request(c.head);
        ASSERT_FALSE(r) << c.head;
        EXPECT_EQ(r.error().exit(), Exit::data);
        EXPECT_NE(r.error().message().find(c.message), std::string::npos)
            << c.head << " -> " << r.error().message();
    }
}

TEST(ProxyRequest, ErrorResponseHasOneLineBody) {
    std::string r = http_error_response(403, "host 'x.org:443' is not declared");
    EXPECT_EQ(r,
              "HTTP/1.1 403 Forbidden\r\nContent-Type: text/plain; charset=utf-8\r\n"
              "Content-Length: 33\r\nConnection: close\r\n\r\nhost 'x.org:443' is not declared\n");
}

// A grant's path: itself and what is under it, never what a server could make of another.
TEST(Grant, PathIsItselfAndWhatIsUnderIt) {
    for (std::string_view target : {"/v1", "/v1/things", "/v1?q=1", "/v1/a/b?c=/d"})
        EXPECT_TRUE(on_grant_path(target, "/v1")) << target;
    EXPECT_TRUE(on_grant_path("/v1/x", "/v1/"));
    EXPECT_TRUE(on_grant_path("/anything", "/"));
    for (std::string_view target :
         {"/v1x", "/v2/things", "/", "", "v1", "/v1/../admin", "/v1/./x", "/v1/%2e%2e/admin",
          "/v1/%2E%2E/admin", "/v1%2fadmin", "/v1/..%5cadmin", "/v1\\..\\admin", "/v1/.."})
        EXPECT_FALSE(on_grant_path(target, "/v1")) << target;
    EXPECT_FALSE(on_grant_path("/../x", "/"));
}

TEST(Grant, HeadGetsTheCredentialOnItsPathAndClosesAfter) {
    Grant g{"api.example.test", 443, "/v1", "Authorization", "Bearer the-secret"};
    EXPECT_EQ(granted_head("GET /v1/things HTTP/1.1\r\nHost: api.example.test\r\n"
                           "authorization: Bearer forged\r\nConnection: keep-alive, X-Hop\r\n"
                           "X-Hop: 1\r\nKeep-Alive: 5\r\nAccept: */*\r\n\r\n",
                           g),
              "GET /v1/things HTTP/1.1\r\nHost: api.example.test\r\nAccept: */*\r\n"
              "Authorization: Bearer the-secret\r\nConnection: close\r\n\r\n");
    // Off its path: no credential, and the client's own goes on as it is.
    EXPECT_EQ(granted_head("POST /v2 HTTP/1.1\r\nHost: api.example.test\r\n"
                           "Authorization: Bearer mine\r\nContent-Length: 0\r\n\r\n",
                           g),
              "POST /v2 HTTP/1.1\r\nHost: api.example.test\r\nAuthorization: Bearer mine\r\n"
              "Content-Length: 0\r\nConnection: close\r\n\r\n");
    EXPECT_EQ(granted_head("GET /v1/../admin HTTP/1.1\r\nHost: h\r\n\r\n", g),
              "GET /v1/../admin HTTP/1.1\r\nHost: h\r\nConnection: close\r\n\r\n");
    // Another header, as a grant may name.
    Grant key{"api.example.test", 443, "/", "X-Api-Key", "k"};
    EXPECT_EQ(granted_head("GET / HTTP/1.1\r\nX-API-KEY: forged\r\n\r\n", key),
              "GET / HTTP/1.1\r\nX-Api-Key: k\r\nConnection: close\r\n\r\n");
    // What does not parse goes on as it is, for the host to refuse.
    EXPECT_EQ(granted_head("nonsense\r\n\r\n", g), "nonsense\r\n\r\n");
}

} // namespace
} // namespace sion::sandboxd
