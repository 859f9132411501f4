// SPDX-License-Identifier: MIT
// The person's consent: at a terminal (a browser back to 127.0.0.1, or an address pasted), or
// headless (the authorization URL fetched, its redirect taken).
#include "mcpd/oauth_wire.hpp"

#include "lib/child.hpp"
#include "lib/fd.hpp"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>

extern char** environ; // NOLINT: POSIX's own declaration

namespace sion::mcpd::oauth {

namespace {

using Clock = std::chrono::steady_clock;

constexpr size_t k_max_request = 16 << 10;
constexpr auto k_request_time = std::chrono::seconds(5);

std::string callback_uri(int port) {
    return "http://127.0.0.1:" + std::to_string(port) + "/callback";
}

// A socket listening on 127.0.0.1:`port` (0: the kernel's choice), or -1 with errno set.
int listen_loopback(int port, int& bound) {
    Fd fd(::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0));
    if (!fd)
        return -1;
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    addr.sin_port = htons(static_cast<uint16_t>(port));
    socklen_t len = sizeof addr;
    auto* sa = reinterpret_cast<sockaddr*>(&addr);
    if (::bind(fd.get(), sa, len) != 0 || ::listen(fd.get(), 8) != 0
        || ::getsockname(fd.get(), sa, &len) != 0)
        return -1;
    bound = ntohs(addr.sin_port);
    return fd.release();
}

int remaining_ms(Clock::time_point deadline) {
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now());
    return left.count() <= 0 ? 0 : static_cast<int>(left.count());
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

// The state an authorization URL carries: a return to the callback without it is someone else's.
std::string state_of(const std::string& url) {
    size_t query = url.find('?');
    return query == std::string::npos ? std::string() : form_value(form_decode(url.substr(query + 1)), "state");
}

bool carries_state(const std::string& target, const std::string& state) {
    size_t query = target.find('?');
    if (query == std::string::npos)
        return false;
    return form_value(form_decode(target.substr(query + 1)), "state") == state;
}

// The browser, started on `url` with this process's environment (its DISPLAY, its BROWSER). The
// Child is kept until the answer is in; xdg-open has handed the URL over by then.
Result<Child> open_browser(const std::string& url) {
    ChildSpec spec;
    spec.argv = {"xdg-open", url};
    for (char** e = environ; e != nullptr && *e != nullptr; ++e)
        spec.env.emplace_back(*e);
    spec.in = Stdio::null();
    spec.out = Stdio::null();
    spec.err = Stdio::null();
    return Child::spawn(spec);
}

} // namespace

Result<std::string> TerminalConsent::redirect_uri(int preferred_port) {
    int bound = 0;
    if (m_port != 0) {
        m_listener.reset(listen_loopback(m_port, bound));
        if (!m_listener)
            return sys_error(Exit::unavailable, errno, "cannot listen on 127.0.0.1:%d for the "
                             "browser's return", m_port);
        return callback_uri(bound);
    }
    if (preferred_port != 0)
        m_listener.reset(listen_loopback(preferred_port, bound));
    if (!m_listener)
        m_listener.reset(listen_loopback(0, bound));
    if (!m_listener)
        return sys_error(Exit::os, errno, "cannot listen on 127.0.0.1 for the browser's return");
    return callback_uri(bound);
}

Result<std::string> TerminalConsent::wait(const std::string& authorization_url) {
    if (!m_listener)
        return make_error(Exit::software, "the terminal consent waits with no callback address");
    SION_CHECK(write_all(m_out, "Open this URL to authorize:\n" + authorization_url + "\n"));
    std::optional<Child> browser;
    if (!m_no_browser) {
        auto started = open_browser(authorization_url);
        if (started)
            browser = std::move(*started);
    }
    SION_CHECK(write_all(m_out, "A browser on another machine cannot come back to this one: paste "
                                "here the address it was sent to.\n"));
    std::string state = state_of(authorization_url);
    std::string pasted;
    bool reading = m_in >= 0;
    auto deadline = Clock::now() + patience;
    while (remaining_ms(deadline) > 0) {
        pollfd p[2] = {{m_listener.get(), POLLIN, 0}, {reading ? m_in : -1, POLLIN, 0}};
        int n = ::poll(p, 2, remaining_ms(deadline));
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0)
            return sys_error(Exit::os, errno, "cannot wait for the authorization");
        if ((p[0].revents & POLLIN) != 0) {
            Fd conn(::accept4(m_listener.get(), nullptr, nullptr, SOCK_CLOEXEC));
            if (!conn)
                continue;
            std::string target = read_target(conn.get());
            if (!target.starts_with("/callback") || !carries_state(target, state)) {
                answer(conn.get(), 400, "This is not the answer sion is waiting for.");
                continue;
            }
            answer(conn.get(), 200, "sion has the answer: you may close this page.");
            return "http://127.0.0.1" + target;
        }
        if ((p[1].revents & (POLLIN | POLLHUP)) != 0) {
            char buf[4096];
            ssize_t got = ::read(m_in, buf, sizeof buf);
            if (got <= 0) {
                reading = false; // the input ended: only the browser can answer now
                continue;
            }
            pasted.append(buf, static_cast<size_t>(got));
            size_t line = pasted.find('\n');
            if (pasted.size() > k_max_request)
                pasted.clear();
            if (line == std::string::npos)
                continue;
            std::string address = pasted.substr(0, line);
            pasted.erase(0, line + 1);
            if (address.find_first_not_of(" \t\r") != std::string::npos)
                return address;
        }
    }
    return make_error(Exit::timeout, "no answer to the authorization came within %lld seconds",
                      static_cast<long long>(
                          std::chrono::duration_cast<std::chrono::seconds>(patience).count()));
}

Result<std::string> HeadlessConsent::redirect_uri(int preferred_port) {
    int port = m_port != 0 ? m_port : preferred_port;
    if (port == 0) {
        // A port nothing listens on now: the answer is taken from the redirect, never received.
        int bound = 0;
        Fd probe(listen_loopback(0, bound));
        if (!probe)
            return sys_error(Exit::os, errno, "cannot find a free port on 127.0.0.1");
        port = bound;
    }
    return callback_uri(port);
}

Result<std::string> HeadlessConsent::wait(const std::string& authorization_url) {
    HttpRequest request;
    request.url = authorization_url;
    request.timeout = m_settings.timeout;
    request.ca_bundle = m_settings.ca_bundle;
    request.max_response_size = size_t{1} << 20;
    SION_TRY(HttpResponse response, http_send(request));
    auto location = response.headers.get("Location");
    if (response.status < 300 || response.status > 399 || !location)
        return make_error(Exit::no_perm, "the authorization server did not send sion back "
                          "(HTTP %d, no redirect): a person must consent", response.status);
    return std::string(*location);
}

} // namespace sion::mcpd::oauth
