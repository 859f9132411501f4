// SPDX-License-Identifier: MIT
// Tests for sandboxd/cgroup: where a sandbox's cgroup is made, from /proc's text; and, where this
// process may make one, a real cgroup with pids.max that a forked child joins and that is removed.
#include "sandboxd/cgroup.hpp"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <fstream>
#include <sstream>
#include <string>
#include <thread>

namespace sion::sandboxd {
namespace {

// Debian 12 on systemd: cgroup v2 only, pids enabled.
constexpr const char* k_unified_mounts =
    "22 28 0:21 / /proc rw,nosuid - proc proc rw\n"
    "30 23 0:26 / /sys/fs/cgroup rw,nosuid,nodev,noexec,relatime shared:9 - cgroup2 cgroup2 "
    "rw,nsdelegate,memory_recursiveprot\n";

// A hybrid machine: v1 controllers, pids among them, and an empty v2 hierarchy beside.
constexpr const char* k_hybrid_mounts =
    "40 30 0:35 / /sys/fs/cgroup rw - tmpfs tmpfs rw,mode=755\n"
    "41 40 0:36 / /sys/fs/cgroup/cpu rw,relatime - cgroup cgroup rw,cpu\n"
    "42 40 0:37 / /sys/fs/cgroup/pids rw,relatime - cgroup cgroup rw,pids\n"
    "43 40 0:38 / /sys/fs/cgroup/unified rw,relatime - cgroup2 cgroup2 rw\n";

TEST(PidsCandidates, UnifiedHierarchyBeneathThisCgroup) {
    auto c = pids_candidates("0::/user.slice/user-1000.slice/session-2.scope\n", k_unified_mounts);
    ASSERT_EQ(c.size(), 1U);
    EXPECT_EQ(c[0].dir, "/sys/fs/cgroup/user.slice/user-1000.slice/session-2.scope");
    EXPECT_EQ(c[0].version, 2);
    c = pids_candidates("0::/\n", k_unified_mounts);
    ASSERT_EQ(c.size(), 1U);
    EXPECT_EQ(c[0].dir, "/sys/fs/cgroup");
}

TEST(PidsCandidates, HybridTriesV2ThenV1sPids) {
    auto c = pids_candidates("9:cpu:/a\n8:pids:/docker/x\n0::/b\n", k_hybrid_mounts);
    ASSERT_EQ(c.size(), 2U);
    EXPECT_EQ(c[0].dir, "/sys/fs/cgroup/unified/b");
    EXPECT_EQ(c[0].version, 2);
    EXPECT_EQ(c[1].dir, "/sys/fs/cgroup/pids/docker/x");
    EXPECT_EQ(c[1].version, 1);
}

TEST(PidsCandidates, AMountOfAnotherPartOfTheTreeIsLeftOut) {
    // A container's view: its mount's root is /docker/x, this process is elsewhere.
    std::string mounts = "50 40 0:37 /docker/x /sys/fs/cgroup/pids rw - cgroup cgroup rw,pids\n";
    EXPECT_TRUE(pids_candidates("8:pids:/other\n", mounts).empty());
    auto c = pids_candidates("8:pids:/docker/x/inner\n", mounts);
    ASSERT_EQ(c.size(), 1U);
    EXPECT_EQ(c[0].dir, "/sys/fs/cgroup/pids/inner");
    // /docker/xy is not beneath /docker/x.
    EXPECT_TRUE(pids_candidates("8:pids:/docker/xy\n", mounts).empty());
}

TEST(PidsCandidates, NoHierarchyNoCandidate) {
    EXPECT_TRUE(pids_candidates("0::/\n", "22 28 0:21 / /proc rw - proc proc rw\n").empty());
    EXPECT_TRUE(pids_candidates("", k_unified_mounts).empty());
    // v1 without the pids controller mounted.
    EXPECT_TRUE(pids_candidates("8:pids:/\n",
                                "41 40 0:36 / /sys/fs/cgroup/cpu rw - cgroup cgroup rw,cpu\n")
                    .empty());
}

std::string slurp(const std::string& path) {
    std::ifstream in(path);
    std::stringstream text;
    text << in.rdbuf();
    return text.str();
}

TEST(SandboxCgroup, MadeLimitedJoinedAndRemoved) {
    auto parent = find_pids_parent();
    if (!parent)
        GTEST_SKIP() << "no cgroup can be made here: " << parent.error().message();
    std::string dir;
    {
        auto cgroup = SandboxCgroup::make(*parent, 7);
        ASSERT_TRUE(cgroup) << cgroup.error().message();
        dir = cgroup->dir();
        EXPECT_EQ(dir.rfind(parent->dir + "/sion-sandbox-" + std::to_string(::getpid()) + "-", 0), 0U);
        EXPECT_EQ(slurp(dir + "/pids.max"), "7\n");
        // A child joins and stays (paused): it is killed when the cgroup is dropped.
        pid_t child = ::fork();
        ASSERT_GE(child, 0);
        if (child == 0) {
            if (!join_cgroup(dir))
                ::_exit(1);
            ::pause();
            ::_exit(0);
        }
        for (int i = 0; i < 500 && slurp(dir + "/cgroup.procs").empty(); ++i)
            ::usleep(10000);
        EXPECT_EQ(slurp(dir + "/cgroup.procs"), std::to_string(child) + "\n");
        SandboxCgroup moved = std::move(*cgroup);
        // Dropping `moved` kills the child; it is reaped here, since it is ours.
        std::thread reaper([child] { ::waitpid(child, nullptr, 0); });
        { SandboxCgroup gone = std::move(moved); }
        reaper.join();
    }
    struct stat st {};
    EXPECT_NE(::stat(dir.c_str(), &st), 0) << dir << " is left";
}

TEST(SandboxCgroup, JoiningNothingIsAnError) {
    Status joined = join_cgroup("/nonexistent/cgroup");
    ASSERT_FALSE(joined);
    EXPECT_EQ(joined.error().message(),
              "cannot join the cgroup '/nonexistent/cgroup': No such file or directory");
}

} // namespace
} // namespace sion::sandboxd
