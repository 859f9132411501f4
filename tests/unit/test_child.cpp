// SPDX-License-Identifier: MIT
// Spawning children: statuses, errors, environment, fds, process groups, time limits, run(),
// resource use (CPU, peak memory, wall clock) and output totals.
#include "lib/child.hpp"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <poll.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <csignal>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <random>
#include <string>
#include <thread>
#include <vector>

namespace sion {
namespace {

namespace fs = std::filesystem;
using namespace std::chrono_literals;

ChildSpec spec_of(std::vector<std::string> argv) {
    ChildSpec spec;
    spec.argv = std::move(argv);
    spec.env = env_keep({"PATH"});
    return spec;
}

RunResult run_ok(const ChildSpec& spec, std::string_view input = {},
                 size_t limit = k_default_output_limit) {
    auto r = run(spec, input, limit);
    EXPECT_TRUE(r) << r.error().message();
    return r ? *r : RunResult{};
}

std::string random_bytes(size_t n) {
    std::mt19937 gen(42);
    std::string s(n, '\0');
    for (char& c : s)
        c = static_cast<char>(gen() & 0xff);
    return s;
}

// A fresh directory, removed with what is in it at the end of the test.
class TempDir {
public:
    TempDir() {
        std::string pattern = (fs::temp_directory_path() / "sion-test-child-XXXXXX").string();
        EXPECT_NE(::mkdtemp(pattern.data()), nullptr);
        m_path = fs::canonical(pattern);
    }

    ~TempDir() {
        std::error_code ec;
        fs::remove_all(m_path, ec);
    }

    TempDir(const TempDir&) = delete;
    TempDir& operator=(const TempDir&) = delete;
    TempDir(TempDir&&) = delete;
    TempDir& operator=(TempDir&&) = delete;

    [[nodiscard]] const fs::path& path() const { return m_path; }

    // Writes the file `name` in the directory, with `perms`.
    void write(const std::string& name, const std::string& text, fs::perms perms) const {
        fs::path p = m_path / name;
        std::ofstream(p) << text;
        fs::permissions(p, perms);
    }

private:
    fs::path m_path;
};

// Reads one line from a blocking fd, without the newline.
std::string read_line(int fd) {
    std::string line;
    char c = 0;
    while (::read(fd, &c, 1) == 1 && c != '\n')
        line += c;
    return line;
}

// True once `pid` no longer runs: gone, or a zombie its new parent has not reaped yet. Waits for
// the kernel to deliver the kill, but never decides anything from how long that takes.
bool gone_eventually(pid_t pid) {
    for (int i = 0; i < 30000; ++i) {
        if (::kill(pid, 0) != 0 && errno == ESRCH)
            return true;
        std::ifstream stat("/proc/" + std::to_string(pid) + "/stat");
        std::string text((std::istreambuf_iterator<char>(stat)), std::istreambuf_iterator<char>());
        size_t paren = text.rfind(')');
        if (paren != std::string::npos && paren + 2 < text.size()
            && (text[paren + 2] == 'Z' || text[paren + 2] == 'X'))
            return true;
        std::this_thread::sleep_for(1ms);
    }
    return false;
}

std::vector<int> open_fds(pid_t pid) {
    std::vector<int> fds;
    for (const auto& entry : fs::directory_iterator("/proc/" + std::to_string(pid) + "/fd"))
        fds.push_back(std::stoi(entry.path().filename().string()));
    std::sort(fds.begin(), fds.end());
    return fds;
}

std::string status_line(const std::string& status, const std::string& key) {
    size_t at = status.find("\n" + key + ":");
    if (at == std::string::npos)
        return {};
    size_t start = status.find_first_not_of(" \t", at + key.size() + 2);
    return status.substr(start, status.find('\n', start) - start);
}

TEST(Child, ExitCodes) {
    RunResult ok = run_ok(spec_of({"true"}));
    EXPECT_EQ(ok.status, 0);
    EXPECT_EQ(ok.exit_code, 0);
    EXPECT_EQ(ok.signal, 0);
    EXPECT_FALSE(ok.timed_out);
    RunResult three = run_ok(spec_of({"sh", "-c", "exit 3"}));
    EXPECT_EQ(three.status, 3);
    EXPECT_EQ(three.exit_code, 3);
}

TEST(Child, SignalIs128PlusN) {
    RunResult r = run_ok(spec_of({"sh", "-c", "kill -TERM $$"}));
    EXPECT_EQ(r.status, 128 + SIGTERM);
    EXPECT_EQ(r.signal, SIGTERM);
    EXPECT_EQ(r.exit_code, -1);
    EXPECT_FALSE(r.timed_out);
}

TEST(Child, NotFoundIs127) {
    auto r = Child::spawn(spec_of({"sion-no-such-program"}));
    ASSERT_FALSE(r);
    EXPECT_EQ(r.error().exit(), Exit::not_found);
    EXPECT_EQ(r.error().message(), "cannot run 'sion-no-such-program': No such file or directory");
    auto abs = run(spec_of({"/nonexistent/sion-prog"}), {});
    ASSERT_FALSE(abs);
    EXPECT_EQ(abs.error().exit(), Exit::not_found);
    EXPECT_EQ(abs.error().message(),
              "cannot run '/nonexistent/sion-prog': No such file or directory");
    auto empty = Child::spawn(spec_of({""}));
    ASSERT_FALSE(empty);
    EXPECT_EQ(empty.error().exit(), Exit::not_found);
}

TEST(Child, NotExecutableIs126) {
    TempDir dir;
    fs::path plain = dir.path() / "plain";
    dir.write("plain", "#!/bin/sh\nexit 0\n", fs::perms::owner_read | fs::perms::owner_write);
    auto by_path = Child::spawn(spec_of({plain.string()}));
    ASSERT_FALSE(by_path);
    EXPECT_EQ(by_path.error().exit(), Exit::cannot_exec);
    EXPECT_EQ(by_path.error().message(), "cannot run '" + plain.string() + "': Permission denied");

    ChildSpec searched = spec_of({"plain"});
    searched.env = {"PATH=" + dir.path().string()};
    auto by_search = Child::spawn(searched);
    ASSERT_FALSE(by_search);
    EXPECT_EQ(by_search.error().exit(), Exit::cannot_exec);
    EXPECT_EQ(by_search.error().message(), "cannot run 'plain': Permission denied");

    auto a_directory = Child::spawn(spec_of({dir.path().string()}));
    ASSERT_FALSE(a_directory);
    EXPECT_EQ(a_directory.error().exit(), Exit::cannot_exec);

    fs::path bad_interpreter = dir.path() / "bad";
    dir.write("bad", "#!/nonexistent/sion-sh\n", fs::perms::owner_all);
    auto no_interpreter = Child::spawn(spec_of({bad_interpreter.string()}));
    ASSERT_FALSE(no_interpreter);
    EXPECT_EQ(no_interpreter.error().exit(), Exit::cannot_exec);
}

TEST(Child, ProgramIsSearchedInTheChildsPath) {
    TempDir dir;
    dir.write("sion-hello", "#!/bin/sh\necho hello\n", fs::perms::owner_all);
    ChildSpec spec = spec_of({"sion-hello"});
    spec.env = {"PATH=/nonexistent:" + dir.path().string()};
    EXPECT_EQ(run_ok(spec).out, "hello\n");

    ChildSpec elsewhere = spec_of({"sh", "-c", "true"});
    elsewhere.env = {"PATH=" + dir.path().string()};
    auto r = Child::spawn(elsewhere);
    ASSERT_FALSE(r);
    EXPECT_EQ(r.error().exit(), Exit::not_found);

    ChildSpec no_path = spec_of({"sh", "-c", "exit 5"});
    no_path.env = {};
    EXPECT_EQ(run_ok(no_path).status, 5); // execvp's default search path
}

TEST(Child, EnvironmentIsExactlyTheSpecs) {
    ChildSpec spec = spec_of({"/usr/bin/env"});
    spec.env = {"A=1", "B=two words", "EMPTY="};
    RunResult r = run_ok(spec);
    EXPECT_EQ(r.out, "A=1\nB=two words\nEMPTY=\n");
    spec.env = {};
    EXPECT_EQ(run_ok(spec).out, "");
}

TEST(Child, EnvKeepAndSet) {
    // NOLINTBEGIN(concurrency-mt-unsafe): the test runs on one thread
    ASSERT_EQ(::setenv("SION_TEST_CHILD_KEPT", "a=b c", 1), 0);
    ASSERT_EQ(::unsetenv("SION_TEST_CHILD_UNSET"), 0);
    std::vector<std::string> env = env_keep({"SION_TEST_CHILD_UNSET", "SION_TEST_CHILD_KEPT"});
    EXPECT_EQ(env, std::vector<std::string>{"SION_TEST_CHILD_KEPT=a=b c"});
    env_set(env, "SION_TEST_CHILD_KEPT", "new");
    env_set(env, "SION_TEST_CHILD", "added");
    EXPECT_EQ(env, (std::vector<std::string>{"SION_TEST_CHILD_KEPT=new", "SION_TEST_CHILD=added"}));
    ::unsetenv("SION_TEST_CHILD_KEPT");
    // NOLINTEND(concurrency-mt-unsafe)
}

TEST(Child, WorkingDirectory) {
    TempDir dir;
    ChildSpec spec = spec_of({"/bin/pwd"});
    spec.cwd = dir.path().string();
    EXPECT_EQ(run_ok(spec).out, dir.path().string() + "\n");

    dir.write("here", "#!/bin/sh\necho here\n", fs::perms::owner_all);
    ChildSpec relative = spec_of({"./here"});
    relative.cwd = dir.path().string();
    EXPECT_EQ(run_ok(relative).out, "here\n");

    ChildSpec missing = spec_of({"/bin/pwd"});
    missing.cwd = (dir.path() / "missing").string();
    auto r = Child::spawn(missing);
    ASSERT_FALSE(r);
    EXPECT_EQ(r.error().message(),
              "cannot change directory to '" + missing.cwd + "': No such file or directory");
}

TEST(Child, StdinRoundTripsSeveralMiB) {
    std::string data = random_bytes(size_t{8} << 20);
    RunResult r = run_ok(spec_of({"cat"}), data);
    EXPECT_EQ(r.status, 0);
    EXPECT_EQ(r.out.size(), data.size());
    EXPECT_TRUE(r.out == data);
    EXPECT_FALSE(r.out_truncated);
}

TEST(Child, StdoutAndStderrAtOnceWithoutDeadlock) {
    std::string data = random_bytes(size_t{4} << 20);
    RunResult r = run_ok(spec_of({"sh", "-c", "tee /dev/stderr"}), data);
    EXPECT_EQ(r.status, 0);
    EXPECT_TRUE(r.out == data);
    EXPECT_TRUE(r.err == data);
}

TEST(Child, OutputCapTruncatesAndKeepsReading) {
    RunResult r = run_ok(spec_of({"head", "-c", "1000000", "/dev/zero"}), {}, 1000);
    EXPECT_EQ(r.status, 0); // read to the end: the child did not die of SIGPIPE
    EXPECT_EQ(r.out, std::string(1000, '\0'));
    EXPECT_TRUE(r.out_truncated);
    EXPECT_EQ(r.err, "");
    EXPECT_FALSE(r.err_truncated);

    RunResult exact = run_ok(spec_of({"printf", "abc"}), {}, 3);
    EXPECT_EQ(exact.out, "abc");
    EXPECT_FALSE(exact.out_truncated);
}

TEST(Child, OutputTotalsCountWhatWasCut) {
    RunResult r = run_ok(
        spec_of({"sh", "-c", "head -c 300000 /dev/zero; head -c 5000 /dev/zero >&2"}), {}, 1000);
    EXPECT_EQ(r.status, 0);
    EXPECT_EQ(r.out.size(), 1000U);
    EXPECT_EQ(r.out_total, 300000U);
    EXPECT_TRUE(r.out_truncated);
    EXPECT_EQ(r.err.size(), 1000U);
    EXPECT_EQ(r.err_total, 5000U);
    EXPECT_TRUE(r.err_truncated);

    RunResult within = run_ok(spec_of({"printf", "abc"}), {}, 3);
    EXPECT_EQ(within.out_total, 3U);
    EXPECT_EQ(within.err_total, 0U);
    EXPECT_FALSE(within.out_truncated);
}

TEST(Child, CpuTimeOfABusyLoop) {
    RunResult r =
        run_ok(spec_of({"sh", "-c", "i=0; while [ $i -lt 300000 ]; do i=$((i+1)); done"}));
    EXPECT_EQ(r.status, 0);
    EXPECT_GT(r.cpu_ms, 0);
    EXPECT_GE(r.wall_ms, 0);
    EXPECT_GT(r.max_rss_kib, 0);
}

TEST(Child, WallClockFromSpawnToReap) {
    auto child = Child::spawn(spec_of({"sleep", "0.1"}));
    ASSERT_TRUE(child) << child.error().message();
    auto status = child->wait();
    ASSERT_TRUE(status) << status.error().message();
    EXPECT_GE(status->wall_ms, 100); // a lower bound only: sleep sleeps at least that long
    EXPECT_GE(status->cpu_ms, 0);
}

// dd reads 64 MiB of zeros into one buffer: every page of it is touched.
constexpr const char* k_touch_64_mib = "dd if=/dev/zero of=/dev/null bs=64M count=1 2>/dev/null";

TEST(Child, PeakMemoryOfTheChild) {
    RunResult r = run_ok(spec_of({"dd", "if=/dev/zero", "of=/dev/null", "bs=64M", "count=1"}));
    EXPECT_EQ(r.status, 0);
    EXPECT_GE(r.max_rss_kib, 60000);
}

TEST(Child, PeakMemoryIncludesADescendantTheChildWaitedFor) {
    // As under bwrap: the work is a grandchild, the child waits for it and exits after it.
    RunResult r = run_ok(spec_of({"sh", "-c", std::string(k_touch_64_mib) + "; exit 0"}));
    EXPECT_EQ(r.status, 0);
    EXPECT_GE(r.max_rss_kib, 60000);
    RunResult cpu = run_ok(
        spec_of({"sh", "-c", "sh -c 'i=0; while [ $i -lt 300000 ]; do i=$((i+1)); done'; exit 0"}));
    EXPECT_GT(cpu.cpu_ms, 0);
}

TEST(Child, ChildThatDoesNotReadStdinIsNoError) {
    std::string data = random_bytes(size_t{8} << 20);
    RunResult none = run_ok(spec_of({"true"}), data);
    EXPECT_EQ(none.status, 0);
    RunResult one = run_ok(spec_of({"head", "-c", "1"}), data);
    EXPECT_EQ(one.status, 0);
    EXPECT_EQ(one.out, data.substr(0, 1));
}

TEST(Child, TimeLimitKillsTheProcessGroup) {
    ChildSpec spec = spec_of({"sh", "-c", "sleep 100 & echo $!; sleep 100"});
    spec.out = Stdio::pipe();
    spec.time_limit = 50ms;
    auto child = Child::spawn(spec);
    ASSERT_TRUE(child) << child.error().message();
    pid_t grandchild = std::stoi(read_line(child->out().get()));
    auto status = child->wait();
    ASSERT_TRUE(status) << status.error().message();
    EXPECT_TRUE(status->timed_out);
    EXPECT_EQ(status->signal, SIGKILL);
    EXPECT_EQ(status->status, 128 + SIGKILL);
    EXPECT_GE(status->wall_ms, 50); // a lower bound only: it ran until the limit
    EXPECT_TRUE(gone_eventually(grandchild));
}

TEST(Child, RunTimeLimitDoesNotWaitForPipesAGrandchildHolds) {
    ChildSpec spec = spec_of({"sh", "-c", "echo started; sleep 100 & exec sleep 100"});
    spec.time_limit = 100ms;
    RunResult r = run_ok(spec);
    EXPECT_TRUE(r.timed_out);
    EXPECT_EQ(r.signal, SIGKILL);
    EXPECT_EQ(r.status, 128 + SIGKILL);
}

TEST(Child, DropKillsAndReaps) {
    pid_t pid = -1;
    pid_t grandchild = -1;
    {
        ChildSpec spec = spec_of({"sh", "-c", "sleep 100 & echo $!; sleep 100"});
        spec.out = Stdio::pipe();
        auto child = Child::spawn(spec);
        ASSERT_TRUE(child) << child.error().message();
        pid = child->pid();
        grandchild = std::stoi(read_line(child->out().get()));
    }
    EXPECT_EQ(::waitpid(pid, nullptr, WNOHANG), -1); // reaped already
    EXPECT_EQ(errno, ECHILD);
    EXPECT_TRUE(gone_eventually(grandchild));
}

TEST(Child, MoveAssignDropsTheOldChild) {
    ChildSpec spec = spec_of({"sleep", "100"});
    auto first = Child::spawn(spec);
    auto second = Child::spawn(spec_of({"true"}));
    ASSERT_TRUE(first && second);
    pid_t old = first->pid();
    *first = std::move(*second);
    EXPECT_EQ(::waitpid(old, nullptr, WNOHANG), -1);
    EXPECT_EQ(second->pid(), -1);
    auto status = first->wait();
    ASSERT_TRUE(status);
    EXPECT_EQ(status->status, 0);
}

TEST(Child, ExtraFdIsReadable) {
    auto pipe = Pipe::make();
    ASSERT_TRUE(pipe);
    ASSERT_TRUE(write_all(pipe->write.get(), "through fd 3"));
    pipe->write.reset();
    ChildSpec spec = spec_of({"sh", "-c", "cat <&3"});
    spec.extra_fds = {{pipe->read.get(), 3}};
    EXPECT_EQ(run_ok(spec).out, "through fd 3");
}

TEST(Child, ExtraFdOnItsOwnNumberLosesCloseOnExec) {
    auto pipe = Pipe::make();
    ASSERT_TRUE(pipe);
    ASSERT_TRUE(write_all(pipe->write.get(), "same number"));
    pipe->write.reset();
    int number = 5; // the shell's redirections take one digit
    while (number <= 9 && ::fcntl(number, F_GETFD) >= 0)
        ++number;
    ASSERT_LE(number, 9);
    ASSERT_EQ(::dup3(pipe->read.get(), number, O_CLOEXEC), number);
    Fd same(number);
    ChildSpec spec = spec_of({"sh", "-c", "cat <&" + std::to_string(number)});
    spec.extra_fds = {{number, number}};
    EXPECT_EQ(run_ok(spec).out, "same number");
}

// A `cat` that has echoed a line is blocked reading stdin: its fds are exactly those it was given.
std::vector<int> fds_of_cat(std::vector<ExtraFd> extra) {
    ChildSpec spec = spec_of({"cat"});
    spec.in = Stdio::pipe();
    spec.out = Stdio::pipe();
    spec.extra_fds = std::move(extra);
    auto child = Child::spawn(spec);
    EXPECT_TRUE(child) << child.error().message();
    if (!child)
        return {};
    EXPECT_TRUE(write_all(child->in().get(), "ready\n"));
    EXPECT_EQ(read_line(child->out().get()), "ready");
    std::vector<int> fds = open_fds(child->pid());
    child->in().reset();
    auto status = child->wait();
    EXPECT_TRUE(status && status->status == 0);
    return fds;
}

TEST(Child, OnlyNamedFdsAreInherited) {
    // Not close-on-exec on purpose: the child must not get it all the same.
    Fd leaky(::open("/dev/null", O_RDONLY)); // NOLINT(android-cloexec-open)
    ASSERT_TRUE(leaky);
    EXPECT_EQ(fds_of_cat({}), (std::vector<int>{0, 1, 2}));
    EXPECT_EQ(fds_of_cat({{leaky.get(), 3}}), (std::vector<int>{0, 1, 2, 3}));
    EXPECT_EQ(fds_of_cat({{leaky.get(), 7}}), (std::vector<int>{0, 1, 2, 7}));
}

TEST(Child, StdioNullAndGivenFd) {
    auto pipe = Pipe::make();
    ASSERT_TRUE(pipe);
    ChildSpec spec = spec_of({"sh", "-c", "cat; echo to-fd"});
    spec.in = Stdio::null();
    spec.out = Stdio::from_fd(pipe->write.get());
    auto child = Child::spawn(spec);
    ASSERT_TRUE(child) << child.error().message();
    pipe->write.reset();
    auto status = child->wait();
    ASSERT_TRUE(status);
    EXPECT_EQ(status->status, 0);
    auto out = read_all(pipe->read.get(), 1000);
    ASSERT_TRUE(out);
    EXPECT_EQ(*out, "to-fd\n");
}

TEST(Child, OwnProcessGroupCleanSignals) {
    struct sigaction ignore {};

    struct sigaction old_pipe {};

    ignore.sa_handler = SIG_IGN;
    ASSERT_EQ(::sigaction(SIGPIPE, &ignore, &old_pipe), 0);
    sigset_t usr1;
    sigset_t old_mask;
    sigemptyset(&usr1);
    sigaddset(&usr1, SIGUSR1);
    ASSERT_EQ(::pthread_sigmask(SIG_BLOCK, &usr1, &old_mask), 0);

    RunResult r = run_ok(spec_of({"cat", "/proc/self/status"}));
    auto child = Child::spawn(spec_of({"sleep", "100"}));

    ::pthread_sigmask(SIG_SETMASK, &old_mask, nullptr);
    ::sigaction(SIGPIPE, &old_pipe, nullptr);
    EXPECT_EQ(status_line(r.out, "SigBlk"), "0000000000000000");
    // Signals 1-31 are at their defaults; glibc's posix_spawn itself leaves its two internal
    // signals (32 and 33) ignored, and no spawn attribute can name them.
    unsigned long long ignored = std::stoull(status_line(r.out, "SigIgn"), nullptr, 16);
    EXPECT_EQ(ignored & 0x7fffffffULL, 0ULL);
    ASSERT_TRUE(child);
    EXPECT_EQ(::getpgid(child->pid()), child->pid());
}

TEST(Child, WaitForAndPidfd) {
    ChildSpec spec = spec_of({"cat"});
    spec.in = Stdio::pipe();
    auto child = Child::spawn(spec);
    ASSERT_TRUE(child) << child.error().message();
    auto still = child->wait_for(0ms);
    ASSERT_TRUE(still);
    EXPECT_FALSE(still->has_value());
    pollfd pfd{child->pidfd(), POLLIN, 0};
    EXPECT_EQ(::poll(&pfd, 1, 0), 0);

    child->in().reset();
    ASSERT_EQ(::poll(&pfd, 1, -1), 1);
    EXPECT_TRUE(pfd.revents & POLLIN);
    auto done = child->wait_for(std::chrono::milliseconds::max()); // no overflow: it has exited
    ASSERT_TRUE(done && done->has_value());
    EXPECT_EQ((*done)->status, 0);
    EXPECT_EQ(child->pid(), -1);
    EXPECT_EQ(child->pidfd(), -1);
    auto again = child->wait();
    ASSERT_TRUE(again);
    EXPECT_EQ(again->status, 0);
}

TEST(Child, BadSpecs) {
    auto empty = Child::spawn(ChildSpec{});
    ASSERT_FALSE(empty);
    EXPECT_EQ(empty.error().exit(), Exit::software);

    ChildSpec stdio_number = spec_of({"true"});
    stdio_number.extra_fds = {{0, 1}};
    EXPECT_FALSE(Child::spawn(stdio_number));

    ChildSpec twice = spec_of({"true"});
    twice.extra_fds = {{0, 3}, {1, 3}};
    EXPECT_FALSE(Child::spawn(twice));

    ChildSpec closed = spec_of({"true"});
    closed.extra_fds = {{-1, 3}};
    auto r = Child::spawn(closed);
    ASSERT_FALSE(r);
    EXPECT_EQ(r.error().message(), "cannot pass fd -1 to 'true': Bad file descriptor");
}

} // namespace
} // namespace sion
