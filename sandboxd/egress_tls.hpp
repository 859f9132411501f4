// SPDX-License-Identifier: MIT
// The egress proxy between a sandboxed client and a host it holds a grant for, both over TLS
// (seed 002: the proxy writes the key a sandboxed program needs; the program never holds it). The
// proxy ends the client's TLS with the host's certificate from sion's own authority
// (egress_ca.hpp), which only sandboxes trust, and reaches the host over TLS of its own, verified
// as any client verifies (the host's name against its certificate, the chain against the trusted
// roots): a host whose certificate fails is refused, never re-signed.
//
// In between it reads the client's first request head and lets `rewrite` change it (the grant's
// credential added where the path is the grant's); everything after passes as it is. The head
// sent on asks the host to close the connection after its answer (Connection: close), so that a
// later request on the same connection, which is not rewritten, never goes on; the client opens
// another, as HTTP/1.1 clients do. Both sides are told only http/1.1 (ALPN).
//
// No I/O here: bytes in from either side, bytes out for either side, so the proxy's event loop
// (netproxy.cpp) moves them and a test can play all four ends in memory. Threads: one at a time.
#pragma once

#include "lib/result.hpp"
#include "sandboxd/egress_ca.hpp"

#include <functional>
#include <memory>
#include <string>
#include <string_view>

namespace sion::sandboxd {

// The roots a host's chain must reach, parsed once and shared by every interception: a system's
// bundle takes milliseconds to parse, too long for each connection.
class TrustedRoots {
public:
    // Exit::config for PEM in which no certificate parses.
    [[nodiscard]] static Result<std::shared_ptr<TrustedRoots>> parse(std::string_view pem);

    TrustedRoots(const TrustedRoots&) = delete;
    TrustedRoots& operator=(const TrustedRoots&) = delete;
    ~TrustedRoots();

    struct Impl;
    [[nodiscard]] Impl& impl() const { return *m_impl; }

private:
    explicit TrustedRoots(std::unique_ptr<Impl> impl);
    std::unique_ptr<Impl> m_impl;
};

class Interception {
public:
    struct Setup {
        std::string host; // as the client asked for it, and the host's name
        const EgressAuthority::Issued* certificate; // the host's, from sion's authority
        std::shared_ptr<TrustedRoots> trusted;      // the roots the host's chain must reach
        // The client's first request head (its request line and headers, CR LF each, and the
        // blank line) as it is to go to the host.
        std::function<std::string(std::string_view head)> rewrite;
        size_t max_head = 64 * 1024; // a longer head is refused: 431
    };

    // Exit::software when mbedTLS cannot be set up (a certificate that does not parse).
    [[nodiscard]] static Result<std::unique_ptr<Interception>> start(Setup setup);

    Interception(const Interception&) = delete;
    Interception& operator=(const Interception&) = delete;
    ~Interception();

    // What came from the client, or from the host (TLS records, in any pieces).
    void from_client(std::string_view bytes);
    void from_host(std::string_view bytes);
    // Either side ended its stream (TCP end of file, or an error).
    void client_ended();
    void host_ended();

    // What is to be sent to each side now (TLS records); taken, the buffer is empty.
    [[nodiscard]] std::string take_for_client();
    [[nodiscard]] std::string take_for_host();

    // Nothing more will come for either side: both may be closed once what was taken is sent.
    [[nodiscard]] bool finished() const;

    // Why it ended other than well, for the proxy's log: "the certificate of api.example.com does
    // not verify: …", "the client's TLS failed: …"; "" while it goes on or when it ended well.
    [[nodiscard]] const std::string& failure() const;

    struct Impl;

private:
    explicit Interception(std::unique_ptr<Impl> impl);

    std::unique_ptr<Impl> m_impl;
};

} // namespace sion::sandboxd
