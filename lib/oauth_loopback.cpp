// SPDX-License-Identifier: MIT
// The loopback listener a browser comes back to, and the PKCE pair: one of each for every sign-in.
#include "lib/oauth_loopback.hpp"

#include "lib/base64.hpp"
#include "lib/hash.hpp"
#include "lib/secret_bytes.hpp"
#include "lib/text.hpp"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>

namespace sion::oauth_loopback {

namespace {

using Clock = std::chrono::steady_clock;

constexpr size_t k_verifier_bytes = 32; // 43 base64url characters, RFC 7636's minimum
constexpr size_t k_state_bytes = 24;
constexpr size_t k_max_request = 16 << 10;
constexpr auto k_request_time = std::chrono::seconds(5);

int remaining_ms(Clock::time_point deadline) {
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now());
    return left.count() <= 0 ? 0 : static_cast<int>(left.count());
}

// 127.0.0.1:`port` bound and listening, or an invalid Fd with errno set. A port another sign-in
// just closed (TIME_WAIT) is taken again; one something listens on is not.
Fd bind_loopback(int port, int& bound) {
    Fd fd(::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0));
    if (!fd)
        return fd;
    int on = 1;
    (void)::setsockopt(fd.get(), SOL_SOCKET, SO_REUSEADDR, &on, sizeof on);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    addr.sin_port = htons(static_cast<uint16_t>(port));
    socklen_t len = sizeof addr;
    auto* sa = reinterpret_cast<sockaddr*>(&addr);
    if (::bind(fd.get(), sa, len) != 0 || ::listen(fd.get(), 8) != 0
        || ::getsockname(fd.get(), sa, &len) != 0) {
        int saved = errno;
        fd.reset();
        errno = saved;
        return fd;
    }
    bound = ntohs(addr.sin_port);
    return fd;
}

// The request line's target ("/callback?code=…") of one HTTP request read from `fd`, within a
// few seconds; "" for anything else.
std::string read_target(int fd) {
    std::string head;
    auto deadline = Clock::now() + k_request_time;
    while (head.find("\r\n\r\n") == std::string::npos && head.size() < k_max_request) {
        pollfd p{fd, POLLIN, 0};
        if (::poll(&p, 1, remaining_ms(deadline)) <= 0)
            return {};
        char buf[2048];
        ssize_t n = ::recv(fd, buf, sizeof buf, 0);
        if (n <= 0)
            return {};
        head.append(buf, static_cast<size_t>(n));
    }
    if (!head.starts_with("GET "))
        return {};
    size_t end = head.find(' ', 4);
    return end == std::string::npos ? std::string() : head.substr(4, end - 4);
}

void answer(int fd, int status, const char* text) {
    std::string body = std::string("<!doctype html><title>sion</title><p>") + text + "</p>\n";
    std::string head = "HTTP/1.1 " + std::to_string(status) + (status == 200 ? " OK" : " Bad Request")
                       + "\r\nContent-Type: text/html; charset=utf-8\r\nContent-Length: "
                       + std::to_string(body.size()) + "\r\nConnection: close\r\n\r\n";
    (void)write_all(fd, head + body);
}

bool is_return(std::string_view target, std::string_view path, std::string_view state) {
    std::string_view at = target.substr(0, target.find('?'));
    return at == path && target.find('?') != std::string_view::npos
           && constant_time_equal(query_value(target, "state"), state);
}

} // namespace

Result<Pkce> make_pkce() {
    SION_TRY(std::string verifier, random_bytes(k_verifier_bytes));
    SION_TRY(std::string state, random_bytes(k_state_bytes));
    Pkce pkce;
    pkce.verifier = base64url_encode(verifier);
    pkce.challenge = base64url_encode(sha256(pkce.verifier));
    pkce.state = base64url_encode(state);
    wipe(verifier);
    return pkce;
}

std::string query_value(std::string_view address, std::string_view name) {
    size_t q = address.find('?');
    std::string_view query = q == std::string_view::npos ? address : address.substr(q + 1);
    query = query.substr(0, query.find('#'));
    while (!query.empty()) {
        std::string_view pair = query.substr(0, query.find('&'));
        query.remove_prefix(std::min(query.size(), pair.size() + 1));
        size_t eq = pair.find('=');
        if (percent_decode(pair.substr(0, eq), true) == name)
            return eq == std::string_view::npos ? std::string()
                                                : percent_decode(pair.substr(eq + 1), true);
    }
    return {};
}

Result<Listener> Listener::listen(int port, bool or_another) {
    int bound = 0;
    Fd fd = bind_loopback(port, bound);
    if (!fd && port != 0 && errno == EADDRINUSE && !or_another)
        return sys_error(Exit::unavailable, errno,
                         "cannot listen on 127.0.0.1:%d for the browser's return", port);
    if (!fd && port != 0 && errno == EADDRINUSE)
        fd = bind_loopback(0, bound);
    if (!fd)
        return sys_error(Exit::os, errno, "cannot listen on 127.0.0.1 for the browser's return");
    return Listener(std::move(fd), bound);
}

std::string Listener::address(std::string_view path) const {
    return "http://127.0.0.1:" + std::to_string(m_port) + std::string(path);
}

Result<std::string> Listener::wait(std::string_view path, std::string_view state, int in,
                                   std::chrono::milliseconds patience) const {
    std::string pasted;
    bool reading = in >= 0;
    auto deadline = Clock::now() + patience;
    while (remaining_ms(deadline) > 0) {
        pollfd p[2] = {{m_fd.get(), POLLIN, 0}, {reading ? in : -1, POLLIN, 0}};
        int n = ::poll(p, 2, remaining_ms(deadline));
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0)
            return sys_error(Exit::os, errno, "cannot wait for the authorization");
        if ((p[0].revents & POLLIN) != 0) {
            Fd conn(::accept4(m_fd.get(), nullptr, nullptr, SOCK_CLOEXEC));
            if (!conn)
                continue;
            std::string target = read_target(conn.get());
            if (!is_return(target, path, state)) {
                answer(conn.get(), 400, "This is not the answer sion is waiting for.");
                continue;
            }
            answer(conn.get(), 200, "sion has the answer: you may close this page.");
            return "http://127.0.0.1:" + std::to_string(m_port) + target;
        }
        if ((p[1].revents & (POLLIN | POLLHUP)) != 0) {
            char buf[4096];
            ssize_t got = ::read(in, buf, sizeof buf);
            if (got <= 0) {
                reading = false; // the input ended: only the browser can answer now
                continue;
            }
            pasted.append(buf, static_cast<size_t>(got));
            // Blank lines are passed over, every one that came in this read.
            for (size_t line; (line = pasted.find('\n')) != std::string::npos;) {
                std::string address = pasted.substr(0, line);
                pasted.erase(0, line + 1);
                size_t first = address.find_first_not_of(" \t\r");
                if (first != std::string::npos)
                    return address.substr(first, address.find_last_not_of(" \t\r") + 1 - first);
            }
            if (pasted.size() > k_max_request)
                pasted.clear();
        }
    }
    return make_error(Exit::timeout, "no answer to the authorization came within %lld seconds",
                      static_cast<long long>(
                          std::chrono::duration_cast<std::chrono::seconds>(patience).count()));
}

} // namespace sion::oauth_loopback
