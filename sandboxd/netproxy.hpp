// SPDX-License-Identifier: MIT
// The declared network (bubblewrap): the sandbox has only loopback. Outside it, a Proxy listens on
// a Unix socket that is bound into the sandbox and admits only the declared hosts; inside, a
// Forwarder listens on 127.0.0.1:PORT and relays each TCP connection to that socket, and the
// command's environment points HTTP_PROXY and the others at it (proxy_environment).
//
//   outside:  Proxy::start(loop, "<private dir>/proxy.sock", rules, options)
//   bwrap:    --bind <private dir>/proxy.sock /run/sion/proxy.sock   (any path inside will do)
//   inside:   Forwarder::start(loop, 0, "/run/sion/proxy.sock") in a process of the sandbox's
//             network namespace (its pid 1), then proxy_environment(forwarder->port())
//
// The proxy speaks HTTP/1.1 proxy requests. "CONNECT host:port" (HTTPS, or any TCP) to a declared
// host: resolved, connected, "HTTP/1.1 200 Connection established", then bytes both ways. An
// absolute-form "GET http://host[:port]/path" (any method) to a declared host: the request goes to
// the origin in origin-form with "Connection: close", and the answer comes back. Answers of its
// own: 403 for a host that is not declared (a one-line body names it), 400 for anything that is not
// a proxy request, 431 for a head over max_head bytes, 408 when the head takes longer than
// head_timeout, 502 when the host cannot be resolved or connected to (the body says why), 504
// when that takes longer than connect_timeout; after one of these it drops what the client still
// sends, for a second at most, so the answer is not lost to a reset. A relayed connection lasts
// until both sides ended or one failed; it has no idle time limit.
//
// Hosts are checked (host_allowed) before anything is resolved. An address is reached only when
// declared as an address; a declared name is connected wherever it resolves to, loopback and
// link-local addresses included: declaring a name trusts its DNS.
//
// Threads: everything happens on the loop's thread, callbacks included. Lifetime: close() (or the
// destructor) stops listening and closes every connection, but the handles are freed by their
// close callbacks: the loop must run until they have, after which uv_loop_close succeeds.
// Neither class prints anything.
#pragma once

#include "lib/result.hpp"
#include "sandboxd/egress_ca.hpp"
#include "sandboxd/host_pattern.hpp"
#include "sandboxd/netproxy_request.hpp"

#include <uv.h>

#include <chrono>
#include <cstddef>
#include <functional>
#include <memory>
#include <string>
#include <utility>
#include <vector>

namespace sion::sandboxd {

struct ProxyOptions {
    // Called for each refused connection, before its 403 is sent, with the host in canonical form
    // and the port: the program logs it. It may close the proxy.
    std::function<void(const std::string& host, int port)> on_refused;
    // The grants (netproxy_request.hpp): each one's credential is written into the requests to its
    // host and port that are on its path — a plain HTTP request's head as it goes on, and a
    // tunnel's (HTTPS) by ending its TLS here (egress_tls.hpp) with a certificate from
    // `authority`, the host reached with TLS verified against `trusted` (PEM roots, parsed once by
    // start(): Exit::config when none parses). A tunnel to a host with no grant is relayed as it
    // is. Grants need an authority.
    std::vector<Grant> grants;
    EgressAuthority* authority = nullptr;
    std::string trusted;
    // Called when an ended TLS failed (the host's certificate, either side's TLS), with why: the
    // program logs it. The client was answered 502 where it could be.
    std::function<void(const std::string& why)> on_failed;
    std::chrono::milliseconds head_timeout{10'000};    // from accepting to the end of the head
    std::chrono::milliseconds connect_timeout{30'000}; // resolving and connecting, all addresses
    size_t max_head = 16 * 1024;                       // request line and headers, in bytes
};

class Proxy {
public:
    // Listens on the Unix socket `socket_path`, which must not exist (its directory should be
    // private to the runtime). The socket is made mode 0600 before it accepts anyone: inside the
    // sandbox's user namespace the sandbox's uid is the runtime's uid outside, so the command can
    // connect and other users of the machine cannot. close() removes it. Errors: Exit::os
    // ("cannot listen on '<path>': Address already in use"), Exit::usage for a path longer than a
    // socket address holds. On error, run the loop all the same: a handle may be closing.
    [[nodiscard]] static Result<std::unique_ptr<Proxy>> start(uv_loop_t* loop,
                                                              std::string socket_path,
                                                              std::vector<HostRule> allow,
                                                              ProxyOptions options = {});

    Proxy(const Proxy&) = delete;
    Proxy& operator=(const Proxy&) = delete;
    ~Proxy(); // close()

    void close();
    // Connections accepted and not yet fully closed, for tests and status lines.
    [[nodiscard]] size_t connections() const;

    struct Impl;

private:
    explicit Proxy(std::shared_ptr<Impl> impl) : m_impl(std::move(impl)) {}

    std::shared_ptr<Impl> m_impl;
};

class Forwarder {
public:
    // Listens on 127.0.0.1:port (0: a port the kernel picks; port() says which) and relays every
    // connection to the Unix socket `socket_path`, connected afresh for each. A connection the
    // socket refuses is closed. Errors: Exit::os ("cannot listen on '127.0.0.1:8080': Address
    // already in use"). On error, run the loop all the same.
    [[nodiscard]] static Result<std::unique_ptr<Forwarder>> start(uv_loop_t* loop, int port,
                                                                  std::string socket_path);

    Forwarder(const Forwarder&) = delete;
    Forwarder& operator=(const Forwarder&) = delete;
    ~Forwarder(); // close()

    void close();
    [[nodiscard]] int port() const;
    [[nodiscard]] size_t connections() const;

    struct Impl;

private:
    explicit Forwarder(std::shared_ptr<Impl> impl) : m_impl(std::move(impl)) {}

    std::shared_ptr<Impl> m_impl;
};

// The environment a sandboxed command gets with the declared network: HTTP_PROXY, HTTPS_PROXY and
// ALL_PROXY (and lower-case) set to "http://127.0.0.1:<port>", and NODE_USE_ENV_PROXY=1, without
// which Node ignores them. With `loopback_direct`, NO_PROXY
// (and no_proxy) too, set to "localhost,127.0.0.1,::1": the sandbox's loopback stays its own, so a
// server the command starts there is reached directly. Through the proxy those names mean the
// machine's loopback, reachable only when declared; a test that reaches a declared server on the
// machine's loopback passes false, or clears NO_PROXY for that one client.
[[nodiscard]] std::vector<std::pair<std::string, std::string>>
proxy_environment(int port, bool loopback_direct = true);

} // namespace sion::sandboxd
