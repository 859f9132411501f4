// SPDX-License-Identifier: MIT
// Tests for sandboxd/limits: parsing, the options init gets, and setrlimit in a child process.
#include "sandboxd/limits.hpp"

#include <gtest/gtest.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <string>
#include <vector>

namespace sion::sandboxd {
namespace {

TEST(ParseSeconds, WholePositiveSeconds) {
    EXPECT_EQ(*parse_seconds("timeout", "1"), std::chrono::seconds(1));
    EXPECT_EQ(*parse_seconds("timeout", "120"), std::chrono::seconds(120));
    for (const char* bad : {"", "0", "-1", "1.5", "1s", " 1", "99999999999"}) {
        auto r = parse_seconds("timeout", bad);
        ASSERT_FALSE(r) << bad;
        EXPECT_EQ(r.error().exit(), Exit::usage);
        EXPECT_EQ(r.error().message(),
                  std::string("option '--timeout' needs a whole number of seconds, not '") + bad +
                      "'");
    }
}

Result<Limits> round_trip(const Limits& limits) {
    CommandSpec spec{"init", "init", "", limit_options()};
    std::vector<std::string> words = limits_to_args(limits);
    words.insert(words.begin(), "init");
    std::vector<const char*> argv;
    for (const auto& w : words)
        argv.push_back(w.c_str());
    auto args = parse_args(spec, static_cast<int>(argv.size()), argv.data());
    if (!args)
        return std::move(args).error();
    return limits_from_args(*args);
}

TEST(LimitArgs, RoundTrip) {
    Limits in;
    in.cpu = std::chrono::seconds(7);
    in.memory = 123456789;
    in.file_size = 1 << 20;
    in.processes = 64;
    EXPECT_EQ(limits_to_args(in),
              (std::vector<std::string>{"--cpu", "7", "--memory", "123456789", "--file-size",
                                        "1048576", "--processes", "64"}));
    auto out = round_trip(in);
    ASSERT_TRUE(out) << out.error().message();
    EXPECT_EQ(out->cpu, in.cpu);
    EXPECT_EQ(out->memory, in.memory);
    EXPECT_EQ(out->file_size, in.file_size);
    EXPECT_EQ(out->processes, in.processes);
}

// Applies `limits` in a forked child and reports there whether each rlimit is what it should be,
// so the test process keeps its own.
TEST(ApplyLimits, SetsEveryLimitInTheProcess) {
    Limits limits;
    limits.cpu = std::chrono::seconds(5);
    limits.memory = uint64_t{512} << 20;
    limits.file_size = uint64_t{1} << 20;
    limits.processes = 100;
    pid_t pid = ::fork();
    ASSERT_GE(pid, 0);
    if (pid == 0) {
        if (!apply_limits(limits))
            ::_exit(10);
        struct rlimit r {};
        ::getrlimit(RLIMIT_CPU, &r);
        if (r.rlim_cur != 5 || r.rlim_max != 6)
            ::_exit(11);
        ::getrlimit(RLIMIT_DATA, &r);
        if (r.rlim_cur != (512U << 20) || r.rlim_max != (512U << 20))
            ::_exit(12);
        ::getrlimit(RLIMIT_FSIZE, &r);
        if (r.rlim_cur != (1U << 20))
            ::_exit(13);
        ::getrlimit(RLIMIT_NPROC, &r);
        if (r.rlim_cur != 100)
            ::_exit(14);
        ::getrlimit(RLIMIT_CORE, &r);
        if (r.rlim_cur != 0 || r.rlim_max != 0)
            ::_exit(15);
        // A limit already lower stays lower: nothing unprivileged raises a hard limit.
        Limits more = limits;
        more.memory = uint64_t{1} << 30;
        if (!apply_limits(more))
            ::_exit(16);
        ::getrlimit(RLIMIT_DATA, &r);
        ::_exit(r.rlim_max == (512U << 20) ? 0 : 17);
    }
    int status = 0;
    ASSERT_EQ(::waitpid(pid, &status, 0), pid);
    ASSERT_TRUE(WIFEXITED(status));
    EXPECT_EQ(WEXITSTATUS(status), 0);
}

} // namespace
} // namespace sion::sandboxd
