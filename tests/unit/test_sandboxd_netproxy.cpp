// SPDX-License-Identifier: MIT
// The declared network end to end in one process, all on 127.0.0.1: a client connects to the
// Forwarder, which relays to the Proxy's Unix socket, which reaches an origin server of the test's
// own (threads with blocking sockets; the loop runs on a thread of its own). Declared hosts are
// reached with plain HTTP and through CONNECT tunnels; the undeclared, the malformed, the
// over-long, the slow and the unreachable get the proxy's answers; many clients at once; a client
// that leaves mid-tunnel closes both sides; a granted host over HTTPS gets the grant's credential
// written in by the proxy, which ends the client's TLS with sion's authority and refuses a host
// whose certificate does not verify; and after every test the loop closes cleanly.
#include "lib/fd.hpp"
#include "tests/unit/temp_dir.hpp"
#include "lib/secret_bytes.hpp"
#include "sandboxd/netproxy.hpp"

#include <mbedtls/net_sockets.h>
#include <mbedtls/ssl.h>

#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdlib>
#include <functional>
#include <future>
#include <mutex>
#include <random>
#include <string>
#include <thread>
#include <vector>

namespace sion::sandboxd {
namespace {

using namespace std::chrono_literals;

const bool k_sigpipe_ignored = [] {
    ::signal(SIGPIPE, SIG_IGN);
    return true;
}();

void set_timeouts(int fd) {
    timeval tv{10, 0};
    ::setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
    ::setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof tv);
}

sockaddr_in loopback(int port) {
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_port = htons(static_cast<uint16_t>(port));
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    return a;
}

Fd connect_to(int port) {
    Fd fd(::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0));
    set_timeouts(fd.get());
    sockaddr_in a = loopback(port);
    EXPECT_EQ(::connect(fd.get(), reinterpret_cast<sockaddr*>(&a), sizeof a), 0)
        << "connect to " << port;
    return fd;
}

// Reads until the peer ends (or 10 s pass): everything it sent.
std::string read_to_end(int fd) {
    std::string out;
    char buf[65536];
    ssize_t n;
    while ((n = ::read(fd, buf, sizeof buf)) > 0)
        out.append(buf, static_cast<size_t>(n));
    return out;
}

// Reads exactly `size` bytes, fewer if the peer ends first.
std::string read_exactly(int fd, size_t size) {
    std::string out;
    char buf[65536];
    while (out.size() < size) {
        ssize_t n = ::read(fd, buf, std::min(sizeof buf, size - out.size()));
        if (n <= 0)
            break;
        out.append(buf, static_cast<size_t>(n));
    }
    return out;
}

bool eventually(const std::function<bool()>& done) {
    for (auto until = std::chrono::steady_clock::now() + 10s;
         std::chrono::steady_clock::now() < until;) {
        if (done())
            return true;
        std::this_thread::sleep_for(5ms);
    }
    return done();
}

// The origin: "ECHO…" connections get every byte back until their end, then a close; anything
// else is read as an HTTP request head, answered with that head as the body, and closed.
class Origin {
public:
    void start() {
        m_listen = Fd(::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0));
        sockaddr_in a = loopback(0);
        ASSERT_EQ(::bind(m_listen.get(), reinterpret_cast<sockaddr*>(&a), sizeof a), 0);
        ASSERT_EQ(::listen(m_listen.get(), 256), 0);
        socklen_t size = sizeof a;
        ASSERT_EQ(::getsockname(m_listen.get(), reinterpret_cast<sockaddr*>(&a), &size), 0);
        m_port = ntohs(a.sin_port);
        m_acceptor = std::thread([this] { accept_loop(); });
    }

    void stop() {
        if (!m_acceptor.joinable())
            return;
        ::shutdown(m_listen.get(), SHUT_RDWR); // wakes accept()
        m_acceptor.join();
        std::lock_guard lock(m_mutex);
        for (auto& t : m_connections)
            t.join();
    }

    int port() const { return m_port; }

    int accepted() const { return m_accepted; }

    int ended() const { return m_ended; }

private:
    void accept_loop() {
        while (true) {
            int fd = ::accept4(m_listen.get(), nullptr, nullptr, SOCK_CLOEXEC);
            if (fd < 0)
                return;
            ++m_accepted;
            std::lock_guard lock(m_mutex);
            m_connections.emplace_back([this, fd] { serve(Fd(fd)); });
        }
    }

    void serve(Fd fd) {
        set_timeouts(fd.get());
        std::string got = read_exactly(fd.get(), 4);
        if (got == "ECHO") {
            char buf[65536];
            ssize_t n = 4;
            std::string_view first = got;
            while (n > 0 && write_all(fd.get(), first)) {
                n = ::read(fd.get(), buf, sizeof buf);
                first = std::string_view(buf, n > 0 ? static_cast<size_t>(n) : 0);
            }
            if (n == 0)
                ++m_ended;
            return;
        }
        char c;
        while (got.find("\r\n\r\n") == std::string::npos && ::read(fd.get(), &c, 1) == 1)
            got += c;
        std::string answer = "HTTP/1.1 200 OK\r\nContent-Length: " + std::to_string(got.size())
                             + "\r\nConnection: close\r\n\r\n" + got;
        (void)write_all(fd.get(), answer);
        ++m_ended;
    }

    Fd m_listen;
    int m_port = 0;
    std::thread m_acceptor;
    std::mutex m_mutex;
    std::vector<std::thread> m_connections;
    std::atomic<int> m_accepted{0};
    std::atomic<int> m_ended{0};
};

// TLS over a blocking socket, the test's client or its host.
class Tls {
public:
    Tls() {
        mbedtls_ssl_init(&m_ssl);
        mbedtls_ssl_config_init(&m_conf);
        mbedtls_x509_crt_init(&m_crt);
        mbedtls_pk_init(&m_key);
        mbedtls_net_init(&m_net);
    }

    Tls(const Tls&) = delete;
    Tls& operator=(const Tls&) = delete;

    ~Tls() {
        mbedtls_ssl_free(&m_ssl);
        mbedtls_ssl_config_free(&m_conf);
        mbedtls_x509_crt_free(&m_crt);
        mbedtls_pk_free(&m_key);
        m_net.fd = -1; // the Fd the caller gave is its own
    }

    // As a client over `fd`, trusting `roots` for `host`; false when the handshake fails.
    bool client(int fd, const std::string& roots, const std::string& host) {
        return mbedtls_x509_crt_parse(&m_crt, bytes(roots), roots.size() + 1) == 0
               && setup(fd, MBEDTLS_SSL_IS_CLIENT) && (configure_client(), true)
               && mbedtls_ssl_setup(&m_ssl, &m_conf) == 0
               && mbedtls_ssl_set_hostname(&m_ssl, host.c_str()) == 0 && shake();
    }

    // As a server over `fd` with this chain and key.
    bool server(int fd, const EgressAuthority::Issued& issued) {
        return mbedtls_x509_crt_parse(&m_crt, bytes(issued.certificate),
                                      issued.certificate.size() + 1)
                   == 0
               && mbedtls_pk_parse_key(&m_key, bytes(issued.key), issued.key.size() + 1, nullptr, 0)
                      == 0
               && setup(fd, MBEDTLS_SSL_IS_SERVER)
               && mbedtls_ssl_conf_own_cert(&m_conf, &m_crt, &m_key) == 0
               && mbedtls_ssl_setup(&m_ssl, &m_conf) == 0 && shake();
    }

    bool write(const std::string& text) {
        for (size_t at = 0; at < text.size();) {
            int n = mbedtls_ssl_write(&m_ssl, bytes(text) + at, text.size() - at);
            if (n <= 0)
                return false;
            at += static_cast<size_t>(n);
        }
        return true;
    }

    // Everything until close_notify or the end.
    std::string read_to_end() {
        std::string out;
        unsigned char buf[4096];
        int n = 0;
        while ((n = mbedtls_ssl_read(&m_ssl, buf, sizeof buf)) > 0)
            out.append(reinterpret_cast<char*>(buf), static_cast<size_t>(n));
        return out;
    }

    // A request head, up to its blank line.
    std::string read_head() {
        std::string out;
        unsigned char c = 0;
        while (out.find("\r\n\r\n") == std::string::npos && mbedtls_ssl_read(&m_ssl, &c, 1) == 1)
            out += static_cast<char>(c);
        return out;
    }

    void close() { (void)mbedtls_ssl_close_notify(&m_ssl); }

private:
    static const unsigned char* bytes(const std::string& s) {
        return reinterpret_cast<const unsigned char*>(s.c_str());
    }

    bool setup(int fd, int endpoint) {
        m_net.fd = fd;
        if (mbedtls_ssl_config_defaults(&m_conf, endpoint, MBEDTLS_SSL_TRANSPORT_STREAM,
                                        MBEDTLS_SSL_PRESET_DEFAULT)
            != 0)
            return false;
        mbedtls_ssl_conf_rng(&m_conf, mbedtls_random, nullptr);
        mbedtls_ssl_set_bio(&m_ssl, &m_net, mbedtls_net_send, mbedtls_net_recv, nullptr);
        return true;
    }

    void configure_client() {
        mbedtls_ssl_conf_authmode(&m_conf, MBEDTLS_SSL_VERIFY_REQUIRED);
        mbedtls_ssl_conf_ca_chain(&m_conf, &m_crt, nullptr);
    }

    bool shake() {
        int rc = 0;
        while ((rc = mbedtls_ssl_handshake(&m_ssl)) != 0)
            if (rc != MBEDTLS_ERR_SSL_WANT_READ && rc != MBEDTLS_ERR_SSL_WANT_WRITE)
                return false;
        return true;
    }

    mbedtls_ssl_context m_ssl;
    mbedtls_ssl_config m_conf;
    mbedtls_x509_crt m_crt;
    mbedtls_pk_context m_key;
    mbedtls_net_context m_net;
};

// A host over HTTPS: each connection's request head is kept, and answered with itself as the body.
class TlsOrigin {
public:
    explicit TlsOrigin(EgressAuthority::Issued issued) : m_issued(std::move(issued)) {}

    TlsOrigin(const TlsOrigin&) = delete;
    TlsOrigin& operator=(const TlsOrigin&) = delete;

    ~TlsOrigin() {
        ::shutdown(m_listen.get(), SHUT_RDWR);
        if (m_thread.joinable())
            m_thread.join();
    }

    void start() {
        m_listen = Fd(::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0));
        sockaddr_in a = loopback(0);
        ASSERT_EQ(::bind(m_listen.get(), reinterpret_cast<sockaddr*>(&a), sizeof a), 0);
        ASSERT_EQ(::listen(m_listen.get(), 16), 0);
        socklen_t size = sizeof a;
        ASSERT_EQ(::getsockname(m_listen.get(), reinterpret_cast<sockaddr*>(&a), &size), 0);
        m_port = ntohs(a.sin_port);
        m_thread = std::thread([this] {
            while (true) {
                int fd = ::accept4(m_listen.get(), nullptr, nullptr, SOCK_CLOEXEC);
                if (fd < 0)
                    return;
                Fd conn(fd);
                set_timeouts(fd);
                Tls tls;
                if (!tls.server(fd, m_issued))
                    continue;
                std::string head = tls.read_head();
                {
                    std::lock_guard lock(m_mutex);
                    m_heads.push_back(head);
                }
                (void)tls.write("HTTP/1.1 200 OK\r\nContent-Length: " + std::to_string(head.size())
                                + "\r\nConnection: close\r\n\r\n" + head);
                tls.close();
            }
        });
    }

    int port() const { return m_port; }

    std::vector<std::string> heads() {
        std::lock_guard lock(m_mutex);
        return m_heads;
    }

private:
    EgressAuthority::Issued m_issued;
    Fd m_listen;
    int m_port = 0;
    std::thread m_thread;
    std::mutex m_mutex;
    std::vector<std::string> m_heads;
};


class NetproxyTest : public ::testing::Test {
protected:
    void SetUp() override {
        ASSERT_TRUE(k_sigpipe_ignored);
        ::alarm(120); // a hang fails the test instead of stalling the run
        ASSERT_EQ(uv_loop_init(&m_loop), 0);
        ASSERT_EQ(
            uv_async_init(&m_loop, &m_async,
                          [](uv_async_t* a) { static_cast<NetproxyTest*>(a->data)->run_tasks(); }),
            0);
        m_async.data = this;
        const char* tmp = std::getenv("TMPDIR");
        m_dir =
            std::string(tmp != nullptr && *tmp != '\0' ? tmp : "/tmp") + "/sion-netproxy.XXXXXX";
        ASSERT_NE(::mkdtemp(m_dir.data()), nullptr);
        m_socket = m_dir + "/proxy.sock";
        m_origin.start();
    }

    void TearDown() override {
        if (m_thread.joinable()) {
            post([this] {
                m_proxy.reset();
                m_forwarder.reset();
                uv_close(reinterpret_cast<uv_handle_t*>(&m_async), nullptr);
            });
            m_thread.join();
        } else {
            m_proxy.reset();
            m_forwarder.reset();
            uv_close(reinterpret_cast<uv_handle_t*>(&m_async), nullptr);
            EXPECT_EQ(uv_run(&m_loop, UV_RUN_DEFAULT), 0);
        }
        EXPECT_EQ(uv_loop_close(&m_loop), 0) << "a handle or request outlived the proxy";
        m_origin.stop();
        ::unlink(m_socket.c_str());
        EXPECT_EQ(::rmdir(m_dir.c_str()), 0) << "the proxy's socket was left behind";
        ::alarm(0);
    }

    // Starts the proxy with these declared hosts and the forwarder in front of it, then the loop.
    void start(const std::vector<std::string>& patterns, ProxyOptions options = {}) {
        auto rules = parse_host_rules(patterns);
        ASSERT_TRUE(rules) << rules.error().message();
        options.on_refused = [this](const std::string& host, int port) {
            std::lock_guard lock(m_mutex);
            m_refused.push_back(host + " " + std::to_string(port));
        };
        auto proxy = Proxy::start(&m_loop, m_socket, std::move(*rules), std::move(options));
        ASSERT_TRUE(proxy) << proxy.error().message();
        m_proxy = std::move(*proxy);
        auto forwarder = Forwarder::start(&m_loop, 0, m_socket);
        ASSERT_TRUE(forwarder) << forwarder.error().message();
        m_forwarder = std::move(*forwarder);
        ASSERT_GT(m_forwarder->port(), 0);
        m_thread = std::thread([this] { EXPECT_EQ(uv_run(&m_loop, UV_RUN_DEFAULT), 0); });
    }

    void post(std::function<void()> task) {
        std::lock_guard lock(m_mutex);
        m_tasks.push_back(std::move(task));
        uv_async_send(&m_async);
    }

    // Runs f on the loop's thread and returns what it returns.
    template <class F>
    auto on_loop(F f) -> decltype(f()) {
        std::promise<decltype(f())> p;
        post([&] { p.set_value(f()); });
        return p.get_future().get();
    }

    void run_tasks() {
        std::vector<std::function<void()>> tasks;
        {
            std::lock_guard lock(m_mutex);
            tasks.swap(m_tasks);
        }
        for (auto& t : tasks)
            t();
    }

    // A connection through the forwarder that has sent `request`.
    Fd ask(const std::string& request) {
        Fd fd = connect_to(m_forwarder->port());
        EXPECT_TRUE(write_all(fd.get(), request));
        return fd;
    }

    std::string target() const { return "127.0.0.1:" + std::to_string(m_origin.port()); }

    // An open tunnel to the origin's echo.
    Fd tunnel() {
        Fd fd = ask("CONNECT " + target() + " HTTP/1.1\r\nHost: " + target() + "\r\n\r\n");
        const std::string ok = "HTTP/1.1 200 Connection established\r\n\r\n";
        EXPECT_EQ(read_exactly(fd.get(), ok.size()), ok);
        return fd;
    }

    bool all_closed() {
        return on_loop([this] { return m_proxy->connections() + m_forwarder->connections(); }) == 0;
    }

    std::vector<std::string> refused() {
        std::lock_guard lock(m_mutex);
        return m_refused;
    }

    uv_loop_t m_loop{};
    uv_async_t m_async{};
    std::thread m_thread;
    std::mutex m_mutex;
    std::vector<std::function<void()>> m_tasks;
    std::vector<std::string> m_refused;
    std::string m_dir;
    std::string m_socket;
    Origin m_origin;
    std::unique_ptr<Proxy> m_proxy;
    std::unique_ptr<Forwarder> m_forwarder;
};

bool starts_with(const std::string& s, std::string_view prefix) {
    return s.compare(0, prefix.size(), prefix) == 0;
}

// The body of a whole answer: what follows its head.
std::string body_of(const std::string& answer) {
    size_t end = answer.find("\r\n\r\n");
    return end == std::string::npos ? std::string() : answer.substr(end + 4);
}

TEST_F(NetproxyTest, DeclaredHostOverPlainHttp) {
    start({target()});
    Fd fd = ask(
        "GET http://" + target()
        + "/path?q=1 HTTP/1.1\r\nHost: elsewhere.example\r\n"
          "Proxy-Connection: keep-alive\r\nProxy-Authorization: Basic eDp5\r\nX-Test: yes\r\n\r\n");
    std::string answer = read_to_end(fd.get());
    ASSERT_TRUE(starts_with(answer, "HTTP/1.1 200 OK\r\n")) << answer;
    EXPECT_EQ(body_of(answer), "GET /path?q=1 HTTP/1.1\r\nHost: " + target()
                                   + "\r\nX-Test: yes\r\nConnection: close\r\n\r\n");
    EXPECT_TRUE(refused().empty());
    fd.reset(); // the client's side ends only when the client closes: it may still be sending
    EXPECT_TRUE(eventually([&] { return all_closed(); }));
}

TEST_F(NetproxyTest, DeclaredHostThroughConnectTunnelBothWays) {
    start({target()});
    Fd fd = tunnel();
    // A megabyte each way, more than any buffer on the path holds: the relay must keep pace.
    std::string data = "ECHO";
    std::mt19937 random(42);
    while (data.size() < (1u << 20))
        data += static_cast<char>(random());
    std::thread writer([&] {
        EXPECT_TRUE(write_all(fd.get(), data));
        ::shutdown(fd.get(), SHUT_WR);
    });
    std::string back = read_to_end(fd.get());
    writer.join();
    EXPECT_EQ(back.size(), data.size());
    EXPECT_TRUE(back == data);
    EXPECT_TRUE(eventually([&] { return m_origin.ended() == 1; }));
    EXPECT_TRUE(eventually([&] { return all_closed(); }));
}

TEST_F(NetproxyTest, BytesSentRightAfterConnectAreNotLost) {
    start({target()});
    Fd fd = ask("CONNECT " + target() + " HTTP/1.1\r\n\r\nECHOhello");
    const std::string expected = "HTTP/1.1 200 Connection established\r\n\r\nECHOhello";
    EXPECT_EQ(read_exactly(fd.get(), expected.size()), expected);
}

TEST_F(NetproxyTest, UndeclaredHostIsForbidden) {
    start({target()});
    const std::string other =
        "127.0.0.1:" + std::to_string(m_origin.port() == 65535 ? 1 : m_origin.port() + 1);
    Fd a = ask("CONNECT " + other + " HTTP/1.1\r\n\r\n");
    std::string answer = read_to_end(a.get());
    EXPECT_TRUE(starts_with(answer, "HTTP/1.1 403 Forbidden\r\n")) << answer;
    EXPECT_EQ(body_of(answer), "host '" + other + "' is not declared\n");
    // The name of the declared address is not the address.
    Fd b = ask("GET http://LocalHost.:" + std::to_string(m_origin.port()) + "/ HTTP/1.1\r\n\r\n");
    answer = read_to_end(b.get());
    EXPECT_TRUE(starts_with(answer, "HTTP/1.1 403 Forbidden\r\n")) << answer;
    EXPECT_EQ(body_of(answer),
              "host 'localhost:" + std::to_string(m_origin.port()) + "' is not declared\n");
    EXPECT_EQ(refused(),
              (std::vector<std::string>{"127.0.0.1 " + other.substr(10),
                                        "localhost " + std::to_string(m_origin.port())}));
    EXPECT_EQ(m_origin.accepted(), 0);
}

TEST_F(NetproxyTest, AddressIsForbiddenWhenOnlyTheNameIsDeclared) {
    const std::string port = std::to_string(m_origin.port());
    start({"localhost:" + port});
    Fd by_address = ask("CONNECT 127.0.0.1:" + port + " HTTP/1.1\r\n\r\n");
    EXPECT_TRUE(starts_with(read_to_end(by_address.get()), "HTTP/1.1 403 Forbidden\r\n"));
    Fd disguised = ask("CONNECT 2130706433:" + port + " HTTP/1.1\r\n\r\n");
    EXPECT_TRUE(starts_with(read_to_end(disguised.get()), "HTTP/1.1 400 Bad Request\r\n"));
    // The name itself, in any case and with its trailing dot, is resolved and reached.
    Fd by_name = ask("CONNECT LOCALHOST.:" + port + " HTTP/1.1\r\n\r\nECHO");
    const std::string expected = "HTTP/1.1 200 Connection established\r\n\r\nECHO";
    EXPECT_EQ(read_exactly(by_name.get(), expected.size()), expected);
    EXPECT_EQ(m_origin.accepted(), 1);
}

TEST_F(NetproxyTest, WildcardIsSubdomainsOnly) {
    start({"*.example.org"});
    for (const char* host : {"example.org", "badexample.org", "example.org.evil.test"}) {
        Fd fd = ask(std::string("CONNECT ") + host + ":443 HTTP/1.1\r\n\r\n");
        std::string answer = read_to_end(fd.get());
        EXPECT_TRUE(starts_with(answer, "HTTP/1.1 403 Forbidden\r\n")) << host << ": " << answer;
    }
    EXPECT_EQ(refused().size(), 3u);
}

TEST_F(NetproxyTest, PortsAreDeclaredToo) {
    start({"127.0.0.1"}); // 80 and 443 only
    Fd fd = ask("CONNECT " + target() + " HTTP/1.1\r\n\r\n");
    EXPECT_TRUE(starts_with(read_to_end(fd.get()), "HTTP/1.1 403 Forbidden\r\n"));
    EXPECT_EQ(m_origin.accepted(), 0);
}

TEST_F(NetproxyTest, OverlongHeadIsRefused) {
    ProxyOptions options;
    options.max_head = 4096;
    start({target()}, options);
    // A megabyte and no end of head: the proxy must not wait for one, and its answer must not be
    // lost while the client is still sending.
    std::string head =
        "GET http://" + target() + "/ HTTP/1.1\r\nX-Big: " + std::string(1 << 20, 'a');
    Fd fd = connect_to(m_forwarder->port());
    std::thread writer([&] { (void)write_all(fd.get(), head); });
    std::string answer = read_to_end(fd.get());
    writer.join();
    EXPECT_TRUE(starts_with(answer, "HTTP/1.1 431 Request Header Fields Too Large\r\n")) << answer;
    EXPECT_EQ(body_of(answer), "the request head is longer than 4096 bytes\n");
    EXPECT_EQ(m_origin.accepted(), 0);
}

TEST_F(NetproxyTest, MalformedRequestsAreBadRequests) {
    start({target()});
    const std::vector<std::string> requests = {"HELLO\r\n\r\n", "GET / HTTP/1.1\r\nHost: x\r\n\r\n",
                                               "GET https://" + target() + "/ HTTP/1.1\r\n\r\n",
                                               "CONNECT " + target()
                                                   + " HTTP/1.1\r\n folded: x\r\n\r\n"};
    for (const std::string& request : requests) {
        Fd fd = ask(request);
        std::string answer = read_to_end(fd.get());
        EXPECT_TRUE(starts_with(answer, "HTTP/1.1 400 Bad Request\r\n")) << request << answer;
        EXPECT_TRUE(starts_with(body_of(answer), "bad proxy request: ")) << answer;
    }
    EXPECT_EQ(m_origin.accepted(), 0);
}

TEST_F(NetproxyTest, SlowHeadTimesOut) {
    ProxyOptions options;
    options.head_timeout = 200ms;
    start({target()}, options);
    Fd fd = ask("CONNECT " + target()); // and nothing more
    std::string answer = read_to_end(fd.get());
    EXPECT_TRUE(starts_with(answer, "HTTP/1.1 408 Request Timeout\r\n")) << answer;
    EXPECT_EQ(body_of(answer), "no whole request head within 0.2 s\n");
}

TEST_F(NetproxyTest, UnreachableHostIsBadGateway) {
    // A port nobody listens on: bound, never listened, and closed.
    Fd probe(::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0));
    sockaddr_in a = loopback(0);
    ASSERT_EQ(::bind(probe.get(), reinterpret_cast<sockaddr*>(&a), sizeof a), 0);
    socklen_t size = sizeof a;
    ASSERT_EQ(::getsockname(probe.get(), reinterpret_cast<sockaddr*>(&a), &size), 0);
    const std::string closed = "127.0.0.1:" + std::to_string(ntohs(a.sin_port));
    probe.reset();
    start({closed});
    Fd fd = ask("CONNECT " + closed + " HTTP/1.1\r\n\r\n");
    std::string answer = read_to_end(fd.get());
    EXPECT_TRUE(starts_with(answer, "HTTP/1.1 502 Bad Gateway\r\n")) << answer;
    EXPECT_EQ(body_of(answer), "cannot connect to '" + closed + "': Connection refused\n");
    fd.reset();
    EXPECT_TRUE(eventually([&] { return all_closed(); }));
}

TEST_F(NetproxyTest, SlowConnectIsGatewayTimeout) {
    // A listener whose queue is full: the kernel drops further SYNs, so a connect hangs.
    Fd full(::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0));
    sockaddr_in a = loopback(0);
    ASSERT_EQ(::bind(full.get(), reinterpret_cast<sockaddr*>(&a), sizeof a), 0);
    ASSERT_EQ(::listen(full.get(), 0), 0);
    socklen_t size = sizeof a;
    ASSERT_EQ(::getsockname(full.get(), reinterpret_cast<sockaddr*>(&a), &size), 0);
    std::vector<Fd> fillers;
    bool hangs = false;
    while (!hangs && fillers.size() < 16) {
        Fd c(::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0));
        timeval tv{0, 200'000};
        ::setsockopt(c.get(), SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof tv);
        hangs = ::connect(c.get(), reinterpret_cast<sockaddr*>(&a), sizeof a) != 0;
        fillers.push_back(std::move(c));
    }
    if (!hangs)
        GTEST_SKIP() << "this kernel accepts every connect on a full listener";
    const std::string slow = "127.0.0.1:" + std::to_string(ntohs(a.sin_port));
    ProxyOptions options;
    options.connect_timeout = 300ms;
    start({slow}, options);
    Fd fd = ask("CONNECT " + slow + " HTTP/1.1\r\n\r\n");
    std::string answer = read_to_end(fd.get());
    EXPECT_TRUE(starts_with(answer, "HTTP/1.1 504 Gateway Timeout\r\n")) << answer;
    EXPECT_EQ(body_of(answer), "cannot connect to '" + slow + "': no connection within 0.3 s\n");
    fd.reset();
    EXPECT_TRUE(eventually([&] { return all_closed(); }));
}

TEST_F(NetproxyTest, ManyConnectionsAtOnce) {
    start({target()});
    constexpr int k_each = 40;
    std::vector<Fd> plain;
    std::vector<Fd> tunnels;
    for (int i = 0; i < k_each; ++i) {
        plain.push_back(
            ask("GET http://" + target() + "/" + std::to_string(i) + " HTTP/1.1\r\n\r\n"));
        tunnels.push_back(ask("CONNECT " + target() + " HTTP/1.1\r\n\r\nECHO" + std::to_string(i)));
    }
    EXPECT_TRUE(eventually([&] { return on_loop([this] { return m_proxy->connections(); }) > 0; }));
    for (int i = 0; i < k_each; ++i) {
        std::string answer = read_to_end(plain[i].get());
        EXPECT_TRUE(starts_with(body_of(answer), "GET /" + std::to_string(i) + " HTTP/1.1\r\n"))
            << answer;
        std::string expected =
            "HTTP/1.1 200 Connection established\r\n\r\nECHO" + std::to_string(i);
        EXPECT_EQ(read_exactly(tunnels[i].get(), expected.size()), expected);
    }
    plain.clear();
    tunnels.clear();
    EXPECT_TRUE(eventually([&] { return m_origin.ended() == 2 * k_each; }));
    EXPECT_TRUE(eventually([&] { return all_closed(); }));
}

TEST_F(NetproxyTest, ClientLeavingMidTunnelClosesBothSides) {
    start({target()});
    Fd fd = tunnel();
    ASSERT_TRUE(write_all(fd.get(), "ECHOping"));
    EXPECT_EQ(read_exactly(fd.get(), 8), "ECHOping");
    EXPECT_TRUE(
        eventually([&] { return on_loop([this] { return m_forwarder->connections(); }) == 1; }));
    fd.reset();
    EXPECT_TRUE(eventually([&] { return m_origin.ended() == 1; }))
        << "the origin never saw the end";
    EXPECT_TRUE(eventually([&] { return all_closed(); }));
}

TEST_F(NetproxyTest, HeadArrivingAByteAtATime) {
    start({target()});
    const std::string request = "CONNECT " + target() + " HTTP/1.1\r\nUser-Agent: slow\r\n\r\nECHO";
    Fd fd = connect_to(m_forwarder->port());
    const int one = 1;
    ::setsockopt(fd.get(), IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    for (char c : request) {
        ASSERT_TRUE(write_all(fd.get(), std::string_view(&c, 1)));
        std::this_thread::sleep_for(1ms);
    }
    const std::string expected = "HTTP/1.1 200 Connection established\r\n\r\nECHO";
    EXPECT_EQ(read_exactly(fd.get(), expected.size()), expected);
}

TEST_F(NetproxyTest, ClosingTheProxyEndsItsTunnels) {
    start({target()});
    Fd fd = tunnel();
    ASSERT_TRUE(write_all(fd.get(), "ECHOping"));
    EXPECT_EQ(read_exactly(fd.get(), 8), "ECHOping");
    on_loop([this] {
        m_proxy->close();
        return 0;
    });
    EXPECT_EQ(read_to_end(fd.get()), "");
    EXPECT_TRUE(eventually([&] { return m_origin.ended() == 1; }));
    fd.reset();
    EXPECT_TRUE(eventually([&] { return all_closed(); }));
}

TEST_F(NetproxyTest, RefusalCallbackMayCloseTheProxy) {
    start({target()});
    on_loop([this] {
        m_proxy.reset();
        auto rules = parse_host_rules({target()});
        ProxyOptions closing;
        closing.on_refused = [this](const std::string&, int) { m_proxy->close(); };
        auto proxy = Proxy::start(&m_loop, m_socket, std::move(*rules), std::move(closing));
        EXPECT_TRUE(proxy);
        m_proxy = std::move(*proxy);
        return 0;
    });
    Fd fd = ask("CONNECT example.org:443 HTTP/1.1\r\n\r\n");
    EXPECT_EQ(read_to_end(fd.get()), "");
    fd.reset();
    EXPECT_TRUE(eventually([&] { return all_closed(); }));
}

TEST_F(NetproxyTest, SocketIsPrivateAndRemovedOnClose) {
    start({target()});

    struct stat st {};

    ASSERT_EQ(::stat(m_socket.c_str(), &st), 0);
    EXPECT_TRUE(S_ISSOCK(st.st_mode));
    EXPECT_EQ(st.st_mode & 07777, 0600u);
    on_loop([this] {
        m_proxy->close();
        return 0;
    });
    EXPECT_NE(::access(m_socket.c_str(), F_OK), 0);
    // With no proxy behind it, the forwarder closes what it accepts.
    Fd fd = ask("CONNECT " + target() + " HTTP/1.1\r\n\r\n");
    EXPECT_EQ(read_to_end(fd.get()), "");
    EXPECT_TRUE(
        eventually([&] { return on_loop([this] { return m_forwarder->connections(); }) == 0; }));
}

TEST_F(NetproxyTest, StartErrorsSayWhat) {
    start({target()});
    auto again = on_loop([this] { return Proxy::start(&m_loop, m_socket, {}); });
    ASSERT_FALSE(again);
    EXPECT_EQ(again.error().exit(), Exit::os);
    EXPECT_EQ(again.error().message(),
              "cannot listen on '" + m_socket + "': Address already in use");
    auto too_long =
        on_loop([this] { return Proxy::start(&m_loop, m_dir + "/" + std::string(120, 'x'), {}); });
    ASSERT_FALSE(too_long);
    EXPECT_EQ(too_long.error().exit(), Exit::usage);
    const int port = m_forwarder->port();
    auto taken = on_loop([&] { return Forwarder::start(&m_loop, port, m_socket); });
    ASSERT_FALSE(taken);
    EXPECT_EQ(taken.error().message(),
              "cannot listen on '127.0.0.1:" + std::to_string(port) + "': Address already in use");

    // The proxy that failed did not remove the socket of the one that runs.
    struct stat st {};

    EXPECT_EQ(::stat(m_socket.c_str(), &st), 0);
}

// An HTTPS request through a tunnel to `host`:`port`, the client trusting only `roots`: what came
// back (the host's answer, or the proxy's own), or "" when the client's TLS failed.
std::string https_get(int forwarder, const std::string& host, int port, const std::string& roots,
                      const std::string& path) {
    Fd fd = connect_to(forwarder);
    std::string target = host + ":" + std::to_string(port);
    EXPECT_TRUE(
        write_all(fd.get(), "CONNECT " + target + " HTTP/1.1\r\nHost: " + target + "\r\n\r\n"));
    const std::string ok = "HTTP/1.1 200 Connection established\r\n\r\n";
    EXPECT_EQ(read_exactly(fd.get(), ok.size()), ok);
    Tls tls;
    if (!tls.client(fd.get(), roots, host))
        return {};
    EXPECT_TRUE(tls.write("GET " + path + " HTTP/1.1\r\nHost: " + host
                          + "\r\nAuthorization: Bearer forged\r\nConnection: keep-alive\r\n\r\n"));
    return tls.read_to_end();
}

TEST_F(NetproxyTest, AGrantsCredentialIsWrittenIntoHttpsRequestsOnItsPath) {
    test::TempDir sion_home, world_home, rogue_home;
    auto sion = EgressAuthority::open(sion_home.path());
    auto world = EgressAuthority::open(world_home.path());
    auto rogue = EgressAuthority::open(rogue_home.path());
    ASSERT_TRUE(sion && world && rogue);
    TlsOrigin granted(**(*world)->issue("localhost"));
    TlsOrigin untrusted(**(*rogue)->issue("localhost")); // refused: nobody trusts its authority
    granted.start();
    untrusted.start();
    std::string g = "localhost:" + std::to_string(granted.port());
    std::string u = "localhost:" + std::to_string(untrusted.port());
    ProxyOptions o;
    o.grants = {{"localhost", granted.port(), "/v1", "Authorization", "Bearer the-secret"},
                {"localhost", untrusted.port(), "/", "Authorization", "Bearer the-secret"}};
    o.authority = sion->get();
    o.trusted = (*world)->certificate();
    std::vector<std::string> failed;
    o.on_failed = [&](const std::string& why) {
        std::lock_guard lock(m_mutex);
        failed.push_back(why);
    };
    start({g, u}, std::move(o));
    int port = m_forwarder->port();

    // On the grant's path: the host gets the credential, not the client's; the client sion's
    // certificate, which it trusts, and the host's answer.
    std::string answer =
        https_get(port, "localhost", granted.port(), (*sion)->certificate(), "/v1/things");
    EXPECT_EQ(answer.rfind("HTTP/1.1 200 OK\r\n", 0), 0U) << answer;
    // Off it: no credential; the client's own goes as it was.
    (void)https_get(port, "localhost", granted.port(), (*sion)->certificate(), "/v2");
    // A path a server could read as another is off it too.
    (void)https_get(port, "localhost", granted.port(), (*sion)->certificate(), "/v1/../admin");
    auto heads = granted.heads();
    ASSERT_EQ(heads.size(), 3U);
    EXPECT_NE(heads[0].find("\r\nAuthorization: Bearer the-secret\r\n"), std::string::npos)
        << heads[0];
    EXPECT_EQ(heads[0].find("forged"), std::string::npos);
    EXPECT_NE(heads[0].find("\r\nConnection: close\r\n"), std::string::npos);
    for (size_t i : {1U, 2U}) {
        EXPECT_EQ(heads[i].find("the-secret"), std::string::npos) << heads[i];
        EXPECT_NE(heads[i].find("Bearer forged"), std::string::npos) << heads[i];
    }
    // A client that trusts only the host's real authority does not trust what the proxy shows it.
    EXPECT_EQ(https_get(port, "localhost", granted.port(), (*world)->certificate(), "/v1/x"), "");

    // A host whose certificate does not verify: refused with 502, never re-signed; it gets no
    // request at all.
    std::string refused =
        https_get(port, "localhost", untrusted.port(), (*sion)->certificate(), "/v1/x");
    EXPECT_EQ(refused.rfind("HTTP/1.1 502 Bad Gateway\r\n", 0), 0U) << refused;
    EXPECT_NE(refused.find("the certificate of localhost does not verify"), std::string::npos);
    EXPECT_TRUE(untrusted.heads().empty());
    EXPECT_TRUE(eventually([&] {
        std::lock_guard lock(m_mutex);
        return !failed.empty();
    }));
    EXPECT_TRUE(eventually([this] { return all_closed(); }));
}

TEST_F(NetproxyTest, AGrantsCredentialGoesIntoPlainHttpOnItsPathOnly) {
    std::string t = target();
    ProxyOptions o;
    o.grants = {{"127.0.0.1", m_origin.port(), "/v1", "X-Api-Key", "the-secret", false}};
    start({t}, std::move(o));
    Fd on =
        ask("GET http://" + t + "/v1/x HTTP/1.1\r\nHost: " + t + "\r\nX-Api-Key: forged\r\n\r\n");
    std::string a = read_to_end(on.get());
    EXPECT_NE(body_of(a).find("\r\nX-Api-Key: the-secret\r\n"), std::string::npos) << a;
    EXPECT_EQ(a.find("forged"), std::string::npos);
    Fd off = ask("GET http://" + t + "/v2 HTTP/1.1\r\nHost: " + t + "\r\n\r\n");
    EXPECT_EQ(read_to_end(off.get()).find("the-secret"), std::string::npos);
}

// A grant for https is never written into a plain request, which anyone on the way could read.
TEST_F(NetproxyTest, AnHttpsGrantGoesIntoNoPlainRequest) {
    std::string t = target();
    ProxyOptions o;
    o.grants = {{"127.0.0.1", m_origin.port(), "/", "X-Api-Key", "the-secret", true}};
    start({t}, std::move(o));
    Fd plain = ask("GET http://" + t + "/v1 HTTP/1.1\r\nHost: " + t + "\r\n\r\n");
    std::string a = read_to_end(plain.get());
    EXPECT_EQ(a.rfind("HTTP/1.1 200", 0), 0U) << a;
    EXPECT_EQ(a.find("the-secret"), std::string::npos) << a;
}

} // namespace
} // namespace sion::sandboxd
