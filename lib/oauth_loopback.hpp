// SPDX-License-Identifier: MIT
// A browser's way back from an authorization server to a program on this machine (RFC 8252
// section 7.3, loopback redirection), and the PKCE pair (RFC 7636, S256) and state its request
// carries: what `sion agent mcp login` (mcpd/oauth_consent.cpp) and `sion agent chatgpt login`
// (lib/models/chatgpt.hpp) share.
//
// The listener is on 127.0.0.1 only. wait() takes the first GET of the callback's path whose query
// carries the request's state, answering it with a page that says the person may close it; any
// other request is answered 400 and ignored, so that another page or a scan of the port cannot end
// the wait. A line pasted on `in` (the address a browser on another machine was sent to) is taken
// without the blanks around it (blank lines are passed over): the caller checks its state. Whichever comes first, within `patience`, else
// Exit::timeout: "no answer to the authorization came within N seconds".
//
// Secrets: a Pkce's verifier is the caller's to wipe(). Threads: a Listener is used by one thread.
#pragma once

#include "lib/fd.hpp"
#include "lib/result.hpp"

#include <chrono>
#include <string>
#include <string_view>

namespace sion::oauth_loopback {

// What a program that waits says to the person at a terminal, on a line of its own.
constexpr std::string_view k_paste_hint =
    "A browser on another machine cannot come back to this one: paste here the address it was "
    "sent to.";

// The PKCE pair and state of one authorization request.
struct Pkce {
    std::string verifier;  // 43 base64url characters (32 random bytes): secret
    std::string challenge; // base64url(SHA-256(verifier)), sent with code_challenge_method S256
    std::string state;     // 32 base64url characters (24 random bytes)
};

[[nodiscard]] Result<Pkce> make_pkce();

// The value of `name` in the query of `address` (after its '?', before any '#'; the whole of it
// when it has no '?'), percent-decoded, '+' a space; "" when it has none. The first one counts.
[[nodiscard]] std::string query_value(std::string_view address, std::string_view name);

class Listener {
public:
    // A socket listening on 127.0.0.1:`port` (0: one the kernel picks). When `port` is taken and
    // `or_another` is set, on one the kernel picks instead; when it is taken and not,
    // Exit::unavailable ("cannot listen on 127.0.0.1:PORT for the browser's return: …").
    [[nodiscard]] static Result<Listener> listen(int port, bool or_another);

    [[nodiscard]] int port() const { return m_port; }
    // "http://127.0.0.1:PORT" followed by `path`.
    [[nodiscard]] std::string address(std::string_view path) const;

    // The browser's return to `path` with `state` ("http://127.0.0.1:PORT/path?…"), or a line
    // pasted on `in` (-1: none is read; the end of `in` leaves only the browser), as above.
    [[nodiscard]] Result<std::string> wait(std::string_view path, std::string_view state, int in,
                                           std::chrono::milliseconds patience) const;

private:
    Listener(Fd fd, int port) : m_fd(std::move(fd)), m_port(port) {}

    Fd m_fd;
    int m_port;
};

} // namespace sion::oauth_loopback
