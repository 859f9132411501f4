// SPDX-License-Identifier: MIT
// Tests for sandboxd/cgroup: where a sandbox's cgroup is made, from /proc's text; and, where this
// process may make them, real cgroups with pids.max and a memory limit that a forked child joins,
// that kill what takes more memory than that, and that are removed.
#include "sandboxd/cgroup.hpp"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <csignal>
#include <cstdlib>
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

// A hybrid machine: v1 controllers, pids and memory among them, and an empty v2 hierarchy beside.
constexpr const char* k_hybrid_mounts =
    "40 30 0:35 / /sys/fs/cgroup rw - tmpfs tmpfs rw,mode=755\n"
    "41 40 0:36 / /sys/fs/cgroup/cpu rw,relatime - cgroup cgroup rw,cpu\n"
    "42 40 0:37 / /sys/fs/cgroup/pids rw,relatime - cgroup cgroup rw,pids\n"
    "44 40 0:39 / /sys/fs/cgroup/memory rw,relatime - cgroup cgroup rw,memory\n"
    "43 40 0:38 / /sys/fs/cgroup/unified rw,relatime - cgroup2 cgroup2 rw\n";

TEST(CgroupCandidates, UnifiedHierarchyBeneathThisCgroup) {
    auto c = cgroup_candidates("pids", "0::/user.slice/user-1000.slice/session-2.scope\n", k_unified_mounts);
    ASSERT_EQ(c.size(), 1U);
    EXPECT_EQ(c[0].dir, "/sys/fs/cgroup/user.slice/user-1000.slice/session-2.scope");
    EXPECT_EQ(c[0].version, 2);
    c = cgroup_candidates("pids", "0::/\n", k_unified_mounts);
    ASSERT_EQ(c.size(), 1U);
    EXPECT_EQ(c[0].dir, "/sys/fs/cgroup");
}

TEST(CgroupCandidates, HybridTriesV2ThenV1sPids) {
    auto c = cgroup_candidates("pids", "9:cpu:/a\n8:pids:/docker/x\n0::/b\n", k_hybrid_mounts);
    ASSERT_EQ(c.size(), 2U);
    EXPECT_EQ(c[0].dir, "/sys/fs/cgroup/unified/b");
    EXPECT_EQ(c[0].version, 2);
    EXPECT_EQ(c[1].dir, "/sys/fs/cgroup/pids/docker/x");
    EXPECT_EQ(c[1].version, 1);
}

TEST(CgroupCandidates, EachControllerInItsOwnV1Hierarchy) {
    auto c = cgroup_candidates("memory", "9:memory:/process/m\n8:pids:/\n0::/\n", k_hybrid_mounts);
    ASSERT_EQ(c.size(), 2U);
    EXPECT_EQ(c[0].dir, "/sys/fs/cgroup/unified");
    EXPECT_EQ(c[1].dir, "/sys/fs/cgroup/memory/process/m");
    EXPECT_EQ(c[1].version, 1);
    // The v2 cgroup is the same for every controller.
    auto u = cgroup_candidates("memory", "0::/user.slice\n", k_unified_mounts);
    ASSERT_EQ(u.size(), 1U);
    EXPECT_EQ(u[0].dir, "/sys/fs/cgroup/user.slice");
}

TEST(CgroupCandidates, AMountOfAnotherPartOfTheTreeIsLeftOut) {
    // A container's view: its mount's root is /docker/x, this process is elsewhere.
    std::string mounts = "50 40 0:37 /docker/x /sys/fs/cgroup/pids rw - cgroup cgroup rw,pids\n";
    EXPECT_TRUE(cgroup_candidates("pids", "8:pids:/other\n", mounts).empty());
    auto c = cgroup_candidates("pids", "8:pids:/docker/x/inner\n", mounts);
    ASSERT_EQ(c.size(), 1U);
    EXPECT_EQ(c[0].dir, "/sys/fs/cgroup/pids/inner");
    // /docker/xy is not beneath /docker/x.
    EXPECT_TRUE(cgroup_candidates("pids", "8:pids:/docker/xy\n", mounts).empty());
}

TEST(CgroupCandidates, NoHierarchyNoCandidate) {
    EXPECT_TRUE(cgroup_candidates("pids", "0::/\n", "22 28 0:21 / /proc rw - proc proc rw\n").empty());
    EXPECT_TRUE(cgroup_candidates("pids", "", k_unified_mounts).empty());
    // v1 without the pids controller mounted.
    EXPECT_TRUE(cgroup_candidates("pids", "8:pids:/\n",
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
    auto parent = find_cgroup_parent("pids");
    if (!parent)
        GTEST_SKIP() << "no cgroup can be made here: " << parent.error().message();
    auto memory = find_cgroup_parent("memory");
    std::vector<std::string> dirs;
    {
        auto cgroup = SandboxCgroup::make(parent, memory, 7, uint64_t{64} << 20);
        ASSERT_TRUE(cgroup) << cgroup.error().message();
        std::string dir = cgroup->pids_dir();
        dirs = cgroup->dirs();
        EXPECT_EQ(dir.rfind(parent->dir + "/sion-sandbox-" + std::to_string(::getpid()) + "-", 0), 0U);
        EXPECT_EQ(slurp(dir + "/pids.max"), "7\n");
        if (memory) {
            ASSERT_FALSE(cgroup->memory_dir().empty()) << cgroup->memory_why();
            std::string limit = memory->version == 2 ? "/memory.max" : "/memory.limit_in_bytes";
            EXPECT_EQ(slurp(cgroup->memory_dir() + limit), std::to_string(64 << 20) + "\n");
            EXPECT_EQ(cgroup->oom_kills(), 0U);
            EXPECT_EQ(dirs.size(), memory->dir == parent->dir ? 1U : 2U);
        }
        // A child joins and stays (paused): it is killed when the cgroup is dropped.
        pid_t child = ::fork();
        ASSERT_GE(child, 0);
        if (child == 0) {
            for (const std::string& d : dirs)
                if (!join_cgroup(d))
                    ::_exit(1);
            ::pause();
            ::_exit(0);
        }
        for (int i = 0; i < 500 && slurp(dirs.back() + "/cgroup.procs").empty(); ++i)
            ::usleep(10000);
        for (const std::string& d : dirs)
            EXPECT_EQ(slurp(d + "/cgroup.procs"), std::to_string(child) + "\n") << d;
        SandboxCgroup moved = std::move(*cgroup);
        // Dropping `moved` kills the child; it is reaped here, since it is ours.
        std::thread reaper([child] { ::waitpid(child, nullptr, 0); });
        { SandboxCgroup gone = std::move(moved); }
        reaper.join();
    }
    for (const std::string& d : dirs) {
        struct stat st {};
        EXPECT_NE(::stat(d.c_str(), &st), 0) << d << " is left";
    }
}

// A child that takes more memory than its cgroup allows is killed by the kernel, and counted.
TEST(SandboxCgroup, MemoryPastTheLimitIsKilledAndCounted) {
    auto memory = find_cgroup_parent("memory");
    if (!memory)
        GTEST_SKIP() << "no memory cgroup can be made here: " << memory.error().message();
    auto cgroup = SandboxCgroup::make(Error(Exit::unavailable, "not asked"), memory, 0,
                                      uint64_t{32} << 20);
    ASSERT_TRUE(cgroup) << cgroup.error().message();
    ASSERT_EQ(cgroup->dirs().size(), 1U);
    pid_t child = ::fork();
    ASSERT_GE(child, 0);
    if (child == 0) {
        if (!join_cgroup(cgroup->memory_dir()))
            ::_exit(1);
        // 256 MiB, touched page by page.
        for (size_t i = 0; i < 256; ++i) {
            auto* block = static_cast<volatile char*>(::malloc(size_t{1} << 20));
            if (block == nullptr)
                ::_exit(2);
            for (size_t at = 0; at < (size_t{1} << 20); at += 4096)
                block[at] = 1;
        }
        ::_exit(0);
    }
    int status = 0;
    ASSERT_EQ(::waitpid(child, &status, 0), child);
    ASSERT_TRUE(WIFSIGNALED(status)) << "it ended with status " << status;
    EXPECT_EQ(WTERMSIG(status), SIGKILL);
    EXPECT_EQ(cgroup->oom_kills(), 1U);
}

TEST(SandboxCgroup, JoiningNothingIsAnError) {
    Status joined = join_cgroup("/nonexistent/cgroup");
    ASSERT_FALSE(joined);
    EXPECT_EQ(joined.error().message(),
              "cannot join the cgroup '/nonexistent/cgroup': No such file or directory");
}

} // namespace
} // namespace sion::sandboxd
