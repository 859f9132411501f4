// SPDX-License-Identifier: MIT
// Tests for sandboxd/run's pure parts: init's arguments, docker run's status read, --env, run's
// options, and the empty workspace made for a command given none. The run itself, attached to
// real bwrap and Docker, is tests/e2e/t0130-sion-sandbox-run.sh's.
#include "sandboxd/bwrap.hpp"
#include "sandboxd/limits.hpp"
#include "sandboxd/mounts.hpp"
#include "sandboxd/run.hpp"

#include <gtest/gtest.h>
#include <sys/stat.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace sion::sandboxd {
namespace {

#define ASSERT_OK(r) ASSERT_TRUE(r) << (r).error().message()

using Strings = std::vector<std::string>;

TEST(RunInitArgv, InitExecReportingOnTheStatusFdThenTheCommand) {
    Limits limits;
    limits.cpu = std::chrono::seconds(7);
    Strings argv = run_init_argv(limits, false, {"-dash", "arg"});
    Strings want = {"--",     k_exe_inside,  "init",
                    "--exec", "--status-fd", std::to_string(k_status_fd)};
    Strings limit_args = limits_to_args(limits);
    want.insert(want.end(), limit_args.begin(), limit_args.end());
    want.insert(want.end(), {"--", "-dash", "arg"});
    EXPECT_EQ(argv, want);
    EXPECT_NE(std::find(argv.begin(), argv.end(), "7"), argv.end());
}

TEST(RunInitArgv, TheForwarderGetsTheProxySocketInside) {
    Strings argv = run_init_argv(Limits{}, true, {"server"});
    auto at = std::find(argv.begin(), argv.end(), "--proxy-socket");
    ASSERT_NE(at, argv.end());
    ASSERT_NE(at + 1, argv.end());
    EXPECT_EQ(*(at + 1), k_proxy_inside);
    // Before the command's "--": it is init's option, not the command's.
    auto command = std::find(at, argv.end(), "--");
    ASSERT_NE(command, argv.end());
    EXPECT_EQ(Strings(command + 1, argv.end()), Strings{"server"});
}

TEST(DockerRunOutcome, StatusesAndSignals) {
    EXPECT_EQ(docker_run_outcome(0).exit, 0);
    EXPECT_FALSE(docker_run_outcome(0).signal);
    EXPECT_EQ(docker_run_outcome(125).exit, 125); // docker's own failure: its message is above
    EXPECT_FALSE(docker_run_outcome(127).signal);
    EXPECT_FALSE(docker_run_outcome(128).signal);
    proto::ExecResult killed = docker_run_outcome(137);
    EXPECT_EQ(killed.exit, 137);
    EXPECT_EQ(killed.signal, 9);
    EXPECT_EQ(docker_run_outcome(143).signal, 15);
    EXPECT_FALSE(docker_run_outcome(255).signal); // an exit code, no signal number
    EXPECT_FALSE(docker_run_outcome(0).timed_out);
}

TEST(NamedEnv, ValuesFromThisEnvironmentUnsetOnesLeftOut) {
    ::setenv("SION_TEST_RUN_A", "a=b c", 1);
    ::setenv("SION_TEST_RUN_EMPTY", "", 1);
    ::unsetenv("SION_TEST_RUN_UNSET");
    auto env = named_env({"SION_TEST_RUN_A", "SION_TEST_RUN_UNSET", "SION_TEST_RUN_EMPTY"});
    ASSERT_OK(env);
    using Pairs = std::vector<std::pair<std::string, std::string>>;
    EXPECT_EQ(*env, (Pairs{{"SION_TEST_RUN_A", "a=b c"}, {"SION_TEST_RUN_EMPTY", ""}}));
    auto none = named_env({});
    ASSERT_OK(none);
    EXPECT_TRUE(none->empty());
}

TEST(NamedEnv, ANameWithEqualsOrNoneIsAUsageError) {
    auto bad = named_env({"OK", "A=B"});
    ASSERT_FALSE(bad);
    EXPECT_EQ(bad.error().exit(), Exit::usage);
    EXPECT_EQ(bad.error().message(), "option '--env' takes a variable's name, not 'A=B'");
    auto empty = named_env({""});
    ASSERT_FALSE(empty);
    EXPECT_EQ(empty.error().exit(), Exit::usage);
}

TEST(RunOptions, ExecsButOutputAndJsonWithEnvAndGrants) {
    std::vector<OptionSpec> run = run_options();
    auto names = [](const std::vector<OptionSpec>& options) {
        Strings out;
        for (const OptionSpec& o : options)
            out.emplace_back(o.name);
        return out;
    };
    Strings got = names(run);
    Strings want;
    for (const std::string& name : names(sandbox_options(false)))
        if (name != "output")
            want.push_back(name);
    want.emplace_back("env");
    want.emplace_back("grants-fd");
    EXPECT_EQ(got, want);
    for (const OptionSpec& o : run) {
        if (std::string_view(o.name) == "timeout") {
            EXPECT_NE(std::string_view(o.help).find("no limit"), std::string_view::npos);
        } else if (std::string_view(o.name) == "env") {
            EXPECT_STREQ(o.arg, "NAME");
        }
    }
}

class ScratchWorkspaceTest : public ::testing::Test {
protected:
    void SetUp() override {
        std::string templ = ::testing::TempDir() + "sion-run-test.XXXXXX";
        ASSERT_NE(::mkdtemp(templ.data()), nullptr);
        m_tmp = templ;
        // NOLINTNEXTLINE(concurrency-mt-unsafe): one thread
        const char* old = std::getenv("TMPDIR");
        m_old = old != nullptr ? std::optional<std::string>(old) : std::nullopt;
        ::setenv("TMPDIR", m_tmp.c_str(), 1);
    }

    void TearDown() override {
        if (m_old)
            ::setenv("TMPDIR", m_old->c_str(), 1);
        else
            ::unsetenv("TMPDIR");
        std::filesystem::remove_all(m_tmp);
    }

    [[nodiscard]] size_t entries() const {
        auto it = std::filesystem::directory_iterator(m_tmp);
        return static_cast<size_t>(std::distance(it, std::filesystem::directory_iterator()));
    }

    std::string m_tmp;
    std::optional<std::string> m_old;
};

TEST_F(ScratchWorkspaceTest, EmptyPrivateAndRemovedWithWhatItHolds) {
    std::string path;
    {
        auto made = ScratchWorkspace::make();
        ASSERT_OK(made);
        path = made->path();
        EXPECT_EQ(path.rfind(std::filesystem::canonical(m_tmp).string() + "/sion-sandbox-run.", 0),
                  0U)
            << path;

        struct stat st {};

        ASSERT_EQ(::stat(path.c_str(), &st), 0);
        EXPECT_TRUE(S_ISDIR(st.st_mode));
        EXPECT_EQ(st.st_mode & 07777, 0700U);
        EXPECT_TRUE(std::filesystem::is_empty(path));
        std::filesystem::create_directories(path + "/a/b");
        std::ofstream(path + "/a/b/file") << "written in the sandbox";
        std::filesystem::create_symlink(m_tmp, path + "/link"); // removed, not followed
        ScratchWorkspace moved(std::move(*made));
        EXPECT_EQ(moved.path(), path);
    }
    EXPECT_FALSE(std::filesystem::exists(path));
    EXPECT_EQ(entries(), 0U);
    EXPECT_TRUE(std::filesystem::exists(m_tmp));
}

TEST_F(ScratchWorkspaceTest, ARelativeTmpdirIsNotUsed) {
    ::setenv("TMPDIR", "relative/dir", 1);
    auto made = ScratchWorkspace::make();
    ASSERT_OK(made);
    EXPECT_EQ(made->path().rfind("/tmp/sion-sandbox-run.", 0), 0U) << made->path();
}

TEST_F(ScratchWorkspaceTest, ATmpdirThatIsNotThereIsAnError) {
    ::setenv("TMPDIR", (m_tmp + "/missing").c_str(), 1);
    auto made = ScratchWorkspace::make();
    ASSERT_FALSE(made);
    EXPECT_EQ(made.error().exit(), Exit::os);
    EXPECT_NE(made.error().message().find("cannot make an empty workspace in '" + m_tmp
                                          + "/missing': No such file or directory"),
              std::string::npos)
        << made.error().message();
}

} // namespace
} // namespace sion::sandboxd
