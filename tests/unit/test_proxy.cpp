// SPDX-License-Identifier: MIT
// Unit tests of lib/proxy (the variables curl reads, no_proxy's table, a proxy URL checked) and of
// the requests that use it: lib/http through a TestServer standing in for the proxy (a plain
// request in absolute form, reach still judging the name, this machine reached direct) and
// lib/models/wire (a provider over https asks the proxy to CONNECT; local: never uses it). Names
// resolve through stand-ins: no request leaves this machine.
#include "lib/fd.hpp"
#include "lib/http.hpp"
#include "lib/http_transfer.hpp"
#include "lib/models/wire.hpp"
#include "lib/proxy.hpp"
#include "tests/unit/http_test_server.hpp"

#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>

#include <chrono>
#include <cstdlib>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

namespace sion {
namespace {

using namespace std::chrono_literals;

using test::Received;
using test::TestServer;

// --- the variables ----------------------------------------------------------------------------

Environment env_of(std::map<std::string, std::string> vars) {
    return [vars = std::move(vars)](const char* name) -> std::optional<std::string> {
        auto found = vars.find(name);
        if (found == vars.end())
            return std::nullopt;
        return found->second;
    };
}

std::string proxy_for(const std::string& url, std::map<std::string, std::string> vars) {
    auto proxy = environment_proxy(url, env_of(std::move(vars)));
    EXPECT_TRUE(proxy) << url << ": " << proxy.error().message();
    return proxy ? *proxy : "(error)";
}

TEST(NoProxy, Table) {
    struct Row {
        const char* list;
        const char* host;
        bool exempt;
    };

    const std::vector<Row> rows = {
        {"*", "models.example.test", true},
        {" * ", "10.0.0.5", true},
        {"", "example.test", false},
        {"example.test", "example.test", true},
        {"example.test", "api.example.test", true},
        {"example.test", "badexample.test", false},
        {"example.test", "example.test.evil.test", false},
        {".example.test", "example.test", true},
        {".example.test", "a.b.example.test", true},
        {"EXAMPLE.test", "Api.Example.TEST", true},
        {"example.test", "example.test.", true},
        {"example.test.", "example.test", true},
        {"a.test, b.test", "b.test", true},
        {"a.test b.test", "b.test", true},
        {"a.test,,b.test", "c.test", false},
        {"*.example.test", "api.example.test", false},
        {"10.0.0.0/8", "10.1.2.3", true},
        {"10.0.0.0/8", "11.0.0.1", false},
        {"10.0.0.0/8", "ten.example.test", false},
        {"192.168.1.0/25", "192.168.1.127", true},
        {"192.168.1.0/25", "192.168.1.128", false},
        {"192.168.1.7", "192.168.1.7", true},
        {"192.168.1.7", "192.168.1.8", false},
        {"0.0.0.0/0", "203.0.113.7", true},
        {"10.0.0.0/33", "10.0.0.1", false},
        {"10.0.0.0/x", "10.0.0.1", false},
        {"10.0.0.5", "fd00::5", false},
        {"fd00::/8", "fd12::1", true},
        {"fd00::/8", "fe80::1", false},
        {"2001:db8::1", "2001:db8::1", true},
        {"[2001:db8::1]", "2001:db8::1", true},
        {"2001:db8::/32", "2001:db9::1", false},
    };
    for (const Row& row : rows)
        EXPECT_EQ(no_proxy_exempts(row.list, row.host), row.exempt)
            << "no_proxy='" << row.list << "' host " << row.host;
}

TEST(EnvironmentProxy, TheVariablesCurlReads) {
    const std::string https = "https://models.example.test/v1";
    const std::string http = "http://models.example.test/v1";
    EXPECT_EQ(proxy_for(https, {}), "");
    EXPECT_EQ(
        proxy_for(https, {{"https_proxy", "http://a.test:1"}, {"HTTPS_PROXY", "http://b.test:1"}}),
        "http://a.test:1");
    EXPECT_EQ(proxy_for(https, {{"HTTPS_PROXY", "http://b.test:1"}}), "http://b.test:1");
    EXPECT_EQ(proxy_for(https, {{"http_proxy", "http://a.test:1"}}), "");
    EXPECT_EQ(proxy_for(http, {{"http_proxy", "http://a.test:1"}}), "http://a.test:1");
    // HTTP_PROXY may be a CGI request's Proxy header (httpoxy): curl never reads it.
    EXPECT_EQ(proxy_for(http, {{"HTTP_PROXY", "http://b.test:1"}}), "");
    EXPECT_EQ(proxy_for(http, {{"https_proxy", "http://b.test:1"}}), "");
    EXPECT_EQ(
        proxy_for(https, {{"all_proxy", "http://c.test:1"}, {"ALL_PROXY", "http://d.test:1"}}),
        "http://c.test:1");
    EXPECT_EQ(proxy_for(http, {{"ALL_PROXY", "http://d.test:1"}}), "http://d.test:1");
    EXPECT_EQ(
        proxy_for(https, {{"https_proxy", "http://a.test:1"}, {"all_proxy", "http://c.test:1"}}),
        "http://a.test:1");
    // The first set decides: an empty one is no proxy, whatever all_proxy says.
    EXPECT_EQ(proxy_for(https, {{"https_proxy", ""}, {"all_proxy", "http://c.test:1"}}), "");
}

TEST(EnvironmentProxy, SchemeAndPortWrittenOut) {
    const std::string url = "https://models.example.test/v1";
    auto with = [&](const char* value) { return proxy_for(url, {{"https_proxy", value}}); };
    EXPECT_EQ(with("proxy.example.test:3128"), "http://proxy.example.test:3128");
    EXPECT_EQ(with("proxy.example.test"), "http://proxy.example.test:1080");
    EXPECT_EQ(with("http://proxy.example.test"), "http://proxy.example.test:1080");
    EXPECT_EQ(with("HTTP://proxy.example.test:8080/"), "HTTP://proxy.example.test:8080/");
    EXPECT_EQ(with("https://proxy.example.test"), "https://proxy.example.test:443");
    EXPECT_EQ(with("http://user:pass@proxy.example.test"),
              "http://user:pass@proxy.example.test:1080");
    EXPECT_EQ(with("http://[fd00::1]"), "http://[fd00::1]:1080");
    EXPECT_EQ(with("http://[fd00::1]:3128"), "http://[fd00::1]:3128");
}

TEST(EnvironmentProxy, NoProxyThenItsCapitals) {
    const std::string url = "https://api.example.test/v1";
    EXPECT_EQ(proxy_for(url, {{"https_proxy", "http://p.test:1"}, {"no_proxy", "example.test"}}),
              "");
    EXPECT_EQ(proxy_for(url, {{"https_proxy", "http://p.test:1"}, {"NO_PROXY", ".example.test"}}),
              "");
    EXPECT_EQ(proxy_for(url, {{"https_proxy", "http://p.test:1"},
                              {"no_proxy", "other.test"},
                              {"NO_PROXY", "example.test"}}),
              "http://p.test:1");
    EXPECT_EQ(proxy_for("https://10.1.2.3/v1",
                        {{"https_proxy", "http://p.test:1"}, {"no_proxy", "10.0.0.0/8"}}),
              "");
    EXPECT_EQ(proxy_for("https://[fd00::5]:8443/v1",
                        {{"https_proxy", "http://p.test:1"}, {"no_proxy", "fd00::/16"}}),
              "");
    // An exempt host is exempt however malformed the proxy variable is: curl never reads it.
    EXPECT_EQ(proxy_for(url, {{"https_proxy", "socks5://p.test"}, {"no_proxy", "*"}}), "");
}

TEST(EnvironmentProxy, ThisMachineIsNeverProxied) {
    std::map<std::string, std::string> everything = {{"https_proxy", "http://p.test:1"},
                                                     {"http_proxy", "http://p.test:1"},
                                                     {"all_proxy", "http://p.test:1"}};
    for (const char* url :
         {"http://127.0.0.1:8080/v1", "http://127.0.0.2/v1", "http://localhost:11434/v1",
          "https://LOCALHOST/v1", "http://models.localhost/v1", "http://[::1]:8080/v1",
          "http://[::ffff:127.0.0.1]/v1"})
        EXPECT_EQ(proxy_for(url, everything), "") << url;
    EXPECT_EQ(proxy_for("http://10.0.0.5:8080/v1", everything), "http://p.test:1");
}

TEST(EnvironmentProxy, OnlyHttpAndHttpsProxies) {
    const std::string url = "https://models.example.test/v1";
    auto refused = [&](const char* variable, const char* value) {
        auto proxy = environment_proxy(url, env_of({{variable, value}}));
        EXPECT_FALSE(proxy) << value << " gave " << (proxy ? *proxy : "");
        if (proxy)
            return std::string();
        EXPECT_EQ(proxy.error().exit(), Exit::config);
        return proxy.error().message();
    };
    EXPECT_EQ(refused("https_proxy", "socks5://x"),
              "https_proxy 'socks5://x' is not an http or https proxy");
    std::string message = refused("ALL_PROXY", "socks5h://someone:hunter2secret@x.test:1080");
    EXPECT_EQ(message, "ALL_PROXY 'socks5h://x.test:1080' is not an http or https proxy");
    EXPECT_EQ(message.find("hunter2secret"), std::string::npos);
    EXPECT_EQ(refused("HTTPS_PROXY", "http://"),
              "HTTPS_PROXY 'http://' is not an http or https proxy");
    EXPECT_EQ(refused("https_proxy", "ftp://proxy.test:21"),
              "https_proxy 'ftp://proxy.test:21' is not an http or https proxy");
    auto bad_url = environment_proxy("ftp://models.example.test/", env_of({}));
    ASSERT_FALSE(bad_url);
    EXPECT_EQ(bad_url.error().exit(), Exit::data);
}

TEST(UserInfo, OfAProxyUrl) {
    EXPECT_EQ(user_info("http://user:secret@proxy.test:3128"), "user:secret");
    EXPECT_EQ(user_info("http://user@proxy.test:3128/x@y"), "user");
    EXPECT_EQ(user_info("http://proxy.test:3128/x@y"), "");
    EXPECT_EQ(user_info("proxy.test"), "");
}

// --- requests through the environment's proxy -------------------------------------------------

// Sets the proxy variables a test names and none other, and puts back what was there.
class ProxyVariables {
public:
    ProxyVariables() {
        for (const char* name : k_names) {
            if (const char* v = std::getenv(name)) // NOLINT(concurrency-mt-unsafe)
                m_saved.emplace_back(name, v);
            ::unsetenv(name); // NOLINT(concurrency-mt-unsafe): no other thread reads it meanwhile
        }
    }

    ProxyVariables(const ProxyVariables&) = delete;
    ProxyVariables& operator=(const ProxyVariables&) = delete;

    ~ProxyVariables() {
        for (const char* name : k_names)
            ::unsetenv(name); // NOLINT(concurrency-mt-unsafe)
        for (const auto& [name, value] : m_saved)
            ::setenv(name.c_str(), value.c_str(), 1); // NOLINT(concurrency-mt-unsafe)
    }

    void set(const char* name, const std::string& value) {
        ASSERT_EQ(::setenv(name, value.c_str(), 1), 0); // NOLINT(concurrency-mt-unsafe)
    }

private:
    static constexpr const char* k_names[] = {"https_proxy", "HTTPS_PROXY", "http_proxy",
                                              "HTTP_PROXY",  "all_proxy",   "ALL_PROXY",
                                              "no_proxy",    "NO_PROXY"};
    std::vector<std::pair<std::string, std::string>> m_saved;
};

// A stand-in for DNS: each name's addresses, and no other name.
Resolver names(std::map<std::string, std::string> table) {
    return [table = std::move(table)](const std::string& name) -> Result<std::vector<std::string>> {
        auto found = table.find(name);
        if (found == table.end())
            return make_error(Exit::unavailable, "cannot resolve '%s': no such name", name.c_str());
        return std::vector<std::string>{found->second};
    };
}

// A proxy's stand-in: it keeps the head of each request it took, refuses CONNECT with 403 and
// answers any other request with its own head.
class Proxy {
public:
    [[nodiscard]] std::string url() const { return m_server.url(); }

    [[nodiscard]] int port() const { return m_server.port(); }

    [[nodiscard]] int connections() const { return m_server.accepted(); }

    [[nodiscard]] std::vector<std::string> heads() const {
        std::lock_guard lock(m_mutex);
        return m_heads;
    }

private:
    void take(const Received& request, int fd) {
        {
            std::lock_guard lock(m_mutex);
            m_heads.push_back(request.head);
        }
        if (request.head.starts_with("CONNECT "))
            TestServer::send_text(fd, test::respond(403, "Forbidden", "", "no tunnels here"));
        else
            TestServer::send_text(fd, test::respond(200, "OK", "", request.head));
    }

    mutable std::mutex m_mutex;
    std::vector<std::string> m_heads;
    TestServer m_server{[this](const Received& r, int fd, const TestServer&) { take(r, fd); }};
};

Status refuse_private(const Destination& where) {
    for (const Address& a : where.addresses)
        if (a.kind == AddressKind::private_network)
            return make_error(Exit::config, "refusing '%s': %s is a private address",
                              where.url.c_str(), a.text.c_str());
    return {};
}

sockaddr_in v4_of(const char* text) {
    sockaddr_in sa{};
    sa.sin_family = AF_INET;
    EXPECT_EQ(::inet_pton(AF_INET, text, &sa.sin_addr), 1);
    return sa;
}

TEST(ThroughProxy, APlainRequestArrivesInAbsoluteForm) {
    ProxyVariables vars;
    Proxy proxy;
    vars.set("http_proxy", proxy.url());
    HttpRequest request;
    request.method = "POST";
    request.url = "http://models.example.test/v1";
    request.body = "{}";
    request.timeout = 10s;
    request.environment_proxy = true;
    auto response = http_send(request);
    ASSERT_TRUE(response) << response.error().message();
    EXPECT_EQ(response->status, 200);
    EXPECT_TRUE(response->body.starts_with("POST http://models.example.test/v1 HTTP/1.1\r\n"))
        << response->body;
    EXPECT_EQ(proxy.connections(), 1);

    // Without environment_proxy the variable is not read: the name is resolved (and fails).
    request.environment_proxy = false;
    request.resolver = names({});
    request.reach = [](const Destination&) { return Status(); };
    auto direct = http_send(request);
    ASSERT_FALSE(direct);
    EXPECT_EQ(direct.error().exit(), Exit::unavailable);
    EXPECT_EQ(proxy.connections(), 1);
}

TEST(ThroughProxy, ItsPasswordIsSentToItAndNeverShown) {
    ProxyVariables vars;
    Proxy proxy;
    vars.set("http_proxy",
             "http://someone:hunter2secret@127.0.0.1:" + std::to_string(proxy.port()));
    HttpRequest request;
    request.url = "http://models.example.test/v1";
    request.timeout = 10s;
    request.environment_proxy = true;
    auto response = http_send(request);
    ASSERT_TRUE(response) << response.error().message();
    // "someone:hunter2secret" in base64.
    EXPECT_NE(response->body.find("Proxy-Authorization: Basic c29tZW9uZTpodW50ZXIyc2VjcmV0\r\n"),
              std::string::npos)
        << response->body;

    // A proxy that is not there: the message names the URL, not the proxy's password.
    Fd closed(::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0));
    sockaddr_in addr = v4_of("127.0.0.1");
    socklen_t len = sizeof addr;
    ASSERT_EQ(::bind(closed.get(), reinterpret_cast<sockaddr*>(&addr), len), 0);
    ASSERT_EQ(::getsockname(closed.get(), reinterpret_cast<sockaddr*>(&addr), &len), 0);
    vars.set("http_proxy",
             "http://someone:hunter2secret@127.0.0.1:" + std::to_string(ntohs(addr.sin_port)));
    auto failed = http_send(request);
    ASSERT_FALSE(failed);
    EXPECT_EQ(failed.error().exit(), Exit::unavailable);
    EXPECT_TRUE(
        failed.error().message().starts_with("cannot reach 'http://models.example.test/v1': "))
        << failed.error().message();
    EXPECT_EQ(failed.error().message().find("hunter2secret"), std::string::npos);
}

TEST(ThroughProxy, AMalformedVariableSendsNothing) {
    ProxyVariables vars;
    vars.set("http_proxy", "socks5://127.0.0.1:1");
    HttpRequest request;
    request.url = "http://models.example.test/v1";
    request.environment_proxy = true;
    auto response = http_send(request);
    ASSERT_FALSE(response);
    EXPECT_EQ(response.error().exit(), Exit::config);
    EXPECT_EQ(response.error().message(),
              "http_proxy 'socks5://127.0.0.1:1' is not an http or https proxy");
}

TEST(ThroughProxy, ReachStillJudgesTheName) {
    ProxyVariables vars;
    Proxy proxy;
    vars.set("http_proxy", proxy.url());
    HttpRequest request;
    request.url = "http://models.example.test/v1";
    request.timeout = 10s;
    request.environment_proxy = true;
    request.resolver = names({{"models.example.test", "10.0.0.5"}});
    request.reach = refuse_private;
    auto response = http_send(request);
    ASSERT_FALSE(response);
    EXPECT_EQ(response.error().exit(), Exit::config);
    EXPECT_EQ(response.error().message(),
              "refusing 'http://models.example.test/v1': 10.0.0.5 is a private address");
    EXPECT_EQ(proxy.connections(), 0);
}

// Through a proxy, curl connects to the proxy only (its name resolved by the stand-in too and
// pinned), never to where the destination's name led.
TEST(ThroughProxy, ReachLetsOnlyTheProxyThrough) {
    ProxyVariables vars;
    Proxy proxy;
    vars.set("http_proxy", "http://proxy.example.test:" + std::to_string(proxy.port()));
    HttpRequest request;
    request.url = "http://models.example.test/v1";
    request.timeout = 10s;
    request.environment_proxy = true;
    request.resolver =
        names({{"models.example.test", "203.0.113.7"}, {"proxy.example.test", "127.0.0.1"}});
    request.reach = refuse_private;

    auto easy = CurlEasy::make();
    ASSERT_TRUE(easy) << easy.error().message();
    HttpTransfer transfer(request);
    ASSERT_TRUE(transfer.configure(easy->get()));
    sockaddr_in destination = v4_of("203.0.113.7");
    sockaddr_in to_proxy = v4_of("127.0.0.1");
    ASSERT_FALSE(transfer.may_connect(reinterpret_cast<const sockaddr*>(&destination)));
    ASSERT_TRUE(transfer.may_connect(reinterpret_cast<const sockaddr*>(&to_proxy)));

    auto response = http_send(request);
    ASSERT_TRUE(response) << response.error().message();
    EXPECT_TRUE(response->body.starts_with("GET http://models.example.test/v1 HTTP/1.1\r\n"))
        << response->body;
    EXPECT_EQ(proxy.connections(), 1);
}

// A name that resolves to this machine is reached direct, pinned as without a proxy.
TEST(ThroughProxy, ANameOfThisMachineGoesDirect) {
    ProxyVariables vars;
    Proxy proxy;
    vars.set("http_proxy", proxy.url());
    TestServer server(
        [](const Received& r, int fd, const TestServer&) {
            TestServer::send_text(fd, test::respond(200, "OK", "", r.head));
        },
        "127.0.0.2");
    HttpRequest request;
    request.url = "http://models.example.test:" + std::to_string(server.port()) + "/v1";
    request.timeout = 10s;
    request.environment_proxy = true;
    request.resolver = names({{"models.example.test", "127.0.0.2"}});
    request.reach = refuse_private;
    auto response = http_send(request);
    ASSERT_TRUE(response) << response.error().message();
    EXPECT_TRUE(response->body.starts_with("GET /v1 HTTP/1.1\r\n")) << response->body;
    EXPECT_EQ(server.accepted(), 1);
    EXPECT_EQ(proxy.connections(), 0);
}

// --- model providers --------------------------------------------------------------------------

const char* const k_key = "sk-proxy-test-0123456789abcdef";

models::WireRequest provider_call(const std::string& url) {
    models::WireRequest request;
    request.url = url;
    request.headers.add("Authorization", std::string("Bearer ") + k_key);
    request.body = "{}";
    return request;
}

TEST(WireProxy, ARemoteProviderAsksTheProxyToConnect) {
    ProxyVariables vars;
    Proxy proxy;
    models::Wire wire(models::Reach::remote);
    const std::string url = "https://models.example.test/v1/chat/completions";

    // First the wire is shown to read the variable, with a name that resolves nowhere (were the
    // variable not read, the call would fail there): only then may the name lead to 203.0.113.7,
    // which the proxy alone is asked for.
    wire.resolve_with(names({}));
    vars.set("https_proxy", "socks5://127.0.0.1:1");
    auto malformed = wire.send(provider_call(url));
    ASSERT_FALSE(malformed);
    ASSERT_EQ(malformed.error().exit(), Exit::config) << malformed.error().message();
    EXPECT_EQ(malformed.error().message(),
              "https_proxy 'socks5://127.0.0.1:1' is not an http or https proxy");

    wire.resolve_with(names({{"models.example.test", "203.0.113.7"}}));
    vars.set("https_proxy", "someone:hunter2secret@127.0.0.1:" + std::to_string(proxy.port()));
    auto reply = wire.send(provider_call(url));
    ASSERT_FALSE(reply);
    EXPECT_EQ(reply.error().exit(), Exit::unavailable);
    const std::string& message = reply.error().message();
    EXPECT_TRUE(
        message.starts_with("cannot reach 'https://models.example.test/v1/chat/completions': "))
        << message;
    EXPECT_EQ(message.find(k_key), std::string::npos) << message;
    EXPECT_EQ(message.find("hunter2secret"), std::string::npos) << message;
    auto heads = proxy.heads();
    ASSERT_EQ(heads.size(), 1U);
    EXPECT_TRUE(heads[0].starts_with("CONNECT models.example.test:443 HTTP/1.1\r\n")) << heads[0];
    EXPECT_NE(heads[0].find("Proxy-Authorization: Basic "), std::string::npos) << heads[0];
    // The provider's key is for the provider, inside the tunnel: never for the proxy.
    EXPECT_EQ(heads[0].find(k_key), std::string::npos) << heads[0];
}

TEST(WireProxy, LocalNeverUsesTheProxy) {
    ProxyVariables vars;
    Proxy proxy;
    vars.set("http_proxy", proxy.url());
    vars.set("all_proxy", "socks5://127.0.0.1:1");
    TestServer server(
        [](const Received& r, int fd, const TestServer&) {
            TestServer::send_text(fd, test::respond(200, "OK", "", r.head));
        },
        "127.0.0.2");
    const std::string url = "http://ollama.example.test:" + std::to_string(server.port()) + "/v1";
    models::Wire local(models::Reach::network);
    local.resolve_with(names({{"ollama.example.test", "127.0.0.2"}}));
    auto reply = local.send(provider_call(url));
    ASSERT_TRUE(reply) << reply.error().message();
    EXPECT_TRUE(reply->body.starts_with("POST /v1 HTTP/1.1\r\n")) << reply->body;
    EXPECT_EQ(proxy.connections(), 0);

    // A remote provider reads the environment for the same URL: its http_proxy is refused.
    models::Wire remote(models::Reach::remote);
    remote.resolve_with(names({{"ollama.example.test", "127.0.0.2"}}));
    vars.set("http_proxy", "socks5://127.0.0.1:1");
    auto refused = remote.send(provider_call(url));
    ASSERT_FALSE(refused);
    EXPECT_EQ(refused.error().exit(), Exit::config);
    EXPECT_EQ(server.accepted(), 1);
    EXPECT_EQ(proxy.connections(), 0);
}

} // namespace
} // namespace sion
