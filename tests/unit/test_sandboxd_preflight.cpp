// SPDX-License-Identifier: MIT
// Tests for sandboxd/preflight's probes: the fix named for refused user namespaces, read from a
// /proc/sys of the test's own, and bwrap's version.
#include "sandboxd/preflight.hpp"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>

namespace sion::sandboxd {
namespace {

namespace fs = std::filesystem;

// A /proc/sys of the test's own, removed at the end.
class FakeProcSys : public ::testing::Test {
protected:
    void SetUp() override {
        m_dir = fs::temp_directory_path() / ("sion-procsys-" + std::to_string(::getpid()));
        fs::create_directories(m_dir / "kernel");
        fs::create_directories(m_dir / "user");
    }

    void TearDown() override { fs::remove_all(m_dir); }

    void set(const std::string& name, const std::string& value) {
        std::ofstream(m_dir / name) << value << "\n";
    }

    [[nodiscard]] std::string dir() const { return m_dir.string(); }

private:
    fs::path m_dir;
};

TEST_F(FakeProcSys, DebianSysctlOff) {
    set("kernel/unprivileged_userns_clone", "0");
    set("user/max_user_namespaces", "1000");
    EXPECT_EQ(userns_fix("bwrap: No permissions to creating new namespace", dir()),
              "allow them with sysctl kernel.unprivileged_userns_clone=1");
}

TEST_F(FakeProcSys, NoNamespacesAtAll) {
    set("kernel/unprivileged_userns_clone", "1");
    set("user/max_user_namespaces", "0");
    EXPECT_EQ(userns_fix("bwrap: No space left on device", dir()),
              "allow them with sysctl user.max_user_namespaces=10000");
}

TEST_F(FakeProcSys, UbuntuAppArmorRestriction) {
    set("kernel/apparmor_restrict_unprivileged_userns", "1");
    set("user/max_user_namespaces", "1000");
    EXPECT_EQ(userns_fix("bwrap: setting up uid map: Permission denied", dir()),
              "AppArmor restricts them (Ubuntu 24.04): allow them with sysctl "
              "kernel.apparmor_restrict_unprivileged_userns=0, or give bwrap an AppArmor profile "
              "that allows userns");
}

TEST_F(FakeProcSys, NothingTellsWhy) {
    EXPECT_EQ(userns_fix("bwrap: setting up uid map: Permission denied", dir()),
              "allow them with sysctl kernel.unprivileged_userns_clone=1, or on Ubuntu 24.04 with "
              "sysctl kernel.apparmor_restrict_unprivileged_userns=0 or an AppArmor profile for "
              "bwrap");
}

TEST(BwrapVersion, NotBwrap) {
    auto v = bwrap_version("/bin/true");
    ASSERT_FALSE(v);
    EXPECT_EQ(v.error().exit(), Exit::unavailable);
    EXPECT_EQ(v.error().message(), "'/bin/true --version' did not say which bubblewrap it is");
}

} // namespace
} // namespace sion::sandboxd
