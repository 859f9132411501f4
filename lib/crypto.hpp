// SPDX-License-Identifier: MIT
// Hashes, MACs, base64, random bytes and AES-256-GCM sealing under a key file, over mbedTLS.
//
// Byte strings are std::string (any bytes, not text). Nothing here keeps global state, so every
// function may be called from any thread; a SealingKey or SealedFile is used by one thread at a
// time. Errors: bad input and data that fails authentication are Exit::data; a key file that is not
// safe to use is Exit::no_perm; system calls that fail are Exit::os or Exit::io.
#pragma once

#include "lib/result.hpp"

#include <array>
#include <cstddef>
#include <string>
#include <string_view>
#include <utility>

namespace sion {

constexpr size_t k_sha256_size = 32;

// SHA-256 of `data`: 32 bytes, or 64 lowercase hex digits.
[[nodiscard]] std::string sha256(std::string_view data);
[[nodiscard]] std::string sha256_hex(std::string_view data);

// HMAC-SHA-256 of `data` under `key` (any length): 32 bytes, or 64 lowercase hex digits.
[[nodiscard]] std::string hmac_sha256(std::string_view key, std::string_view data);
[[nodiscard]] std::string hmac_sha256_hex(std::string_view key, std::string_view data);

// Lowercase hex of any bytes.
[[nodiscard]] std::string to_hex(std::string_view bytes);

// Base64 (RFC 4648 section 4), padded. Decoding is strict: the input must be padded, and a
// character outside the alphabet (whitespace included), misplaced padding or non-zero pad bits is
// an error (Exit::data) whose message names the offset, never the data.
[[nodiscard]] std::string base64_encode(std::string_view bytes);
[[nodiscard]] Result<std::string> base64_decode(std::string_view text);
// How many bytes a base64 text stands for, from its length and padding (not checked).
[[nodiscard]] size_t base64_size(std::string_view text);

// Base64url (RFC 4648 section 5): encoded without padding; decoded with or without it.
[[nodiscard]] std::string base64url_encode(std::string_view bytes);
[[nodiscard]] Result<std::string> base64url_decode(std::string_view text);

// Whether a and b hold the same bytes, in time that depends on their lengths only.
[[nodiscard]] bool constant_time_equal(std::string_view a, std::string_view b);

// `size` bytes from the kernel's CSPRNG (getrandom(2)); fails (Exit::os) only where the kernel
// has no getrandom.
[[nodiscard]] Result<std::string> random_bytes(size_t size);
[[nodiscard]] Status fill_random(void* buffer, size_t size);

// Overwrites a string's bytes with zeros (where the compiler cannot drop it) and empties it.
void wipe(std::string& secret);

// Whether `signature` is an RSASSA-PKCS1-v1_5 signature with SHA-256 (JWS's RS256) of `data`
// under the public key of modulus `modulus` and exponent `exponent` (big-endian bytes, as a JWK's
// "n" and "e" decode to). A key that is not one, or is under 2048 bits, is Exit::data; a signature
// that does not verify is false.
[[nodiscard]] Result<bool> rs256_verify(std::string_view modulus, std::string_view exponent,
                                        std::string_view data, std::string_view signature);

// An AES-256-GCM key held in memory and wiped when it is dropped or moved from. Move-only.
//
// A sealed blob is: the 5-byte header "SION" 0x01 (magic and format version), a fresh 12-byte
// random nonce, the ciphertext, and the 16-byte tag; the header is authenticated as additional
// data. Random nonces are safe for far more seals than one key will see (2^32).
class SealingKey {
public:
    static constexpr size_t k_size = 32;

    // The key in the file at `path`, created on first use: 32 random bytes, mode 0600, written
    // beside and renamed into place without replacing a file another process made meanwhile.
    // An existing file that is a symbolic link, not a regular file, owned by another user or
    // whose mode is not 0600 is refused (Exit::no_perm) with a message naming the fix; one that
    // is not 32 bytes long is Exit::data. The directory must exist.
    [[nodiscard]] static Result<SealingKey> from_file(const std::string& path);
    // A key from its 32 raw bytes (Exit::data for any other length).
    [[nodiscard]] static Result<SealingKey> from_bytes(std::string_view bytes);

    SealingKey(const SealingKey&) = delete;
    SealingKey& operator=(const SealingKey&) = delete;
    SealingKey(SealingKey&& other) noexcept;
    SealingKey& operator=(SealingKey&& other) noexcept;
    ~SealingKey();

    // `plaintext` encrypted and authenticated under this key with a fresh nonce.
    [[nodiscard]] Result<std::string> seal(std::string_view plaintext) const;
    // The plaintext of a blob seal() made under this key. A blob that was changed, cut short, is
    // of an unknown version or was sealed under another key is an error (Exit::data), and no
    // plaintext at all is returned. The caller wipes() the plaintext when it is secret.
    [[nodiscard]] Result<std::string> open(std::string_view sealed) const;

private:
    SealingKey() = default;
    std::array<unsigned char, k_size> m_bytes{};
};

// A whole file kept sealed under a key: the sealed credential store is one.
class SealedFile {
public:
    // Reads of more than this many sealed bytes are refused (Exit::data).
    static constexpr size_t k_max_size = size_t{64} << 20;

    SealedFile(std::string path, SealingKey key) : m_path(std::move(path)), m_key(std::move(key)) {}

    [[nodiscard]] const std::string& path() const { return m_path; }

    // The plaintext; "" when the file does not exist. A symbolic link is refused (Exit::no_perm).
    [[nodiscard]] Result<std::string> read() const;
    // Seals `plaintext` and replaces the file with it atomically: written beside with mode 0600,
    // fsynced, renamed over the old file, directory fsynced. A crash at any point leaves either
    // the old contents or the new. Concurrent writers are not serialised: the last rename wins.
    [[nodiscard]] Status write(std::string_view plaintext) const;

private:
    std::string m_path;
    SealingKey m_key;
};

} // namespace sion

namespace sion {

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
