// SPDX-License-Identifier: MIT
// AES-256-GCM sealing under a key file, and sealed files written beside and renamed into place.
#include "lib/seal.hpp"

#include "lib/fd.hpp"
#include "lib/hash.hpp"
#include "lib/mbedtls_bytes.hpp"
#include "lib/private_file.hpp"
#include "lib/secret_bytes.hpp"
#include "lib/text.hpp"

#include <mbedtls/gcm.h>
#include <mbedtls/platform_util.h>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>

namespace sion {

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
        SION_TRY(bool created, create_private_file(path, bytes));
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
    return write_private_file(m_path, sealed);
}

} // namespace sion
