// SPDX-License-Identifier: MIT
// RS256 and ES256 over mbedTLS: RS256 for the ID tokens a provider signs, ES256 for the JWTs a
// client authenticates itself with (private_key_jwt) and DPoP's proofs.
#include "lib/jws.hpp"

#include "lib/base64.hpp"
#include "lib/hash.hpp"
#include "lib/mbedtls_bytes.hpp"
#include "lib/secret_bytes.hpp"

#include <mbedtls/ecdsa.h>
#include <mbedtls/ecp.h>
#include <mbedtls/pk.h>
#include <mbedtls/rsa.h>

#include <cstring>

namespace sion {

namespace {

// An mbedTLS RSA context, freed with it.
class RsaKey {
public:
    RsaKey() { mbedtls_rsa_init(&m_rsa, MBEDTLS_RSA_PKCS_V15, 0); }

    RsaKey(const RsaKey&) = delete;
    RsaKey& operator=(const RsaKey&) = delete;

    ~RsaKey() { mbedtls_rsa_free(&m_rsa); }

    mbedtls_rsa_context* get() { return &m_rsa; }

private:
    mbedtls_rsa_context m_rsa;
};

constexpr size_t k_min_rsa_bits = 2048;

} // namespace

Result<bool> rs256_verify(std::string_view modulus, std::string_view exponent,
                          std::string_view data, std::string_view signature) {
    RsaKey key;
    if (mbedtls_rsa_import_raw(key.get(), bytes_of(modulus), modulus.size(), nullptr, 0, nullptr, 0,
                               nullptr, 0, bytes_of(exponent), exponent.size())
            != 0
        || mbedtls_rsa_complete(key.get()) != 0 || mbedtls_rsa_check_pubkey(key.get()) != 0)
        return make_error(Exit::data, "the RSA public key is not one");
    if (mbedtls_rsa_get_len(key.get()) * 8 < k_min_rsa_bits)
        return make_error(Exit::data, "the RSA public key is shorter than %zu bits",
                          k_min_rsa_bits);
    if (signature.size() != mbedtls_rsa_get_len(key.get()))
        return false;
    std::string digest = sha256(data);
    return mbedtls_rsa_pkcs1_verify(key.get(), nullptr, nullptr, MBEDTLS_RSA_PUBLIC,
                                    MBEDTLS_MD_SHA256, static_cast<unsigned>(digest.size()),
                                    bytes_of(digest), bytes_of(signature))
           == 0;
}

namespace {

// An mbedTLS key parsed from PEM, freed (and its secret wiped) with it.
class PkKey {
public:
    PkKey() { mbedtls_pk_init(&m_pk); }
    PkKey(const PkKey&) = delete;
    PkKey& operator=(const PkKey&) = delete;
    ~PkKey() { mbedtls_pk_free(&m_pk); }

    // A P-256 key, private (`need_private`) or either; the PEM's bytes never reach a message.
    [[nodiscard]] Result<mbedtls_ecp_keypair*> parse(std::string_view pem, bool need_private) {
        std::string text(pem); // mbedTLS wants PEM NUL-terminated, the NUL counted
        int rc = mbedtls_pk_parse_key(&m_pk, bytes_of(text), text.size() + 1, nullptr, 0);
        if (rc != 0 && !need_private) {
            mbedtls_pk_free(&m_pk);
            mbedtls_pk_init(&m_pk);
            rc = mbedtls_pk_parse_public_key(&m_pk, bytes_of(text), text.size() + 1);
        }
        wipe(text);
        if (rc != 0)
            return make_error(Exit::data, "cannot read the EC key: it is no PEM key%s",
                              need_private ? " with its private part" : "");
        if (mbedtls_pk_get_type(&m_pk) != MBEDTLS_PK_ECKEY
            || mbedtls_pk_ec(m_pk)->grp.id != MBEDTLS_ECP_DP_SECP256R1)
            return make_error(Exit::data, "cannot use the key for ES256: it is not a P-256 key");
        return mbedtls_pk_ec(m_pk);
    }

private:
    mbedtls_pk_context m_pk;
};

class Mpi {
public:
    Mpi() { mbedtls_mpi_init(&m_mpi); }
    Mpi(const Mpi&) = delete;
    Mpi& operator=(const Mpi&) = delete;
    ~Mpi() { mbedtls_mpi_free(&m_mpi); }

    mbedtls_mpi* get() { return &m_mpi; }

private:
    mbedtls_mpi m_mpi;
};

constexpr size_t k_es256_half = 32;

} // namespace

Result<std::string> es256_sign(std::string_view pem, std::string_view data) {
    PkKey key;
    SION_TRY(mbedtls_ecp_keypair* ec, key.parse(pem, true));
    std::string digest = sha256(data);
    Mpi r, s;
    int rc = mbedtls_ecdsa_sign_det_ext(&ec->grp, r.get(), s.get(), &ec->d, bytes_of(digest),
                                        digest.size(), MBEDTLS_MD_SHA256, mbedtls_random, nullptr);
    std::string out(2 * k_es256_half, '\0');
    if (rc == 0)
        rc = mbedtls_mpi_write_binary(r.get(), bytes_of(out), k_es256_half);
    if (rc == 0)
        rc = mbedtls_mpi_write_binary(s.get(), bytes_of(out) + k_es256_half, k_es256_half);
    if (rc != 0)
        return make_error(Exit::software, "cannot sign with ES256: mbedTLS error -0x%04x", -rc);
    return out;
}

namespace {

Result<bool> verify_on(const mbedtls_ecp_group& grp, const mbedtls_ecp_point& q,
                       std::string_view data, std::string_view signature) {
    if (signature.size() != 2 * k_es256_half)
        return false;
    Mpi r, s;
    if (mbedtls_mpi_read_binary(r.get(), bytes_of(signature), k_es256_half) != 0
        || mbedtls_mpi_read_binary(s.get(), bytes_of(signature) + k_es256_half, k_es256_half) != 0)
        return make_error(Exit::software, "cannot read an ES256 signature: out of memory");
    std::string digest = sha256(data);
    // mbedTLS 2.28 takes the group mutable, for its scratch space only.
    auto* group = const_cast<mbedtls_ecp_group*>(&grp);
    return mbedtls_ecdsa_verify(group, bytes_of(digest), digest.size(), &q, r.get(), s.get()) == 0;
}

// A P-256 group and point, freed with it.
class EcPublic {
public:
    EcPublic() {
        mbedtls_ecp_group_init(&m_grp);
        mbedtls_ecp_point_init(&m_q);
    }
    EcPublic(const EcPublic&) = delete;
    EcPublic& operator=(const EcPublic&) = delete;
    ~EcPublic() {
        mbedtls_ecp_point_free(&m_q);
        mbedtls_ecp_group_free(&m_grp);
    }

    [[nodiscard]] Status load(const EcPoint& key) {
        if (key.x.size() != k_es256_half || key.y.size() != k_es256_half)
            return make_error(Exit::data, "cannot use the EC key: its coordinates are not 32 "
                              "bytes each");
        std::string point = "\x04" + key.x + key.y; // uncompressed (SEC1 section 2.3.3)
        if (mbedtls_ecp_group_load(&m_grp, MBEDTLS_ECP_DP_SECP256R1) != 0
            || mbedtls_ecp_point_read_binary(&m_grp, &m_q, bytes_of(point), point.size()) != 0
            || mbedtls_ecp_check_pubkey(&m_grp, &m_q) != 0)
            return make_error(Exit::data, "cannot use the EC key: it is not a point of P-256");
        return {};
    }

    const mbedtls_ecp_group& group() const { return m_grp; }
    const mbedtls_ecp_point& point() const { return m_q; }

private:
    mbedtls_ecp_group m_grp;
    mbedtls_ecp_point m_q;
};

} // namespace

Result<bool> es256_verify(std::string_view pem, std::string_view data, std::string_view signature) {
    PkKey key;
    SION_TRY(mbedtls_ecp_keypair* ec, key.parse(pem, false));
    return verify_on(ec->grp, ec->Q, data, signature);
}

Result<bool> es256_verify(const EcPoint& key, std::string_view data, std::string_view signature) {
    EcPublic ec;
    SION_CHECK(ec.load(key));
    return verify_on(ec.group(), ec.point(), data, signature);
}

Result<std::string> es256_generate() {
    mbedtls_pk_context pk;
    mbedtls_pk_init(&pk);
    int rc = mbedtls_pk_setup(&pk, mbedtls_pk_info_from_type(MBEDTLS_PK_ECKEY));
    if (rc == 0)
        rc = mbedtls_ecp_gen_key(MBEDTLS_ECP_DP_SECP256R1, mbedtls_pk_ec(pk), mbedtls_random,
                                 nullptr);
    std::string pem(512, '\0'); // a P-256 key in SEC1 PEM is some 230 bytes
    if (rc == 0)
        rc = mbedtls_pk_write_key_pem(&pk, bytes_of(pem), pem.size());
    mbedtls_pk_free(&pk);
    if (rc != 0) {
        wipe(pem);
        return make_error(Exit::software, "cannot make an ES256 key: mbedTLS error -0x%04x", -rc);
    }
    pem.resize(std::strlen(pem.c_str()));
    return pem;
}

Result<EcPoint> es256_public(std::string_view pem) {
    PkKey key;
    SION_TRY(mbedtls_ecp_keypair* ec, key.parse(pem, false));
    std::string point(1 + 2 * k_es256_half, '\0');
    size_t length = 0;
    int rc = mbedtls_ecp_point_write_binary(&ec->grp, &ec->Q, MBEDTLS_ECP_PF_UNCOMPRESSED, &length,
                                            bytes_of(point), point.size());
    if (rc != 0 || length != point.size())
        return make_error(Exit::software, "cannot write an EC point: mbedTLS error -0x%04x", -rc);
    return EcPoint{point.substr(1, k_es256_half), point.substr(1 + k_es256_half)};
}

std::string ec_jwk(const EcPoint& key) {
    // base64url needs no JSON escaping, so the text is written as RFC 7638 section 3.2 orders it.
    return R"({"crv":"P-256","kty":"EC","x":")" + base64url_encode(key.x) + R"(","y":")"
           + base64url_encode(key.y) + R"("})";
}

std::string jwk_thumbprint(const EcPoint& key) {
    return base64url_encode(sha256(ec_jwk(key)));
}

} // namespace sion
