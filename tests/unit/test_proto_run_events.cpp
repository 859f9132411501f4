// SPDX-License-Identifier: MIT
// Tests for lib/proto/run_events: a session's --json events read back, as sion-route eval and
// agent_spawn read them: the seed's session (tests/fixtures/run-event/primes.jsonl), one that came
// to no end, and lines that are not events.
#include "lib/proto/run_events.hpp"

#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>
#include <iterator>
#include <string>

namespace sion::proto {
namespace {

std::string fixture(const std::string& name) {
    const char* top = std::getenv("SION_TEST_SOURCE_DIR"); // NOLINT(concurrency-mt-unsafe)
    std::ifstream in(std::string(top != nullptr ? top : ".") + "/tests/fixtures/run-event/" + name);
    return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

TEST(RunEvents, TheSeedsSession) {
    std::string text = fixture("primes.jsonl");
    ASSERT_FALSE(text.empty());
    RunSeen seen = read_run_events(text);
    EXPECT_EQ(seen.session, "a82ce2684d080189");
    EXPECT_EQ(seen.state, "done");
    EXPECT_EQ(seen.why, "");
    EXPECT_EQ(seen.said, "There are 17 primes below 60; the script is primes.py in the workspace.");
    EXPECT_EQ(seen.calls,
              (std::vector<std::string>{"write_file ok", "shell ok", "shell ok", "shell ok"}));
    EXPECT_FALSE(seen.tainted);
    EXPECT_EQ(seen.usage.input_tokens, 2865);
    EXPECT_EQ(seen.usage.output_tokens, 124);
}

TEST(RunEvents, NoEndAndLinesThatAreNotEvents) {
    RunSeen seen = read_run_events(
        "{\"event\":\"session\",\"session\":\"0123456789abcdef\"}\nnot json\n[1]\n"
        "{\"event\":\"result\",\"parent\":\"call_1_1\",\"tool\":\"read_file\",\"state\":\"ok\"}\n"
        "{\"event\":\"result\",\"tool\":\"run_code\",\"state\":\"error\"}\n{\"event\":\"text\"");
    EXPECT_EQ(seen.session, "0123456789abcdef");
    EXPECT_EQ(seen.state, "");                                           // killed before its end
    EXPECT_EQ(seen.calls, (std::vector<std::string>{"run_code error"})); // a program's call is not
    EXPECT_EQ(seen.said, "");
    EXPECT_EQ(read_run_events("").session, "");
}

} // namespace
} // namespace sion::proto
