// SPDX-License-Identifier: MIT
// The person's consent: at a terminal (a browser back to 127.0.0.1, or an address pasted), or
// headless (the authorization URL fetched, its redirect taken).
#include "mcpd/oauth_consent.hpp"

#include "mcpd/oauth_wire.hpp"

#include "lib/child.hpp"
#include "lib/fd.hpp"
#include "lib/oauth_loopback.hpp"

extern char** environ; // NOLINT: POSIX's own declaration

namespace sion::mcpd::oauth {

namespace {

constexpr std::string_view k_callback_path = "/callback";

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
    // A port given must be had; a kept registration's is used when free.
    auto listener = m_port != 0 ? oauth_loopback::Listener::listen(m_port, false)
                                : oauth_loopback::Listener::listen(preferred_port, true);
    if (!listener)
        return listener.error();
    m_listener = std::move(*listener);
    return m_listener->address(k_callback_path);
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
    SION_CHECK(write_all(m_out, std::string(oauth_loopback::k_paste_hint) + "\n"));
    return m_listener->wait(k_callback_path, oauth_loopback::query_value(authorization_url, "state"),
                            m_in, patience);
}

Result<std::string> HeadlessConsent::redirect_uri(int preferred_port) {
    int port = m_port != 0 ? m_port : preferred_port;
    if (port == 0) {
        // A port nothing listens on now: the answer is taken from the redirect, never received.
        SION_TRY(oauth_loopback::Listener probe, oauth_loopback::Listener::listen(0, false));
        port = probe.port();
    }
    return "http://127.0.0.1:" + std::to_string(port) + std::string(k_callback_path);
}

Result<std::string> HeadlessConsent::wait(const std::string& authorization_url) {
    HttpRequest request;
    request.url = authorization_url;
    request.timeout = m_settings.timeout;
    request.max_response_size = size_t{1} << 20;
    SION_TRY(HttpResponse response, http_send(request));
    auto location = response.headers.get("Location");
    if (response.status < 300 || response.status > 399 || !location)
        return make_error(Exit::no_perm, "the authorization server did not send sion back "
                          "(HTTP %d, no redirect): a person must consent", response.status);
    return std::string(*location);
}

} // namespace sion::mcpd::oauth
