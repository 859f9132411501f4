// SPDX-License-Identifier: MIT
// run_on_loop(): fifty commands at once on one loop, input and output of several MiB, the output
// cap and totals, time limits that kill a process group, grandchildren that keep the pipes open,
// statuses, spawn errors, kill(), dropping a run, resource use; and after every test a loop that
// ends and closes cleanly (no handle left behind).
#include "lib/uv_child.hpp"

#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <csignal>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <optional>
#include <random>
#include <string>
#include <thread>
#include <vector>

namespace sion {
namespace {

namespace fs = std::filesystem;
using namespace std::chrono_literals;

// Programs ignore SIGPIPE (guard_standard_fds); so do these tests, or writing to a child that
// stopped reading would end them.
const bool k_sigpipe_ignored = [] { return ::signal(SIGPIPE, SIG_IGN) != SIG_ERR; }();

ChildSpec spec_of(std::vector<std::string> argv) {
    ChildSpec spec;
    spec.argv = std::move(argv);
    spec.env = env_keep({"PATH"});
    return spec;
}

std::string random_bytes(size_t n) {
    std::mt19937 gen(7);
    std::string s(n, '\0');
    for (char& c : s)
        c = static_cast<char>(gen() & 0xff);
    return s;
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

// What `done` was called with, and how often.
struct Outcome {
    int calls = 0;
    std::optional<Result<RunResult>> result;

    // The result, failing the test if there is none or it is an error.
    [[nodiscard]] RunResult ok() const {
        EXPECT_EQ(calls, 1);
        if (!result) {
            ADD_FAILURE() << "done was not called";
            return {};
        }
        EXPECT_TRUE(*result) << result->error().message();
        return *result ? **result : RunResult{};
    }
};

class UvChildTest : public ::testing::Test {
protected:
    void SetUp() override {
        ASSERT_TRUE(k_sigpipe_ignored);
        ASSERT_EQ(uv_loop_init(&m_loop), 0);
        ::alarm(120); // a hang fails the test instead of stalling the run
    }

    void TearDown() override {
        // Runs the tests dropped finish here; then nothing may be left on the loop.
        EXPECT_EQ(uv_run(&m_loop, UV_RUN_DEFAULT), 0);
        EXPECT_EQ(uv_loop_close(&m_loop), 0) << "a handle outlived its run";
        ::alarm(0);
    }

    // Runs the loop until nothing is left on it: every run has finished and closed.
    void run() {
        EXPECT_EQ(uv_run(&m_loop, UV_RUN_DEFAULT), 0);
        EXPECT_EQ(uv_loop_alive(&m_loop), 0);
    }

    std::shared_ptr<UvRun> start(ChildSpec spec, Outcome& into, std::string input = {},
                                 size_t limit = k_default_output_limit) {
        auto r = run_on_loop(&m_loop, std::move(spec), std::move(input), limit,
                             [&into](Result<RunResult> result) {
                                 ++into.calls;
                                 into.result.emplace(std::move(result));
                             });
        EXPECT_TRUE(r) << r.error().message();
        return r ? *r : nullptr;
    }

    // One command, run to its end.
    RunResult run_one(ChildSpec spec, std::string input = {},
                      size_t limit = k_default_output_limit) {
        Outcome o;
        auto handle = start(std::move(spec), o, std::move(input), limit);
        run();
        return o.ok();
    }

    uv_loop_t m_loop{};
};

TEST_F(UvChildTest, FiftyCommandsAtOnceEachGetTheirOwn) {
    constexpr int k_runs = 50;
    std::vector<Outcome> outcomes(k_runs);
    std::vector<std::shared_ptr<UvRun>> runs;
    for (int i = 0; i < k_runs; ++i) {
        std::string n = std::to_string(i);
        // Reads its input, writes both streams, and exits with a status of its own.
        ChildSpec spec =
            spec_of({"sh", "-c", "cat; echo; echo err-$1 >&2; exit $(($1 % 7))", "sh", n});
        runs.push_back(start(std::move(spec), outcomes[static_cast<size_t>(i)], "in-" + n));
        ASSERT_NE(runs.back(), nullptr);
        EXPECT_GT(runs.back()->pid(), 0);
    }
    run();
    for (int i = 0; i < k_runs; ++i) {
        SCOPED_TRACE(i);
        RunResult r = outcomes[static_cast<size_t>(i)].ok();
        std::string n = std::to_string(i);
        EXPECT_EQ(r.out, "in-" + n + "\n");
        EXPECT_EQ(r.err, "err-" + n + "\n");
        EXPECT_EQ(r.status, i % 7);
        EXPECT_EQ(r.exit_code, i % 7);
        EXPECT_FALSE(r.timed_out);
        EXPECT_EQ(runs[static_cast<size_t>(i)]->pid(), -1);
    }
}

TEST_F(UvChildTest, InputRoundTripsWhileOutputFlows) {
    std::string data = random_bytes(size_t{4} << 20);
    RunResult cat = run_one(spec_of({"cat"}), data);
    EXPECT_EQ(cat.status, 0);
    EXPECT_EQ(cat.out.size(), data.size());
    EXPECT_TRUE(cat.out == data);
    EXPECT_EQ(cat.out_total, data.size());
    EXPECT_FALSE(cat.out_truncated);

    RunResult tee = run_one(spec_of({"sh", "-c", "tee /dev/stderr"}), data);
    EXPECT_EQ(tee.status, 0);
    EXPECT_TRUE(tee.out == data);
    EXPECT_TRUE(tee.err == data);
}

TEST_F(UvChildTest, OutputCapKeepsReadingAndCounts) {
    RunResult r = run_one(
        spec_of({"sh", "-c", "head -c 1000000 /dev/zero; head -c 5000 /dev/zero >&2"}), {}, 1000);
    EXPECT_EQ(r.status, 0); // read to the end: the child did not die of SIGPIPE
    EXPECT_EQ(r.out, std::string(1000, '\0'));
    EXPECT_TRUE(r.out_truncated);
    EXPECT_EQ(r.out_total, 1000000U);
    EXPECT_EQ(r.err.size(), 1000U);
    EXPECT_TRUE(r.err_truncated);
    EXPECT_EQ(r.err_total, 5000U);

    RunResult exact = run_one(spec_of({"printf", "abc"}), {}, 3);
    EXPECT_EQ(exact.out, "abc");
    EXPECT_FALSE(exact.out_truncated);
    EXPECT_EQ(exact.out_total, 3U);
}

TEST_F(UvChildTest, TimeLimitKillsTheGroupAndAGrandchildHoldingThePipes) {
    // The grandchild holds stdout and stderr: only killing the group ends the run.
    ChildSpec spec = spec_of({"sh", "-c", "sleep 100 & echo $!; exec sleep 100"});
    spec.time_limit = 100ms;
    RunResult r = run_one(std::move(spec));
    EXPECT_TRUE(r.timed_out);
    EXPECT_EQ(r.signal, SIGKILL);
    EXPECT_EQ(r.status, 128 + SIGKILL);
    EXPECT_EQ(r.exit_code, -1);
    ASSERT_FALSE(r.out.empty());
    EXPECT_TRUE(gone_eventually(std::stoi(r.out)));
}

TEST_F(UvChildTest, GrandchildOutlivingTheChildDoesNotHoldTheRun) {
    // The child exits at once; the grandchild keeps stdout and stderr open and writes nothing.
    RunResult r = run_one(spec_of({"sh", "-c", "sleep 100 & echo $!; exit 4"}));
    EXPECT_EQ(r.status, 4);
    EXPECT_FALSE(r.timed_out);
    ASSERT_FALSE(r.out.empty());
    pid_t grandchild = std::stoi(r.out);
    EXPECT_EQ(::kill(grandchild, 0), 0); // left alone: its group is not signalled after the reap
    ::kill(grandchild, SIGKILL);
}

TEST_F(UvChildTest, StdinHeldByAGrandchildIsClosedAtTheEnd) {
    // The grandchild keeps stdin open without reading it: the write never completes.
    RunResult r = run_one(spec_of({"sh", "-c", "sleep 100 <&0 >/dev/null 2>&1 & echo $!"}),
                          random_bytes(size_t{1} << 20));
    EXPECT_EQ(r.status, 0);
    ASSERT_FALSE(r.out.empty());
    ::kill(std::stoi(r.out), SIGKILL);
}

TEST_F(UvChildTest, ChildThatDoesNotReadStdinIsNoError) {
    std::string data = random_bytes(size_t{8} << 20);
    EXPECT_EQ(run_one(spec_of({"true"}), data).status, 0);
    RunResult one = run_one(spec_of({"head", "-c", "1"}), data);
    EXPECT_EQ(one.status, 0);
    EXPECT_EQ(one.out, data.substr(0, 1));
}

TEST_F(UvChildTest, ExitStatusAndSignal) {
    RunResult three = run_one(spec_of({"sh", "-c", "exit 3"}));
    EXPECT_EQ(three.status, 3);
    EXPECT_EQ(three.exit_code, 3);
    EXPECT_EQ(three.signal, 0);
    RunResult term = run_one(spec_of({"sh", "-c", "kill -TERM $$"}));
    EXPECT_EQ(term.status, 128 + SIGTERM);
    EXPECT_EQ(term.signal, SIGTERM);
    EXPECT_EQ(term.exit_code, -1);
    EXPECT_FALSE(term.timed_out);
}

TEST_F(UvChildTest, SpawnErrorsAreReturnedAtOnce) {
    int calls = 0;
    auto count = [&calls](const Result<RunResult>&) { ++calls; };
    auto missing = run_on_loop(&m_loop, spec_of({"sion-no-such-program"}), "x", 100, count);
    ASSERT_FALSE(missing);
    EXPECT_EQ(missing.error().exit(), Exit::not_found);
    EXPECT_EQ(missing.error().message(),
              "cannot run 'sion-no-such-program': No such file or directory");

    std::string pattern = (fs::temp_directory_path() / "sion-test-uv-child-XXXXXX").string();
    ASSERT_NE(::mkdtemp(pattern.data()), nullptr);
    fs::path plain = fs::path(pattern) / "plain";
    std::ofstream(plain) << "#!/bin/sh\n";
    fs::permissions(plain, fs::perms::owner_read | fs::perms::owner_write);
    auto denied = run_on_loop(&m_loop, spec_of({plain.string()}), {}, 100, count);
    fs::remove_all(pattern);
    ASSERT_FALSE(denied);
    EXPECT_EQ(denied.error().exit(), Exit::cannot_exec);
    EXPECT_EQ(denied.error().message(), "cannot run '" + plain.string() + "': Permission denied");
    run();
    EXPECT_EQ(calls, 0);
}

TEST_F(UvChildTest, KillEndsTheRunAndDoneStillComes) {
    Outcome o;
    auto handle = start(spec_of({"sleep", "100"}), o);
    ASSERT_NE(handle, nullptr);
    handle->kill();
    run();
    RunResult r = o.ok();
    EXPECT_EQ(r.signal, SIGKILL);
    EXPECT_EQ(r.status, 128 + SIGKILL);
    EXPECT_FALSE(r.timed_out);
    EXPECT_EQ(handle->pid(), -1);
    handle->kill(); // reaped: nothing to signal
}

TEST_F(UvChildTest, DroppingTheLastReferenceKillsTheGroupAndForgetsDone) {
    std::string dir = (fs::temp_directory_path() / "sion-test-uv-child-XXXXXX").string();
    ASSERT_NE(::mkdtemp(dir.data()), nullptr);
    std::string pidfile = dir + "/pid";
    Outcome o;
    auto handle = start(
        spec_of({"sh", "-c", R"(sleep 100 & echo $! > "$1.tmp"; mv "$1.tmp" "$1"; exec sleep 100)",
                 "sh", pidfile}),
        o);
    ASSERT_NE(handle, nullptr);
    pid_t pid = handle->pid();
    std::string grandchild;
    for (int i = 0; i < 30000 && grandchild.empty(); ++i) {
        std::ifstream(pidfile) >> grandchild;
        std::this_thread::sleep_for(1ms);
    }
    fs::remove_all(dir);
    ASSERT_FALSE(grandchild.empty());
    handle.reset();
    run();
    EXPECT_EQ(o.calls, 0);
    EXPECT_EQ(::waitpid(pid, nullptr, WNOHANG), -1); // reaped already
    EXPECT_EQ(errno, ECHILD);
    EXPECT_TRUE(gone_eventually(std::stoi(grandchild)));
}

TEST_F(UvChildTest, DroppingDuringTheGraceClosesThePipesAtOnce) {
    Outcome o;
    auto handle = start(spec_of({"sh", "-c", "sleep 100 & exit 0"}), o);
    ASSERT_NE(handle, nullptr);
    pid_t group = handle->pid();
    // Reaped, while the grandchild keeps the pipes open: the run is in its grace.
    while (handle->pid() != -1)
        uv_run(&m_loop, UV_RUN_ONCE);
    bool in_grace = o.calls == 0; // unless this thread slept through all of it
    handle.reset();
    run();
    // The grandchild keeps the group, so its id is not reused yet.
    EXPECT_EQ(::kill(-group, SIGKILL), 0);
    if (!in_grace)
        GTEST_SKIP() << "the grace ran out before the run was dropped";
    EXPECT_EQ(o.calls, 0);
}

TEST_F(UvChildTest, DoneMayDropItsOwnRun) {
    std::map<int, std::shared_ptr<UvRun>> runs;
    std::vector<int> finished;
    for (int i = 0; i < 3; ++i) {
        auto r = run_on_loop(&m_loop, spec_of({"true"}), {}, 100,
                             [&runs, &finished, i](const Result<RunResult>& result) {
                                 EXPECT_TRUE(result);
                                 finished.push_back(i);
                                 runs.erase(i);
                             });
        ASSERT_TRUE(r) << r.error().message();
        runs.emplace(i, std::move(*r));
    }
    run();
    EXPECT_EQ(finished.size(), 3U);
    EXPECT_TRUE(runs.empty());
}

TEST_F(UvChildTest, ResourceUseIsPlausible) {
    RunResult busy =
        run_one(spec_of({"sh", "-c", "i=0; while [ $i -lt 300000 ]; do i=$((i+1)); done"}));
    EXPECT_EQ(busy.status, 0);
    EXPECT_GT(busy.cpu_ms, 0);
    EXPECT_GE(busy.wall_ms, 0);
    EXPECT_GT(busy.max_rss_kib, 0);

    // dd reads 64 MiB of zeros into one buffer, as a grandchild the shell waits for.
    RunResult big = run_one(
        spec_of({"sh", "-c", "dd if=/dev/zero of=/dev/null bs=64M count=1 2>/dev/null; exit 0"}));
    EXPECT_EQ(big.status, 0);
    EXPECT_GE(big.max_rss_kib, 60000);
}

} // namespace
} // namespace sion
