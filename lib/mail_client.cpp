// SPDX-License-Identifier: MIT
// IMAP and SMTP through libcurl (lib/mail_client.hpp). Every call resets the handle and sets it
// up again, so no option of one call leaks into the next, while curl keeps the connection (and the
// selected mailbox) between them.
#include "lib/mail_client.hpp"

#include "lib/curl_api.hpp"
#include "lib/imap.hpp"
#include "lib/text.hpp"

#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <memory>

namespace sion::mail {

namespace {

// What a transfer gathered: the response lines (curl hands every server line to the header
// callback), the body, and whether either went over the limit.
struct Gathered {
    std::string lines;
    std::string body;
    size_t max = 0;
    bool over = false;
};

// Appends what curl hands over to `into`, or ends the transfer past g's bound.
size_t gather(Gathered* g, std::string& into, const char* data, size_t len) {
    if (into.size() + len > g->max) {
        g->over = true;
        return 0;
    }
    into.append(data, len);
    return len;
}

size_t on_lines(char* data, size_t size, size_t n, void* user) noexcept {
    auto* g = static_cast<Gathered*>(user);
    return gather(g, g->lines, data, size * n);
}

size_t on_body(char* data, size_t size, size_t n, void* user) noexcept {
    auto* g = static_cast<Gathered*>(user);
    return gather(g, g->body, data, size * n);
}

struct Upload {
    std::string_view data;
    size_t at = 0;
};

size_t on_read(char* buffer, size_t size, size_t n, void* user) noexcept {
    auto* u = static_cast<Upload*>(user);
    size_t len = std::min(size * n, u->data.size() - u->at);
    std::memcpy(buffer, u->data.data() + u->at, len);
    u->at += len;
    return len;
}

const char* getenv_nonempty(const char* name) {
    const char* v = std::getenv(name); // NOLINT(concurrency-mt-unsafe): read only
    return v != nullptr && *v != '\0' ? v : nullptr;
}


std::string host_of(std::string_view url) {
    std::string rest(url.substr(std::min(url.size(), url.find("://") + 3)));
    size_t end = rest.find_first_of("/?#");
    if (end != std::string::npos)
        rest.resize(end);
    size_t at = rest.rfind('@');
    if (at != std::string::npos)
        rest.erase(0, at + 1);
    if (!rest.empty() && rest[0] == '[') {
        size_t close = rest.find(']');
        return rest.substr(1, close == std::string::npos ? std::string::npos : close - 1);
    }
    size_t colon = rest.find(':');
    if (colon != std::string::npos)
        rest.resize(colon);
    return ascii_lower(rest);
}

// The options every transfer has: the URL, who logs in, TLS, time limits, the proxy.
Status set_common(CURL* h, CurlOptions& o, const Account& account, const std::string& url,
                  const Limits& limits, char* errors, const char* protocols) {
    (void)h;
    o.set(CURLOPT_NOSIGNAL, 1L);
    o.set(CURLOPT_PROTOCOLS_STR, protocols);
    o.set(CURLOPT_URL, url.c_str());
    o.set(CURLOPT_ERRORBUFFER, errors);
    o.set(CURLOPT_USERNAME, account.username.c_str());
    if (!account.bearer.empty())
        o.set(CURLOPT_XOAUTH2_BEARER, account.bearer.c_str());
    else
        o.set(CURLOPT_PASSWORD, account.password.c_str());
    bool tls_scheme = ascii_lower(account.url.substr(0, 6)) == "imaps:"
                      || ascii_lower(account.url.substr(0, 6)) == "smtps:";
    if (!tls_scheme)
        o.set(CURLOPT_USE_SSL, on_loopback(account.url) ? static_cast<long>(CURLUSESSL_TRY)
                                                        : static_cast<long>(CURLUSESSL_ALL));
    o.set(CURLOPT_SSL_VERIFYPEER, 1L);
    o.set(CURLOPT_SSL_VERIFYHOST, 2L);
    if (const char* ca = getenv_nonempty("SSL_CERT_FILE")) {
        struct stat st {};

        if (::stat(ca, &st) != 0 || ::access(ca, R_OK) != 0)
            return sys_error(Exit::config, errno, "SSL_CERT_FILE '%s' cannot be read", ca);
        o.set(CURLOPT_CAINFO, ca);
        o.set(CURLOPT_PROXY_CAINFO, ca);
    }
    o.set(CURLOPT_CONNECTTIMEOUT_MS, static_cast<long>(limits.connect.count()));
    o.set(CURLOPT_TIMEOUT_MS, static_cast<long>(limits.total.count()));
    o.set(CURLOPT_BUFFERSIZE, 512L * 1024L); // a long SEARCH line fits
    const char* proxy = getenv_nonempty("all_proxy");
    if (proxy == nullptr)
        proxy = getenv_nonempty("ALL_PROXY");
    const char* no_proxy = getenv_nonempty("no_proxy");
    if (no_proxy == nullptr)
        no_proxy = getenv_nonempty("NO_PROXY");
    // An empty proxy turns off curl's own reading of imap_proxy and friends.
    o.set(CURLOPT_PROXY, proxy != nullptr ? proxy : "");
    if (proxy != nullptr) {
        o.set(CURLOPT_HTTPPROXYTUNNEL, 1L);
        o.set(CURLOPT_NOPROXY, no_proxy != nullptr ? no_proxy : "");
        o.set(CURLOPT_SUPPRESS_CONNECT_HEADERS, 1L);
    }
    return o.status();
}

bool tls_failure(CURLcode code) {
    switch (code) {
    case CURLE_SSL_CONNECT_ERROR:
    case CURLE_PEER_FAILED_VERIFICATION:
    case CURLE_SSL_CACERT_BADFILE:
    case CURLE_SSL_CERTPROBLEM:
    case CURLE_SSL_CIPHER:
    case CURLE_USE_SSL_FAILED:
    case CURLE_SSL_ISSUER_ERROR:
    case CURLE_SSL_PINNEDPUBKEYNOTMATCH:
    case CURLE_SSL_INVALIDCERTSTATUS:
        return true;
    default:
        return false;
    }
}

// The one line a failed transfer is, naming the server and never a credential.
Error failure(CURLcode code, const char* errors, const Account& account, const Gathered& g,
              const Limits& limits, std::string_view mailbox) {
    std::string where = shown_url(account.url);
    std::string why = *errors != '\0' ? one_line(errors) : curl().easy_strerror(code);
    std::string said = one_line(imap::last_tagged(g.lines));
    // The tag ("A004 "), the status and a response code ("NO [AUTHENTICATIONFAILED] ") are not
    // the server's words for a person.
    for (int word = 0; word < 2; ++word)
        if (size_t space = said.find(' '); space != std::string::npos)
            said.erase(0, space + 1);
    if (!said.empty() && said[0] == '[') {
        size_t close = said.find("] ");
        said.erase(0, close == std::string::npos ? said.size() : close + 2);
    }
    while (!said.empty() && (said.back() == '.' || said.back() == ' '))
        said.pop_back();
    if (g.over)
        return make_error(Exit::data, "'%s' answered more than %zu MiB", where.c_str(),
                          g.max >> 20);
    if (why == "Select failed")
        return make_error(Exit::data, "'%s' has no folder '%.*s'%s%s", where.c_str(),
                          static_cast<int>(mailbox.size()), mailbox.data(),
                          said.empty() ? "" : ": ", said.c_str());
    if (code == CURLE_LOGIN_DENIED)
        return make_error(Exit::no_perm, "'%s' refused the %s of '%s'%s%s", where.c_str(),
                          account.bearer.empty() ? "password" : "token", account.username.c_str(),
                          said.empty() ? "" : ": ", said.c_str());
    if (code == CURLE_OPERATION_TIMEDOUT)
        return make_error(Exit::timeout, "'%s' did not answer within %lld s", where.c_str(),
                          static_cast<long long>(limits.total.count() / 1000));
    if (tls_failure(code))
        return make_error(Exit::unavailable,
                          "cannot reach '%s' over TLS: %s (is its certificate's authority "
                          "trusted? SSL_CERT_FILE names a bundle to trust)",
                          where.c_str(), why.c_str());
    if (code == CURLE_QUOTE_ERROR || code == CURLE_UPLOAD_FAILED)
        return make_error(Exit::data, "'%s' refused the command: %s", where.c_str(),
                          said.empty() ? why.c_str() : said.c_str());
    if (code == CURLE_COULDNT_CONNECT || code == CURLE_COULDNT_RESOLVE_HOST
        || code == CURLE_COULDNT_RESOLVE_PROXY || code == CURLE_GOT_NOTHING
        || code == CURLE_RECV_ERROR || code == CURLE_SEND_ERROR || code == CURLE_WEIRD_SERVER_REPLY)
        return make_error(Exit::unavailable, "cannot reach '%s': %s", where.c_str(), why.c_str());
    return make_error(Exit::unavailable, "'%s' failed: %s", where.c_str(), why.c_str());
}

std::string percent_path(std::string_view mailbox) {
    static constexpr const char* hex = "0123456789ABCDEF";
    std::string out;
    for (char c : mailbox) {
        auto b = static_cast<unsigned char>(c);
        if ((b >= 'a' && b <= 'z') || (b >= 'A' && b <= 'Z') || (b >= '0' && b <= '9') || b == '-'
            || b == '.' || b == '_' || b == '~') {
            out += c;
        } else {
            out += '%';
            out += hex[b >> 4];
            out += hex[b & 15];
        }
    }
    return out;
}

// The account's URL with `mailbox` (made modified UTF-7) as its path, and `more` after it.
std::string url_for(const Account& account, std::string_view mailbox, std::string_view more = {}) {
    std::string base = account.url;
    while (!base.empty() && base.back() == '/')
        base.pop_back();
    return base + "/" + percent_path(imap::encode_mailbox(mailbox)) + std::string(more);
}

} // namespace

std::string shown_url(std::string_view url) {
    std::string shown = redact_url(url);
    size_t scheme = shown.find("://");
    size_t path = shown.find('/', scheme == std::string::npos ? 0 : scheme + 3);
    if (path != std::string::npos)
        shown.resize(path);
    return shown;
}

bool on_loopback(std::string_view url) {
    std::string host = host_of(url);
    return host == "localhost" || host == "::1" || host.rfind("127.", 0) == 0
           || (host.size() > 10 && host.compare(host.size() - 10, 10, ".localhost") == 0);
}

Result<Imap> Imap::open(Account account, Limits limits) {
    SION_TRY(CurlEasy easy, CurlEasy::make());
    return Imap(std::move(easy), std::move(account), limits);
}

Result<std::string> Imap::command(std::string_view mailbox, std::string_view request) {
    auto* h = static_cast<CURL*>(m_easy.get());
    curl().easy_reset(h);
    CurlOptions o(h);
    char errors[CURL_ERROR_SIZE] = "";
    Gathered g;
    g.max = m_limits.response_max;
    std::string url = mailbox.empty() ? m_account.url : url_for(m_account, mailbox);
    std::string custom(request);
    SION_CHECK(set_common(h, o, m_account, url, m_limits, errors, "imap,imaps"));
    o.set(CURLOPT_CUSTOMREQUEST, custom.c_str());
    o.set(CURLOPT_HEADERFUNCTION, on_lines);
    o.set(CURLOPT_HEADERDATA, &g);
    o.set(CURLOPT_WRITEFUNCTION, on_body);
    o.set(CURLOPT_WRITEDATA, &g);
    SION_CHECK(o.status());
    CURLcode code = curl().easy_perform(h);
    if (code != CURLE_OK)
        return failure(code, errors, m_account, g, m_limits, mailbox);
    return std::move(g.lines);
}

Result<std::string> Imap::fetch(std::string_view mailbox, uint32_t uid, size_t max) {
    auto* h = static_cast<CURL*>(m_easy.get());
    curl().easy_reset(h);
    CurlOptions o(h);
    char errors[CURL_ERROR_SIZE] = "";
    Gathered g;
    g.max = m_limits.response_max;
    std::string url = url_for(m_account, mailbox,
                              ";UID=" + std::to_string(uid) + ";PARTIAL=0." + std::to_string(max));
    SION_CHECK(set_common(h, o, m_account, url, m_limits, errors, "imap,imaps"));
    o.set(CURLOPT_HEADERFUNCTION, on_lines);
    o.set(CURLOPT_HEADERDATA, &g);
    o.set(CURLOPT_WRITEFUNCTION, on_body);
    o.set(CURLOPT_WRITEDATA, &g);
    SION_CHECK(o.status());
    CURLcode code = curl().easy_perform(h);
    if (code != CURLE_OK)
        return failure(code, errors, m_account, g, m_limits, mailbox);
    if (g.body.empty())
        return make_error(Exit::data, "no message of UID %u in '%.*s'", uid,
                          static_cast<int>(mailbox.size()), mailbox.data());
    return std::move(g.body);
}

Result<std::string> Imap::append(std::string_view mailbox, std::string_view message) {
    auto* h = static_cast<CURL*>(m_easy.get());
    curl().easy_reset(h);
    CurlOptions o(h);
    char errors[CURL_ERROR_SIZE] = "";
    Gathered g;
    g.max = m_limits.response_max;
    Upload up{message, 0};
    std::string url = url_for(m_account, mailbox);
    SION_CHECK(set_common(h, o, m_account, url, m_limits, errors, "imap,imaps"));
    o.set(CURLOPT_UPLOAD, 1L);
    o.set(CURLOPT_INFILESIZE_LARGE, static_cast<curl_off_t>(message.size()));
    o.set(CURLOPT_READFUNCTION, on_read);
    o.set(CURLOPT_READDATA, &up);
    o.set(CURLOPT_HEADERFUNCTION, on_lines);
    o.set(CURLOPT_HEADERDATA, &g);
    SION_CHECK(o.status());
    CURLcode code = curl().easy_perform(h);
    if (code != CURLE_OK)
        return failure(code, errors, m_account, g, m_limits, mailbox);
    return std::move(g.lines);
}

Status smtp_send(const Account& account, std::string_view from,
                 const std::vector<std::string>& recipients, std::string_view message,
                 Limits limits) {
    SION_TRY(CurlEasy easy, CurlEasy::make());
    auto* h = static_cast<CURL*>(easy.get());
    CurlOptions o(h);
    char errors[CURL_ERROR_SIZE] = "";
    Gathered g;
    g.max = limits.response_max;
    Upload up{message, 0};
    std::string url = account.url;
    std::string sender = "<" + std::string(from) + ">";
    auto free_list = [](curl_slist* list) { curl().slist_free_all(list); };
    std::unique_ptr<curl_slist, decltype(free_list)> rcpt(nullptr, free_list);
    for (const std::string& r : recipients)
        rcpt.reset(curl().slist_append(rcpt.release(), ("<" + r + ">").c_str()));

    SION_CHECK(set_common(h, o, account, url, limits, errors, "smtp,smtps"));
    o.set(CURLOPT_MAIL_FROM, sender.c_str());
    o.set(CURLOPT_MAIL_RCPT, rcpt.get());
    o.set(CURLOPT_UPLOAD, 1L);
    o.set(CURLOPT_INFILESIZE_LARGE, static_cast<curl_off_t>(message.size()));
    o.set(CURLOPT_READFUNCTION, on_read);
    o.set(CURLOPT_READDATA, &up);
    o.set(CURLOPT_HEADERFUNCTION, on_lines);
    o.set(CURLOPT_HEADERDATA, &g);
    SION_CHECK(o.status());
    CURLcode code = curl().easy_perform(h);
    if (code != CURLE_OK)
        return failure(code, errors, account, g, limits, {});
    return {};
}

} // namespace sion::mail
