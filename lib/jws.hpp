// SPDX-License-Identifier: MIT
// JWS signatures: RS256 verification, ES256 keys, signing and verification, and a P-256 key's JWK.
//
// Byte strings are std::string (any bytes, not text). Nothing here keeps global state, so every
// function may be called from any thread. Errors: a key that is not one is Exit::data, and no
// message holds any of it.
#pragma once

#include "lib/result.hpp"

#include <string>
#include <string_view>

namespace sion {

// Whether `signature` is an RSASSA-PKCS1-v1_5 signature with SHA-256 (JWS's RS256) of `data`
// under the public key of modulus `modulus` and exponent `exponent` (big-endian bytes, as a JWK's
// "n" and "e" decode to). A key that is not one, or is under 2048 bits, is Exit::data; a signature
// that does not verify is false.
[[nodiscard]] Result<bool> rs256_verify(std::string_view modulus, std::string_view exponent,
                                        std::string_view data, std::string_view signature);

// JWS's ES256 (RFC 7518 section 3.4): ECDSA on P-256 with SHA-256, the signature being r and s,
// 32 big-endian bytes each. `pem` is a P-256 key in PEM (PKCS#8 or SEC1); signing needs the
// private key and is deterministic (RFC 6979); verifying takes either. A key that is not such a
// key is Exit::data, and no message holds any of it. A signature that does not verify is false.
[[nodiscard]] Result<std::string> es256_sign(std::string_view pem, std::string_view data);
[[nodiscard]] Result<bool> es256_verify(std::string_view pem, std::string_view data,
                                        std::string_view signature);

// The public point of a P-256 key: x and y, 32 big-endian bytes each (a JWK's "x" and "y",
// decoded).
struct EcPoint {
    std::string x;
    std::string y;
};

// A new P-256 key in PEM (SEC1), from the kernel's CSPRNG: a secret, the caller's to wipe().
[[nodiscard]] Result<std::string> es256_generate();
// The public point of a P-256 key in PEM (private or public).
[[nodiscard]] Result<EcPoint> es256_public(std::string_view pem);
// es256_verify under the point itself (a JWK's); a point not on the curve is Exit::data.
[[nodiscard]] Result<bool> es256_verify(const EcPoint& key, std::string_view data,
                                        std::string_view signature);

// The public JWK of `key` (RFC 7517) with only its required members, in lexicographic order and
// without whitespace, as RFC 7638 hashes it: {"crv":"P-256","kty":"EC","x":"…","y":"…"}.
[[nodiscard]] std::string ec_jwk(const EcPoint& key);
// Its JWK SHA-256 thumbprint (RFC 7638), base64url: DPoP's "jkt".
[[nodiscard]] std::string jwk_thumbprint(const EcPoint& key);

} // namespace sion
