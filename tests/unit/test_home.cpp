// SPDX-License-Identifier: MIT
// Tests for lib/home: finding $SION_HOME, refusing one others may change, and overlapping paths.
#include "lib/home.hpp"

#include <gtest/gtest.h>
#include <pwd.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <optional>
#include <string>

namespace sion {
namespace {

// The tests change the environment and the umask; they run one at a time, on one thread.
// NOLINTBEGIN(concurrency-mt-unsafe)

#define ASSERT_OK(r) ASSERT_TRUE(r) << (r).error().message()
#define EXPECT_OK(r) EXPECT_TRUE(r) << (r).error().message()

constexpr uid_t k_other_uid = 54321;

std::optional<std::string> get_env(const char* name) {
    const char* value = std::getenv(name);
    return value != nullptr ? std::optional<std::string>(value) : std::nullopt;
}

void restore_env(const char* name, const std::optional<std::string>& value) {
    if (value)
        ::setenv(name, value->c_str(), 1);
    else
        ::unsetenv(name);
}

class HomeTest : public testing::Test {
protected:
    void SetUp() override {
        m_sion_home = get_env("SION_HOME");
        m_home = get_env("HOME");
        m_umask = ::umask(022);
        const char* tmp = std::getenv("TMPDIR");
        std::string dir =
            std::string(tmp != nullptr && *tmp != '\0' ? tmp : "/tmp") + "/sion-home.XXXXXX";
        ASSERT_NE(::mkdtemp(dir.data()), nullptr);
        m_dir = std::filesystem::canonical(dir).string();
        m_cwd = std::filesystem::current_path();
    }

    void TearDown() override {
        restore_env("SION_HOME", m_sion_home);
        restore_env("HOME", m_home);
        ::umask(m_umask);
        std::filesystem::current_path(m_cwd);
        std::filesystem::remove_all(m_dir);
    }

    static mode_t mode_of(const std::string& path) {
        struct stat st = {};
        EXPECT_EQ(::lstat(path.c_str(), &st), 0) << path;
        return st.st_mode & 07777;
    }

    static void touch(const std::string& path, mode_t mode) {
        std::ofstream(path) << "x";
        ASSERT_EQ(::chmod(path.c_str(), mode), 0);
    }

    // A directory under the scratch directory with exactly `mode`.
    std::string make_dir(const std::string& name, mode_t mode) {
        std::string path = m_dir + "/" + name;
        EXPECT_EQ(::mkdir(path.c_str(), 0700), 0) << path;
        EXPECT_EQ(::chmod(path.c_str(), mode), 0) << path;
        return path;
    }

    // resolve_path and paths_overlap, or a message when they fail.
    static std::string resolved(const std::string& path) {
        auto r = resolve_path(path);
        return r ? *r : "error: " + r.error().message();
    }

    static bool overlap(const std::string& a, const std::string& b) {
        auto r = paths_overlap(a, b);
        EXPECT_TRUE(r) << r.error().message();
        return r && *r;
    }

    std::optional<std::string> m_sion_home;
    std::optional<std::string> m_home;
    mode_t m_umask = 022;
    std::string m_dir;
    std::filesystem::path m_cwd;
};

TEST_F(HomeTest, SionHomeWinsAndIsTidied) {
    ::setenv("SION_HOME", "/srv//state/sion/", 1);
    ::setenv("HOME", "/home/someone", 1);
    auto home = resolve_home();
    ASSERT_OK(home);
    EXPECT_EQ(*home, "/srv/state/sion");
}

TEST_F(HomeTest, EmptySionHomeFallsBackToHome) {
    ::setenv("SION_HOME", "", 1);
    ::setenv("HOME", "/home/someone/", 1);
    auto home = resolve_home();
    ASSERT_OK(home);
    EXPECT_EQ(*home, "/home/someone/.sion");
    ::setenv("HOME", "/", 1);
    home = resolve_home();
    ASSERT_OK(home);
    EXPECT_EQ(*home, "/.sion");
}

TEST_F(HomeTest, WithoutHomeThePasswdEntryIsUsed) {
    ::unsetenv("SION_HOME");
    ::unsetenv("HOME");
    struct passwd* pw = ::getpwuid(::geteuid());
    if (pw == nullptr)
        GTEST_SKIP() << "no passwd entry for this uid";
    auto home = resolve_home();
    ASSERT_OK(home);
    std::string dir = pw->pw_dir;
    EXPECT_EQ(*home, (dir == "/" ? "" : dir) + "/.sion");
}

TEST_F(HomeTest, RelativeSionHomeIsRefused) {
    ::setenv("SION_HOME", "state/sion", 1);
    auto home = resolve_home();
    ASSERT_FALSE(home);
    EXPECT_EQ(home.error().exit(), Exit::config);
    EXPECT_EQ(home.error().message(), "invalid SION_HOME 'state/sion': not an absolute path");
    ::unsetenv("SION_HOME");
    ::setenv("HOME", "~", 1);
    home = resolve_home();
    ASSERT_FALSE(home);
    EXPECT_EQ(home.error().exit(), Exit::config);
    EXPECT_EQ(home.error().message(), "invalid HOME '~': not an absolute path");
    auto ensured = ensure_home("relative");
    ASSERT_FALSE(ensured);
    EXPECT_EQ(ensured.error().exit(), Exit::config);
}

TEST_F(HomeTest, CreatedWithMode0700WhateverTheUmask) {
    for (mode_t mask : {mode_t{0}, mode_t{022}, mode_t{0777}}) {
        std::string home = m_dir + "/home-" + std::to_string(mask);
        ::umask(mask);
        ASSERT_OK(ensure_home(home));
        EXPECT_EQ(mode_of(home), 0700U) << "umask " << mask;
    }
}

TEST_F(HomeTest, MissingParentIsNotCreated) {
    std::string home = m_dir + "/no/such/.sion";
    auto ensured = ensure_home(home);
    ASSERT_FALSE(ensured);
    EXPECT_EQ(ensured.error().exit(), Exit::config);
    EXPECT_EQ(ensured.error().message(), "cannot create SION_HOME '" + home + "': its parent '"
                                             + m_dir + "/no/such' does not exist");
    EXPECT_FALSE(std::filesystem::exists(m_dir + "/no"));
}

TEST_F(HomeTest, ExistingHomeOthersMayWriteIsRefused) {
    std::string home = make_dir("open", 0777);
    auto ensured = ensure_home(home);
    ASSERT_FALSE(ensured);
    EXPECT_EQ(ensured.error().exit(), Exit::no_perm);
    EXPECT_EQ(ensured.error().message(),
              "refusing SION_HOME '" + home + "': others may write it (chmod 700 '" + home + "')");
    EXPECT_EQ(mode_of(home), 0777U); // refused, not repaired behind the user's back
    home = make_dir("others-only", 0757);
    ensured = ensure_home(home);
    ASSERT_FALSE(ensured);
    EXPECT_EQ(ensured.error().message(),
              "refusing SION_HOME '" + home + "': others may write it (chmod 700 '" + home + "')");
}

TEST_F(HomeTest, ExistingHomeTheGroupMayWriteIsRefused) {
    std::string home = make_dir("group", 0775);
    auto ensured = ensure_home(home);
    ASSERT_FALSE(ensured);
    EXPECT_EQ(ensured.error().exit(), Exit::no_perm);
    EXPECT_EQ(ensured.error().message(), "refusing SION_HOME '" + home
                                             + "': the group may write it (chmod 700 '" + home
                                             + "')");
}

TEST_F(HomeTest, ExistingHomeOthersMayOnlyReadIsAccepted) {
    for (mode_t mode : {mode_t{0700}, mode_t{0750}, mode_t{0755}}) {
        std::string home = make_dir("ok-" + std::to_string(mode), mode);
        EXPECT_OK(ensure_home(home));
        EXPECT_EQ(mode_of(home), mode); // an accepted home keeps its mode
    }
}

TEST_F(HomeTest, SymlinkAndFileAreRefused) {
    std::string target = make_dir("target", 0700);
    std::string link = m_dir + "/link";
    ASSERT_EQ(::symlink(target.c_str(), link.c_str()), 0);
    auto ensured = ensure_home(link);
    ASSERT_FALSE(ensured);
    EXPECT_EQ(ensured.error().exit(), Exit::no_perm);
    EXPECT_EQ(ensured.error().message(),
              "refusing SION_HOME '" + link
                  + "': it is a symbolic link (set SION_HOME to the directory it "
                    "points to)");
    std::string file = m_dir + "/file";
    touch(file, 0600);
    ensured = ensure_home(file);
    ASSERT_FALSE(ensured);
    EXPECT_EQ(ensured.error().exit(), Exit::no_perm);
    EXPECT_EQ(ensured.error().message(),
              "refusing SION_HOME '" + file + "': not a directory (move it aside)");
}

TEST_F(HomeTest, HomeOwnedBySomeoneElseIsRefused) {
    if (::geteuid() != 0)
        GTEST_SKIP() << "giving a directory to another user needs root";
    std::string home = make_dir("theirs", 0700);
    ASSERT_EQ(::chown(home.c_str(), k_other_uid, k_other_uid), 0);
    auto ensured = ensure_home(home);
    ASSERT_FALSE(ensured);
    EXPECT_EQ(ensured.error().exit(), Exit::no_perm);
    EXPECT_EQ(ensured.error().message(), "refusing SION_HOME '" + home
                                             + "': it is owned by uid 54321, not by you (chown 0 '"
                                             + home + "')");
}

TEST_F(HomeTest, PrepareHomeResolvesAndCreates) {
    std::string home = m_dir + "/state/";
    ::setenv("SION_HOME", home.c_str(), 1);
    auto prepared = prepare_home();
    ASSERT_OK(prepared);
    EXPECT_EQ(*prepared, m_dir + "/state");
    EXPECT_EQ(mode_of(*prepared), 0700U);
    EXPECT_OK(prepare_home()); // and again, now that it exists
}

TEST_F(HomeTest, PrivateFileAndItsDirectory) {
    std::string agents = make_dir("agents", 0700);
    std::string hooks = agents + "/hooks.json";
    touch(hooks, 0644);
    EXPECT_OK(check_private(hooks, "hooks file"));
    EXPECT_OK(check_private(agents, "directory")); // m_dir is 0700 too

    ASSERT_EQ(::chmod(hooks.c_str(), 0666), 0);
    auto refused = check_private(hooks, "hooks file");
    ASSERT_FALSE(refused);
    EXPECT_EQ(refused.error().exit(), Exit::no_perm);
    EXPECT_EQ(refused.error().message(), "refusing hooks file '" + hooks
                                             + "': others may write it (chmod go-w '" + hooks
                                             + "')");

    ASSERT_EQ(::chmod(hooks.c_str(), 0620), 0);
    refused = check_private(hooks, "hooks file");
    ASSERT_FALSE(refused);
    EXPECT_EQ(refused.error().message(), "refusing hooks file '" + hooks
                                             + "': the group may write it (chmod go-w '" + hooks
                                             + "')");

    ASSERT_EQ(::chmod(hooks.c_str(), 0600), 0);
    ASSERT_EQ(::chmod(agents.c_str(), 0777), 0);
    refused = check_private(hooks, "hooks file");
    ASSERT_FALSE(refused);
    EXPECT_EQ(refused.error().message(), "refusing hooks file '" + hooks
                                             + "': others may write its directory (chmod go-w '"
                                             + agents + "')");
    ASSERT_EQ(::chmod(agents.c_str(), 0770), 0);
    refused = check_private(hooks, "hooks file");
    ASSERT_FALSE(refused);
    EXPECT_EQ(refused.error().message(), "refusing hooks file '" + hooks
                                             + "': the group may write its directory (chmod go-w '"
                                             + agents + "')");
}

TEST_F(HomeTest, PrivateFileMissingOrSymlinked) {
    std::string missing = m_dir + "/hooks.json";
    auto refused = check_private(missing, "hooks file");
    ASSERT_FALSE(refused);
    EXPECT_EQ(refused.error().exit(), Exit::no_input);
    EXPECT_EQ(refused.error().message(),
              "cannot inspect hooks file '" + missing + "': No such file or directory");

    std::string real = m_dir + "/real.json";
    touch(real, 0600);
    ASSERT_EQ(::symlink(real.c_str(), missing.c_str()), 0);
    refused = check_private(missing, "hooks file");
    ASSERT_FALSE(refused);
    EXPECT_EQ(refused.error().exit(), Exit::no_perm);
    EXPECT_EQ(refused.error().message(),
              "refusing hooks file '" + missing
                  + "': it is a symbolic link (put the file itself there)");
}

TEST_F(HomeTest, PrivateFileOwnedBySomeoneElse) {
    if (::geteuid() != 0)
        GTEST_SKIP() << "giving files to another user needs root";
    std::string agents = make_dir("agents", 0700);
    std::string hooks = agents + "/hooks.json";
    touch(hooks, 0600);
    ASSERT_EQ(::chown(hooks.c_str(), k_other_uid, k_other_uid), 0);
    auto refused = check_private(hooks, "hooks file");
    ASSERT_FALSE(refused);
    EXPECT_EQ(refused.error().message(), "refusing hooks file '" + hooks
                                             + "': it is owned by uid 54321, not by you (chown 0 '"
                                             + hooks + "')");
    ASSERT_EQ(::chown(hooks.c_str(), 0, 0), 0);
    ASSERT_EQ(::chown(agents.c_str(), k_other_uid, k_other_uid), 0);
    refused = check_private(hooks, "hooks file");
    ASSERT_FALSE(refused);
    EXPECT_EQ(refused.error().message(),
              "refusing hooks file '" + hooks
                  + "': its directory is owned by uid 54321, not by you (chown 0 '" + agents
                  + "')");
}

TEST_F(HomeTest, ResolvePathHandlesDotsSlashesAndMissingParts) {
    EXPECT_EQ(resolved("/"), "/");
    EXPECT_EQ(resolved("//"), "/");
    EXPECT_EQ(resolved("/.."), "/");
    EXPECT_EQ(resolved(m_dir + "/"), m_dir);
    EXPECT_EQ(resolved(m_dir + "/./a//b/"), m_dir + "/a/b");
    EXPECT_EQ(resolved(m_dir + "/a/../b"), m_dir + "/b");
    EXPECT_EQ(resolved(m_dir + "/a/b/../../.."),
              std::filesystem::path(m_dir).parent_path().string());
    std::filesystem::current_path(m_dir);
    EXPECT_EQ(resolved("x/y"), m_dir + "/x/y");
    EXPECT_EQ(resolved("."), m_dir);
    auto empty = resolve_path("");
    ASSERT_FALSE(empty);
    EXPECT_EQ(empty.error().message(), "cannot resolve path '': it is empty");
}

TEST_F(HomeTest, ResolvePathFollowsSymlinksWhereTheyExist) {
    std::string real = make_dir("real", 0700);
    make_dir("real/inner", 0700);
    std::string link = m_dir + "/link";
    ASSERT_EQ(::symlink((real + "/inner").c_str(), link.c_str()), 0);
    EXPECT_EQ(resolved(link), real + "/inner");
    EXPECT_EQ(resolved(link + "/missing/x"), real + "/inner/missing/x");
    // ".." after a symlink leaves the link's target, as the kernel does, even when what follows is
    // missing.
    EXPECT_EQ(resolved(link + "/../missing"), real + "/missing");
    EXPECT_EQ(resolved(link + "/missing/../.."), real);
}

TEST_F(HomeTest, OverlapSameInsideAndContaining) {
    std::string home = make_dir(".sion", 0700);
    EXPECT_TRUE(overlap(home, home));
    EXPECT_TRUE(overlap(home + "/", home + "//"));
    EXPECT_TRUE(overlap(home + "/agents", home));
    EXPECT_TRUE(overlap(home, home + "/agents/routes"));
    EXPECT_TRUE(overlap(m_dir, home));
    // The seeds' case: the workspace ~/.sion/.. holds ~/.sion.
    EXPECT_TRUE(overlap(home + "/..", home));
    EXPECT_TRUE(overlap("/", home));
    EXPECT_FALSE(overlap(m_dir + "/work", home));
    EXPECT_FALSE(overlap(home + "/../work", home));
}

TEST_F(HomeTest, OverlapIsNotAStringPrefix) {
    EXPECT_FALSE(overlap(m_dir + "/a/b", m_dir + "/a/bc"));
    EXPECT_FALSE(overlap(m_dir + "/a/bc", m_dir + "/a/b"));
    EXPECT_FALSE(overlap(m_dir + "/a/b/", m_dir + "/a/b-c/"));
    make_dir("a", 0700);
    make_dir("a/b", 0700);
    make_dir("a/bc", 0700);
    EXPECT_FALSE(overlap(m_dir + "/a/b", m_dir + "/a/bc"));
    EXPECT_TRUE(overlap(m_dir + "/a/bc/../b", m_dir + "/a/b"));
}

TEST_F(HomeTest, OverlapThroughSymlinks) {
    std::string home = make_dir(".sion", 0700);
    std::string work = make_dir("work", 0700);
    std::string into_home = m_dir + "/to-home";
    ASSERT_EQ(::symlink(home.c_str(), into_home.c_str()), 0);
    EXPECT_TRUE(overlap(into_home, home));
    EXPECT_TRUE(overlap(into_home + "/skills", home + "/"));
    // A workspace whose link leads back up to the directory holding the home.
    std::string up = work + "/up";
    ASSERT_EQ(::symlink("..", up.c_str()), 0);
    EXPECT_TRUE(overlap(up, home));
    EXPECT_FALSE(overlap(work, home));
    // Relative paths are taken from the current directory.
    std::filesystem::current_path(work);
    EXPECT_TRUE(overlap("up/.sion", home));
    EXPECT_FALSE(overlap(".", home));
    EXPECT_TRUE(overlap("..", home));
}

// NOLINTEND(concurrency-mt-unsafe)

} // namespace
} // namespace sion
