// SPDX-License-Identifier: MIT
// SHA-256, HMAC, base64, random bytes, and AES-256-GCM sealing under a key file.
#include "lib/crypto.hpp"

#include "lib/fd.hpp"
#include "lib/text.hpp"

#include <mbedtls/ecdsa.h>
#include <mbedtls/ecp.h>
#include <mbedtls/gcm.h>
#include <mbedtls/md.h>
#include <mbedtls/pk.h>
#include <mbedtls/platform_util.h>
#include <mbedtls/rsa.h>
#include <mbedtls/sha256.h>
// mbedTLS 2.28 forgot the C++ guard in this one header.
extern "C" {
#include <mbedtls/constant_time.h>
}

#include <fcntl.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstring>

namespace sion {

namespace {

const unsigned char* bytes_of(std::string_view s) {
    return reinterpret_cast<const unsigned char*>(s.data());
}

unsigned char* bytes_of(std::string& s) {
    return reinterpret_cast<unsigned char*>(s.data());
}

} // namespace

// mbedTLS's software SHA-256 and HMAC fail only on null arguments, which these never pass, so
// their return codes carry nothing to report.
std::string sha256(std::string_view data) {
    std::string out(k_sha256_size, '\0');
    (void)mbedtls_sha256_ret(bytes_of(data), data.size(), bytes_of(out), 0);
    return out;
}

std::string sha256_hex(std::string_view data) {
    return to_hex(sha256(data));
}

std::string hmac_sha256(std::string_view key, std::string_view data) {
    std::string out(k_sha256_size, '\0');
    (void)mbedtls_md_hmac(mbedtls_md_info_from_type(MBEDTLS_MD_SHA256), bytes_of(key), key.size(),
                          bytes_of(data), data.size(), bytes_of(out));
    return out;
}

std::string hmac_sha256_hex(std::string_view key, std::string_view data) {
    return to_hex(hmac_sha256(key, data));
}

std::string to_hex(std::string_view bytes) {
    static constexpr char k_digits[] = "0123456789abcdef";
    std::string out;
    out.reserve(bytes.size() * 2);
    for (unsigned char c : bytes) {
        out += k_digits[c >> 4];
        out += k_digits[c & 0xf];
    }
    return out;
}

// Base64 is coded here rather than with mbedtls_base64_*: mbedTLS's decoder skips whitespace and
// knows neither the url alphabet nor unpadded input, and decoding must be strict.
namespace {

constexpr char k_base64_std[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
constexpr char k_base64_url[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";

std::string encode_base64(std::string_view in, const char* alphabet, bool pad) {
    std::string out;
    out.reserve((in.size() + 2) / 3 * 4);
    for (size_t i = 0; i < in.size(); i += 3) {
        size_t n = std::min<size_t>(3, in.size() - i);
        uint32_t v = 0;
        for (size_t k = 0; k < 3; ++k)
            v = (v << 8) | (k < n ? static_cast<unsigned char>(in[i + k]) : 0U);
        for (size_t k = 0; k <= n; ++k)
            out += alphabet[(v >> (18 - 6 * k)) & 63];
        if (pad)
            out.append(3 - n, '=');
    }
    return out;
}

int base64_value(char c, bool url) {
    if (c >= 'A' && c <= 'Z')
        return c - 'A';
    if (c >= 'a' && c <= 'z')
        return c - 'a' + 26;
    if (c >= '0' && c <= '9')
        return c - '0' + 52;
    if (c == (url ? '-' : '+'))
        return 62;
    if (c == (url ? '_' : '/'))
        return 63;
    return -1;
}

// Padding is required for base64 and optional for base64url; where it is present the length is
// a multiple of 4. Pad bits must be zero, so every byte string has exactly one encoding.
Result<std::string> decode_base64(std::string_view in, bool url) {
    const char* name = url ? "base64url" : "base64";
    size_t padding = 0;
    while (padding < 2 && padding < in.size() && in[in.size() - 1 - padding] == '=')
        ++padding;
    if ((!url || padding > 0) && in.size() % 4 != 0)
        return make_error(Exit::data, "cannot decode %s: length %zu is not a multiple of 4", name,
                          in.size());
    std::string_view body = in.substr(0, in.size() - padding);
    if (body.size() % 4 == 1)
        return make_error(Exit::data, "cannot decode %s: a lone character at offset %zu", name,
                          body.size() - 1);
    std::string out;
    out.reserve(body.size() / 4 * 3 + 2);
    uint32_t acc = 0;
    int bits = 0;
    for (size_t i = 0; i < body.size(); ++i) {
        int v = base64_value(body[i], url);
        if (v < 0)
            return make_error(Exit::data, "cannot decode %s: invalid character at offset %zu", name,
                              i);
        acc = (acc << 6) | static_cast<uint32_t>(v);
        bits += 6;
        if (bits >= 8) {
            bits -= 8;
            out += static_cast<char>((acc >> bits) & 0xff);
            acc &= (1U << bits) - 1;
        }
    }
    if (acc != 0)
        return make_error(Exit::data, "cannot decode %s: non-zero pad bits at offset %zu", name,
                          body.size() - 1);
    return out;
}

} // namespace

std::string base64_encode(std::string_view bytes) {
    return encode_base64(bytes, k_base64_std, true);
}

size_t base64_size(std::string_view text) {
    while (!text.empty() && text.back() == '=')
        text.remove_suffix(1);
    return text.size() * 3 / 4;
}

Result<std::string> base64_decode(std::string_view text) {
    return decode_base64(text, false);
}

std::string base64url_encode(std::string_view bytes) {
    return encode_base64(bytes, k_base64_url, false);
}

Result<std::string> base64url_decode(std::string_view text) {
    return decode_base64(text, true);
}

bool constant_time_equal(std::string_view a, std::string_view b) {
    return a.size() == b.size() && mbedtls_ct_memcmp(a.data(), b.data(), a.size()) == 0;
}

// getrandom(2) rather than an mbedTLS ctr_drbg: the kernel's CSPRNG needs no seeding, no lock
// between threads and no reseed after fork, and it blocks only until the kernel pool is first
// initialised at boot. A DRBG would add state to get wrong for no gain at our rates.
Status fill_random(void* buffer, size_t size) {
    auto* p = static_cast<unsigned char*>(buffer);
    while (size > 0) {
        ssize_t n = ::getrandom(p, size, 0);
        if (n < 0) {
            if (errno == EINTR)
                continue;
            return sys_error(Exit::os, errno, "cannot get random bytes");
        }
        p += n;
        size -= static_cast<size_t>(n);
    }
    return {};
}

Result<std::string> random_bytes(size_t size) {
    std::string out(size, '\0');
    SION_CHECK(fill_random(out.data(), out.size()));
    return out;
}

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

void wipe(std::string& secret) {
    mbedtls_platform_zeroize(secret.data(), secret.size());
    secret.clear();
}

// Files: key files and sealed files are written beside their final name and renamed into place.
namespace {

std::string directory_of(const std::string& path) {
    size_t slash = path.rfind('/');
    if (slash == std::string::npos)
        return ".";
    return slash == 0 ? "/" : path.substr(0, slash);
}

// The rename is only durable once the directory entry is on disk.
Status sync_directory(const std::string& path) {
    std::string dir = directory_of(path);
    Fd fd(::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
    if (!fd)
        return sys_error(Exit::os, errno, "cannot open directory '%s'", dir.c_str());
    if (::fsync(fd.get()) != 0)
        return sys_error(Exit::io, errno, "cannot sync directory '%s'", dir.c_str());
    return {};
}

// Messages name `path`, the file being written, rather than the temporary name.
Status write_temp(const std::string& temp, const std::string& path, std::string_view data) {
    const char* p = path.c_str();
    Fd fd(::open(temp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600));
    if (!fd)
        return sys_error(errno == EACCES ? Exit::no_perm : Exit::os, errno, "cannot write '%s'", p);
    // A umask such as 0277 would leave 0400, which the key file check then refuses.
    if (::fchmod(fd.get(), 0600) != 0)
        return sys_error(Exit::os, errno, "cannot change mode of '%s'", p);
    Status written = write_all(fd.get(), data);
    if (!written)
        return written.error().context(format("cannot write '%s'", p));
    if (::fsync(fd.get()) != 0)
        return sys_error(Exit::io, errno, "cannot sync '%s'", p);
    if (::close(fd.release()) != 0)
        return sys_error(Exit::io, errno, "cannot close '%s'", p);
    return {};
}

// Renames without replacing; where the filesystem has no RENAME_NOREPLACE, link(2) gives the same
// guarantee. Sets errno to EEXIST when `to` exists.
int rename_noreplace(const char* from, const char* to) {
    if (::renameat2(AT_FDCWD, from, AT_FDCWD, to, RENAME_NOREPLACE) == 0)
        return 0;
    if (errno != EINVAL)
        return -1;
    if (::link(from, to) != 0)
        return -1;
    ::unlink(from);
    return 0;
}

// Writes `data` to `path` through a temporary file beside it (mode 0600, fsynced). With `replace`
// the rename is over any old file; without it, false means another file was already at `path`
// and nothing was changed.
Result<bool> install_file(const std::string& path, std::string_view data, bool replace) {
    SION_TRY(std::string suffix, random_bytes(6));
    std::string temp = path + ".tmp-" + to_hex(suffix);
    Status written = write_temp(temp, path, data);
    if (!written) {
        ::unlink(temp.c_str());
        return std::move(written).error();
    }
    int rc = replace ? ::rename(temp.c_str(), path.c_str())
                     : rename_noreplace(temp.c_str(), path.c_str());
    if (rc != 0) {
        int err = errno;
        ::unlink(temp.c_str());
        if (!replace && err == EEXIST)
            return false;
        return sys_error(Exit::os, err, "cannot replace '%s'", path.c_str());
    }
    SION_CHECK(sync_directory(path));
    return true;
}

} // namespace

// Keys and sealing.
namespace {

constexpr std::string_view k_header{"SION\x01", 5};
constexpr size_t k_nonce_size = 12;
constexpr size_t k_tag_size = 16;
constexpr size_t k_overhead = k_header.size() + k_nonce_size + k_tag_size;

// An mbedTLS GCM context; mbedtls_gcm_free wipes the key schedule.
class Gcm {
public:
    Gcm() { mbedtls_gcm_init(&m_ctx); }

    Gcm(const Gcm&) = delete;
    Gcm& operator=(const Gcm&) = delete;
    Gcm(Gcm&&) = delete;
    Gcm& operator=(Gcm&&) = delete;

    ~Gcm() { mbedtls_gcm_free(&m_ctx); }

    [[nodiscard]] Status set_key(const unsigned char* key) {
        int rc = mbedtls_gcm_setkey(&m_ctx, MBEDTLS_CIPHER_ID_AES, key, SealingKey::k_size * 8);
        if (rc != 0)
            return make_error(Exit::software, "cannot set AES-GCM key: mbedTLS error -0x%04x", -rc);
        return {};
    }

    mbedtls_gcm_context* get() { return &m_ctx; }

private:
    mbedtls_gcm_context m_ctx{};
};

Status check_key_file(const std::string& path, const struct stat& st) {
    const char* p = path.c_str();
    if (!S_ISREG(st.st_mode))
        return make_error(Exit::no_perm,
                          "refusing key file '%s': it is not a regular file (move it away)", p);
    if (st.st_uid != ::geteuid())
        return make_error(Exit::no_perm,
                          "refusing key file '%s': it belongs to uid %u, not %u (chown %u '%s')", p,
                          static_cast<unsigned>(st.st_uid), static_cast<unsigned>(::geteuid()),
                          static_cast<unsigned>(::geteuid()), p);
    unsigned mode = st.st_mode & 07777;
    if (mode == 0600)
        return {};
    std::string why = (mode & 044) != 0   ? std::string("others may read it")
                      : (mode & 022) != 0 ? std::string("others may change it")
                                          : format("its mode is %04o, not 0600", mode);
    return make_error(Exit::no_perm, "refusing key file '%s': %s (chmod 600 '%s')", p, why.c_str(),
                      p);
}

Status read_key_file(int fd, const std::string& path, unsigned char* key) {
    struct stat st {};

    if (::fstat(fd, &st) != 0)
        return sys_error(Exit::os, errno, "cannot stat key file '%s'", path.c_str());
    SION_CHECK(check_key_file(path, st));
    if (st.st_size != static_cast<off_t>(SealingKey::k_size))
        return make_error(Exit::data, "cannot use key file '%s': it is %lld bytes long, not %zu",
                          path.c_str(), static_cast<long long>(st.st_size), SealingKey::k_size);
    size_t got = 0;
    while (got < SealingKey::k_size) {
        ssize_t n = ::read(fd, key + got, SealingKey::k_size - got);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0)
            return sys_error(Exit::io, errno, "cannot read key file '%s'", path.c_str());
        if (n == 0)
            return make_error(Exit::data, "cannot use key file '%s': it shrank while being read",
                              path.c_str());
        got += static_cast<size_t>(n);
    }
    return {};
}

} // namespace

Result<SealingKey> SealingKey::from_file(const std::string& path) {
    // Twice at most: when another process creates the key between our open and our rename, the
    // rename fails and we read theirs.
    for (int attempt = 0; attempt < 2; ++attempt) {
        // O_NONBLOCK: opening a FIFO planted there must not hang; it is refused after fstat.
        Fd fd(::open(path.c_str(), O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY | O_CLOEXEC));
        SealingKey key;
        if (fd) {
            SION_CHECK(read_key_file(fd.get(), path, key.m_bytes.data()));
            return key;
        }
        if (errno == ELOOP)
            return make_error(
                Exit::no_perm,
                "refusing key file '%s': it is a symbolic link (put the file itself there)",
                path.c_str());
        if (errno != ENOENT)
            return sys_error(errno == EACCES ? Exit::no_perm : Exit::os, errno,
                             "cannot open key file '%s'", path.c_str());
        SION_CHECK(fill_random(key.m_bytes.data(), k_size));
        std::string_view bytes(reinterpret_cast<const char*>(key.m_bytes.data()), k_size);
        SION_TRY(bool created, install_file(path, bytes, false));
        if (created)
            return key;
    }
    return make_error(Exit::temp_fail,
                      "cannot create key file '%s': it keeps appearing and vanishing",
                      path.c_str());
}

Result<SealingKey> SealingKey::from_bytes(std::string_view bytes) {
    if (bytes.size() != k_size)
        return make_error(Exit::data, "cannot use key: it is %zu bytes long, not %zu", bytes.size(),
                          k_size);
    SealingKey key;
    std::memcpy(key.m_bytes.data(), bytes.data(), k_size);
    return key;
}

SealingKey::SealingKey(SealingKey&& other) noexcept : m_bytes(other.m_bytes) {
    mbedtls_platform_zeroize(other.m_bytes.data(), k_size);
}

SealingKey& SealingKey::operator=(SealingKey&& other) noexcept {
    if (this != &other) {
        m_bytes = other.m_bytes;
        mbedtls_platform_zeroize(other.m_bytes.data(), k_size);
    }
    return *this;
}

SealingKey::~SealingKey() {
    mbedtls_platform_zeroize(m_bytes.data(), k_size);
}

Result<std::string> SealingKey::seal(std::string_view plaintext) const {
    std::string out(k_overhead + plaintext.size(), '\0');
    std::memcpy(out.data(), k_header.data(), k_header.size());
    unsigned char* nonce = bytes_of(out) + k_header.size();
    unsigned char* ciphertext = nonce + k_nonce_size;
    SION_CHECK(fill_random(nonce, k_nonce_size));
    Gcm gcm;
    SION_CHECK(gcm.set_key(m_bytes.data()));
    int rc = mbedtls_gcm_crypt_and_tag(gcm.get(), MBEDTLS_GCM_ENCRYPT, plaintext.size(), nonce,
                                       k_nonce_size, bytes_of(k_header), k_header.size(),
                                       bytes_of(plaintext), ciphertext, k_tag_size,
                                       ciphertext + plaintext.size());
    if (rc != 0)
        return make_error(Exit::software, "cannot seal data: mbedTLS error -0x%04x", -rc);
    return out;
}

Result<std::string> SealingKey::open(std::string_view sealed) const {
    if (sealed.size() < k_overhead)
        return make_error(Exit::data, "cannot open sealed data: %zu bytes are too few (cut short?)",
                          sealed.size());
    if (sealed.substr(0, 4) != k_header.substr(0, 4))
        return make_error(Exit::data, "cannot open sealed data: it was not sealed by sion");
    if (sealed[4] != k_header[4])
        return make_error(
            Exit::data,
            "cannot open sealed data: format version %d is unknown (this sion reads %d)",
            static_cast<unsigned char>(sealed[4]), static_cast<unsigned char>(k_header[4]));
    size_t length = sealed.size() - k_overhead;
    const unsigned char* nonce = bytes_of(sealed) + k_header.size();
    const unsigned char* ciphertext = nonce + k_nonce_size;
    Gcm gcm;
    SION_CHECK(gcm.set_key(m_bytes.data()));
    std::string plain(length, '\0');
    int rc = mbedtls_gcm_auth_decrypt(gcm.get(), length, nonce, k_nonce_size, bytes_of(k_header),
                                      k_header.size(), ciphertext + length, k_tag_size, ciphertext,
                                      bytes_of(plain));
    if (rc == 0)
        return plain;
    wipe(plain); // mbedTLS already zeroes it on a tag mismatch; other failures are not so sure
    if (rc == MBEDTLS_ERR_GCM_AUTH_FAILED)
        return make_error(
            Exit::data,
            "cannot open sealed data: authentication failed (wrong key, or the data was changed)");
    return make_error(Exit::software, "cannot open sealed data: mbedTLS error -0x%04x", -rc);
}

Result<std::string> SealedFile::read() const {
    const char* p = m_path.c_str();
    Fd fd(::open(p, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY | O_CLOEXEC));
    if (!fd && errno == ENOENT)
        return std::string();
    if (!fd && errno == ELOOP)
        return make_error(Exit::no_perm, "refusing sealed file '%s': it is a symbolic link", p);
    if (!fd)
        return sys_error(errno == EACCES ? Exit::no_perm : Exit::os, errno, "cannot open '%s'", p);

    struct stat st {};

    if (::fstat(fd.get(), &st) != 0)
        return sys_error(Exit::os, errno, "cannot stat '%s'", p);
    if (!S_ISREG(st.st_mode))
        return make_error(Exit::no_perm, "refusing sealed file '%s': it is not a regular file", p);
    Result<std::string> sealed = read_all(fd.get(), k_max_size);
    if (!sealed)
        return sealed.error().context(format("reading '%s'", p));
    Result<std::string> plain = m_key.open(*sealed);
    if (!plain)
        return plain.error().context(format("reading '%s'", p));
    return plain;
}

Status SealedFile::write(std::string_view plaintext) const {
    SION_TRY(std::string sealed, m_key.seal(plaintext));
    Result<bool> installed = install_file(m_path, sealed, true);
    if (!installed)
        return std::move(installed).error();
    return {};
}

} // namespace sion

// ES256, for the JWTs a client authenticates itself with (private_key_jwt).
namespace sion {

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

int blinding_random(void* /*unused*/, unsigned char* out, size_t size) noexcept {
    return fill_random(out, size) ? 0 : -1;
}

} // namespace

Result<std::string> es256_sign(std::string_view pem, std::string_view data) {
    PkKey key;
    SION_TRY(mbedtls_ecp_keypair* ec, key.parse(pem, true));
    std::string digest = sha256(data);
    Mpi r, s;
    int rc = mbedtls_ecdsa_sign_det_ext(&ec->grp, r.get(), s.get(), &ec->d, bytes_of(digest),
                                        digest.size(), MBEDTLS_MD_SHA256, blinding_random, nullptr);
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
        rc = mbedtls_ecp_gen_key(MBEDTLS_ECP_DP_SECP256R1, mbedtls_pk_ec(pk), blinding_random,
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
