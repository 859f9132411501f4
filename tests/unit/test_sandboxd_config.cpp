// SPDX-License-Identifier: MIT
// Tests for sandboxd/config and sandboxd/preflight: options to a Config, the seeds' refusals, and
// paths shown as the user wrote them.
#include "sandboxd/config.hpp"
#include "sandboxd/preflight.hpp"

#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

namespace sion::sandboxd {
namespace {

// The tests change the environment; they run one at a time, on one thread.
// NOLINTBEGIN(concurrency-mt-unsafe)

#define ASSERT_OK(r) ASSERT_TRUE(r) << (r).error().message()

const CommandSpec k_spec{
    "test",
    "test",
    "",
    {{"workspace", 0, "DIR"},
     {"sandbox-read", 0, "DIR"},
     {"backend", 0, "B"},
     {"network", 0, "N"},
     {"allow-host", 0, "H"},
     {"timeout", 0, "S"},
     {"cpu", 0, "S"},
     {"memory", 0, "B"},
     {"file-size", 0, "B"},
     {"output", 0, "B"},
     {"home", 0, "DIR"}},
};

Result<Config> configure(std::vector<std::string> words) {
    words.insert(words.begin(), "test");
    std::vector<const char*> argv;
    for (const auto& w : words)
        argv.push_back(w.c_str());
    auto args = parse_args(k_spec, static_cast<int>(argv.size()), argv.data());
    if (!args)
        return std::move(args).error();
    return config_from_args(*args);
}

class ConfigTest : public testing::Test {
protected:
    void SetUp() override {
        char tmpl[] = "/tmp/sion-config-test.XXXXXX";
        ASSERT_NE(::mkdtemp(tmpl), nullptr);
        m_dir = tmpl;
        std::filesystem::create_directories(m_dir + "/home/.sion");
        std::filesystem::create_directories(m_dir + "/home/work");
        if (const char* h = std::getenv("HOME"))
            m_old_home = h;
        if (const char* s = std::getenv("SION_HOME"))
            m_old_sion_home = s;
        ::setenv("HOME", (m_dir + "/home").c_str(), 1);
        ::unsetenv("SION_HOME");
    }

    void TearDown() override {
        std::filesystem::remove_all(m_dir);
        restore("HOME", m_old_home);
        restore("SION_HOME", m_old_sion_home);
    }

    static void restore(const char* name, const std::optional<std::string>& v) {
        if (v)
            ::setenv(name, v->c_str(), 1);
        else
            ::unsetenv(name);
    }

    std::string m_dir;
    std::optional<std::string> m_old_home, m_old_sion_home;
};

TEST_F(ConfigTest, DefaultsAreTheSeeds) {
    auto c = configure({"--workspace", m_dir + "/home/work"});
    ASSERT_OK(c);
    EXPECT_EQ(c->limits.timeout, std::chrono::seconds(120));
    EXPECT_EQ(c->limits.cpu, std::chrono::seconds(120));
    EXPECT_EQ(c->limits.memory, uint64_t{4} << 30);
    EXPECT_EQ(c->limits.file_size, uint64_t{512} << 20);
    EXPECT_EQ(c->limits.output, uint64_t{64} << 10);
    EXPECT_EQ(c->backend, BackendKind::bwrap);
    EXPECT_EQ(c->network, Network::none);
    EXPECT_EQ(c->workspace, m_dir + "/home/work");
    EXPECT_EQ(c->workspace_as_given, "~/work");
    EXPECT_EQ(c->home, m_dir + "/home/.sion");
    EXPECT_EQ(c->home_as_given, "~/.sion");
}

TEST_F(ConfigTest, LimitsFromOptions) {
    auto c = configure({"--workspace", m_dir, "--timeout", "3", "--cpu", "2", "--memory", "256M",
                        "--file-size", "1M", "--output", "1K"});
    ASSERT_OK(c);
    EXPECT_EQ(c->limits.timeout, std::chrono::seconds(3));
    EXPECT_EQ(c->limits.cpu, std::chrono::seconds(2));
    EXPECT_EQ(c->limits.memory, uint64_t{256} << 20);
    EXPECT_EQ(c->limits.file_size, uint64_t{1} << 20);
    EXPECT_EQ(c->limits.output, uint64_t{1024});
}

TEST_F(ConfigTest, MalformedNumbersAreUsageErrors) {
    auto c = configure({"--workspace", m_dir, "--memory", "1X"});
    ASSERT_FALSE(c);
    EXPECT_EQ(c.error().exit(), Exit::usage);
    EXPECT_EQ(c.error().message(),
              "option '--memory': '1X' is not a size: give bytes, or a number with K, M or G");
    c = configure({"--workspace", m_dir, "--timeout", "2.5"});
    ASSERT_FALSE(c);
    EXPECT_EQ(c.error().message(), "option '--timeout' needs a whole number of seconds, not '2.5'");
    c = configure({"--workspace", m_dir, "--cpu", "0"});
    ASSERT_FALSE(c);
    EXPECT_EQ(c.error().exit(), Exit::usage);
}

TEST_F(ConfigTest, SeedRefusalsExit78) {
    auto c = configure({"--workspace", m_dir, "--network", "sion-egress"});
    ASSERT_FALSE(c);
    EXPECT_EQ(c.error().exit(), Exit::config);
    EXPECT_EQ(c.error().message(),
              "with bubblewrap the network is none, declared or host, not sion-egress");
    c = configure({"--workspace", m_dir, "--backend", "docker:alpine:3.20"});
    ASSERT_FALSE(c);
    EXPECT_EQ(c.error().message(), "alpine:3.20 is not pinned by digest: give name@sha256:<64 hex digits>");
    c = configure({"--workspace", m_dir, "--backend",
                   "docker:mirror.gcr.io/library/alpine@sha256:" + std::string(64, 'a'),
                   "--network", "bridge"});
    ASSERT_FALSE(c);
    EXPECT_EQ(c.error().message(), "Docker's \"bridge\" network does not restrict where a command "
                                   "connects: name a network you set up");
}

TEST_F(ConfigTest, AllowHostNeedsDeclaredAndAHost) {
    auto c = configure({"--workspace", m_dir, "--allow-host", "pypi.org"});
    ASSERT_FALSE(c);
    EXPECT_EQ(c.error().exit(), Exit::config);
    c = configure({"--workspace", m_dir, "--network", "declared", "--allow-host", "pypi.org:443",
                   "--allow-host", "*.example.org"});
    ASSERT_OK(c);
    EXPECT_EQ(c->allow_hosts, (std::vector<std::string>{"pypi.org:443", "*.example.org"}));
    c = configure({"--workspace", m_dir, "--network", "declared", "--allow-host", "a b"});
    ASSERT_FALSE(c);
    c = configure({"--workspace", m_dir, "--network", "declared", "--allow-host", "h:99999"});
    ASSERT_FALSE(c);
}

TEST_F(ConfigTest, WorkspaceMustBeADirectory) {
    auto c = configure({"--workspace", m_dir + "/nope"});
    ASSERT_FALSE(c);
    EXPECT_EQ(c.error().exit(), Exit::config);
    EXPECT_EQ(c.error().message(),
              "cannot use the workspace '" + m_dir + "/nope': No such file or directory");
}

TEST_F(ConfigTest, WorkspaceOverlappingHomeIsRefusedAsTheSeedSays) {
    auto c = configure({"--workspace", m_dir + "/home/.sion/.."});
    ASSERT_OK(c);
    Status st = preflight(*c);
    ASSERT_FALSE(st);
    EXPECT_EQ(st.error().exit(), Exit::config);
    EXPECT_EQ(st.error().message(), "the workspace ~/.sion/.. and ~/.sion (wallets, sessions, "
                                    "skills) overlap: give a workspace apart from it");
    c = configure({"--workspace", m_dir + "/home/.sion"});
    ASSERT_OK(c);
    EXPECT_FALSE(preflight(*c));
    c = configure({"--workspace", m_dir + "/home/work"});
    ASSERT_OK(c);
    EXPECT_TRUE(preflight(*c));
}

TEST_F(ConfigTest, HomeAsGivenFollowsSionHomeAndHomeOption) {
    ::setenv("SION_HOME", (m_dir + "/home/.sion").c_str(), 1);
    auto c = configure({"--workspace", m_dir + "/home"});
    ASSERT_OK(c);
    EXPECT_EQ(c->home_as_given, "~/.sion");
    EXPECT_FALSE(preflight(*c));
    std::filesystem::create_directories(m_dir + "/state");
    c = configure({"--workspace", m_dir + "/home", "--home", m_dir + "/state"});
    ASSERT_OK(c);
    EXPECT_EQ(c->home, m_dir + "/state");
    EXPECT_TRUE(preflight(*c));
}

TEST_F(ConfigTest, SandboxReadMayNotShowHome) {
    auto c = configure({"--workspace", m_dir + "/home/work", "--sandbox-read", m_dir + "/home"});
    ASSERT_OK(c);
    Status st = preflight(*c);
    ASSERT_FALSE(st);
    EXPECT_EQ(st.error().exit(), Exit::config);
    EXPECT_EQ(st.error().message(), "the directory ~ given with --sandbox-read and ~/.sion "
                                    "(wallets, sessions, skills) overlap: give a directory apart "
                                    "from it");
    c = configure({"--workspace", m_dir + "/home/work", "--sandbox-read", m_dir + "/home/work"});
    ASSERT_OK(c);
    EXPECT_TRUE(preflight(*c));
    EXPECT_EQ(c->reads, std::vector<std::string>{m_dir + "/home/work"});
}

TEST_F(ConfigTest, DisplayPathShowsHomeAsTilde) {
    EXPECT_EQ(display_path(m_dir + "/home"), "~");
    EXPECT_EQ(display_path(m_dir + "/home/x/.."), "~/x/..");
    EXPECT_EQ(display_path(m_dir + "/homework"), m_dir + "/homework");
    EXPECT_EQ(display_path("relative"), "relative");
}

// NOLINTEND(concurrency-mt-unsafe)

} // namespace
} // namespace sion::sandboxd
