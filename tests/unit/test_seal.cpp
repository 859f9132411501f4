// SPDX-License-Identifier: MIT
// Unit tests of lib/seal: sealing, key files, SealedFile.
#include "lib/fd.hpp"
#include "lib/private_file.hpp"
#include "lib/seal.hpp"

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
        std::string pattern = (fs::temp_directory_path() / "sion-seal-XXXXXX").string();
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

TEST(PrivateFile, CreatedOnceWith0600AndNeverReplaced) {
    TempDir dir;
    std::string path = dir.file("key");
    mode_t old = ::umask(0277);
    auto created = create_private_file(path, "first");
    ::umask(old);
    ASSERT_TRUE(created) << created.error().message();
    EXPECT_TRUE(*created);

    struct stat st {};

    ASSERT_EQ(::stat(path.c_str(), &st), 0);
    EXPECT_EQ(st.st_mode & 07777, 0600u);
    auto again = create_private_file(path, "second");
    ASSERT_TRUE(again) << again.error().message();
    EXPECT_FALSE(*again);
    EXPECT_EQ(slurp(path), "first");
    // Neither call leaves its temporary file behind.
    EXPECT_EQ(std::distance(fs::directory_iterator(fs::path(path).parent_path()),
                            fs::directory_iterator()),
              1);
}

TEST(PrivateFile, WritingReplacesALinkNotWhatItPointsTo) {
    TempDir dir;
    std::string target = dir.file("target");
    std::string path = dir.file("file");
    spit(target, "kept", 0644);
    ASSERT_EQ(::symlink(target.c_str(), path.c_str()), 0);
    ASSERT_TRUE(write_private_file(path, "new"));
    EXPECT_EQ(slurp(target), "kept");

    struct stat st {};

    ASSERT_EQ(::lstat(path.c_str(), &st), 0);
    EXPECT_TRUE(S_ISREG(st.st_mode));
    EXPECT_EQ(st.st_mode & 07777, 0600u);
    EXPECT_EQ(slurp(path), "new");
    // Nor does creating go through a link: the name is taken.
    ASSERT_EQ(::symlink(target.c_str(), dir.file("link").c_str()), 0);
    EXPECT_FALSE(*create_private_file(dir.file("link"), "x"));
    EXPECT_EQ(slurp(target), "kept");
}

TEST(PrivateFile, AMissingDirectoryIsAnErrorNamingTheFile) {
    TempDir dir;
    std::string path = dir.file("none/file");
    auto created = create_private_file(path, "x");
    ASSERT_FALSE(created);
    EXPECT_EQ(created.error().message(), "cannot write '" + path + "': No such file or directory");
    Status written = write_private_file(path, "x");
    ASSERT_FALSE(written);
    EXPECT_EQ(written.error().message(), "cannot write '" + path + "': No such file or directory");
}

} // namespace
} // namespace sion
