// SPDX-License-Identifier: MIT
// HTTP/1.1 and HTTPS requests over libcurl, with safe defaults and streamed bodies for SSE.
//
// Defaults: TLS peers are always verified, against the CA bundle SSL_CERT_FILE names, as OpenSSL's
// own programs read it, else the system's (Exit::config when it names no file that can be read;
// an https proxy is checked against the same bundle); redirects are never
// followed (a 3xx comes back as a Response, Location included); only http and https URLs are
// accepted; no proxy is used unless the request names one or asks for the environment's
// (environment_proxy: lib/proxy.hpp says which, curl's own reading of http_proxy and friends is
// always off).
//
// Reach: a request with `reach` set has its URL's host resolved once (lib/address.hpp, on the
// calling thread, within connect_timeout), `reach` shown where it leads, and curl pinned to those
// addresses: it connects to no other, and never looks the name up again. Through the
// environment's proxy the guarantee is weaker: the name is still resolved here and `reach` judges
// where it leads (a name of a private address is still refused), but the proxy resolves it again
// and connects where its own answer leads; curl is pinned to the proxy's addresses instead (its
// name resolved with `resolver` too, and not judged: the user chose it). A destination whose
// addresses are all this machine's goes direct, pinned as without a proxy.
//
// Errors (a non-2xx status is not one): Exit::timeout when a time limit runs out, Exit::unavailable
// when the peer cannot be reached or the TLS handshake fails, Exit::data for a bad URL or header, a
// response over the size limit or an aborting callback, Exit::temp_fail for a transfer go_on
// stopped, Exit::software for a callback that threw.
// Messages name the URL without its user info, query or fragment: "cannot reach
// 'http://127.0.0.1:8080/v1': Timeout was reached (Operation timed out after 300 milliseconds
// ...)".
//
// Threads: curl_global_init runs once, under std::call_once, on the first CurlEasy; a CurlEasy or
// HttpClient is used by one thread at a time, and different ones may run in different threads.
#pragma once

#include "lib/address.hpp"
#include "lib/result.hpp"

#include <chrono>
#include <cstddef>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace sion {

// Header fields in the order given or received. Names keep their spelling; lookups ignore case.
class HttpHeaders {
public:
    void add(std::string name, std::string value);
    // The first value of `name`, if any.
    [[nodiscard]] std::optional<std::string_view> get(std::string_view name) const;
    // Every value of `name`, in order (Set-Cookie, repeated Link, ...).
    [[nodiscard]] std::vector<std::string_view> get_all(std::string_view name) const;

    [[nodiscard]] bool has(std::string_view name) const { return get(name).has_value(); }

    [[nodiscard]] const std::vector<std::pair<std::string, std::string>>& entries() const {
        return m_entries;
    }

    void clear() { m_entries.clear(); }

private:
    std::vector<std::pair<std::string, std::string>> m_entries;
};

struct HttpResponse {
    int status = 0;
    HttpHeaders headers; // of the final response; trailers and 1xx interim responses are dropped
    std::string body;    // empty when the request streamed it to on_body
};

struct HttpRequest {
    std::string method = "GET";
    std::string url;
    // Sent as given; a name or value holding CR, LF or NUL is refused (Exit::data). A body sent
    // without a Content-Type goes without one (curl's form default is removed).
    HttpHeaders headers;
    std::string body;
    // The whole transfer, streamed body included; zero means no limit.
    std::chrono::milliseconds timeout{30000};
    std::chrono::milliseconds connect_timeout{10000};
    // Body bytes received, gathered or streamed; more is an error (Exit::data).
    size_t max_response_size = size_t{16} << 20;
    // A proxy URL ("http://proxy:3128"); empty for none, even when http_proxy is set.
    std::string proxy;
    // With no `proxy`: through the proxy the environment names for `url`, if it names one
    // (lib/proxy.hpp; a malformed one is the request's Exit::config). Messages never show the
    // proxy's user info.
    bool environment_proxy = false;
    // With environment_proxy: a loopback address other than localhost's name goes through the
    // proxy too unless no_proxy names it (lib/proxy.hpp, loopback_exempt false), for a program in
    // a sandbox whose loopback is not the host's.
    bool proxy_loopback = false;
    // Called once the final response's status line and headers are in, before any of its body;
    // returning false ends the transfer (Exit::data).
    std::function<bool(const HttpResponse& head)> on_headers;
    // When set, receives the body in chunks as they arrive instead of HttpResponse::body;
    // returning false ends the transfer (Exit::data).
    std::function<bool(std::string_view chunk)> on_body;
    // When set, asked about once a second and whenever data moves whether the transfer goes on;
    // false ends it (Exit::temp_fail "cannot read '…': the transfer was stopped"): a console's
    // /stop, heard even while a stream is silent.
    std::function<bool()> go_on;
    // When set, decides whether the request may go where its URL leads (see above): an error it
    // returns is the request's, and nothing is sent. Not with `proxy` (Exit::software): the proxy
    // would resolve the name; with environment_proxy, see above.
    std::function<Status(const Destination& where)> reach;
    // Who resolves the URL's name for `reach`; getaddrinfo when empty (a test's stand-in for DNS).
    Resolver resolver;
};

// A move-only owner of one CURL easy handle.
class CurlEasy {
public:
    // A new handle; the first call also runs curl_global_init.
    [[nodiscard]] static Result<CurlEasy> make();

    CurlEasy(const CurlEasy&) = delete;
    CurlEasy& operator=(const CurlEasy&) = delete;

    CurlEasy(CurlEasy&& other) noexcept : m_handle(std::exchange(other.m_handle, nullptr)) {}

    CurlEasy& operator=(CurlEasy&& other) noexcept;
    ~CurlEasy();

    // The CURL* (a void* in curl's own headers, so this header need not include them).
    [[nodiscard]] void* get() const { return m_handle; }

    explicit operator bool() const { return m_handle != nullptr; }

private:
    explicit CurlEasy(void* handle) : m_handle(handle) {}

    void* m_handle = nullptr;
};

// Sends requests one at a time on one handle, reusing its connections between them.
class HttpClient {
public:
    [[nodiscard]] static Result<HttpClient> make();
    [[nodiscard]] Result<HttpResponse> send(const HttpRequest& request);

private:
    explicit HttpClient(CurlEasy easy) : m_easy(std::move(easy)) {}

    CurlEasy m_easy;
};

// One request on a fresh handle.
[[nodiscard]] Result<HttpResponse> http_send(const HttpRequest& request);

// `url` without user info, query or fragment, for messages.
[[nodiscard]] std::string redact_url(std::string_view url);

// Whether `s` is an HTTP token (RFC 9110 5.6.2): what a method or a header's name must be.
[[nodiscard]] bool is_http_token(std::string_view s);

// Whether the origin-form `target` ("/v1/x?q") is on `path` ("/v1": that path and those under
// it, "/v1", "/v1/x", "/v1?q", not "/v10"), as a grant's credential goes only there (seed 002). A
// target that could mean another path once a server decodes or normalises it (a "." or ".."
// segment, an encoded '.', '/' or '\', a backslash) is on none.
[[nodiscard]] bool on_grant_path(std::string_view target, std::string_view path);

} // namespace sion
