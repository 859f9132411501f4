// SPDX-License-Identifier: MIT
// Unit tests of lib/crypto: known-answer vectors, strict base64, sealing, key files, SealedFile.
#include "lib/crypto.hpp"
#include "lib/fd.hpp"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>

namespace sion {
namespace {

namespace fs = std::filesystem;

// A fresh directory under the system's temporary directory, removed after the test.
class TempDir {
public:
    TempDir() {
        std::string pattern = (fs::temp_directory_path() / "sion-crypto-XXXXXX").string();
        char* made = ::mkdtemp(pattern.data());
        EXPECT_NE(made, nullptr);
        m_path = pattern;
    }

    TempDir(const TempDir&) = delete;
    TempDir& operator=(const TempDir&) = delete;
    TempDir(TempDir&&) = delete;
    TempDir& operator=(TempDir&&) = delete;

    ~TempDir() {
        std::error_code ec;
        fs::remove_all(m_path, ec);
    }

    [[nodiscard]] std::string file(const char* name) const { return (m_path / name).string(); }

private:
    fs::path m_path;
};

std::string slurp(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

void spit(const std::string& path, const std::string& data, mode_t mode) {
    Fd fd(::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, mode));
    ASSERT_TRUE(fd);
    ASSERT_TRUE(write_all(fd.get(), data));
    ASSERT_EQ(::fchmod(fd.get(), mode), 0);
}

SealingKey key_of(char fill) {
    return std::move(SealingKey::from_bytes(std::string(32, fill))).value();
}

// FIPS 180-2, appendix B.
TEST(Sha256, Fips180Vectors) {
    EXPECT_EQ(sha256_hex(""), "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
    EXPECT_EQ(sha256_hex("abc"),
              "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
    EXPECT_EQ(sha256_hex("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq"),
              "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
    EXPECT_EQ(sha256_hex(std::string(1000000, 'a')),
              "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0");
    EXPECT_EQ(sha256("abc").size(), k_sha256_size);
    EXPECT_EQ(to_hex(sha256("abc")), sha256_hex("abc"));
}

// RFC 4231, section 4 (test case 5 truncates the MAC and is left out).
TEST(HmacSha256, Rfc4231Vectors) {
    EXPECT_EQ(hmac_sha256_hex(std::string(20, '\x0b'), "Hi There"),
              "b0344c61d8db38535ca8afceaf0bf12b881dc200c9833da726e9376c2e32cff7");
    EXPECT_EQ(hmac_sha256_hex("Jefe", "what do ya want for nothing?"),
              "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843");
    EXPECT_EQ(hmac_sha256_hex(std::string(20, '\xaa'), std::string(50, '\xdd')),
              "773ea91e36800e46854db8ebd09181a72959098b3ef8c122d9635514ced565fe");
    std::string key4;
    for (char c = 1; c <= 25; ++c)
        key4 += c;
    EXPECT_EQ(hmac_sha256_hex(key4, std::string(50, '\xcd')),
              "82558a389a443c0ea4cc819899f2083a85f0faa3e578f8077a2e3ff46729665b");
    EXPECT_EQ(hmac_sha256_hex(std::string(131, '\xaa'),
                              "Test Using Larger Than Block-Size Key - Hash Key First"),
              "60e431591ee0b67f0d8a26aacbf5b77f8e0bc6213728c5140546040f0ee37f54");
    EXPECT_EQ(hmac_sha256_hex(std::string(131, '\xaa'),
                              "This is a test using a larger than block-size key and a larger "
                              "than block-size data. The key needs to be hashed before being "
                              "used by the HMAC algorithm."),
              "9b09ffa71b942fcb27635fbcd5b0e944bfdc63644f0713938a7f51535c3a35e2");
    EXPECT_EQ(hmac_sha256("Jefe", "x").size(), k_sha256_size);
}

// RFC 4648, section 10.
TEST(Base64, Rfc4648Vectors) {
    const std::pair<const char*, const char*> vectors[] = {
        {"", ""},
        {"f", "Zg=="},
        {"fo", "Zm8="},
        {"foo", "Zm9v"},
        {"foob", "Zm9vYg=="},
        {"fooba", "Zm9vYmE="},
        {"foobar", "Zm9vYmFy"},
    };
    for (const auto& [plain, encoded] : vectors) {
        EXPECT_EQ(base64_encode(plain), encoded);
        auto decoded = base64_decode(encoded);
        ASSERT_TRUE(decoded) << encoded << ": " << decoded.error().message();
        EXPECT_EQ(*decoded, plain);
    }
}

TEST(Base64, UrlAlphabetWithoutPadding) {
    std::string bytes("\xfb\xff\xbf\xff\xfe", 5);
    EXPECT_EQ(base64_encode(bytes), "+/+///4=");
    EXPECT_EQ(base64url_encode(bytes), "-_-___4");
    EXPECT_EQ(base64url_encode("f"), "Zg");
    EXPECT_EQ(base64url_encode("foobar"), "Zm9vYmFy");
    for (const char* text : {"-_-___4", "-_-___4="}) {
        auto decoded = base64url_decode(text);
        ASSERT_TRUE(decoded) << text << ": " << decoded.error().message();
        EXPECT_EQ(*decoded, bytes);
    }
    EXPECT_EQ(base64url_decode("Zg").value_or("?"), "f");
    EXPECT_EQ(base64url_decode("Zg==").value_or("?"), "f");
    std::string all;
    for (int c = 0; c < 256; ++c)
        all += static_cast<char>(c);
    EXPECT_EQ(base64url_decode(base64url_encode(all)).value_or("?"), all);
    EXPECT_EQ(base64_decode(base64_encode(all)).value_or("?"), all);
}

TEST(Base64, BadInputIsAnErrorNamingTheOffset) {
    for (const char* bad : {"Zg", "Zg=", "Zg===", "Z===", "Zm9v!", "Zm 9v", "Zm9v\n",
                            "=Zg=", "Zg==Zg==", "Zh==", "Zm9=", "-_-_", "Zm9vYg=\xff"}) {
        auto decoded = base64_decode(bad);
        ASSERT_FALSE(decoded) << "accepted '" << bad << "'";
        EXPECT_EQ(decoded.error().exit(), Exit::data);
        EXPECT_EQ(decoded.error().message().rfind("cannot decode base64: ", 0), 0U)
            << decoded.error().message();
    }
    EXPECT_EQ(base64_decode("Zm9v!AAA").error().message(),
              "cannot decode base64: invalid character at offset 4");
    for (const char* bad : {"Z", "Zg=", "Zg===", "+/+/", "Zh", "Zm9vY", "Zm9vYg=", "Z m9"}) {
        auto decoded = base64url_decode(bad);
        ASSERT_FALSE(decoded) << "accepted '" << bad << "'";
        EXPECT_EQ(decoded.error().exit(), Exit::data);
    }
}

TEST(ConstantTimeEqual, ComparesBytesAndLengths) {
    EXPECT_TRUE(constant_time_equal("", ""));
    EXPECT_TRUE(constant_time_equal(std::string("a\0b", 3), std::string("a\0b", 3)));
    EXPECT_FALSE(constant_time_equal(std::string("a\0b", 3), std::string("a\0c", 3)));
    EXPECT_FALSE(constant_time_equal("abc", "ab"));
}

TEST(RandomBytes, FillsAndDiffers) {
    auto a = random_bytes(1000);
    auto b = random_bytes(1000);
    ASSERT_TRUE(a && b);
    EXPECT_EQ(a->size(), 1000U);
    EXPECT_NE(*a, *b);
    EXPECT_EQ(random_bytes(0).value_or("?"), "");
}

TEST(Wipe, EmptiesTheString) {
    std::string secret = "hunter2";
    wipe(secret);
    EXPECT_TRUE(secret.empty());
}

TEST(Seal, RoundTripWithFreshNonces) {
    SealingKey key = key_of('k');
    for (const std::string& plain : {std::string(), std::string("x"), std::string(100000, '\0')}) {
        auto sealed = key.seal(plain);
        ASSERT_TRUE(sealed);
        EXPECT_EQ(sealed->size(), plain.size() + 5 + 12 + 16);
        EXPECT_EQ(sealed->substr(0, 5), std::string("SION\x01", 5));
        auto opened = key.open(*sealed);
        ASSERT_TRUE(opened) << opened.error().message();
        EXPECT_EQ(*opened, plain);
    }
    auto one = key.seal("same");
    auto two = key.seal("same");
    ASSERT_TRUE(one && two);
    EXPECT_NE(*one, *two);
}

TEST(Seal, EveryTamperedByteIsRejected) {
    SealingKey key = key_of('k');
    auto sealed = key.seal("the secret");
    ASSERT_TRUE(sealed);
    for (size_t i = 0; i < sealed->size(); ++i) {
        std::string bad = *sealed;
        bad[i] = static_cast<char>(bad[i] ^ 0x01);
        auto opened = key.open(bad);
        ASSERT_FALSE(opened) << "byte " << i;
        EXPECT_EQ(opened.error().exit(), Exit::data);
    }
    std::string changed = *sealed;
    changed[20] = static_cast<char>(changed[20] ^ 0x80);
    EXPECT_EQ(
        key.open(changed).error().message(),
        "cannot open sealed data: authentication failed (wrong key, or the data was changed)");
}

TEST(Seal, TruncatedOrForeignBlobIsRejected) {
    SealingKey key = key_of('k');
    auto sealed = key.seal("the secret");
    ASSERT_TRUE(sealed);
    for (size_t n = 0; n < sealed->size(); ++n) {
        auto opened = key.open(sealed->substr(0, n));
        ASSERT_FALSE(opened) << "length " << n;
        EXPECT_EQ(opened.error().exit(), Exit::data);
    }
    std::string newer = *sealed;
    newer[4] = 2;
    EXPECT_EQ(key.open(newer).error().message(),
              "cannot open sealed data: format version 2 is unknown (this sion reads 1)");
    EXPECT_EQ(key.open(std::string(40, 'x')).error().exit(), Exit::data);
}

TEST(Seal, WrongKeyIsRejected) {
    auto sealed = key_of('a').seal("the secret");
    ASSERT_TRUE(sealed);
    auto opened = key_of('b').open(*sealed);
    ASSERT_FALSE(opened);
    EXPECT_EQ(opened.error().exit(), Exit::data);
    EXPECT_EQ(SealingKey::from_bytes("short").error().exit(), Exit::data);
}

TEST(KeyFile, CreatedOnFirstUseWithMode0600AndReused) {
    TempDir dir;
    std::string path = dir.file("key");
    auto first = SealingKey::from_file(path);
    ASSERT_TRUE(first) << first.error().message();

    struct stat st {};

    ASSERT_EQ(::lstat(path.c_str(), &st), 0);
    EXPECT_TRUE(S_ISREG(st.st_mode));
    EXPECT_EQ(st.st_mode & 07777, 0600U);
    EXPECT_EQ(st.st_size, 32);
    auto sealed = first->seal("kept");
    ASSERT_TRUE(sealed);
    auto second = SealingKey::from_file(path);
    ASSERT_TRUE(second) << second.error().message();
    EXPECT_EQ(second->open(*sealed).value_or("?"), "kept");
    size_t entries = 0;
    for ([[maybe_unused]] const auto& entry : fs::directory_iterator(dir.file("")))
        ++entries;
    EXPECT_EQ(entries, 1U) << "a temporary file was left beside the key";
}

// fchmod after creating: a umask that would take the owner's write bit must not leave a key file
// that the next load refuses.
TEST(KeyFile, CreatedWith0600WhateverTheUmask) {
    TempDir dir;
    std::string path = dir.file("key");
    mode_t old = ::umask(0277);
    auto key = SealingKey::from_file(path);
    ::umask(old);
    ASSERT_TRUE(key) << key.error().message();

    struct stat st {};

    ASSERT_EQ(::stat(path.c_str(), &st), 0);
    EXPECT_EQ(st.st_mode & 07777, 0600U);
    EXPECT_TRUE(SealingKey::from_file(path));
}

TEST(KeyFile, ReadableByOthersIsRefused) {
    TempDir dir;
    std::string path = dir.file("key");
    spit(path, std::string(32, 'k'), 0644);
    auto key = SealingKey::from_file(path);
    ASSERT_FALSE(key);
    EXPECT_EQ(key.error().exit(), Exit::no_perm);
    EXPECT_EQ(key.error().message(),
              "refusing key file '" + path + "': others may read it (chmod 600 '" + path + "')");
    ASSERT_EQ(::chmod(path.c_str(), 0620), 0);
    EXPECT_EQ(SealingKey::from_file(path).error().exit(), Exit::no_perm);
    ASSERT_EQ(::chmod(path.c_str(), 0600), 0);
    EXPECT_TRUE(SealingKey::from_file(path));
}

TEST(KeyFile, SymlinkIsRefused) {
    TempDir dir;
    std::string target = dir.file("real");
    std::string path = dir.file("key");
    spit(target, std::string(32, 'k'), 0600);
    ASSERT_EQ(::symlink(target.c_str(), path.c_str()), 0);
    auto key = SealingKey::from_file(path);
    ASSERT_FALSE(key);
    EXPECT_EQ(key.error().exit(), Exit::no_perm);
    EXPECT_NE(key.error().message().find("symbolic link"), std::string::npos);
    // A dangling link is refused too, never followed to create a key elsewhere.
    ASSERT_EQ(::unlink(target.c_str()), 0);
    EXPECT_EQ(SealingKey::from_file(path).error().exit(), Exit::no_perm);
    EXPECT_FALSE(fs::exists(target));
}

TEST(KeyFile, NotRegularOrWrongSizeOrOtherOwnerIsRefused) {
    TempDir dir;
    std::string fifo = dir.file("fifo");
    ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
    EXPECT_EQ(SealingKey::from_file(fifo).error().exit(), Exit::no_perm);
    EXPECT_EQ(SealingKey::from_file(dir.file("")).error().exit(), Exit::no_perm);
    std::string short_key = dir.file("short");
    spit(short_key, std::string(31, 'k'), 0600);
    EXPECT_EQ(SealingKey::from_file(short_key).error().exit(), Exit::data);
    if (::geteuid() != 0)
        GTEST_SKIP() << "giving a file to another user needs root";
    std::string foreign = dir.file("foreign");
    spit(foreign, std::string(32, 'k'), 0600);
    ASSERT_EQ(::chown(foreign.c_str(), 65534, 65534), 0);
    auto key = SealingKey::from_file(foreign);
    ASSERT_FALSE(key);
    EXPECT_EQ(key.error().exit(), Exit::no_perm);
    EXPECT_NE(key.error().message().find("belongs to uid 65534"), std::string::npos);
}

TEST(KeyFile, MissingDirectoryIsAnError) {
    TempDir dir;
    auto key = SealingKey::from_file(dir.file("absent/key"));
    ASSERT_FALSE(key);
    EXPECT_EQ(key.error().exit(), Exit::os);
}

TEST(SealedFileTest, MissingReadsEmptyAndWritesRoundTrip) {
    TempDir dir;
    SealedFile file(dir.file("secrets.bin"), key_of('k'));
    EXPECT_EQ(file.read().value_or("?"), "");
    ASSERT_TRUE(file.write("one"));
    EXPECT_EQ(file.read().value_or("?"), "one");

    struct stat st {};

    ASSERT_EQ(::stat(file.path().c_str(), &st), 0);
    EXPECT_EQ(st.st_mode & 07777, 0600U);
    EXPECT_EQ(slurp(file.path()).find("one"), std::string::npos) << "plaintext on disk";
}

// The update is a rename: a reader holding the old file still sees all of it, and no temporary
// file is left behind.
TEST(SealedFileTest, UpdateIsAtomic) {
    TempDir dir;
    SealedFile file(dir.file("secrets.bin"), key_of('k'));
    ASSERT_TRUE(file.write("old contents"));
    Fd old(::open(file.path().c_str(), O_RDONLY | O_CLOEXEC));
    ASSERT_TRUE(old);
    ASSERT_TRUE(file.write("new contents"));
    auto old_blob = read_all(old.get(), 1 << 20);
    ASSERT_TRUE(old_blob);
    EXPECT_EQ(key_of('k').open(*old_blob).value_or("?"), "old contents");
    EXPECT_EQ(file.read().value_or("?"), "new contents");
    size_t entries = 0;
    for ([[maybe_unused]] const auto& entry : fs::directory_iterator(dir.file("")))
        ++entries;
    EXPECT_EQ(entries, 1U);
}

TEST(SealedFileTest, DamagedOrWrongKeyFileIsAnErrorAndKeepsTheFile) {
    TempDir dir;
    std::string path = dir.file("secrets.bin");
    ASSERT_TRUE(SealedFile(path, key_of('a')).write("secret"));
    std::string before = slurp(path);
    auto wrong = SealedFile(path, key_of('b')).read();
    ASSERT_FALSE(wrong);
    EXPECT_EQ(wrong.error().exit(), Exit::data);
    EXPECT_EQ(wrong.error().message().rfind("reading '" + path + "': ", 0), 0U);
    EXPECT_EQ(slurp(path), before);
    spit(path, before.substr(0, before.size() - 1), 0600);
    EXPECT_EQ(SealedFile(path, key_of('a')).read().error().exit(), Exit::data);
    std::string link = dir.file("link.bin");
    ASSERT_EQ(::symlink(path.c_str(), link.c_str()), 0);
    EXPECT_EQ(SealedFile(link, key_of('a')).read().error().exit(), Exit::no_perm);
}

} // namespace
} // namespace sion
