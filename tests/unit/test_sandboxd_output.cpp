// SPDX-License-Identifier: MIT
// Tests for sandboxd/output, sandboxd/capture and init's answers: output cut at its cap, and a
// child run to its end with its output counted.
#include "lib/utf8.hpp"
#include "sandboxd/capture.hpp"
#include "sandboxd/init.hpp"
#include "sandboxd/output.hpp"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace sion::sandboxd {
namespace {

#define ASSERT_OK(r) ASSERT_TRUE(r) << (r).error().message()

TEST(CutOutput, KeepsWhatFitsAndSaysHowMuchWasCut) {
    std::string text = "hello";
    EXPECT_FALSE(cut_output(text, 5, 5));
    EXPECT_EQ(text, "hello");
    text = "hello world";
    EXPECT_TRUE(cut_output(text, 5, 11));
    EXPECT_EQ(text, "hello\n[... 6 more bytes cut]\n");
    // Collected at the cap, more written than kept.
    text = "line\n";
    EXPECT_TRUE(cut_output(text, 5, 1000));
    EXPECT_EQ(text, "line\n[... 995 more bytes cut]\n");
    text = "";
    EXPECT_TRUE(cut_output(text, 0, 3));
    EXPECT_EQ(text, "[... 3 more bytes cut]\n");
}

TEST(CutOutput, NeverSplitsACharacter) {
    std::string text = "ab\xC3\xA9"; // "abé"
    EXPECT_TRUE(cut_output(text, 3, 4));
    EXPECT_EQ(text, "ab\n[... 2 more bytes cut]\n");
    text = "\xE2\x82\xAC\xE2\x82\xAC"; // "€€", kept 4 of 6
    EXPECT_TRUE(cut_output(text, 4, 6));
    EXPECT_EQ(text, "\xE2\x82\xAC\n[... 3 more bytes cut]\n");
    text = "\xE2\x82\xAC"; // exactly at the cap, and more came
    EXPECT_TRUE(cut_output(text, 3, 10));
    EXPECT_EQ(text, "\xE2\x82\xAC\n[... 7 more bytes cut]\n");
}

TEST(TextForJson, ReplacesWhatJsonCannotCarry) {
    EXPECT_EQ(text_for_json("plain é"), "plain é");
    EXPECT_EQ(text_for_json(std::string("a\0b", 3)), "a\xEF\xBF\xBD"
                                                     "b");
    EXPECT_EQ(text_for_json("\xFF\xFEz"), "\xEF\xBF\xBD\xEF\xBF\xBDz");
    EXPECT_EQ(text_for_json("\xC3"), "\xEF\xBF\xBD");
}

ChildSpec shell(const std::string& script) {
    ChildSpec spec;
    spec.argv = {"/bin/sh", "-c", script};
    spec.env = {"PATH=/usr/bin:/bin"};
    return spec;
}

TEST(Capture, CountsWhatItDoesNotKeep) {
    CaptureSpec spec;
    spec.child = shell("head -c 100000 /dev/zero; echo err >&2; exit 3");
    spec.cap = 1000;
    auto c = capture(std::move(spec));
    ASSERT_OK(c);
    EXPECT_EQ(c->status, 3);
    EXPECT_EQ(c->out.size(), 1000U);
    EXPECT_EQ(c->out_total, 100000U);
    EXPECT_EQ(c->err, "err\n");
    EXPECT_EQ(c->err_total, 4U);
    EXPECT_FALSE(c->timed_out);
}

TEST(Capture, FeedsInputAndReadsTheStatusPipe) {
    auto pipe = Pipe::make();
    ASSERT_OK(pipe);
    CaptureSpec spec;
    spec.child = shell("cat; echo '{\"exit\":0}' >&3");
    spec.child.extra_fds.push_back({pipe->write.get(), 3});
    spec.input = "fed";
    spec.cap = 100;
    spec.status_fd = pipe->read.release();
    spec.close_after_spawn.push_back(std::move(pipe->write));
    auto c = capture(std::move(spec));
    ASSERT_OK(c);
    EXPECT_EQ(c->out, "fed");
    EXPECT_EQ(c->report, "{\"exit\":0}\n");
}

TEST(Capture, KillsTheGroupWhenTimeRunsOut) {
    CaptureSpec spec;
    spec.child = shell("echo started; sleep 30 & sleep 30");
    spec.child.time_limit = std::chrono::milliseconds(200);
    spec.cap = 100;
    auto c = capture(std::move(spec));
    ASSERT_OK(c);
    EXPECT_TRUE(c->timed_out);
    EXPECT_EQ(c->signal, 9);
    EXPECT_EQ(c->out, "started\n");
}

TEST(InitResult, TimedOutIs124AndOutputIsCut) {
    RunResult run;
    run.timed_out = true;
    run.signal = 9;
    run.status = 137;
    run.out = std::string(10, 'x');
    run.out_total = 25;
    run.wall_ms = 1000;
    Json j = init_result(Result<RunResult>(run), 10);
    EXPECT_EQ(j.get("exit").as_int().value_or(0), 124);
    EXPECT_EQ(j.get("signal").as_int().value_or(0), 9);
    EXPECT_EQ(j.get("timed_out").as_bool().value_or(false), true);
    EXPECT_EQ(j.get("truncated").as_bool().value_or(false), true);
    EXPECT_EQ(std::string(j.get("stdout").as_string().value_or("")),
              "xxxxxxxxxx\n[... 15 more bytes cut]\n");
}

TEST(InitResult, NotFoundIs127WithTheReason) {
    Json j = init_result(Result<RunResult>(Error(Exit::not_found, "cannot run 'x': No such file or "
                                                                  "directory")),
                         100);
    EXPECT_EQ(j.get("exit").as_int().value_or(0), 127);
    EXPECT_NE(std::string(j.get("stderr").as_string().value_or("")).find("cannot run 'x'"),
              std::string::npos);
}

} // namespace
} // namespace sion::sandboxd
