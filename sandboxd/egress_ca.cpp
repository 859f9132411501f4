// SPDX-License-Identifier: MIT
// sion's certificate authority for the egress proxy: made once, and a certificate per host.
#include "sandboxd/egress_ca.hpp"

#include "lib/fd.hpp"
#include "lib/jws.hpp"
#include "lib/mbedtls_bytes.hpp"
#include "lib/private_file.hpp"
#include "lib/secret_bytes.hpp"
#include "lib/text.hpp"

#include <mbedtls/oid.h>
#include <mbedtls/pk.h>
#include <mbedtls/x509_crt.h>

#include <arpa/inet.h>
#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <ctime>

namespace sion::sandboxd {

namespace {

constexpr const char* k_issuer = "CN=sion egress proxy authority,O=sion";
constexpr int64_t k_hour = 3600;
constexpr int64_t k_ca_life = 10 * 366 * 24 * k_hour;
constexpr int64_t k_host_life = 7 * 24 * k_hour;
constexpr size_t k_max_file = 16 * 1024;

Error mbedtls_error(const char* what, int rc) {
    return make_error(Exit::software, "cannot %s: mbedTLS error -0x%04x", what, -rc);
}

// YYYYMMDDhhmmss, as x509write wants validity times, of `t` in UTC.
std::string asn1_time(int64_t t) {
    std::time_t tt = static_cast<std::time_t>(t);
    std::tm tm{};
    ::gmtime_r(&tt, &tm);
    char out[16];
    std::strftime(out, sizeof out, "%Y%m%d%H%M%S", &tm);
    return out;
}

// A DER length.
std::string der_length(size_t n) {
    if (n < 0x80)
        return std::string(1, static_cast<char>(n));
    std::string bytes;
    for (; n > 0; n >>= 8)
        bytes.insert(bytes.begin(), static_cast<char>(n & 0xFF));
    return std::string(1, static_cast<char>(0x80 | bytes.size())) + bytes;
}

std::string der(unsigned char tag, std::string_view content) {
    return std::string(1, static_cast<char>(tag)) + der_length(content.size())
           + std::string(content);
}

class Key {
public:
    Key() { mbedtls_pk_init(&m_pk); }

    Key(const Key&) = delete;
    Key& operator=(const Key&) = delete;

    ~Key() { mbedtls_pk_free(&m_pk); }

    [[nodiscard]] Status parse(std::string pem) {
        int rc = mbedtls_pk_parse_key(&m_pk, bytes_of(pem), pem.size() + 1, nullptr, 0);
        wipe(pem);
        if (rc != 0)
            return mbedtls_error("read a key", rc);
        return {};
    }

    mbedtls_pk_context* get() { return &m_pk; }

private:
    mbedtls_pk_context m_pk;
};

struct Mpi {
    Mpi() { mbedtls_mpi_init(&m); }

    Mpi(const Mpi&) = delete;
    Mpi& operator=(const Mpi&) = delete;

    ~Mpi() { mbedtls_mpi_free(&m); }

    mbedtls_mpi m;
};

struct CertificateWriter {
    CertificateWriter() { mbedtls_x509write_crt_init(&w); }

    CertificateWriter(const CertificateWriter&) = delete;
    CertificateWriter& operator=(const CertificateWriter&) = delete;

    ~CertificateWriter() { mbedtls_x509write_crt_free(&w); }

    mbedtls_x509write_cert w;
};

// What a certificate says besides its keys.
struct Subject {
    std::string name;       // "CN=…"
    int64_t not_before = 0; // Unix seconds
    int64_t not_after = 0;
    bool authority = false;
    std::string alt_name; // DER of its subjectAltName's GeneralNames; "" for none
};

// A certificate for `subject_key`, signed with `issuer_key`, PEM.
Result<std::string> write_certificate(const Subject& s, mbedtls_pk_context* subject_key,
                                      mbedtls_pk_context* issuer_key) {
    CertificateWriter c;
    mbedtls_x509write_cert* w = &c.w;
    mbedtls_x509write_crt_set_version(w, MBEDTLS_X509_CRT_VERSION_3);
    mbedtls_x509write_crt_set_md_alg(w, MBEDTLS_MD_SHA256);
    mbedtls_x509write_crt_set_subject_key(w, subject_key);
    mbedtls_x509write_crt_set_issuer_key(w, issuer_key);
    std::string serial(16, '\0');
    SION_CHECK(fill_random(serial.data(), serial.size()));
    serial[0] = static_cast<char>(serial[0] & 0x7F); // a positive INTEGER
    Mpi n;
    int rc = mbedtls_mpi_read_binary(&n.m, bytes_of(serial), serial.size());
    if (rc == 0)
        rc = mbedtls_x509write_crt_set_serial(w, &n.m);
    if (rc == 0)
        rc = mbedtls_x509write_crt_set_subject_name(w, s.name.c_str());
    if (rc == 0)
        rc = mbedtls_x509write_crt_set_issuer_name(w, k_issuer);
    if (rc == 0)
        rc = mbedtls_x509write_crt_set_validity(w, asn1_time(s.not_before).c_str(),
                                                asn1_time(s.not_after).c_str());
    if (rc == 0)
        rc = mbedtls_x509write_crt_set_basic_constraints(w, s.authority ? 1 : 0, 0);
    if (rc == 0)
        rc = mbedtls_x509write_crt_set_subject_key_identifier(w);
    if (rc == 0)
        rc = mbedtls_x509write_crt_set_authority_key_identifier(w);
    if (rc == 0)
        rc = mbedtls_x509write_crt_set_key_usage(
            w, s.authority ? MBEDTLS_X509_KU_KEY_CERT_SIGN | MBEDTLS_X509_KU_CRL_SIGN
                           : MBEDTLS_X509_KU_DIGITAL_SIGNATURE);
    if (rc == 0 && !s.authority) {
        // extKeyUsage: serverAuth (1.3.6.1.5.5.7.3.1); mbedTLS 2.28 writes no such extension of
        // its own, nor a subjectAltName.
        std::string eku = der(0x30, der(0x06, MBEDTLS_OID_SERVER_AUTH));
        rc = mbedtls_x509write_crt_set_extension(w, MBEDTLS_OID_EXTENDED_KEY_USAGE,
                                                 MBEDTLS_OID_SIZE(MBEDTLS_OID_EXTENDED_KEY_USAGE),
                                                 0, bytes_of(eku), eku.size());
        if (rc == 0)
            rc = mbedtls_x509write_crt_set_extension(w, MBEDTLS_OID_SUBJECT_ALT_NAME,
                                                     MBEDTLS_OID_SIZE(MBEDTLS_OID_SUBJECT_ALT_NAME),
                                                     0, bytes_of(s.alt_name), s.alt_name.size());
    }
    if (rc != 0)
        return mbedtls_error("make a certificate", rc);
    std::string pem(4096, '\0');
    rc = mbedtls_x509write_crt_pem(w, bytes_of(pem), pem.size(), mbedtls_random, nullptr);
    if (rc != 0)
        return mbedtls_error("write a certificate", rc);
    pem.resize(std::strlen(pem.c_str()));
    return pem;
}

// The PEM blocks of `text` that begin with `label`'s BEGIN line.
std::string pem_block(std::string_view text, std::string_view label) {
    std::string begin = "-----BEGIN " + std::string(label) + "-----";
    std::string end = "-----END " + std::string(label) + "-----";
    size_t from = text.find(begin);
    size_t to = from == std::string_view::npos ? from : text.find(end, from);
    if (to == std::string_view::npos)
        return {};
    return std::string(text.substr(from, to + end.size() - from)) + "\n";
}

// A subjectAltName naming `host`: a DNS name, or an IP address ([7], its bytes).
Result<std::string> alt_name_of(std::string_view host) {
    std::string h(host);
    unsigned char address[16];
    if (::inet_pton(AF_INET, h.c_str(), address) == 1)
        return der(0x30, der(0x87, std::string_view(reinterpret_cast<char*>(address), 4)));
    if (::inet_pton(AF_INET6, h.c_str(), address) == 1)
        return der(0x30, der(0x87, std::string_view(reinterpret_cast<char*>(address), 16)));
    bool name = !h.empty() && h.size() <= 253;
    for (char c : h)
        name = name && ((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-' || c == '.');
    if (!name)
        return make_error(Exit::usage, "cannot make a certificate for '%s': it is no host name",
                          one_line(host).c_str());
    return der(0x30, der(0x82, h));
}

} // namespace

Result<std::unique_ptr<EgressAuthority>> EgressAuthority::open(const std::string& home) {
    std::string dir = home + "/agents";
    SION_CHECK(ensure_private_directory(dir));
    std::string path = dir + "/egress-ca.pem";
    int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
    if (fd < 0 && errno != ENOENT)
        return sys_error(Exit::os, errno, "cannot read '%s'", path.c_str());
    if (fd < 0) {
        // Made once: a key and a certificate of ten years, written together.
        SION_TRY(std::string key, es256_generate());
        Key k;
        SION_CHECK(k.parse(key));
        int64_t now = static_cast<int64_t>(std::time(nullptr));
        Subject s{k_issuer, now - k_hour, now + k_ca_life, true, {}};
        SION_TRY(std::string certificate, write_certificate(s, k.get(), k.get()));
        std::string both = key + certificate;
        SION_TRY(bool made, create_private_file(path, both));
        wipe(both);
        if (made)
            return std::unique_ptr<EgressAuthority>(
                new EgressAuthority(path, std::move(key), std::move(certificate)));
        wipe(key);
        fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NOFOLLOW); // another process made it
        if (fd < 0)
            return sys_error(Exit::os, errno, "cannot read '%s'", path.c_str());
    }
    Fd opened(fd);
    SION_TRY(std::string text, read_all(opened.get(), k_max_file));
    std::string key = pem_block(text, "EC PRIVATE KEY");
    std::string certificate = pem_block(text, "CERTIFICATE");
    wipe(text);
    Key k;
    if (key.empty() || certificate.empty() || !k.parse(key))
        return make_error(Exit::data,
                          "'%s' is not sion's egress authority (a P-256 key and its certificate): "
                          "move it away, and one is made again",
                          path.c_str());
    return std::unique_ptr<EgressAuthority>(
        new EgressAuthority(path, std::move(key), std::move(certificate)));
}

Result<const EgressAuthority::Issued*> EgressAuthority::issue(std::string_view host) {
    if (auto it = m_issued.find(host); it != m_issued.end())
        return &it->second;
    SION_TRY(std::string alt_name, alt_name_of(host));
    SION_TRY(std::string key, es256_generate());
    Key subject;
    Key issuer;
    SION_CHECK(subject.parse(key));
    SION_CHECK(issuer.parse(m_key));
    int64_t now = static_cast<int64_t>(std::time(nullptr));
    Subject s{"CN=" + std::string(host), now - k_hour, now + k_host_life, false,
              std::move(alt_name)};
    SION_TRY(std::string certificate, write_certificate(s, subject.get(), issuer.get()));
    Issued issued{certificate + m_certificate, std::move(key)};
    return &m_issued.emplace(std::string(host), std::move(issued)).first->second;
}

} // namespace sion::sandboxd
