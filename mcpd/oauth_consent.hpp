// SPDX-License-Identifier: MIT
// The person's consent: at a terminal (a browser back to 127.0.0.1, or an address pasted), or
// headless (the authorization URL fetched, its redirect taken). Errors, secrets and threads: as
// oauth_types.hpp says.
#pragma once

#include "mcpd/oauth_types.hpp"

#include "lib/oauth_loopback.hpp"
#include "lib/result.hpp"

#include <chrono>
#include <optional>
#include <string>

namespace sion::mcpd::oauth {

// How the person's consent is got: given the authorization URL, the address the browser was
// sent back to (with its code and state).
class Consent {
public:
    Consent() = default;
    Consent(const Consent&) = delete;
    Consent& operator=(const Consent&) = delete;
    Consent(Consent&&) = delete;
    Consent& operator=(Consent&&) = delete;
    virtual ~Consent() = default;

    // Where the browser is sent back to: "http://127.0.0.1:PORT/callback". Called once, before
    // wait(); `preferred_port` is a kept registration's (0 for none) and is used when free.
    [[nodiscard]] virtual Result<std::string> redirect_uri(int preferred_port) = 0;
    [[nodiscard]] virtual Result<std::string> wait(const std::string& authorization_url) = 0;
};

// The person at a terminal: prints "Open this URL to authorize:" and the URL to `out`, runs
// xdg-open on it unless `no_browser`, and takes whichever comes first of the browser's return to
// 127.0.0.1 (on `port`, or a free one; a return without the state sent is answered 400 and
// ignored) and an address pasted on `in` (a line), for 5 minutes at most (Exit::timeout). `in`
// and `out` are borrowed.
class TerminalConsent : public Consent {
public:
    TerminalConsent(int in, int out, bool no_browser, int port)
        : m_in(in), m_out(out), m_no_browser(no_browser), m_port(port) {}

    [[nodiscard]] Result<std::string> redirect_uri(int preferred_port) override;
    [[nodiscard]] Result<std::string> wait(const std::string& authorization_url) override;

    // How long wait() waits for the person.
    std::chrono::milliseconds patience{std::chrono::minutes(5)};

private:
    int m_in, m_out;
    bool m_no_browser;
    int m_port;
    std::optional<oauth_loopback::Listener> m_listener; // from redirect_uri() on
};

// No person: GETs the authorization URL without following redirects and takes the Location the
// server sends back (an authorization server that approves at once: tests, the conformance
// driver). Exit::no_perm for an answer that is no redirect.
class HeadlessConsent : public Consent {
public:
    explicit HeadlessConsent(Settings settings, int port = 0)
        : m_settings(std::move(settings)), m_port(port) {}

    [[nodiscard]] Result<std::string> redirect_uri(int preferred_port) override;
    [[nodiscard]] Result<std::string> wait(const std::string& authorization_url) override;

private:
    Settings m_settings;
    int m_port;
};

} // namespace sion::mcpd::oauth
