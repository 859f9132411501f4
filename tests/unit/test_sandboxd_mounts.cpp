// SPDX-License-Identifier: MIT
// Tests for sandboxd/mounts: the bwrap arguments the layout makes, and the synthesized files.
#include "sandboxd/mounts.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

namespace sion::sandboxd {
namespace {

using Args = std::vector<std::string>;

// Whether `args` holds `seq` as consecutive elements.
bool has(const Args& args, const Args& seq) {
    return std::search(args.begin(), args.end(), seq.begin(), seq.end()) != args.end();
}

size_t position(const Args& args, const Args& seq) {
    return static_cast<size_t>(std::search(args.begin(), args.end(), seq.begin(), seq.end()) -
                               args.begin());
}

Config config(Network network = Network::none) {
    Config c;
    c.workspace = "/home/me/work";
    c.reads = {"/opt/tools"};
    c.network = network;
    return c;
}

const HostRoot k_merged{{{"/bin", "usr/bin"}, {"/lib", "usr/lib"}, {"/lib64", "usr/lib64"}, {"/sbin", "usr/sbin"}},
                        {"/proc/keys"}};

Layout fds() {
    Layout f;
    f.exe = "/usr/bin/sion-sandbox";
    f.passwd = 7;
    f.group = 8;
    f.hosts = 9;
    f.seccomp = 10;
    return f;
}

TEST(Layout, TheSeedsTable) {
    Args a = layout_args(config(), k_merged, fds(), {"HOME=/workspace", "A=b=c"});
    EXPECT_TRUE(has(a, {"--unshare-all", "--unshare-user"}));
    EXPECT_FALSE(has(a, {"--share-net"}));
    EXPECT_TRUE(has(a, {"--disable-userns", "--die-with-parent", "--new-session", "--as-pid-1"}));
    EXPECT_TRUE(has(a, {"--uid", "10001", "--gid", "10001"}));
    EXPECT_TRUE(has(a, {"--cap-drop", "ALL"}));
    EXPECT_TRUE(has(a, {"--hostname", "sandbox"}));
    EXPECT_TRUE(has(a, {"--ro-bind", "/usr", "/usr"}));
    EXPECT_TRUE(has(a, {"--symlink", "usr/bin", "/bin"}));
    EXPECT_TRUE(has(a, {"--symlink", "usr/lib64", "/lib64"}));
    EXPECT_TRUE(has(a, {"--proc", "/proc", "--ro-bind-try", "/proc/sys", "/proc/sys"}));
    EXPECT_TRUE(has(a, {"--ro-bind-try", "/proc/sysrq-trigger", "/proc/sysrq-trigger"}));
    EXPECT_TRUE(has(a, {"--ro-bind-try", "/proc/irq", "/proc/irq"}));
    EXPECT_TRUE(has(a, {"--ro-bind-try", "/proc/bus", "/proc/bus"}));
    EXPECT_TRUE(has(a, {"--ro-bind", "/dev/null", "/proc/keys", "--dev", "/dev"}));
    EXPECT_TRUE(has(a, {"--seccomp", "10"}));
    EXPECT_TRUE(has(a, {"--tmpfs", "/dev/shm", "--remount-ro", "/dev"}));
    EXPECT_TRUE(has(a, {"--size", "268435456", "--tmpfs", "/tmp"}));
    EXPECT_TRUE(has(a, {"--ro-bind", "/opt/tools", "/opt/tools"}));
    EXPECT_TRUE(has(a, {"--bind", "/home/me/work", "/workspace"}));
    EXPECT_TRUE(has(a, {"--ro-bind", "/usr/bin/sion-sandbox", "/run/sion/sion-sandbox"}));
    EXPECT_TRUE(has(a, {"--ro-bind-data", "7", "/etc/passwd"}));
    EXPECT_TRUE(has(a, {"--ro-bind-data", "8", "/etc/group"}));
    EXPECT_TRUE(has(a, {"--ro-bind-data", "9", "/etc/hosts"}));
    EXPECT_TRUE(has(a, {"--chdir", "/workspace", "--clearenv"}));
    EXPECT_TRUE(has(a, {"--setenv", "HOME", "/workspace"}));
    EXPECT_TRUE(has(a, {"--setenv", "A", "b=c"}));
    // The root is read-only once everything is mounted.
    EXPECT_GT(position(a, {"--remount-ro", "/"}), position(a, {"--bind", "/home/me/work", "/workspace"}));
}

TEST(Layout, NothingSecretOfEtcAndNoResolverWithoutNetwork) {
    Args a = layout_args(config(), k_merged, fds(), {});
    for (const std::string& arg : a) {
        EXPECT_EQ(arg.find("/etc/ssl/private"), std::string::npos);
        EXPECT_NE(arg, "/etc/resolv.conf");
        EXPECT_NE(arg, "/etc/shadow");
        EXPECT_NE(arg, "/root");
        EXPECT_NE(arg, "/home");
    }
    EXPECT_TRUE(has(a, {"--ro-bind-try", "/etc/ssl/certs", "/etc/ssl/certs"}));
    EXPECT_TRUE(has(a, {"--ro-bind-try", "/etc/alternatives", "/etc/alternatives"}));
}

TEST(Layout, HostNetworkSharesTheNetworkAndItsResolver) {
    Args a = layout_args(config(Network::host), k_merged, fds(), {});
    EXPECT_TRUE(has(a, {"--share-net"}));
    EXPECT_FALSE(has(a, {"--hostname"}));
    EXPECT_TRUE(has(a, {"--ro-bind-try", "/etc/resolv.conf", "/etc/resolv.conf"}));
    EXPECT_TRUE(has(a, {"--ro-bind-try", "/etc/hosts", "/etc/hosts"}));
    EXPECT_FALSE(has(a, {"--ro-bind-data", "9", "/etc/hosts"}));
}

TEST(Layout, UnmergedRootIsBoundAsItIs) {
    HostRoot split{{{"/bin", ""}, {"/lib", ""}}, {}};
    Args a = layout_args(config(), split, fds(), {});
    EXPECT_TRUE(has(a, {"--ro-bind", "/bin", "/bin"}));
    EXPECT_TRUE(has(a, {"--ro-bind", "/lib", "/lib"}));
}

TEST(Layout, ProbeSeesTheHostsRoot) {
    HostRoot root = probe_host_root();
    bool bin = std::any_of(root.entries.begin(), root.entries.end(),
                           [](const auto& e) { return e.first == "/bin"; });
    EXPECT_TRUE(bin);
}

TEST(Synthesized, PasswdGroupHosts) {
    EXPECT_NE(passwd_text().find("sandbox:x:10001:10001:sandbox:/workspace:/bin/sh\n"),
              std::string::npos);
    EXPECT_NE(group_text().find("sandbox:x:10001:\n"), std::string::npos);
    EXPECT_NE(hosts_text().find("127.0.0.1\tlocalhost\n"), std::string::npos);
    Args env = sandbox_env("xterm");
    EXPECT_NE(std::find(env.begin(), env.end(), "HOME=/workspace"), env.end());
    EXPECT_NE(std::find(env.begin(), env.end(), "USER=sandbox"), env.end());
    EXPECT_NE(std::find(env.begin(), env.end(), "TERM=xterm"), env.end());
    EXPECT_EQ(sandbox_env("").size(), env.size() - 1);
}

} // namespace
} // namespace sion::sandboxd
