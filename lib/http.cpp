// SPDX-License-Identifier: MIT
// HTTP requests over libcurl (lib/curl_api, loaded on the first request): safe options on every
// transfer, callbacks that never throw.
#include "lib/http.hpp"

#include "lib/curl_api.hpp"
#include "lib/http_transfer.hpp"
#include "lib/proxy.hpp"
#include "lib/text.hpp"

#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cstdlib>

namespace sion {

namespace {

// A response's header lines, all told, may be no longer than this.
constexpr size_t k_max_header_bytes = size_t{256} << 10;

std::string_view trim(std::string_view s) {
    while (!s.empty() && (s.front() == ' ' || s.front() == '\t'))
        s.remove_prefix(1);
    while (!s.empty()
           && (s.back() == ' ' || s.back() == '\t' || s.back() == '\r' || s.back() == '\n'))
        s.remove_suffix(1);
    return s;
}

} // namespace

void HttpHeaders::add(std::string name, std::string value) {
    m_entries.emplace_back(std::move(name), std::move(value));
}

std::optional<std::string_view> HttpHeaders::get(std::string_view name) const {
    for (const auto& [n, v] : m_entries)
        if (ascii_iequals(n, name))
            return std::string_view(v);
    return std::nullopt;
}

std::vector<std::string_view> HttpHeaders::get_all(std::string_view name) const {
    std::vector<std::string_view> out;
    for (const auto& [n, v] : m_entries)
        if (ascii_iequals(n, name))
            out.emplace_back(v);
    return out;
}

std::string redact_url(std::string_view url) {
    url = url.substr(0, url.find_first_of("?#"));
    size_t scheme = url.find("://");
    if (scheme == std::string_view::npos)
        return std::string(url);
    size_t host = scheme + 3;
    size_t path = url.find('/', host);
    size_t at = url.substr(0, path).rfind('@');
    if (at == std::string_view::npos || at < host)
        return std::string(url);
    return std::string(url.substr(0, host)) + std::string(url.substr(at + 1));
}

Result<CurlEasy> CurlEasy::make() {
    SION_CHECK(curl_api());
    CURL* handle = curl().easy_init();
    if (handle == nullptr)
        return make_error(Exit::software, "cannot create a curl handle: out of memory");
    return CurlEasy(handle);
}

CurlEasy& CurlEasy::operator=(CurlEasy&& other) noexcept {
    if (this != &other) {
        if (m_handle != nullptr)
            curl().easy_cleanup(m_handle);
        m_handle = std::exchange(other.m_handle, nullptr);
    }
    return *this;
}

CurlEasy::~CurlEasy() {
    if (m_handle != nullptr)
        curl().easy_cleanup(m_handle);
}

CurlHeaderList& CurlHeaderList::operator=(CurlHeaderList&& other) noexcept {
    if (this != &other) {
        if (m_list != nullptr)
            curl().slist_free_all(m_list);
        m_list = std::exchange(other.m_list, nullptr);
    }
    return *this;
}

CurlHeaderList::~CurlHeaderList() {
    if (m_list != nullptr)
        curl().slist_free_all(m_list);
}

Status CurlHeaderList::append(const std::string& line) {
    curl_slist* grown = curl().slist_append(m_list, line.c_str());
    if (grown == nullptr)
        return make_error(Exit::software, "cannot add header: out of memory");
    m_list = grown;
    return {};
}

namespace {

bool sends_body(const HttpRequest& request) {
    const std::string& m = request.method;
    return !request.body.empty() || m == "POST" || m == "PUT" || m == "PATCH";
}

Result<CurlHeaderList> build_headers(const HttpRequest& request) {
    CurlHeaderList list;
    for (const auto& [name, value] : request.headers.entries()) {
        if (!is_http_token(name))
            return make_error(Exit::data, "bad header name '%s'", name.c_str());
        if (value.find_first_of(std::string_view("\r\n\0", 3)) != std::string::npos)
            return make_error(Exit::data, "bad value of header '%s': it holds a line break or NUL",
                              name.c_str());
        // "Name:" would tell curl to drop the header; "Name;" sends it empty.
        std::string line = name;
        line += value.empty() ? ";" : ": ";
        line += value;
        SION_CHECK(list.append(line));
    }
    // curl would label a body as a form and hold big ones back for a 100-continue.
    if (sends_body(request) && !request.headers.has("Content-Type"))
        SION_CHECK(list.append("Content-Type:"));
    if (!request.headers.has("Expect"))
        SION_CHECK(list.append("Expect:"));
    return list;
}

// curl's callbacks: C code calls them, so nothing may escape. A short return count makes curl end
// the transfer with CURLE_WRITE_ERROR, and the transfer's failure says why.
size_t on_header(char* data, size_t size, size_t count, void* user) noexcept {
    auto* transfer = static_cast<HttpTransfer*>(user);
    try {
        return transfer->header_line(std::string_view(data, size * count)) ? size * count : 0;
    } catch (...) {
        transfer->fail(HttpTransfer::Failure::threw);
        return 0;
    }
}

int on_progress(void* user, curl_off_t, curl_off_t, curl_off_t, curl_off_t) noexcept {
    auto* transfer = static_cast<HttpTransfer*>(user);
    try {
        return transfer->goes_on() ? 0 : 1;
    } catch (...) {
        transfer->fail(HttpTransfer::Failure::threw);
        return 1;
    }
}

size_t on_write(char* data, size_t size, size_t count, void* user) noexcept {
    auto* transfer = static_cast<HttpTransfer*>(user);
    try {
        return transfer->body_chunk(std::string_view(data, size * count)) ? size * count : 0;
    } catch (...) {
        transfer->fail(HttpTransfer::Failure::threw);
        return 0;
    }
}

// The CA bundle SSL_CERT_FILE names (a private CA, a proxy that inspects TLS) when the request or
// its proxy speaks TLS; "" for curl's own, the system's.
Result<std::string> ca_bundle_for(std::string_view url, std::string_view proxy) {
    auto tls = [](std::string_view u) { return ascii_iequals(u.substr(0, 6), "https:"); };
    if (!tls(url) && !tls(proxy))
        return std::string();
    const char* file = std::getenv("SSL_CERT_FILE"); // NOLINT(concurrency-mt-unsafe): read only
    if (file == nullptr || *file == '\0')
        return std::string();
    struct stat st {};
    if (::stat(file, &st) != 0 || ::access(file, R_OK) != 0)
        return sys_error(Exit::config, errno, "SSL_CERT_FILE '%s' cannot be read", file);
    if (!S_ISREG(st.st_mode))
        return make_error(Exit::config, "SSL_CERT_FILE '%s' is not a file", file);
    return std::string(file);
}

void set_safety(CurlOptions& o, const std::string& ca_bundle, const std::string& proxy) {
    o.set(CURLOPT_NOSIGNAL, 1L);
    o.set(CURLOPT_PROTOCOLS_STR, "http,https");
    o.set(CURLOPT_REDIR_PROTOCOLS_STR, "http,https");
    o.set(CURLOPT_FOLLOWLOCATION, 0L);
    o.set(CURLOPT_SSL_VERIFYPEER, 1L);
    o.set(CURLOPT_SSL_VERIFYHOST, 2L);
    o.set(CURLOPT_PROXY_SSL_VERIFYPEER, 1L);
    o.set(CURLOPT_PROXY_SSL_VERIFYHOST, 2L);
    if (!ca_bundle.empty()) {
        o.set(CURLOPT_CAINFO, ca_bundle.c_str());
        o.set(CURLOPT_PROXY_CAINFO, ca_bundle.c_str());
    }
    // An empty proxy turns off curl's reading of http_proxy and friends.
    o.set(CURLOPT_PROXY, proxy.c_str());
    o.set(CURLOPT_SUPPRESS_CONNECT_HEADERS, 1L);
    o.set(CURLOPT_TCP_KEEPALIVE, 1L);
}

void set_request(CurlOptions& o, const HttpRequest& request, const CurlHeaderList& headers) {
    o.set(CURLOPT_URL, request.url.c_str());
    o.set(CURLOPT_HTTPHEADER, headers.get());
    o.set(CURLOPT_TIMEOUT_MS, static_cast<long>(request.timeout.count()));
    o.set(CURLOPT_CONNECTTIMEOUT_MS, static_cast<long>(request.connect_timeout.count()));
    o.set(CURLOPT_MAXFILESIZE_LARGE, static_cast<curl_off_t>(request.max_response_size));
    if (request.method == "HEAD") {
        o.set(CURLOPT_NOBODY, 1L);
        return;
    }
    if (sends_body(request)) {
        o.set(CURLOPT_POSTFIELDSIZE_LARGE, static_cast<curl_off_t>(request.body.size()));
        o.set(CURLOPT_POSTFIELDS, request.body.c_str());
    } else {
        o.set(CURLOPT_HTTPGET, 1L);
    }
    if (request.method != (sends_body(request) ? "POST" : "GET"))
        o.set(CURLOPT_CUSTOMREQUEST, request.method.c_str());
}

// The proxy the request goes through: its own, else the environment's if it asks; "" for none.
Result<std::string> proxy_of(const HttpRequest& request) {
    if (!request.proxy.empty() || !request.environment_proxy)
        return request.proxy;
    return environment_proxy(request.url, process_environment, !request.proxy_loopback);
}

bool all_loopback(const Destination& where) {
    return std::all_of(where.addresses.begin(), where.addresses.end(),
                       [](const Address& a) { return a.kind == AddressKind::loopback; });
}

// The request's reach judged, and curl pinned to the addresses it connects to (`checked`): the
// ones judged, or through the environment's `proxy` the proxy's (see lib/http.hpp). A
// destination on this machine goes direct: `proxy` is cleared.
Status pin_reach(const HttpRequest& request, std::string& proxy, CurlHeaderList& pins,
                 std::vector<std::string>& checked) {
    if (!request.reach)
        return {};
    if (!request.proxy.empty())
        return make_error(Exit::software, "cannot check where '%s' leads through a proxy",
                          redact_url(request.url).c_str());
    SION_TRY(Destination where,
             resolve_url(request.url, request.connect_timeout, request.resolver));
    SION_CHECK(request.reach(where));
    if (all_loopback(where))
        proxy.clear();
    if (!proxy.empty()) {
        SION_TRY(where, resolve_url(proxy, request.connect_timeout, request.resolver));
    }
    if (std::string pin = where.pin(); !pin.empty())
        SION_CHECK(pins.append(pin));
    for (const Address& a : where.addresses)
        checked.push_back(a.text);
    return {};
}

// Every socket curl connects with is close-on-exec, and goes only where may_connect() allows.
curl_socket_t on_open_socket(void* user, curlsocktype purpose, curl_sockaddr* address) noexcept {
    auto* transfer = static_cast<HttpTransfer*>(user);
    try {
        if (purpose == CURLSOCKTYPE_IPCXN && !transfer->may_connect(&address->addr))
            return CURL_SOCKET_BAD;
    } catch (...) {
        transfer->fail(HttpTransfer::Failure::threw);
        return CURL_SOCKET_BAD;
    }
    return ::socket(address->family, address->socktype | SOCK_CLOEXEC, address->protocol);
}

void set_callbacks(CurlOptions& o, HttpTransfer& transfer, char* error_buffer) {
    o.set(CURLOPT_ERRORBUFFER, error_buffer);
    o.set(CURLOPT_HEADERFUNCTION, on_header);
    o.set(CURLOPT_HEADERDATA, &transfer);
    o.set(CURLOPT_WRITEFUNCTION, on_write);
    o.set(CURLOPT_WRITEDATA, &transfer);
    o.set(CURLOPT_OPENSOCKETFUNCTION, on_open_socket);
    o.set(CURLOPT_OPENSOCKETDATA, &transfer);
    if (transfer.asks_to_go_on()) {
        o.set(CURLOPT_XFERINFOFUNCTION, on_progress);
        o.set(CURLOPT_XFERINFODATA, &transfer);
        o.set(CURLOPT_NOPROGRESS, 0L);
    }
}

// `text` with the user info of `proxy`, and its password alone, replaced by "[redacted]".
std::string without_user_info(std::string text, const std::string& proxy) {
    const std::string info = user_info(proxy);
    const size_t colon = info.find(':');
    const std::string_view mark = "[redacted]";
    for (const std::string& secret :
         {info, colon == std::string::npos ? std::string() : info.substr(colon + 1)}) {
        if (secret.empty())
            continue;
        for (size_t at = text.find(secret); at != std::string::npos;
             at = text.find(secret, at + mark.size()))
            text.replace(at, secret.size(), mark);
    }
    return text;
}

Exit exit_for(CURLcode code) {
    switch (code) {
    case CURLE_OPERATION_TIMEDOUT:
        return Exit::timeout;
    case CURLE_COULDNT_RESOLVE_PROXY:
    case CURLE_COULDNT_RESOLVE_HOST:
    case CURLE_COULDNT_CONNECT:
    case CURLE_SSL_CONNECT_ERROR:
    case CURLE_PEER_FAILED_VERIFICATION:
    case CURLE_GOT_NOTHING:
    case CURLE_SEND_ERROR:
    case CURLE_RECV_ERROR:
        return Exit::unavailable;
    case CURLE_UNSUPPORTED_PROTOCOL:
    case CURLE_URL_MALFORMAT:
    case CURLE_FILESIZE_EXCEEDED:
    case CURLE_WEIRD_SERVER_REPLY:
        return Exit::data;
    case CURLE_SSL_CACERT_BADFILE:
        return Exit::config;
    case CURLE_OUT_OF_MEMORY:
        return Exit::software;
    default:
        return Exit::io;
    }
}

} // namespace

Status HttpTransfer::configure(CURL* easy) {
    if (!is_http_token(m_request.method))
        return make_error(Exit::data, "bad HTTP method '%s'", m_request.method.c_str());
    SION_TRY(m_headers, build_headers(m_request));
    SION_TRY(std::string proxy, proxy_of(m_request));
    SION_TRY(std::string ca_bundle, ca_bundle_for(m_request.url, proxy));
    SION_CHECK(pin_reach(m_request, proxy, m_pins, m_checked));
    CurlOptions options(easy);
    set_safety(options, ca_bundle, proxy);
    if (m_pins.get() != nullptr)
        options.set(CURLOPT_RESOLVE, m_pins.get());
    set_request(options, m_request, m_headers);
    set_callbacks(options, *this, m_detail);
    return options.status();
}

bool HttpTransfer::header_line(std::string_view line) {
    if (m_abandoned) {
        m_failure = Failure::abandoned;
        return false;
    }
    m_header_bytes += line.size();
    if (m_header_bytes > k_max_header_bytes) {
        m_failure = Failure::headers_too_large;
        return false;
    }
    // Trailers, and obsolete folded continuation lines, are not kept.
    if (m_head_done || line.starts_with(' ') || line.starts_with('\t'))
        return true;
    line = trim(line);
    if (line.substr(0, 5) == "HTTP/") {
        // A new response: after a 1xx, the final one starts over.
        m_response.headers.clear();
        m_response.status = 0;
        size_t space = line.find(' ');
        if (space != std::string_view::npos)
            (void)std::from_chars(line.data() + space + 1, line.data() + line.size(),
                                  m_response.status);
        return true;
    }
    if (line.empty()) {
        if (m_response.status >= 100 && m_response.status < 200)
            return true;
        m_head_done = true;
        if (m_request.on_headers && !m_request.on_headers(m_response)) {
            m_failure = Failure::stopped;
            return false;
        }
        return true;
    }
    size_t colon = line.find(':');
    if (colon != std::string_view::npos)
        m_response.headers.add(std::string(trim(line.substr(0, colon))),
                               std::string(trim(line.substr(colon + 1))));
    return true;
}

bool HttpTransfer::may_connect(const sockaddr* to) {
    if (!m_request.reach)
        return true;
    auto address = address_of(to);
    if (address && std::find(m_checked.begin(), m_checked.end(), address->text) != m_checked.end())
        return true;
    m_unchecked = address ? address->text : "an address of another family";
    m_failure = Failure::unchecked_address;
    return false;
}

bool HttpTransfer::goes_on() {
    if (m_request.go_on()) // NOLINT: called only when set (asks_to_go_on)
        return true;
    m_failure = Failure::told_to_stop;
    return false;
}

bool HttpTransfer::body_chunk(std::string_view chunk) {
    if (m_abandoned) {
        m_failure = Failure::abandoned;
        return false;
    }
    if (chunk.size() > m_request.max_response_size - m_body_bytes) {
        m_failure = Failure::body_too_large;
        return false;
    }
    m_body_bytes += chunk.size();
    if (!m_request.on_body) {
        m_response.body.append(chunk);
        return true;
    }
    if (!m_request.on_body(chunk)) {
        m_failure = Failure::stopped;
        return false;
    }
    return true;
}

Result<HttpResponse> HttpTransfer::finish(CURL* easy, CURLcode code) {
    if (code != CURLE_OK)
        return error(code);
    long status = 0;
    curl().easy_getinfo(easy, CURLINFO_RESPONSE_CODE, &status);
    m_response.status = static_cast<int>(status);
    return std::move(m_response);
}

Error HttpTransfer::error(CURLcode code) const {
    std::string url = redact_url(m_request.url);
    size_t limit = m_request.max_response_size;
    if (m_failure == Failure::body_too_large || code == CURLE_FILESIZE_EXCEEDED)
        return make_error(Exit::data, "cannot read '%s': the response is larger than %zu bytes",
                          url.c_str(), limit);
    switch (m_failure) {
    case Failure::headers_too_large:
        return make_error(Exit::data, "cannot read '%s': the response headers exceed %zu bytes",
                          url.c_str(), k_max_header_bytes);
    case Failure::stopped:
    case Failure::abandoned:
        return make_error(Exit::data, "cannot read '%s': the receiver stopped the transfer",
                          url.c_str());
    case Failure::told_to_stop:
        return make_error(Exit::temp_fail, "cannot read '%s': the transfer was stopped",
                          url.c_str());
    case Failure::threw:
        return make_error(Exit::software, "cannot read '%s': a callback threw an exception",
                          url.c_str());
    case Failure::unchecked_address:
        return make_error(Exit::software, "cannot reach '%s': curl was about to connect to %s, "
                          "which was not checked", url.c_str(), m_unchecked.c_str());
    case Failure::none:
    case Failure::body_too_large:
        break;
    }
    // curl's error buffer often ends with curl_easy_strerror's text; where it does not ("Operation
    // timed out after 300 milliseconds ..."), the short text leads and the detail follows.
    std::string why = curl().easy_strerror(code);
    std::string_view more = m_detail;
    if (more.size() >= why.size() && more.substr(more.size() - why.size()) == why)
        why = more;
    else if (!more.empty())
        why += " (" + std::string(more) + ")";
    if (auto proxy = proxy_of(m_request); proxy)
        why = without_user_info(std::move(why), *proxy);
    return make_error(exit_for(code), "cannot reach '%s': %s", url.c_str(), why.c_str());
}

Result<HttpClient> HttpClient::make() {
    SION_TRY(CurlEasy easy, CurlEasy::make());
    return HttpClient(std::move(easy));
}

Result<HttpResponse> HttpClient::send(const HttpRequest& request) {
    CURL* handle = m_easy.get();
    HttpTransfer transfer(request);
    Status set = transfer.configure(handle);
    Result<HttpResponse> out = set ? transfer.finish(handle, curl().easy_perform(handle))
                                   : Result<HttpResponse>(std::move(set).error());
    // Drops the pointers into this frame; the connection cache survives for the next request.
    curl().easy_reset(handle);
    return out;
}

Result<HttpResponse> http_send(const HttpRequest& request) {
    SION_TRY(HttpClient client, HttpClient::make());
    return client.send(request);
}

bool is_http_token(std::string_view s) {
    if (s.empty())
        return false;
    for (char c : s) {
        bool alnum = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9');
        if (!alnum && std::string_view("!#$%&'*+-.^_`|~").find(c) == std::string_view::npos)
            return false;
    }
    return true;
}

bool on_grant_path(std::string_view target, std::string_view path) {
    std::string_view p = target.substr(0, target.find('?'));
    if (p.empty() || p.front() != '/' || p.find('\\') != std::string_view::npos)
        return false;
    std::string lower = ascii_lower(p);
    for (const char* encoded : {"%2e", "%2f", "%5c"})
        if (lower.find(encoded) != std::string::npos)
            return false;
    for (size_t at = 0; at != std::string_view::npos;) {
        size_t next = p.find('/', at + 1);
        std::string_view segment = p.substr(at + 1, next == std::string_view::npos ? next
                                                                                   : next - at - 1);
        if (segment == "." || segment == "..")
            return false;
        at = next;
    }
    if (path == "/" || p == path)
        return true;
    std::string under(path);
    if (under.back() != '/')
        under += '/';
    return p.starts_with(under);
}

} // namespace sion
