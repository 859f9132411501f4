// SPDX-License-Identifier: MIT
// Tests for lib/proto/sandbox_exec: sandbox/exec's params and result as JSON, and each line of the
// method's fixtures (tests/fixtures/methods/sandbox.exec.jsonl, which t0003 checks against
// schemas/sandbox.exec.*.json) read and written back as it was.
#include "lib/proto/sandbox_exec.hpp"

#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>
#include <string>
#include <vector>

namespace sion::proto {
namespace {

#define ASSERT_OK(r) ASSERT_TRUE(r) << (r).error().message()

Result<ExecRequest> request(std::string_view text) {
    auto json = Json::parse(text);
    if (!json)
        return std::move(json).error();
    return exec_request_from_json(*json);
}

TEST(ExecRequest, CommandOrArgv) {
    auto r = request(R"({"command":"echo hi","stdin":"x","env":{"A":"1"},"timeout":2.5})");
    ASSERT_OK(r);
    EXPECT_EQ(r->command, "echo hi");
    EXPECT_TRUE(r->argv.empty());
    EXPECT_EQ(r->input, "x");
    ASSERT_EQ(r->env.size(), 1U);
    EXPECT_EQ(r->env[0], (std::pair<std::string, std::string>{"A", "1"}));
    EXPECT_EQ(r->timeout, std::chrono::milliseconds(2500));
    EXPECT_EQ(request_argv(*r), (std::vector<std::string>{"/bin/sh", "-c", "echo hi"}));

    r = request(R"({"argv":["ls","-l"],"unknown":true})");
    ASSERT_OK(r);
    EXPECT_EQ(request_argv(*r), (std::vector<std::string>{"ls", "-l"}));
    EXPECT_FALSE(r->timeout);
}

TEST(ExecRequest, BadParamsSayWhatIsWrong) {
    struct Case {
        const char* json;
        const char* message;
    };

    for (const Case& c : std::vector<Case>{
             {R"({})", "give either 'command' or 'argv'"},
             {R"({"command":"x","argv":["x"]})", "give either 'command' or 'argv'"},
             {R"({"argv":[]})", "member 'argv' is empty"},
             {R"({"argv":["a",1]})", "member 'argv' holds a number, not only strings"},
             {R"({"command":1})", "member 'command' is a number, not a string"},
             {R"({"command":"x","timeout":0})",
              "member 'timeout' must be more than 0 seconds, and finite"},
             {R"({"command":"x","env":{"A=B":"1"}})",
              "environment variable name 'A=B' is not a name"},
             {R"({"command":"x","env":{"A":1}})",
              "environment variable 'A' is a number, not a string"},
             {R"([1])", "the params are an array, not an object"},
         }) {
        auto r = request(c.json);
        ASSERT_FALSE(r) << c.json;
        EXPECT_EQ(r.error().exit(), Exit::data) << c.json;
        EXPECT_EQ(r.error().message(), c.message) << c.json;
    }
}

TEST(ExecRequest, RoundTrip) {
    ExecRequest in;
    in.argv = {"printf", "%s", "a b"};
    in.input = "in";
    in.env = {{"X", "y"}};
    in.timeout = std::chrono::milliseconds(1500);
    auto out = exec_request_from_json(exec_request_to_json(in));
    ASSERT_OK(out);
    EXPECT_EQ(out->argv, in.argv);
    EXPECT_EQ(out->input, in.input);
    EXPECT_EQ(out->env, in.env);
    EXPECT_EQ(out->timeout, in.timeout);
}

TEST(ExecResult, JsonHasEveryMember) {
    ExecResult r;
    r.exit = 137;
    r.signal = 9;
    r.stdout_text = "out";
    r.stderr_text = std::string("a\0b", 3);
    r.truncated = true;
    r.wall_ms = 12;
    r.cpu_ms = 3;
    r.max_rss_kib = 2048;
    EXPECT_EQ(exec_result_to_json(r).dump(),
              R"({"exit":137,"signal":9,"timed_out":false,"stdout":"out","stderr":"a)"
              "\xEF\xBF\xBD"
              R"(b",)"
              R"("truncated":true,"wall_ms":12,"cpu_ms":3,"max_rss_kib":2048})");
    auto back = exec_result_from_json(exec_result_to_json(r));
    ASSERT_OK(back);
    EXPECT_EQ(back->signal, 9);
    EXPECT_EQ(back->stdout_text, "out");
    ExecResult plain;
    EXPECT_EQ(exec_result_to_json(plain).get("signal").is_null(), true);
}

TEST(SandboxExec, TheFixturesReadAndWriteBackAsTheyAre) {
    const char* source = std::getenv("SION_TEST_SOURCE_DIR");
    ASSERT_NE(source, nullptr) << "run through ctest";
    std::ifstream in(std::string(source) + "/tests/fixtures/methods/sandbox.exec.jsonl");
    ASSERT_TRUE(in.good());
    int requests = 0;
    int results = 0;
    for (std::string line; std::getline(in, line);) {
        auto message = Json::parse(line);
        ASSERT_OK(message);
        if (JsonView params = message->view().get("params")) {
            auto request = exec_request_from_json(params);
            ASSERT_OK(request);
            EXPECT_EQ(canonical_json(exec_request_to_json(*request)), canonical_json(params))
                << line;
            ++requests;
        } else if (JsonView result = message->view().get("result")) {
            auto read = exec_result_from_json(result);
            ASSERT_OK(read);
            EXPECT_EQ(canonical_json(exec_result_to_json(*read)), canonical_json(result)) << line;
            ++results;
        }
    }
    EXPECT_GE(requests, 3);
    EXPECT_GE(results, 3);
}

} // namespace
} // namespace sion::proto
