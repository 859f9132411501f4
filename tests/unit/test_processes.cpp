// SPDX-License-Identifier: MIT
// Processes from /proc: who one is, the tree it started, and ending that tree (a stopped root, a
// root that ends its own, orphans) without touching a process that only has a known pid.
#include "lib/processes.hpp"

#include "lib/child.hpp"

#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <csignal>
#include <string>
#include <thread>
#include <vector>

namespace sion {
namespace {

using namespace std::chrono_literals;

Child spawn_shell(const std::string& script) {
    ChildSpec spec;
    spec.argv = {"/bin/sh", "-c", script};
    spec.env = env_keep({"PATH"});
    auto child = Child::spawn(spec);
    EXPECT_TRUE(child) << child.error().message();
    return std::move(*child);
}

// The tree of `root` once it has `size` processes (waiting 10 s at most).
std::vector<ProcessId> tree_of_size(const ProcessId& root, size_t size) {
    std::vector<ProcessId> tree;
    for (int i = 0; i < 1000; ++i) {
        tree = process_tree(root);
        if (tree.size() >= size)
            break;
        std::this_thread::sleep_for(10ms);
    }
    EXPECT_EQ(tree.size(), size);
    return tree;
}

size_t running(const std::vector<ProcessId>& tree) {
    size_t n = 0;
    for (const ProcessId& p : tree)
        n += still_runs(p) ? 1 : 0;
    return n;
}

TEST(Processes, ThisProcessIsKnownByItsStart) {
    auto me = process_id(::getpid());
    ASSERT_TRUE(me);
    EXPECT_EQ(me->pid, ::getpid());
    EXPECT_GT(me->start, 0U);
    EXPECT_TRUE(still_runs(*me));
    EXPECT_FALSE(still_runs({me->pid, me->start + 1}));
    EXPECT_FALSE(process_id(0));
    EXPECT_FALSE(process_id(-1));
    EXPECT_EQ(boot_id().size(), 36U);
}

TEST(Processes, TreeHasTheRootFirstThenWhatItStarted) {
    Child child = spawn_shell("sleep 60 & sleep 61 & wait");
    auto root = process_id(child.pid());
    ASSERT_TRUE(root);
    std::vector<ProcessId> tree = tree_of_size(*root, 3);
    ASSERT_FALSE(tree.empty());
    EXPECT_EQ(tree[0], *root);
    EXPECT_TRUE(process_tree({root->pid, root->start + 1}).empty());
    ASSERT_TRUE(child.kill_group(SIGKILL));
}

TEST(Processes, StoppedRootAndItsOrphansAreKilled) {
    // sh dies of SIGTERM and leaves its sleeps to the reaper: they are killed after the grace.
    Child child = spawn_shell("sleep 60 & sleep 61 & wait");
    auto root = process_id(child.pid());
    ASSERT_TRUE(root);
    std::vector<ProcessId> tree = tree_of_size(*root, 3);
    ASSERT_EQ(::kill(root->pid, SIGSTOP), 0);
    auto ended = end_process_tree(*root, 200ms, 10s);
    ASSERT_TRUE(ended) << ended.error().message();
    EXPECT_TRUE(ended->killed);
    EXPECT_EQ(running(tree), 0U);
    auto status = child.wait();
    ASSERT_TRUE(status);
    EXPECT_EQ(status->signal, SIGTERM);
}

TEST(Processes, RootThatEndsItsOwnNeedsNoKill) {
    // The shell says when it knows both pids: a TERM that came between the second fork and b=$!
    // would kill only the first sleep, and the test would wait out the grace for the second.
    std::string ready = ::testing::TempDir() + "sion-processes-ready." + std::to_string(::getpid());
    ::unlink(ready.c_str());
    Child child = spawn_shell("trap 'kill $a $b; wait; exit 0' TERM; sleep 60 & a=$!; "
                              "sleep 61 & b=$!; : >'" + ready + "'; wait");
    auto root = process_id(child.pid());
    ASSERT_TRUE(root);
    for (int i = 0; i < 1000 && ::access(ready.c_str(), F_OK) != 0; ++i)
        std::this_thread::sleep_for(10ms);
    ASSERT_EQ(::access(ready.c_str(), F_OK), 0) << "the shell did not start its sleeps";
    ::unlink(ready.c_str());
    std::vector<ProcessId> tree = tree_of_size(*root, 3);
    auto ended = end_process_tree(*root, 10s, 20s);
    ASSERT_TRUE(ended) << ended.error().message();
    EXPECT_FALSE(ended->killed);
    EXPECT_EQ(running(tree), 0U);
    auto status = child.wait();
    ASSERT_TRUE(status);
    EXPECT_EQ(status->exit_code, 0);
}

TEST(Processes, AStrangerWithTheSamePidIsLeftAlone) {
    Child child = spawn_shell("sleep 60");
    auto who = process_id(child.pid());
    ASSERT_TRUE(who);
    auto ended = end_process_tree({who->pid, who->start + 1}, 0ms, 1s);
    ASSERT_TRUE(ended) << ended.error().message();
    EXPECT_FALSE(ended->killed);
    EXPECT_TRUE(still_runs(*who));
    ASSERT_TRUE(child.kill_group(SIGKILL));
}

// What this user may not signal: pid 1, as nobody (as root, a child that has become nobody tries).
TEST(Processes, ATreeThatCannotBeSignalledIsAnError) {
    auto attempt = [] {
        auto init = process_id(1);
        if (!init)
            return 2;
        auto ended = end_process_tree(*init, 0ms, 1s);
        if (ended)
            return 3;
        if (ended.error().exit() != Exit::no_perm)
            return 4;
        return ended.error().message() == "cannot signal pid 1: Operation not permitted" ? 0 : 5;
    };
    if (::geteuid() != 0) {
        EXPECT_EQ(attempt(), 0);
        return;
    }
    pid_t child = ::fork();
    ASSERT_GE(child, 0);
    if (child == 0) {
        if (::setresgid(65534, 65534, 65534) != 0 || ::setresuid(65534, 65534, 65534) != 0)
            ::_exit(1);
        ::_exit(attempt());
    }
    int status = 0;
    ASSERT_EQ(::waitpid(child, &status, 0), child);
    ASSERT_TRUE(WIFEXITED(status));
    EXPECT_EQ(WEXITSTATUS(status), 0) << "1: cannot become nobody; 2: no pid 1; 3: signalled; "
                                         "4: another exit; 5: another message";
}

} // namespace
} // namespace sion
