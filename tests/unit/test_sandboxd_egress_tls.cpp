// SPDX-License-Identifier: MIT
// Unit tests of sandboxd/egress_tls: the egress proxy between a client and a granted host, both
// over TLS, all four ends played in memory — a client that trusts only sion's authority, the
// interception, and a host whose certificate comes from a "public" authority the proxy trusts.
#include "sandboxd/egress_tls.hpp"

#include "lib/secret_bytes.hpp"
#include "tests/unit/temp_dir.hpp"

#include <mbedtls/pk.h>
#include <mbedtls/ssl.h>
#include <mbedtls/x509_crt.h>

#include <arpa/inet.h>
#include <gtest/gtest.h>

#include <cstring>
#include <memory>
#include <string>

namespace sion::sandboxd {
namespace {


const unsigned char* bytes(const std::string& s) {
    return reinterpret_cast<const unsigned char*>(s.c_str());
}

// A TLS end over memory: the client or the host of a test.
class Peer {
public:
    Peer() {
        mbedtls_ssl_init(&m_ssl);
        mbedtls_ssl_config_init(&m_conf);
        mbedtls_x509_crt_init(&m_crt);
        mbedtls_pk_init(&m_key);
    }

    Peer(const Peer&) = delete;
    Peer& operator=(const Peer&) = delete;

    ~Peer() {
        mbedtls_ssl_free(&m_ssl);
        mbedtls_ssl_config_free(&m_conf);
        mbedtls_x509_crt_free(&m_crt);
        mbedtls_pk_free(&m_key);
    }

    // A client trusting `roots` for `host`.
    void client(const std::string& roots, const std::string& host) {
        ASSERT_EQ(mbedtls_x509_crt_parse(&m_crt, bytes(roots), roots.size() + 1), 0);
        setup(MBEDTLS_SSL_IS_CLIENT);
        mbedtls_ssl_conf_authmode(&m_conf, MBEDTLS_SSL_VERIFY_REQUIRED);
        mbedtls_ssl_conf_ca_chain(&m_conf, &m_crt, nullptr);
        ASSERT_EQ(mbedtls_ssl_setup(&m_ssl, &m_conf), 0);
        // mbedTLS 2.28 matches DNS names only: an address is the proxy's to check (below), and
        // real clients' (tests/e2e/t0132).
        unsigned char address[16];
        if (::inet_pton(AF_INET, host.c_str(), address) != 1
            && ::inet_pton(AF_INET6, host.c_str(), address) != 1) {
            ASSERT_EQ(mbedtls_ssl_set_hostname(&m_ssl, host.c_str()), 0);
        }
        bio();
    }

    // A server with this certificate chain and key.
    void server(const EgressAuthority::Issued& issued) {
        ASSERT_EQ(mbedtls_x509_crt_parse(&m_crt, bytes(issued.certificate),
                                         issued.certificate.size() + 1),
                  0);
        ASSERT_EQ(
            mbedtls_pk_parse_key(&m_key, bytes(issued.key), issued.key.size() + 1, nullptr, 0), 0);
        setup(MBEDTLS_SSL_IS_SERVER);
        ASSERT_EQ(mbedtls_ssl_conf_own_cert(&m_conf, &m_crt, &m_key), 0);
        ASSERT_EQ(mbedtls_ssl_setup(&m_ssl, &m_conf), 0);
        bio();
    }

    // Goes on with what came; returns the plain text read.
    std::string step() {
        if (!m_shaken) {
            int rc = mbedtls_ssl_handshake(&m_ssl);
            if (rc == 0)
                m_shaken = true;
            else if (rc != MBEDTLS_ERR_SSL_WANT_READ && rc != MBEDTLS_ERR_SSL_WANT_WRITE)
                m_failed = true;
        }
        std::string plain;
        if (!m_shaken)
            return plain;
        if (!m_pending.empty()) {
            int n = mbedtls_ssl_write(&m_ssl, bytes(m_pending), m_pending.size());
            if (n > 0)
                m_pending.erase(0, static_cast<size_t>(n));
        }
        unsigned char buffer[4096];
        int n = 0;
        while ((n = mbedtls_ssl_read(&m_ssl, buffer, sizeof buffer)) > 0)
            plain.append(reinterpret_cast<char*>(buffer), static_cast<size_t>(n));
        if (n == MBEDTLS_ERR_SSL_PEER_CLOSE_NOTIFY)
            m_closed = true;
        return plain;
    }

    void say(const std::string& plain) { m_pending += plain; }

    void close() { (void)mbedtls_ssl_close_notify(&m_ssl); }

    std::string in, out;

    bool shaken() const { return m_shaken; }

    bool failed() const { return m_failed; }

    bool closed() const { return m_closed; }

private:
    void setup(int endpoint) {
        ASSERT_EQ(mbedtls_ssl_config_defaults(&m_conf, endpoint, MBEDTLS_SSL_TRANSPORT_STREAM,
                                              MBEDTLS_SSL_PRESET_DEFAULT),
                  0);
        mbedtls_ssl_conf_rng(&m_conf, mbedtls_random, nullptr);
    }

    void bio() {
        mbedtls_ssl_set_bio(
            &m_ssl, this,
            [](void* self, const unsigned char* data, size_t size) {
                static_cast<Peer*>(self)->out.append(reinterpret_cast<const char*>(data), size);
                return static_cast<int>(size);
            },
            [](void* self, unsigned char* data, size_t size) {
                auto* p = static_cast<Peer*>(self);
                if (p->in.empty())
                    return MBEDTLS_ERR_SSL_WANT_READ;
                size_t n = std::min(size, p->in.size());
                std::memcpy(data, p->in.data(), n);
                p->in.erase(0, n);
                return static_cast<int>(n);
            },
            nullptr);
    }

    mbedtls_ssl_context m_ssl;
    mbedtls_ssl_config m_conf;
    mbedtls_x509_crt m_crt;
    mbedtls_pk_context m_key;
    std::string m_pending;
    bool m_shaken = false;
    bool m_failed = false;
    bool m_closed = false;
};

struct Exchange {
    std::string client_got; // what the client read, plain
    std::string host_got;   // what the host read, plain
    std::string failure;
    bool finished = false;
};

// A client asks `host` for GET /v1/things through the interception; the host, whose certificate
// is `host_issued`, answers with what it was sent and closes.
Exchange exchange(EgressAuthority& sion, const std::string& trusted_roots, const std::string& host,
                  const EgressAuthority::Issued& host_issued) {
    Exchange e;
    Peer client, origin;
    client.client(sion.certificate(), host);
    origin.server(host_issued);
    auto issued = sion.issue(host);
    EXPECT_TRUE(issued);
    auto roots = TrustedRoots::parse(trusted_roots);
    EXPECT_TRUE(roots);
    auto interception = Interception::start(
        {host, *issued, roots ? *roots : nullptr, [](std::string_view head) {
             // The grant: the credential replaces any the client sent, and the host closes after.
             std::string out;
             size_t at = 0;
             while (at < head.size()) {
                 size_t end = head.find("\r\n", at);
                 std::string_view line = head.substr(at, end - at);
                 at = end + 2;
                 if (line.empty())
                     break;
                 if (line.starts_with("Authorization:") || line.starts_with("Connection:"))
                     continue;
                 out += std::string(line) + "\r\n";
             }
             return out + "Authorization: Bearer the-secret\r\nConnection: close\r\n\r\n";
         }});
    EXPECT_TRUE(interception) << interception.error().message();
    Interception& i = **interception;
    client.say("GET /v1/things HTTP/1.1\r\nHost: " + host
               + "\r\nAuthorization: Bearer forged\r\nConnection: keep-alive\r\n\r\n");
    bool answered = false;
    for (int round = 0; round < 50 && !i.finished(); ++round) {
        e.client_got += client.step();
        if (!client.out.empty())
            i.from_client(std::exchange(client.out, std::string()));
        origin.in += i.take_for_host();
        e.host_got += origin.step();
        if (!answered && e.host_got.find("\r\n\r\n") != std::string::npos) {
            answered = true;
            origin.say("HTTP/1.1 200 OK\r\nContent-Length: " + std::to_string(e.host_got.size())
                       + "\r\nConnection: close\r\n\r\n" + e.host_got);
            (void)origin.step();
            origin.close();
        }
        if (!origin.out.empty())
            i.from_host(std::exchange(origin.out, std::string()));
        client.in += i.take_for_client();
    }
    e.client_got += client.step();
    e.failure = i.failure();
    e.finished = i.finished();
    return e;
}

TEST(EgressTls, TheGrantsCredentialIsWrittenIntoTheRequest) {
    test::TempDir sion_home, public_home;
    auto sion = EgressAuthority::open(sion_home.path());
    auto world = EgressAuthority::open(public_home.path()); // a public authority, for the host
    ASSERT_TRUE(sion && world);
    auto host_cert = (*world)->issue("api.example.test");
    ASSERT_TRUE(host_cert);
    Exchange e = exchange(**sion, (*world)->certificate(), "api.example.test", **host_cert);
    EXPECT_TRUE(e.finished);
    EXPECT_EQ(e.failure, "");
    // The host got the credential, and not the client's; it was asked to close after.
    EXPECT_NE(e.host_got.find("\r\nAuthorization: Bearer the-secret\r\n"), std::string::npos)
        << e.host_got;
    EXPECT_EQ(e.host_got.find("forged"), std::string::npos);
    EXPECT_NE(e.host_got.find("\r\nConnection: close\r\n"), std::string::npos);
    EXPECT_EQ(e.host_got.rfind("GET /v1/things HTTP/1.1\r\nHost: api.example.test\r\n", 0), 0U);
    // The client got the host's answer whole, over sion's certificate.
    EXPECT_EQ(e.client_got.rfind("HTTP/1.1 200 OK\r\n", 0), 0U) << e.client_got;
    EXPECT_NE(e.client_got.find("Bearer the-secret"), std::string::npos); // the echo, here only
}

TEST(EgressTls, AHostWhoseCertificateFailsIsRefusedNotResigned) {
    test::TempDir sion_home, public_home, rogue_home;
    auto sion = EgressAuthority::open(sion_home.path());
    auto world = EgressAuthority::open(public_home.path());
    auto rogue = EgressAuthority::open(rogue_home.path()); // an authority nobody trusts
    ASSERT_TRUE(sion && world && rogue);
    // Signed by an authority the proxy does not trust.
    auto untrusted = (*rogue)->issue("api.example.test");
    ASSERT_TRUE(untrusted);
    Exchange e = exchange(**sion, (*world)->certificate(), "api.example.test", **untrusted);
    EXPECT_EQ(e.host_got, "") << "the request reached a host that failed verification";
    EXPECT_EQ(e.client_got.rfind("HTTP/1.1 502 ", 0), 0U) << e.client_got;
    EXPECT_NE(e.client_got.find("the certificate of api.example.test does not verify"),
              std::string::npos)
        << e.client_got;
    EXPECT_NE(e.failure.find("does not verify"), std::string::npos);
    // Trusted, but for another name.
    auto other = (*world)->issue("other.example.test");
    ASSERT_TRUE(other);
    Exchange named = exchange(**sion, (*world)->certificate(), "api.example.test", **other);
    EXPECT_EQ(named.host_got, "");
    EXPECT_EQ(named.client_got.rfind("HTTP/1.1 502 ", 0), 0U) << named.client_got;
}

// A host named by its address: its certificate must name that address (an iPAddress
// subjectAltName), which mbedTLS 2.28 leaves to the proxy.
TEST(EgressTls, AnAddressIsCheckedAgainstTheCertificatesAddresses) {
    test::TempDir sion_home, public_home;
    auto sion = EgressAuthority::open(sion_home.path());
    auto world = EgressAuthority::open(public_home.path());
    ASSERT_TRUE(sion && world);
    for (const char* host : {"127.0.0.2", "::1"}) {
        auto own = (*world)->issue(host);
        ASSERT_TRUE(own);
        Exchange e = exchange(**sion, (*world)->certificate(), host, **own);
        EXPECT_EQ(e.failure, "") << host;
        EXPECT_NE(e.host_got.find("Bearer the-secret"), std::string::npos) << host;
    }
    auto other = (*world)->issue("127.0.0.3");
    auto named = (*world)->issue("api.example.test");
    ASSERT_TRUE(other && named);
    for (const EgressAuthority::Issued* wrong : {*other, *named}) {
        Exchange e = exchange(**sion, (*world)->certificate(), "127.0.0.2", *wrong);
        EXPECT_EQ(e.host_got, "");
        EXPECT_EQ(e.client_got.rfind("HTTP/1.1 502 ", 0), 0U) << e.client_got;
        EXPECT_NE(e.failure.find("the certificate of 127.0.0.2 does not verify"), std::string::npos)
            << e.failure;
    }
}

TEST(EgressTls, RootsThatDoNotParseAreRefusedOnce) {
    auto none = TrustedRoots::parse("no certificate here\n");
    ASSERT_FALSE(none);
    EXPECT_EQ(none.error().exit(), Exit::config);
    EXPECT_EQ(none.error().message(), "no trusted certificate parses: X509 - The CRT/CRL/CSR "
                                      "format is invalid, e.g. different type expected");
    // A bundle of which one certificate is damaged keeps the others.
    test::TempDir home;
    auto sion = EgressAuthority::open(home.path());
    ASSERT_TRUE(sion);
    std::string damaged = "-----BEGIN CERTIFICATE-----\nAAAA\n-----END CERTIFICATE-----\n";
    EXPECT_TRUE(TrustedRoots::parse(damaged + (*sion)->certificate()));
}

} // namespace
} // namespace sion::sandboxd
