// SPDX-License-Identifier: MIT
// The egress proxy's TLS between a sandboxed client and a granted host: two mbedTLS sessions over
// memory buffers, and the client's first request head rewritten between them.
#include "sandboxd/egress_tls.hpp"

#include "lib/mbedtls_bytes.hpp"
#include "lib/secret_bytes.hpp"
#include "lib/text.hpp"
#include "sandboxd/netproxy_request.hpp"

#include <mbedtls/error.h>
#include <mbedtls/pk.h>
#include <mbedtls/ssl.h>
#include <mbedtls/x509_crt.h>

#include <arpa/inet.h>

#include <algorithm>
#include <cstring>

namespace sion::sandboxd {

namespace {

// ALPN: both sides speak HTTP/1.1, whatever else they could.
const char* k_alpn[] = {"http/1.1", nullptr};

std::string mbedtls_text(int rc) {
    char text[160];
    mbedtls_strerror(rc, text, sizeof text);
    return text;
}

// The host's address when it is one (4 or 16 bytes), else empty.
std::string address_bytes(const std::string& host) {
    unsigned char a[16];
    if (::inet_pton(AF_INET, host.c_str(), a) == 1)
        return {reinterpret_cast<char*>(a), 4};
    if (::inet_pton(AF_INET6, host.c_str(), a) == 1)
        return {reinterpret_cast<char*>(a), 16};
    return {};
}

// mbedTLS 2.28 matches a host only against DNS names: for an address, the host's certificate is
// checked here to name it as an iPAddress subjectAltName (RFC 6125: never its common name).
int verify_address(void* address, mbedtls_x509_crt* crt, int depth, uint32_t* flags) {
    if (depth != 0)
        return 0;
    const std::string& want = *static_cast<const std::string*>(address);
    for (const mbedtls_x509_sequence* san = &crt->subject_alt_names; san != nullptr;
         san = san->next)
        if (san->buf.tag == (MBEDTLS_ASN1_CONTEXT_SPECIFIC | 7) && san->buf.len == want.size()
            && std::memcmp(san->buf.p, want.data(), want.size()) == 0)
            return 0;
    *flags |= MBEDTLS_X509_BADCERT_CN_MISMATCH;
    return 0;
}

bool again(int rc) {
    return rc == MBEDTLS_ERR_SSL_WANT_READ || rc == MBEDTLS_ERR_SSL_WANT_WRITE;
}

// One TLS session over memory: `in` what the peer sent and it has not read yet, `out` what it
// wrote for the peer.
struct Side {
    Side() {
        mbedtls_ssl_init(&ssl);
        mbedtls_ssl_config_init(&conf);
    }

    Side(const Side&) = delete;
    Side& operator=(const Side&) = delete;

    ~Side() {
        mbedtls_ssl_free(&ssl);
        mbedtls_ssl_config_free(&conf);
    }

    static int send(void* self, const unsigned char* data, size_t size) {
        static_cast<Side*>(self)->out.append(reinterpret_cast<const char*>(data), size);
        return static_cast<int>(size);
    }

    static int receive(void* self, unsigned char* data, size_t size) {
        auto* side = static_cast<Side*>(self);
        if (side->in.empty())
            return side->ended ? 0 : MBEDTLS_ERR_SSL_WANT_READ;
        size_t n = std::min(size, side->in.size());
        std::memcpy(data, side->in.data(), n);
        side->in.erase(0, n);
        return static_cast<int>(n);
    }

    // Writes all of `plain` as records; false when the session failed.
    bool write(std::string& plain) {
        while (!plain.empty()) {
            int n = mbedtls_ssl_write(&ssl, bytes_of(std::string_view(plain)), plain.size());
            if (n < 0)
                return again(n);
            plain.erase(0, static_cast<size_t>(n));
        }
        return true;
    }

    mbedtls_ssl_context ssl;
    mbedtls_ssl_config conf;
    std::string in, out;
    bool ended = false;  // the peer's stream ended (TCP)
    bool shaken = false; // the handshake is done
    bool done = false;   // nothing more comes from the peer (close_notify, or its end)
    bool closed = false; // we sent close_notify
};

} // namespace

struct TrustedRoots::Impl {
    Impl() { mbedtls_x509_crt_init(&chain); }
    Impl(const Impl&) = delete;
    Impl& operator=(const Impl&) = delete;
    ~Impl() { mbedtls_x509_crt_free(&chain); }

    mbedtls_x509_crt chain;
};

TrustedRoots::TrustedRoots(std::unique_ptr<Impl> impl) : m_impl(std::move(impl)) {}

TrustedRoots::~TrustedRoots() = default;

Result<std::shared_ptr<TrustedRoots>> TrustedRoots::parse(std::string_view pem) {
    auto impl = std::make_unique<Impl>();
    std::string text(pem); // mbedTLS reads PEM up to its NUL
    int rc = mbedtls_x509_crt_parse(&impl->chain, bytes_of(text), text.size() + 1);
    // A positive rc: some of the roots did not parse, and the others did.
    if (rc < 0 || impl->chain.version == 0)
        return make_error(Exit::config, "no trusted certificate parses: %s",
                          rc < 0 ? mbedtls_text(rc).c_str() : "none is there");
    return std::shared_ptr<TrustedRoots>(new TrustedRoots(std::move(impl)));
}

struct Interception::Impl {
    Impl() {
        mbedtls_x509_crt_init(&own);
        mbedtls_pk_init(&key);
    }

    Impl(const Impl&) = delete;
    Impl& operator=(const Impl&) = delete;

    ~Impl() {
        mbedtls_x509_crt_free(&own);
        mbedtls_pk_free(&key);
    }

    Status setup(Setup given);
    void pump();
    void client_plain(std::string_view data);
    // The client is answered by the proxy itself (the host is not reached, or refused), then
    // the connection ends.
    void answer(int status, const std::string& why);

    void fail(std::string why) {
        if (failure.empty())
            failure = std::move(why);
    }

    Setup s;
    mbedtls_x509_crt own;
    mbedtls_pk_context key;
    std::string address; // the host's, when it is an address (verify_address)
    Side client;      // we are its server
    Side host;        // we are its client
    std::string head; // the client's first request head, while it comes
    bool head_sent = false;
    std::string for_host;   // plain text for the host, while its handshake goes on
    std::string for_client; // plain text for the client, while its handshake goes on
    bool answered = false;  // the proxy answers the client itself: nothing goes to the host
    bool finished = false;
    std::string failure;
};

Status Interception::Impl::setup(Setup given) {
    s = std::move(given);
    std::string chain = s.certificate->certificate;
    std::string pem = s.certificate->key;
    int rc = mbedtls_x509_crt_parse(&own, bytes_of(chain), chain.size() + 1);
    if (rc == 0)
        rc = mbedtls_pk_parse_key(&key, bytes_of(pem), pem.size() + 1, nullptr, 0);
    wipe(pem);
    if (rc != 0 || !s.trusted)
        return make_error(Exit::software, "cannot set up the egress proxy's TLS: %s",
                          mbedtls_text(rc).c_str());
    auto configure = [](Side& side, int endpoint) {
        int r = mbedtls_ssl_config_defaults(&side.conf, endpoint, MBEDTLS_SSL_TRANSPORT_STREAM,
                                            MBEDTLS_SSL_PRESET_DEFAULT);
        mbedtls_ssl_conf_rng(&side.conf, mbedtls_random, nullptr);
        if (r == 0)
            r = mbedtls_ssl_conf_alpn_protocols(&side.conf, k_alpn);
        return r;
    };
    rc = configure(client, MBEDTLS_SSL_IS_SERVER);
    if (rc == 0)
        rc = mbedtls_ssl_conf_own_cert(&client.conf, &own, &key);
    if (rc == 0)
        rc = configure(host, MBEDTLS_SSL_IS_CLIENT);
    if (rc == 0) {
        mbedtls_ssl_conf_authmode(&host.conf, MBEDTLS_SSL_VERIFY_REQUIRED);
        mbedtls_ssl_conf_ca_chain(&host.conf, &s.trusted->impl().chain, nullptr);
    }
    for (Side* side : {&client, &host})
        if (rc == 0) {
            rc = mbedtls_ssl_setup(&side->ssl, &side->conf);
            mbedtls_ssl_set_bio(&side->ssl, side, Side::send, Side::receive, nullptr);
        }
    address = address_bytes(s.host);
    if (rc == 0 && address.empty())
        rc = mbedtls_ssl_set_hostname(&host.ssl, s.host.c_str());
    else if (rc == 0)
        mbedtls_ssl_conf_verify(&host.conf, verify_address, &address);
    if (rc != 0)
        return make_error(Exit::software, "cannot set up the egress proxy's TLS: %s",
                          mbedtls_text(rc).c_str());
    return {};
}

void Interception::Impl::answer(int status, const std::string& why) {
    if (answered)
        return;
    answered = true;
    fail(why);
    for_host.clear();
    for_client = http_error_response(status, why);
    host.done = true;
}

void Interception::Impl::client_plain(std::string_view data) {
    if (answered)
        return;
    if (head_sent) {
        for_host.append(data);
        return;
    }
    size_t from = head.size() >= 3 ? head.size() - 3 : 0;
    head.append(data);
    size_t end = head.find("\r\n\r\n", from);
    if (end == std::string::npos) {
        if (head.size() > s.max_head)
            answer(431, format("the request head is longer than %zu bytes", s.max_head));
        return;
    }
    head_sent = true;
    for_host += s.rewrite(std::string_view(head).substr(0, end + 4));
    for_host.append(head, end + 4);
    wipe(head);
}

void Interception::Impl::pump() {
    // The host's handshake began with the interception; it goes on as its records come.
    if (!host.shaken && !host.done) {
        int rc = mbedtls_ssl_handshake(&host.ssl);
        if (rc == 0) {
            host.shaken = true;
        } else if (!again(rc)) {
            uint32_t flags = mbedtls_ssl_get_verify_result(&host.ssl);
            std::string why;
            if (flags != 0 && flags != static_cast<uint32_t>(-1)) {
                char info[512];
                mbedtls_x509_crt_verify_info(info, sizeof info, "", flags);
                why = one_line(info);
                answer(502, format("the certificate of %s does not verify: %s", s.host.c_str(),
                                   why.c_str()));
            } else {
                answer(502, format("cannot reach %s over TLS: %s", s.host.c_str(),
                                   mbedtls_text(rc).c_str()));
            }
        }
    }
    if (!client.shaken && !client.done) {
        int rc = mbedtls_ssl_handshake(&client.ssl);
        if (rc == 0) {
            client.shaken = true;
        } else if (!again(rc) || client.ended) {
            fail("the client's TLS failed: " + mbedtls_text(rc));
            client.done = true;
            finished = true;
            return;
        }
    }
    if (client.shaken && !client.done) {
        char buffer[16 * 1024];
        while (true) {
            int n = mbedtls_ssl_read(&client.ssl, reinterpret_cast<unsigned char*>(buffer),
                                     sizeof buffer);
            if (n > 0) {
                client_plain(std::string_view(buffer, static_cast<size_t>(n)));
                continue;
            }
            if (n == 0 || n == MBEDTLS_ERR_SSL_PEER_CLOSE_NOTIFY || !again(n))
                client.done = true;
            break;
        }
    }
    if (host.shaken && !answered) {
        if (!host.write(for_host))
            answer(502, "the host's TLS failed while the request was sent");
        char buffer[16 * 1024];
        while (!host.done) {
            int n = mbedtls_ssl_read(&host.ssl, reinterpret_cast<unsigned char*>(buffer),
                                     sizeof buffer);
            if (n > 0) {
                for_client.append(buffer, static_cast<size_t>(n));
                continue;
            }
            if (n == 0 || n == MBEDTLS_ERR_SSL_PEER_CLOSE_NOTIFY || !again(n))
                host.done = true;
            break;
        }
        if (host.done && !host.closed) {
            (void)mbedtls_ssl_close_notify(&host.ssl);
            host.closed = true;
        }
    }
    if (client.shaken && !client.closed) {
        if (!client.write(for_client)) {
            fail("the client's TLS failed while the answer was sent");
            finished = true;
            return;
        }
        if (host.done) {
            (void)mbedtls_ssl_close_notify(&client.ssl);
            client.closed = true;
        }
    }
    if ((client.closed && host.done) || client.done)
        finished = true;
}

Result<std::unique_ptr<Interception>> Interception::start(Setup setup) {
    auto impl = std::make_unique<Impl>();
    SION_CHECK(impl->setup(std::move(setup)));
    impl->pump(); // the host's ClientHello
    return std::unique_ptr<Interception>(new Interception(std::move(impl)));
}

Interception::Interception(std::unique_ptr<Impl> impl) : m_impl(std::move(impl)) {}

Interception::~Interception() = default;

void Interception::from_client(std::string_view bytes) {
    m_impl->client.in.append(bytes);
    m_impl->pump();
}

void Interception::from_host(std::string_view bytes) {
    m_impl->host.in.append(bytes);
    m_impl->pump();
}

void Interception::client_ended() {
    m_impl->client.ended = true;
    m_impl->pump();
    m_impl->finished = true; // nobody is left to answer
}

void Interception::host_ended() {
    m_impl->host.ended = true;
    m_impl->pump();
    if (!m_impl->host.done) {
        m_impl->host.done = true;
        if (!m_impl->host.shaken)
            m_impl->answer(502, "the host " + m_impl->s.host + " ended the connection");
        m_impl->pump();
    }
}

std::string Interception::take_for_client() {
    return std::exchange(m_impl->client.out, std::string());
}

std::string Interception::take_for_host() {
    return std::exchange(m_impl->host.out, std::string());
}

bool Interception::finished() const {
    return m_impl->finished;
}

const std::string& Interception::failure() const {
    return m_impl->failure;
}

} // namespace sion::sandboxd
