// SPDX-License-Identifier: MIT
// A tiny HTTP/1.1 server on 127.0.0.1 (or another loopback address) inside a test process, for the tests of lib/http, lib/uv_http
// and lib/models/wire: it reads one request per connection and hands it to the test's handler.
#pragma once

#include "lib/fd.hpp"
#include "lib/text.hpp"

#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <functional>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

namespace sion::test {

struct Received {
    std::string head; // request line and header lines, up to the blank line
    std::string body;
};

// Listens on a port of the kernel's choosing and serves each connection on a thread of its own
// with `handler`, which writes the answer to `fd`; the connection closes when the handler returns.
// It stops when dropped, and by itself after k_lifetime, so a test that hangs cannot keep it alive.
class TestServer {
public:
    using Handler = std::function<void(const Received&, int fd, const TestServer&)>;
    static constexpr auto k_lifetime = std::chrono::seconds(30);

    // `address`: the IPv4 loopback address it listens on.
    explicit TestServer(Handler handler, std::string address = "127.0.0.1")
        : m_handler(std::move(handler)), m_address(std::move(address)) {
        m_listen = Fd(::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0));
        sockaddr_in addr{};
        addr.sin_family = AF_INET;
        EXPECT_EQ(::inet_pton(AF_INET, m_address.c_str(), &addr.sin_addr), 1) << m_address;
        socklen_t len = sizeof addr;
        auto* sa = reinterpret_cast<sockaddr*>(&addr);
        EXPECT_EQ(::bind(m_listen.get(), sa, len), 0);
        EXPECT_EQ(::listen(m_listen.get(), 128), 0);
        EXPECT_EQ(::getsockname(m_listen.get(), sa, &len), 0);
        m_port = ntohs(addr.sin_port);
        m_thread = std::thread([this] { run(); });
    }

    TestServer(const TestServer&) = delete;
    TestServer& operator=(const TestServer&) = delete;
    TestServer(TestServer&&) = delete;
    TestServer& operator=(TestServer&&) = delete;

    ~TestServer() {
        m_stop = true;
        m_thread.join();
        for (auto& t : m_connections)
            t.join();
    }

    [[nodiscard]] std::string url(const std::string& path = "") const {
        return "http://" + m_address + ":" + std::to_string(m_port) + path;
    }

    [[nodiscard]] int port() const { return m_port; }

    // Requests read whole and handed to the handler so far.
    [[nodiscard]] int requests() const { return m_requests; }
    // Connections accepted so far, whether or not a request came on them.
    [[nodiscard]] int accepted() const { return m_accepted; }

    [[nodiscard]] bool stopping() const {
        return m_stop || std::chrono::steady_clock::now() > m_deadline;
    }

    // Waits until `done` holds or the server stops; false if it stopped first.
    bool wait_for(const std::function<bool()>& done) const {
        while (!done()) {
            if (stopping())
                return false;
            std::this_thread::sleep_for(std::chrono::milliseconds(2));
        }
        return true;
    }

    // Writes all of `text`; false when the peer has gone.
    static bool send_text(int fd, std::string_view text) {
        while (!text.empty()) {
            ssize_t n = ::send(fd, text.data(), text.size(), MSG_NOSIGNAL);
            if (n <= 0)
                return false;
            text.remove_prefix(static_cast<size_t>(n));
        }
        return true;
    }

private:
    void run() {
        while (!stopping()) {
            pollfd p{m_listen.get(), POLLIN, 0};
            if (::poll(&p, 1, 20) <= 0)
                continue;
            Fd conn(::accept4(m_listen.get(), nullptr, nullptr, SOCK_CLOEXEC));
            if (!conn)
                continue;
            ++m_accepted;
            m_connections.emplace_back([this, fd = std::move(conn)] { serve(fd.get()); });
        }
    }

    void serve(int fd) {
        Received request;
        if (!read_request(fd, request)) {
            // Not HTTP (a TLS hello, say): answer in plain HTTP as a real server would.
            send_text(fd, "HTTP/1.1 400 Bad Request\r\nConnection: close\r\n\r\n");
            return;
        }
        ++m_requests;
        m_handler(request, fd, *this);
    }

    bool read_some(int fd, std::string& into) const {
        while (!stopping()) {
            pollfd p{fd, POLLIN, 0};
            if (::poll(&p, 1, 20) <= 0)
                continue;
            char buf[4096];
            ssize_t n = ::recv(fd, buf, sizeof buf, 0);
            if (n <= 0)
                return false;
            into.append(buf, static_cast<size_t>(n));
            return true;
        }
        return false;
    }

    bool read_request(int fd, Received& request) const {
        std::string data;
        size_t end = 0;
        while ((end = data.find("\r\n\r\n")) == std::string::npos) {
            if (!read_some(fd, data) || data[0] < 'A' || data[0] > 'Z' || data.size() > 65536)
                return false;
        }
        request.head = data.substr(0, end + 2);
        request.body = data.substr(end + 4);
        size_t length = 0;
        size_t at = request.head.find("Content-Length: ");
        if (at != std::string::npos)
            length = std::stoul(request.head.substr(at + 16));
        while (request.body.size() < length)
            if (!read_some(fd, request.body))
                return false;
        return true;
    }

    Handler m_handler;
    std::string m_address;
    Fd m_listen;
    int m_port = 0;
    std::atomic<bool> m_stop{false};
    std::atomic<int> m_requests{0};
    std::atomic<int> m_accepted{0};
    std::chrono::steady_clock::time_point m_deadline =
        std::chrono::steady_clock::now() + k_lifetime;
    std::vector<std::thread> m_connections; // touched by the accepting thread, then joined
    std::thread m_thread;
};

// A whole response with a Content-Length, after which the server closes the connection.
inline std::string respond(int status, const std::string& reason, const std::string& headers,
                           const std::string& body) {
    return "HTTP/1.1 " + std::to_string(status) + " " + reason + "\r\n" + headers
           + "Content-Length: " + std::to_string(body.size()) + "\r\nConnection: close\r\n\r\n"
           + body;
}

// One chunk of a chunked body.
inline std::string chunk(const std::string& data) {
    return format("%zx\r\n", data.size()) + data + "\r\n";
}

} // namespace sion::test
