// SPDX-License-Identifier: MIT
// Tests for how a command's extra environment reaches it off every command line: the block init
// --exec reads on --env-fd, bwrap's launch carrying it in a descriptor, and docker run naming the
// variables while its own environment holds their values. The processes themselves are
// tests/e2e/t0131-sion-sandbox-env-secrecy.sh's.
#include "lib/fd.hpp"
#include "sandboxd/bwrap.hpp"
#include "sandboxd/docker.hpp"
#include "sandboxd/init.hpp"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <utility>
#include <vector>

namespace sion::sandboxd {
namespace {

using namespace std::string_literals;
using Strings = std::vector<std::string>;
using Vars = std::vector<std::pair<std::string, std::string>>;

bool mentions(const Strings& args, const std::string& text) {
    return std::any_of(args.begin(), args.end(),
                       [&](const std::string& a) { return a.find(text) != std::string::npos; });
}

TEST(EnvBlock, EntriesEndedByNulReadBack) {
    Vars vars = {{"API_KEY", "s3cret=with=equals"}, {"EMPTY", ""}, {"MULTI", "line\none"}};
    std::string block = env_block(vars);
    EXPECT_EQ(block, "API_KEY=s3cret=with=equals\0EMPTY=\0MULTI=line\none\0"s);
    auto back = parse_env_block(block);
    ASSERT_TRUE(back) << back.error().message();
    EXPECT_EQ(*back, vars);
    EXPECT_EQ(env_block({}), "");
    auto none = parse_env_block("");
    ASSERT_TRUE(none);
    EXPECT_TRUE(none->empty());
}

TEST(EnvBlock, AValueStopsAtItsOwnNulAsExecveWouldStopIt) {
    std::string block = env_block({{"A", "before\0after=x"s}, {"B", "b"}});
    auto back = parse_env_block(block);
    ASSERT_TRUE(back) << back.error().message();
    EXPECT_EQ(*back, (Vars{{"A", "before"}, {"B", "b"}})) << "no variable smuggled in after a NUL";
}

TEST(EnvBlock, MalformedBlocksAreRefusedNamingNoValue) {
    struct Case {
        std::string block;
        std::string message;
    };

    std::vector<Case> cases = {
        {"NOVALUE\0"s, "the environment given to init holds 'NOVALUE', not NAME=value"},
        {"=hidden\0"s, "the environment given to init holds '', not NAME=value"},
        {"CUT=secret-with-no-nul", "the environment given to init holds 'CUT', not NAME=value"},
    };
    for (const Case& c : cases) {
        auto r = parse_env_block(c.block);
        ASSERT_FALSE(r) << c.message;
        EXPECT_EQ(r.error().exit(), Exit::data);
        EXPECT_EQ(r.error().message(), c.message);
    }
}

TEST(TakeEnv, SetsEachVariableFromTheDescriptorAndClosesIt) {
    ::setenv("SION_TEST_REPLACED", "old", 1);
    auto pipe = Pipe::make();
    ASSERT_TRUE(pipe);
    ASSERT_TRUE(write_all(pipe->write.get(),
                          env_block({{"SION_TEST_TAKEN", "v=1"}, {"SION_TEST_REPLACED", "new"}})));
    pipe->write.reset();
    int fd = pipe->read.get();
    Status st = take_env(std::move(pipe->read));
    ASSERT_TRUE(st) << st.error().message();
    EXPECT_STREQ(std::getenv("SION_TEST_TAKEN"), "v=1");
    EXPECT_STREQ(std::getenv("SION_TEST_REPLACED"), "new");
    EXPECT_EQ(::fcntl(fd, F_GETFD), -1) << "the descriptor is closed";
    ::unsetenv("SION_TEST_TAKEN");
    ::unsetenv("SION_TEST_REPLACED");
}

TEST(TakeEnv, AMalformedBlockSetsNothing) {
    auto pipe = Pipe::make();
    ASSERT_TRUE(pipe);
    ASSERT_TRUE(write_all(pipe->write.get(), "SION_TEST_GOOD=1\0BAD\0"s));
    pipe->write.reset();
    Status st = take_env(std::move(pipe->read));
    ASSERT_FALSE(st);
    EXPECT_EQ(st.error().exit(), Exit::data);
    EXPECT_EQ(std::getenv("SION_TEST_GOOD"), nullptr);
}

TEST(RunInitArgv, TheEnvironmentDescriptorIsInitsOptionBeforeTheCommand) {
    Strings argv = run_init_argv(Limits{}, false, {"env"}, 4);
    auto at = std::find(argv.begin(), argv.end(), "--env-fd");
    ASSERT_NE(at, argv.end());
    ASSERT_NE(at + 1, argv.end());
    EXPECT_EQ(*(at + 1), "4");
    auto command = std::find(at, argv.end(), "--");
    ASSERT_NE(command, argv.end());
    EXPECT_EQ(Strings(command + 1, argv.end()), Strings{"env"});
    Strings without = run_init_argv(Limits{}, false, {"env"});
    EXPECT_EQ(std::find(without.begin(), without.end(), "--env-fd"), without.end());
}

// bwrap's launch for a real workspace: needs bwrap installed, not a sandbox that works.
class Launching : public ::testing::Test {
protected:
    void SetUp() override {
        if (!find_bwrap())
            GTEST_SKIP() << "bwrap is not installed (Debian package bubblewrap)";
        m_dir = std::filesystem::temp_directory_path()
                / ("sion-test-env." + std::to_string(::getpid()));
        std::filesystem::create_directories(m_dir);
        m_config.workspace = m_dir.string();
    }

    void TearDown() override {
        if (!m_dir.empty())
            std::filesystem::remove_all(m_dir);
    }

    std::filesystem::path m_dir;
    Config m_config;
};

TEST_F(Launching, TheExtraEnvironmentIsInADescriptorNotOnTheCommandLine) {
    Vars extra = {{"API_KEY", "value-never-on-a-command-line"}, {"PATH", "/opt/bin"}};
    auto launch = prepare_launch(m_config, extra, -1);
    ASSERT_TRUE(launch) << launch.error().message();
    EXPECT_FALSE(mentions(launch->spec.argv, "value-never-on-a-command-line"));
    EXPECT_FALSE(mentions(launch->spec.argv, "/opt/bin"));
    EXPECT_FALSE(mentions(launch->spec.argv, "API_KEY"));
    EXPECT_TRUE(mentions(launch->spec.argv, "/usr/local/bin:/usr/bin"))
        << "the base PATH is bwrap's";
    ASSERT_EQ(launch->env_fd, 3) << "the first descriptor given when there is no status pipe";
    auto given = std::find_if(launch->spec.extra_fds.begin(), launch->spec.extra_fds.end(),
                              [](const ExtraFd& f) { return f.child_fd == 3; });
    ASSERT_NE(given, launch->spec.extra_fds.end());
    auto text = read_all(given->parent_fd, 1 << 20);
    ASSERT_TRUE(text) << text.error().message();
    EXPECT_EQ(*text, env_block(extra));
}

TEST_F(Launching, NoExtraEnvironmentNoDescriptor) {
    auto pipe = Pipe::make();
    ASSERT_TRUE(pipe);
    auto launch = prepare_launch(m_config, {}, pipe->write.get());
    ASSERT_TRUE(launch) << launch.error().message();
    EXPECT_EQ(launch->env_fd, -1);
}

TEST(DockerReadsItself, ItsOwnSettingsAndTheLoadersButNotTheCommands) {
    for (const char* name : {"PATH", "HOME", "XDG_RUNTIME_DIR", "DOCKER_HOST", "DOCKER_CONFIG",
                             "LD_PRELOAD", "LD_LIBRARY_PATH", "GCONV_PATH", "GODEBUG",
                             "HTTPS_PROXY", "https_proxy", "No_Proxy", "ALL_PROXY"})
        EXPECT_TRUE(docker_reads_itself(name)) << name;
    for (const char* name : {"API_KEY", "GOOGLE_API_KEY", "GITHUB_TOKEN", "PATHS", "LD", "HOME2",
                             "HTTP_PROXY_USER", "GREETING"})
        EXPECT_FALSE(docker_reads_itself(name)) << name;
}

TEST(DockerRunEnv, TheValuesDockerIsToldByNameAndNothingOfItsOwnReplaced) {
    ::setenv("DOCKER_HOST", "unix:///run/test.sock", 1);
    proto::ExecRequest r;
    r.command = "true";
    r.env = {{"API_KEY", "k1"}, {"DOCKER_HOST", "tcp://elsewhere:2375"}, {"EMPTY", ""}};
    Strings env = docker_run_env(r);
    ::unsetenv("DOCKER_HOST");
    EXPECT_NE(std::find(env.begin(), env.end(), "API_KEY=k1"), env.end());
    EXPECT_NE(std::find(env.begin(), env.end(), "EMPTY="), env.end());
    EXPECT_NE(std::find(env.begin(), env.end(), "DOCKER_HOST=unix:///run/test.sock"), env.end());
    EXPECT_FALSE(mentions(env, "elsewhere")) << "a request does not move docker to another engine";
}

} // namespace
} // namespace sion::sandboxd
