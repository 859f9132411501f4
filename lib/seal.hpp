// SPDX-License-Identifier: MIT
// AES-256-GCM sealing under a key file (SealingKey), and a whole file kept sealed (SealedFile).
//
// Byte strings are std::string (any bytes, not text). A SealingKey or SealedFile is used by one
// thread at a time. Errors: data that fails authentication is Exit::data; a key file that is not
// safe to use, or a directory the user may not write, is Exit::no_perm; other system calls that
// fail are Exit::os or Exit::io. Files are written as lib/private_file.hpp writes them.
#pragma once

#include "lib/result.hpp"

#include <array>
#include <cstddef>
#include <string>
#include <string_view>
#include <utility>

namespace sion {

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
