// SPDX-License-Identifier: MIT
// The Docker backend: its `docker run` command line flag by flag, the requests it refuses before
// docker runs, and, against a real engine (tests/e2e/t0110-sandbox-docker.sh starts one with
// scripts/docker-test-env and runs this program with SION_TEST_IMAGE set), the seed's transcript,
// limits, time limit, output cap, exit statuses and docker's own failures.
//
// The DockerEngine tests exist only when SION_TEST_IMAGE names an image on the engine DOCKER_HOST
// reaches: they are registered at start-up, so CTest's discovery never lists them and they never
// show as skipped.
#include "lib/child.hpp"
#include "sandboxd/docker.hpp"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <optional>
#include <regex>
#include <set>
#include <string>
#include <thread>
#include <vector>

namespace sion::sandboxd {
namespace {

namespace fs = std::filesystem;
using namespace std::chrono_literals;

const std::string k_image = "127.0.0.1:5000/sion-test/busybox@sha256:" + std::string(64, 'a');

Config docker_config(const std::string& workspace = "/home/ada/work") {
    Config c;
    c.workspace = workspace;
    c.backend = BackendKind::docker;
    c.image = k_image;
    return c;
}

proto::ExecRequest shell(const std::string& command) {
    proto::ExecRequest r;
    r.command = command;
    return r;
}

std::vector<std::string> argv_of(const Config& c, const proto::ExecRequest& r) {
    return docker_run_argv(c, r, {1000, 1001, c.workspace, "sion-1-1-00000000", ""});
}

// The options before "--", as they are given.
std::vector<std::string> options(const std::vector<std::string>& argv) {
    auto end = std::find(argv.begin(), argv.end(), "--");
    return {argv.begin(), end};
}

// The value of every `flag VALUE` among the options, in order.
std::vector<std::string> values(const std::vector<std::string>& argv, const std::string& flag) {
    std::vector<std::string> opts = options(argv);
    std::vector<std::string> found;
    for (size_t i = 0; i + 1 < opts.size(); ++i)
        if (opts[i] == flag)
            found.push_back(opts[++i]);
    return found;
}

std::string value(const std::vector<std::string>& argv, const std::string& flag) {
    std::vector<std::string> v = values(argv, flag);
    EXPECT_EQ(v.size(), 1U) << flag << " is given " << v.size() << " times";
    return v.empty() ? std::string() : v.front();
}

bool has_flag(const std::vector<std::string>& argv, const std::string& flag) {
    std::vector<std::string> opts = options(argv);
    return std::find(opts.begin(), opts.end(), flag) != opts.end();
}

// What follows "--": the image, then the command.
std::vector<std::string> after_options(const std::vector<std::string>& argv) {
    auto end = std::find(argv.begin(), argv.end(), "--");
    return end == argv.end() ? std::vector<std::string>{}
                             : std::vector<std::string>(end + 1, argv.end());
}

TEST(DockerArgv, IsDockerRunRemovedInteractiveWithAnInit) {
    auto argv = argv_of(docker_config(), shell("true"));
    ASSERT_GE(argv.size(), 4U);
    EXPECT_EQ(argv[0], "docker");
    EXPECT_EQ(argv[1], "run");
    EXPECT_TRUE(has_flag(argv, "--rm"));
    EXPECT_TRUE(has_flag(argv, "-i"));
    EXPECT_TRUE(has_flag(argv, "--init"));
    EXPECT_FALSE(has_flag(argv, "-t")) << "no terminal: stdout and stderr stay apart";
}

TEST(DockerArgv, NeverPullsAndKeepsNoLog) {
    auto argv = argv_of(docker_config(), shell("true"));
    EXPECT_EQ(value(argv, "--pull"), "never");
    EXPECT_EQ(value(argv, "--log-driver"), "none");
}

TEST(DockerArgv, LabelsWithTheRuntimesPidAndNames) {
    auto argv = argv_of(docker_config(), shell("true"));
    EXPECT_EQ(value(argv, "--label"), "sion-sandbox=" + std::to_string(::getpid()));
    EXPECT_EQ(value(argv, "--name"), "sion-1-1-00000000");
}

TEST(DockerArgv, ReadOnlyRootAsTheGivenUser) {
    auto argv = argv_of(docker_config(), shell("true"));
    EXPECT_TRUE(has_flag(argv, "--read-only"));
    EXPECT_EQ(value(argv, "--user"), "1000:1001");
    EXPECT_EQ(
        value(docker_run_argv(docker_config(), shell("true"), {0, 0, "/w", "n", ""}), "--user"),
        "0:0");
}

TEST(DockerArgv, NoCapabilitiesNoNewPrivileges) {
    auto argv = argv_of(docker_config(), shell("true"));
    EXPECT_EQ(value(argv, "--cap-drop"), "ALL");
    EXPECT_FALSE(has_flag(argv, "--cap-add"));
    EXPECT_FALSE(has_flag(argv, "--privileged"));
    EXPECT_EQ(value(argv, "--security-opt"), "no-new-privileges");
}

TEST(DockerArgv, MemoryAndNoSwapFromLimits) {
    auto argv = argv_of(docker_config(), shell("true"));
    EXPECT_EQ(value(argv, "--memory"), "4294967296"); // 4 GiB
    EXPECT_EQ(value(argv, "--memory-swap"), "4294967296");
    Config small = docker_config();
    small.limits.memory = uint64_t{64} << 20;
    auto argv2 = argv_of(small, shell("true"));
    EXPECT_EQ(value(argv2, "--memory"), "67108864");
    EXPECT_EQ(value(argv2, "--memory-swap"), "67108864");
}

TEST(DockerArgv, ProcessesCpusAndTmp) {
    auto argv = argv_of(docker_config(), shell("true"));
    EXPECT_EQ(value(argv, "--pids-limit"), "256");
    EXPECT_EQ(value(argv, "--cpus"), "2");
    std::string tmp = value(argv, "--tmpfs");
    EXPECT_EQ(tmp.substr(0, 5), "/tmp:");
    for (const char* opt : {"rw", "size=256m", "mode=1777", "nosuid", "nodev", "exec"})
        EXPECT_NE(("," + tmp.substr(5) + ",").find(std::string(",") + opt + ","), std::string::npos)
            << opt << " in " << tmp;
}

TEST(DockerArgv, WorkspaceIsBoundAtSlashWorkspaceAndIsTheWorkingDirectory) {
    auto argv = argv_of(docker_config("/home/ada/work"), shell("true"));
    EXPECT_EQ(value(argv, "--mount"), "type=bind,src=/home/ada/work,dst=/workspace");
    EXPECT_EQ(value(argv, "--workdir"), "/workspace");
    EXPECT_FALSE(has_flag(argv, "-v")) << "-v would create a missing workspace as root";
    EXPECT_FALSE(has_flag(argv, "--volume"));
}

TEST(DockerArgv, AWorkspaceWithACommaOrQuoteIsOneQuotedField) {
    auto argv = argv_of(docker_config("/home/ada/a,b \"c\""), shell("true"));
    EXPECT_EQ(value(argv, "--mount"), "type=bind,\"src=/home/ada/a,b \"\"c\"\"\",dst=/workspace");
}

TEST(DockerArgv, NetworkIsNoneOrTheNamedOne) {
    EXPECT_EQ(value(argv_of(docker_config(), shell("true")), "--network"), "none");
    Config named = docker_config();
    ASSERT_TRUE(parse_network(named, "sion-egress"));
    EXPECT_EQ(value(argv_of(named, shell("true")), "--network"), "sion-egress");
    Config none = docker_config();
    ASSERT_TRUE(parse_network(none, "none"));
    EXPECT_EQ(value(argv_of(none, shell("true")), "--network"), "none");
}

TEST(DockerArgv, CpuSecondsAndFileSizeAreUlimits) {
    auto argv = argv_of(docker_config(), shell("true"));
    EXPECT_EQ(values(argv, "--ulimit"),
              (std::vector<std::string>{"cpu=120:120", "fsize=536870912:536870912"}));
    Config c = docker_config();
    c.limits.cpu = 7s;
    c.limits.file_size = 4096;
    EXPECT_EQ(values(argv_of(c, shell("true")), "--ulimit"),
              (std::vector<std::string>{"cpu=7:7", "fsize=4096:4096"}));
}

TEST(DockerArgv, HomeIsTheWorkspaceAndTheRequestsVariablesFollowByName) {
    proto::ExecRequest r = shell("true");
    r.env = {{"GREETING", "hello world"}, {"HOME", "/elsewhere"}, {"EMPTY", ""}};
    // Values docker reads from its own environment (docker_run_env()), off the command line; but
    // HOME, which docker reads for itself.
    EXPECT_EQ(
        values(argv_of(docker_config(), r), "--env"),
        (std::vector<std::string>{"HOME=/workspace", "GREETING", "HOME=/elsewhere", "EMPTY"}));
}

TEST(DockerArgv, AShellStringRunsWithBinShAfterTheImage) {
    auto argv = argv_of(docker_config(), shell("echo hi; ls -la"));
    EXPECT_EQ(value(argv, "--entrypoint"), "") << "the image's entrypoint would get our command";
    EXPECT_EQ(after_options(argv),
              (std::vector<std::string>{k_image, "/bin/sh", "-c", "echo hi; ls -la"}));
}

TEST(DockerArgv, AnArgvIsPassedAsItIs) {
    proto::ExecRequest r;
    r.argv = {"ls", "-la", "--", "a b", "$HOME"};
    EXPECT_EQ(after_options(argv_of(docker_config(), r)),
              (std::vector<std::string>{k_image, "ls", "-la", "--", "a b", "$HOME"}));
}

TEST(DockerArgv, ACommandOrImageThatLooksLikeAnOptionStaysAfterTheDoubleDash) {
    Config c = docker_config();
    c.image = "--privileged@sha256:" + std::string(64, 'b');
    proto::ExecRequest r;
    r.argv = {"--rm", "-v"};
    auto argv = argv_of(c, r);
    EXPECT_FALSE(has_flag(argv, "--privileged@sha256:" + std::string(64, 'b')));
    EXPECT_EQ(after_options(argv), (std::vector<std::string>{c.image, "--rm", "-v"}));
    // Exactly one "--" among docker's arguments: the one before the image.
    auto opts = options(argv);
    EXPECT_EQ(std::count(opts.begin(), opts.end(), "--"), 0);
}

TEST(DockerArgv, EveryOptionTakesItsValueAsTheNextArgument) {
    // No "--flag=value" forms, and nothing but options before "--": what the tests above look at
    // is what docker reads.
    auto argv = options(argv_of(docker_config(), shell("true")));
    const std::set<std::string> switches = {"--rm", "-i", "--init", "--read-only"};
    for (size_t i = 2; i < argv.size(); ++i) {
        ASSERT_EQ(argv[i].substr(0, 1), "-") << "argument " << i << ": " << argv[i];
        EXPECT_EQ(argv[i].find('='), std::string::npos) << argv[i];
        if (switches.count(argv[i]) == 0)
            ++i;
    }
}

TEST(DockerName, IsUniqueAndAValidContainerName) {
    std::set<std::string> names;
    const std::regex valid("[a-zA-Z0-9][a-zA-Z0-9_.-]+");
    for (int i = 0; i < 100; ++i) {
        std::string name = docker_container_name();
        EXPECT_TRUE(std::regex_match(name, valid)) << name;
        EXPECT_EQ(name.rfind("sion-" + std::to_string(::getpid()) + "-", 0), 0U) << name;
        names.insert(name);
    }
    EXPECT_EQ(names.size(), 100U);
}

// docker run's words as docker 20.10 (Debian 12) and 28 print them.
TEST(DockerRunFailure, ReadsDockersOwnMessage) {
    struct Case {
        std::string err;
        std::optional<std::string> want;
    };

    const std::string image = "127.0.0.1:5000/x@sha256:" + std::string(64, '1');
    for (const Case& c : std::vector<Case>{
             // 20.10, an error in creating the container: the usage trailer follows.
             {"docker: Error response from daemon: No such image: " + image
                  + ".\nSee 'docker run --help'.\n",
              "Error response from daemon: No such image: " + image},
             // 28: a blank line, then the trailer.
             {"docker: Error response from daemon: No such image: " + image
                  + "\n\nRun 'docker run --help' for more information\n",
              "Error response from daemon: No such image: " + image},
             // 20.10, an error in starting it: no trailer, sometimes a log line of the CLI's.
             {"docker: Error response from daemon: network n not found.\n",
              "Error response from daemon: network n not found"},
             {"docker: Error response from daemon: network n not "
              "found.\ntime=\"2026-11-30T00:21:49Z\" "
              "level=error msg=\"error waiting for container: context canceled\"\n",
              "Error response from daemon: network n not found"},
             {"docker: Cannot connect to the Docker daemon at unix:///x. Is the docker daemon "
              "running?\n"
              "ERRO[0000] error waiting for container: context canceled\n",
              "Cannot connect to the Docker daemon at unix:///x. Is the docker daemon running?"},
             // docker's usage errors: the first line.
             {"unknown flag: --bogus\n\nUsage:  docker run [OPTIONS] IMAGE [COMMAND] [ARG...]\n\n"
              "Run 'docker run --help' for more information\n",
              "unknown flag: --bogus"},
             // A command's own stderr, and its own 125.
             {"", std::nullopt},
             {"err\n", std::nullopt},
             {"tar: docker: no such file\n", std::nullopt},
             {"docker: is what I say\nbut not last\n", std::nullopt},
         }) {
        EXPECT_EQ(docker_run_failure(c.err), c.want) << c.err;
    }
}

// Refusals that come before docker runs: no engine needed.
class DockerRefuses : public testing::Test {
protected:
    void SetUp() override {
        m_dir = fs::temp_directory_path() / ("sion-docker-unit-" + std::to_string(::getpid()));
        fs::create_directories(m_dir);
    }

    void TearDown() override { fs::remove_all(m_dir); }

    fs::path m_dir;
};

TEST_F(DockerRefuses, NothingToRunOrBoth) {
    Config c = docker_config(m_dir);
    auto none = docker_exec(c, proto::ExecRequest{});
    ASSERT_FALSE(none);
    EXPECT_EQ(none.error().exit(), Exit::data);
    EXPECT_EQ(none.error().message(), "nothing to run: give a command or an argv");
    proto::ExecRequest both = shell("true");
    both.argv = {"true"};
    auto two = docker_exec(c, both);
    ASSERT_FALSE(two);
    EXPECT_EQ(two.error().exit(), Exit::data);
    EXPECT_EQ(two.error().message(), "give a command or an argv, not both");
}

TEST_F(DockerRefuses, AVariableNameThatIsNotOne) {
    for (const char* name : {"", "A=B", "1X", "A B", "A-B"}) {
        proto::ExecRequest r = shell("true");
        r.env = {{name, "v"}};
        auto result = docker_exec(docker_config(m_dir), r);
        ASSERT_FALSE(result) << name;
        EXPECT_EQ(result.error().exit(), Exit::data);
        EXPECT_EQ(result.error().message(),
                  "'" + std::string(name) + "' is not an environment variable name");
    }
}

TEST_F(DockerRefuses, AWorkspaceThatIsNotThere) {
    auto missing = docker_exec(docker_config(m_dir / "nope"), shell("true"));
    ASSERT_FALSE(missing);
    EXPECT_EQ(missing.error().exit(), Exit::no_input);
    EXPECT_EQ(missing.error().message(), "cannot use the workspace '" + (m_dir / "nope").string()
                                             + "': No such file or directory");
    std::ofstream(m_dir / "file") << "x";
    auto file = docker_exec(docker_config(m_dir / "file"), shell("true"));
    ASSERT_FALSE(file);
    EXPECT_EQ(file.error().exit(), Exit::no_input);
    EXPECT_EQ(file.error().message(),
              "cannot use the workspace '" + (m_dir / "file").string() + "': Not a directory");
}

TEST_F(DockerRefuses, TheBubblewrapBackend) {
    Config c = docker_config(m_dir);
    c.backend = BackendKind::bwrap;
    auto r = docker_exec(c, shell("true"));
    ASSERT_FALSE(r);
    EXPECT_EQ(r.error().exit(), Exit::software);
}

// Sets an environment variable for one test and puts it back.
class ScopedEnv {
public:
    ScopedEnv(const char* name, const std::string& value) : m_name(name) {
        if (const char* old = std::getenv(name))
            m_old = old;
        ::setenv(name, value.c_str(), 1);
    }

    ~ScopedEnv() {
        if (m_old)
            ::setenv(m_name, m_old->c_str(), 1);
        else
            ::unsetenv(m_name);
    }

    ScopedEnv(const ScopedEnv&) = delete;
    ScopedEnv& operator=(const ScopedEnv&) = delete;
    ScopedEnv(ScopedEnv&&) = delete;
    ScopedEnv& operator=(ScopedEnv&&) = delete;

private:
    const char* m_name;
    std::optional<std::string> m_old;
};

TEST_F(DockerRefuses, NoDockerCommandNamesThePackage) {
    ScopedEnv path("PATH", m_dir.string()); // a PATH without docker
    Status ready = docker_engine_ready();
    ASSERT_FALSE(ready);
    EXPECT_EQ(ready.error().exit(), Exit::unavailable);
    EXPECT_EQ(ready.error().message(), "docker is not installed: install Debian's docker.io");
    auto run = docker_exec(docker_config(m_dir), shell("true"));
    ASSERT_FALSE(run);
    EXPECT_EQ(run.error().message(), "docker is not installed: install Debian's docker.io");
    Status image = docker_image_present(k_image);
    ASSERT_FALSE(image);
    EXPECT_EQ(image.error().message(), "docker is not installed: install Debian's docker.io");
}

bool docker_installed() {
    ChildSpec spec;
    spec.argv = {"docker", "--version"};
    spec.env = env_keep({"PATH", "HOME"});
    spec.time_limit = 10s;
    auto r = run(spec, {});
    return r && r->status == 0;
}

TEST_F(DockerRefuses, AnEngineThatDoesNotAnswerNamesTheFix) {
    std::string host = "unix://" + (m_dir / "nothing.sock").string();
    ScopedEnv docker_host("DOCKER_HOST", host);
    Status ready = docker_engine_ready();
    ASSERT_FALSE(ready);
    EXPECT_EQ(ready.error().exit(), Exit::unavailable);
    if (!docker_installed()) { // the other half of this test is NoDockerCommandNamesThePackage's
        EXPECT_EQ(ready.error().message(), "docker is not installed: install Debian's docker.io");
        return;
    }
    const std::string want =
        "no Docker engine answers at '" + host
        + "': start it (systemctl start docker), or install Debian's docker.io";
    EXPECT_EQ(ready.error().message(), want);
    Status image = docker_image_present(k_image);
    ASSERT_FALSE(image);
    EXPECT_EQ(image.error().message(), want);
    auto r = docker_exec(docker_config(m_dir), shell("true"));
    ASSERT_FALSE(r);
    EXPECT_EQ(r.error().exit(), Exit::unavailable);
    EXPECT_EQ(r.error().message(), want);
}

// --- against a real engine --------------------------------------------------------------------

const char* test_image() {
    return std::getenv("SION_TEST_IMAGE");
}

// A command of the test's own against the engine: docker ps and the like.
std::string docker_says(const std::vector<std::string>& args) {
    ChildSpec spec;
    spec.argv = {"docker"};
    spec.argv.insert(spec.argv.end(), args.begin(), args.end());
    spec.env = env_keep({"PATH", "HOME", "DOCKER_HOST"});
    spec.time_limit = 30s;
    auto r = run(spec, {});
    EXPECT_TRUE(r) << r.error().message();
    if (!r)
        return {};
    EXPECT_EQ(r->status, 0) << r->err;
    return r->out;
}

std::string ours_running() {
    return docker_says(
        {"ps", "-q", "--filter", "label=sion-sandbox=" + std::to_string(::getpid())});
}

class DockerEngine : public testing::Test {
protected:
    void SetUp() override {
        m_dir = fs::temp_directory_path() / ("sion-docker-engine-" + std::to_string(::getpid()));
        fs::remove_all(m_dir);
        fs::create_directories(m_dir / "work");
        m_owner = ::getuid();
        // As root, the workspace belongs to someone else, who the container must run as.
        if (m_owner == 0)
            m_owner = 4321;
        std::ofstream(m_dir / "work" / "hello.txt") << "from the workspace\n";
        for (const fs::path& p : {m_dir / "work", m_dir / "work" / "hello.txt"})
            ASSERT_EQ(::chown(p.c_str(), m_owner, m_owner), 0) << p;
        m_config.workspace = (m_dir / "work").string();
        ASSERT_TRUE(parse_backend(m_config, std::string("docker:") + test_image()));
    }

    void TearDown() override {
        EXPECT_EQ(ours_running(), "") << "a container of this test still runs";
        fs::remove_all(m_dir);
    }

    proto::ExecResult ok(const proto::ExecRequest& request) {
        auto r = docker_exec(m_config, request);
        EXPECT_TRUE(r) << r.error().message();
        return r ? *r : proto::ExecResult{};
    }

    proto::ExecResult ok(const std::string& command) { return ok(shell(command)); }

    fs::path m_dir;
    uid_t m_owner = 0;
    Config m_config;
};

class EngineCase : public DockerEngine {
public:
    using Body = void (*)(EngineCase&);

    explicit EngineCase(Body body) : m_body(body) {}

    void TestBody() override { m_body(*this); }

    using DockerEngine::m_config;
    using DockerEngine::m_dir;
    using DockerEngine::m_owner;
    using DockerEngine::ok;

private:
    Body m_body;
};

// The seed's Docker transcript, on the busybox image: the owner's uid, a workspace file read, one
// written that belongs to the owner outside, and no network.
void transcript(EngineCase& t) {
    proto::ExecResult r = t.ok("id -u; cat hello.txt; echo made > made.txt; "
                               "wget -q -O - http://example.com 2>&1 | head -n 1");
    EXPECT_EQ(r.exit, 0) << r.stderr_text;
    EXPECT_EQ(r.stdout_text, std::to_string(t.m_owner)
                                 + "\nfrom the workspace\nwget: bad address 'example.com'\n");

    struct stat st {};

    fs::path made = t.m_dir / "work" / "made.txt";
    ASSERT_EQ(::stat(made.c_str(), &st), 0);
    EXPECT_EQ(st.st_uid, t.m_owner);
    EXPECT_EQ(st.st_gid, t.m_owner);
    std::ifstream in(made);
    std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    EXPECT_EQ(text, "made\n");
}

void engine_and_image_are_there(EngineCase& t) {
    Status ready = docker_engine_ready();
    EXPECT_TRUE(ready) << ready.error().message();
    Status present = docker_image_present(t.m_config.image);
    EXPECT_TRUE(present) << present.error().message();
}

void what_a_command_sees(EngineCase& t) {
    proto::ExecResult r =
        t.ok("echo home=$HOME; pwd; touch /bin/x /x 2>&1; echo tmp > /tmp/t && cat /tmp/t; "
             "grep -E '^(CapEff|CapPrm|NoNewPrivs)' /proc/self/status; "
             "grep -E '^Max (cpu time|file size|processes)' /proc/self/limits");
    EXPECT_EQ(r.exit, 0) << r.stderr_text;
    const std::string want_start = "home=/workspace\n/workspace\n"
                                   "touch: /bin/x: Read-only file system\n"
                                   "touch: /x: Read-only file system\n"
                                   "tmp\n";
    EXPECT_EQ(r.stdout_text.substr(0, want_start.size()), want_start) << r.stdout_text;
    EXPECT_NE(r.stdout_text.find("CapPrm:\t0000000000000000\n"), std::string::npos)
        << r.stdout_text;
    EXPECT_NE(r.stdout_text.find("CapEff:\t0000000000000000\n"), std::string::npos)
        << r.stdout_text;
    EXPECT_NE(r.stdout_text.find("NoNewPrivs:\t1\n"), std::string::npos) << r.stdout_text;
    EXPECT_TRUE(std::regex_search(r.stdout_text, std::regex("Max cpu time +120 +120 +seconds")))
        << r.stdout_text;
    EXPECT_TRUE(
        std::regex_search(r.stdout_text, std::regex("Max file size +536870912 +536870912 +bytes")))
        << r.stdout_text;
    // /tmp is 256 MiB, and its own.
    proto::ExecResult df = t.ok("df -k /tmp | tail -n 1");
    EXPECT_TRUE(std::regex_search(df.stdout_text, std::regex("^tmpfs +262144 "))) << df.stdout_text;
}

void exit_statuses_pass_through(EngineCase& t) {
    EXPECT_EQ(t.ok("exit 3").exit, 3);
    // A command's own 125 is its status, not docker failing.
    proto::ExecResult own = t.ok("echo out; echo err >&2; exit 125");
    EXPECT_EQ(own.exit, 125);
    EXPECT_EQ(own.stdout_text, "out\n");
    EXPECT_EQ(own.stderr_text, "err\n");
    EXPECT_EQ(t.ok("nosuchprogram").exit, 127);
    proto::ExecRequest missing;
    missing.argv = {"nosuchprogram", "x"};
    proto::ExecResult r = t.ok(missing);
    EXPECT_EQ(r.exit, 127);
    EXPECT_NE(r.stderr_text.find("nosuchprogram"), std::string::npos) << r.stderr_text;
    EXPECT_EQ(r.stderr_text.find("docker run --help"), std::string::npos) << r.stderr_text;
    proto::ExecRequest not_a_program;
    not_a_program.argv = {"/etc/passwd"};
    EXPECT_EQ(t.ok(not_a_program).exit, 126);
    proto::ExecResult killed = t.ok("kill -9 $$");
    EXPECT_EQ(killed.exit, 137);
    EXPECT_EQ(killed.signal, 9);
    EXPECT_FALSE(killed.timed_out);
}

void an_argv_is_not_a_shell_string(EngineCase& t) {
    proto::ExecRequest r;
    r.argv = {"echo", "$HOME", "a  b", ";", "id"};
    proto::ExecResult out = t.ok(r);
    EXPECT_EQ(out.exit, 0);
    EXPECT_EQ(out.stdout_text, "$HOME a  b ; id\n");
}

void stdin_and_variables(EngineCase& t) {
    proto::ExecRequest r = shell("cat; echo \"[$GREETING]\"");
    r.input = "line one\nline two\n";
    r.env = {{"GREETING", "hello there"}};
    proto::ExecResult out = t.ok(r);
    EXPECT_EQ(out.exit, 0) << out.stderr_text;
    EXPECT_EQ(out.stdout_text, "line one\nline two\n[hello there]\n");
    proto::ExecRequest big = shell("wc -c");
    big.input = std::string(3 << 20, 'x');
    EXPECT_EQ(t.ok(big).stdout_text, "3145728\n");
    proto::ExecResult none = t.ok("cat; echo end");
    EXPECT_EQ(none.stdout_text, "end\n") << "no input is an empty stdin";
}

void the_time_limit_kills_the_container(EngineCase& t) {
    proto::ExecRequest r = shell("echo started; sleep 60");
    r.timeout = 2s;
    auto started = std::chrono::steady_clock::now();
    proto::ExecResult out = t.ok(r);
    auto took = std::chrono::steady_clock::now() - started;
    EXPECT_TRUE(out.timed_out);
    EXPECT_EQ(out.exit, 124);
    EXPECT_EQ(out.signal, 9);
    EXPECT_GE(out.wall_ms, 2000);
    EXPECT_LT(took, 15s);
    EXPECT_EQ(out.stdout_text, "started\n");
    EXPECT_EQ(ours_running(), "") << "killing docker run must not leave its container running";
    // A session's limit bounds a request's.
    t.m_config.limits.timeout = 1s;
    proto::ExecRequest longer = shell("sleep 60");
    longer.timeout = 30s;
    proto::ExecResult cut = t.ok(longer);
    EXPECT_TRUE(cut.timed_out);
    EXPECT_LT(cut.wall_ms, 10000);
    EXPECT_EQ(t.ok("echo next").stdout_text, "next\n");
}

void a_very_short_time_limit_leaves_nothing(EngineCase& t) {
    // Out of time before the container exists, or while it is made: none is left, started or not.
    for (auto limit : {1ms, 50ms, 150ms, 300ms}) {
        proto::ExecRequest r = shell("sleep 30");
        r.timeout = limit;
        proto::ExecResult out = t.ok(r);
        EXPECT_TRUE(out.timed_out) << limit.count() << " ms";
    }
    std::string left;
    for (int i = 0; i < 30; ++i) {
        left = docker_says(
            {"ps", "-a", "-q", "--filter", "label=sion-sandbox=" + std::to_string(::getpid())});
        if (left.empty())
            break;
        std::this_thread::sleep_for(100ms);
    }
    EXPECT_EQ(left, "") << "containers left, running or not";
}

void containers_carry_the_label(EngineCase& t) {
    std::thread slow([&t] {
        proto::ExecResult r = t.ok("sleep 3");
        EXPECT_EQ(r.exit, 0);
    });
    std::string seen;
    for (int i = 0; i < 50 && seen.empty(); ++i) {
        std::this_thread::sleep_for(100ms);
        seen = ours_running();
    }
    slow.join();
    EXPECT_NE(seen, "") << "no container labelled sion-sandbox=" << ::getpid() << " while one ran";
}

void output_is_cut_at_the_cap(EngineCase& t) {
    t.m_config.limits.output = 1000;
    proto::ExecResult r = t.ok("head -c 100000 /dev/zero | tr '\\0' x; echo done >&2");
    EXPECT_EQ(r.exit, 0);
    EXPECT_TRUE(r.truncated);
    EXPECT_EQ(r.stdout_text, std::string(1000, 'x') + "\n[... 99000 more bytes cut]\n");
    EXPECT_EQ(r.stderr_text, "done\n");
    // A flood ends and is counted whole.
    t.m_config.limits.output = 65536;
    proto::ExecResult flood = t.ok("head -c 200000000 /dev/zero");
    EXPECT_EQ(flood.exit, 0);
    EXPECT_TRUE(flood.truncated);
    EXPECT_NE(flood.stdout_text.find("[... 199934464 more bytes cut]\n"), std::string::npos);
}

void the_memory_limit_kills(EngineCase& t) {
    t.m_config.limits.memory = uint64_t{64} << 20;
    proto::ExecResult r = t.ok("x=$(head -c 200000000 /dev/zero | tr '\\0' a); echo ${#x}");
    EXPECT_EQ(r.exit, 137) << r.stdout_text << r.stderr_text;
    EXPECT_EQ(r.signal, 9);
    EXPECT_EQ(r.stdout_text, "");
}

void the_file_size_limit_holds(EngineCase& t) {
    t.m_config.limits.file_size = 1 << 20;
    proto::ExecResult r =
        t.ok("head -c 3000000 /dev/zero > big; echo status=$?; wc -c < big; rm big");
    EXPECT_EQ(r.exit, 0) << r.stderr_text;
    EXPECT_EQ(r.stdout_text, "status=153\n1048576\n"); // 128 + SIGXFSZ
}

void processes_are_bounded(EngineCase& t) {
    // 200 sleepers fit under 256 processes; 300 do not, and the shell cannot fork.
    proto::ExecResult fits =
        t.ok("i=0; while [ $i -lt 200 ]; do sleep 3 & i=$((i+1)); done; echo all started");
    EXPECT_EQ(fits.stdout_text, "all started\n") << fits.stderr_text;
    proto::ExecResult over =
        t.ok("i=0; while [ $i -lt 300 ]; do sleep 3 & i=$((i+1)); done; echo all started");
    EXPECT_NE(over.exit, 0);
    EXPECT_EQ(over.stdout_text, "");
    EXPECT_NE(over.stderr_text.find("can't fork"), std::string::npos) << over.stderr_text;
}

void a_fork_bomb_ends(EngineCase& t) {
    proto::ExecRequest bomb = shell("b() { b | b & }; b; sleep 5; echo survived");
    bomb.timeout = 20s;
    auto started = std::chrono::steady_clock::now();
    proto::ExecResult r = t.ok(bomb);
    EXPECT_LT(std::chrono::steady_clock::now() - started, 30s);
    EXPECT_NE(r.stderr_text.find("can't fork"), std::string::npos) << r.stderr_text.substr(0, 500);
    EXPECT_EQ(t.ok("echo next").stdout_text, "next\n");
}

void a_missing_image_is_an_error_not_a_pull(EngineCase& t) {
    std::string image =
        t.m_config.image.substr(0, t.m_config.image.find('@')) + "@sha256:" + std::string(64, '0');
    const std::string want =
        "image '" + image
        + "' is not on this machine: load it first (docker pull or docker load), "
          "sion never pulls";
    Status present = docker_image_present(image);
    ASSERT_FALSE(present);
    EXPECT_EQ(present.error().exit(), Exit::unavailable);
    EXPECT_EQ(present.error().message(), want);
    t.m_config.image = image;
    auto r = docker_exec(t.m_config, shell("true"));
    ASSERT_FALSE(r);
    EXPECT_EQ(r.error().exit(), Exit::unavailable);
    EXPECT_EQ(r.error().message(), want);
    // One that the registry has and this machine has not (the e2e suite pushes it): still no pull.
    if (const char* absent = std::getenv("SION_TEST_ABSENT_IMAGE")) {
        t.m_config.image = absent;
        auto again = docker_exec(t.m_config, shell("true"));
        ASSERT_FALSE(again);
        EXPECT_EQ(again.error().message(), "image '" + std::string(absent)
                                               + "' is not on this machine: load it first (docker "
                                                 "pull or docker load), sion never pulls");
        EXPECT_FALSE(docker_image_present(absent)) << "docker_exec pulled " << absent;
    }
}

void a_network_that_is_not_there(EngineCase& t) {
    ASSERT_TRUE(parse_network(t.m_config, "sion-test-no-such-network"));
    auto r = docker_exec(t.m_config, shell("true"));
    ASSERT_FALSE(r);
    EXPECT_EQ(r.error().exit(), Exit::unavailable);
    EXPECT_EQ(r.error().message(), "docker cannot run the command: Error response from daemon: "
                                   "network sion-test-no-such-network not found");
}

const bool k_engine_tests_registered = [] {
    if (test_image() == nullptr || *test_image() == '\0')
        return false;
    struct Case {
        const char* name;
        EngineCase::Body body;
    };
    for (const Case& c : std::vector<Case>{
             {"EngineAndImageAreThere", engine_and_image_are_there},
             {"SeedTranscript", transcript},
             {"WhatACommandSees", what_a_command_sees},
             {"ExitStatusesPassThrough", exit_statuses_pass_through},
             {"AnArgvIsNotAShellString", an_argv_is_not_a_shell_string},
             {"StdinAndVariables", stdin_and_variables},
             {"TheTimeLimitKillsTheContainer", the_time_limit_kills_the_container},
             {"AVeryShortTimeLimitLeavesNothing", a_very_short_time_limit_leaves_nothing},
             {"ContainersCarryTheLabel", containers_carry_the_label},
             {"OutputIsCutAtTheCap", output_is_cut_at_the_cap},
             {"TheMemoryLimitKills", the_memory_limit_kills},
             {"TheFileSizeLimitHolds", the_file_size_limit_holds},
             {"ProcessesAreBounded", processes_are_bounded},
             {"AForkBombEnds", a_fork_bomb_ends},
             {"AMissingImageIsAnErrorNotAPull", a_missing_image_is_an_error_not_a_pull},
             {"ANetworkThatIsNotThere", a_network_that_is_not_there},
         }) {
        EngineCase::Body body = c.body;
        testing::RegisterTest("DockerEngine", c.name, nullptr, nullptr, __FILE__, __LINE__,
                              [body]() -> DockerEngine* { return new EngineCase(body); });
    }
    return true;
}();

} // namespace
} // namespace sion::sandboxd
