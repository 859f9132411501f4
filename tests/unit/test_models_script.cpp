// SPDX-License-Identifier: MIT
// lib/models/script and model: the scripted model plays each kind of turn, names its calls, says
// what model, id and finish reason answered, counts or estimates usage, fails as a provider would,
// runs out; a malformed script is refused with a message that says where; the parser and
// schemas/script-model.schema.json agree on the fixtures; open_model reads a spec.
#include "lib/models/model.hpp"
#include "lib/models/script.hpp"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <string>
#include <vector>

namespace sion::models {
namespace {

namespace fs = std::filesystem;

constexpr size_t k_mib = size_t{1} << 20;

Result<std::unique_ptr<ScriptModel>> parse(std::string_view text) {
    return ScriptModel::parse("script:t.json", "t.json", text);
}

std::unique_ptr<ScriptModel> parse_ok(std::string_view text) {
    auto r = parse(text);
    EXPECT_TRUE(r) << text << "\n" << (r ? std::string() : r.error().message());
    return r ? std::move(*r) : nullptr;
}

// The message of a script that must be refused as malformed (Exit::data).
std::string parse_error(std::string_view text) {
    auto r = parse(text);
    if (r)
        return "parsed";
    EXPECT_EQ(r.error().exit(), Exit::data) << text;
    return r.error().message();
}

// An answer to a request of nothing.
Result<Answer> ask(Model& model) {
    return model.answer(Request{});
}

// A directory of its own, removed with everything in it.
class TempDir {
public:
    TempDir() {
        std::string tmpl = (fs::temp_directory_path() / "sion-test-script.XXXXXX").string();
        if (::mkdtemp(tmpl.data()) == nullptr)
            ADD_FAILURE() << "mkdtemp failed";
        m_path = tmpl;
    }

    TempDir(const TempDir&) = delete;
    TempDir& operator=(const TempDir&) = delete;
    TempDir(TempDir&&) = delete;
    TempDir& operator=(TempDir&&) = delete;

    ~TempDir() {
        std::error_code ignored;
        fs::remove_all(m_path, ignored);
    }

    [[nodiscard]] std::string write(const std::string& name, std::string_view text) const {
        std::string path = (m_path / name).string();
        std::ofstream out(path, std::ios::binary);
        out.write(text.data(), static_cast<std::streamsize>(text.size()));
        EXPECT_TRUE(out.good()) << path;
        return path;
    }

    [[nodiscard]] const fs::path& path() const { return m_path; }

private:
    fs::path m_path;
};

fs::path source_dir() {
    const char* dir = std::getenv("SION_TEST_SOURCE_DIR"); // NOLINT(concurrency-mt-unsafe)
    return dir != nullptr ? fs::path(dir) : fs::path(".");
}

// Name and text of each .json file in tests/fixtures/<sub>, sorted by name.
std::map<std::string, std::string> fixtures(const std::string& sub) {
    std::map<std::string, std::string> out;
    fs::path dir = source_dir() / "tests/fixtures" / sub;
    std::error_code ec;
    for (const auto& entry : fs::directory_iterator(dir, ec)) {
        if (entry.path().extension() != ".json")
            continue;
        std::ifstream in(entry.path(), std::ios::binary);
        out[entry.path().filename().string()] =
            std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
    }
    return out;
}

// --- turns -----------------------------------------------------------------------------------

TEST(ScriptModel, PlaysTextThenReasoningThenCalls) {
    auto model = parse_ok(R"({"turns": [
        {"text": "Hello."},
        {"text": "Counted.", "reasoning": "Seventeen, by sieve."},
        {"calls": [{"tool": "shell", "input": {"command": "ls"}}]},
        {"text": "Listing.", "reasoning": "ls will do", "calls": [{"tool": "shell"}]}
    ]})");
    ASSERT_TRUE(model);
    EXPECT_EQ(model->name(), "script:t.json");
    EXPECT_EQ(model->turns(), 4U);

    auto a = ask(*model);
    ASSERT_TRUE(a) << a.error().message();
    EXPECT_EQ(a->text, "Hello.");
    EXPECT_EQ(a->reasoning, "");
    EXPECT_TRUE(a->calls.empty());

    a = ask(*model);
    ASSERT_TRUE(a) << a.error().message();
    EXPECT_EQ(a->text, "Counted.");
    EXPECT_EQ(a->reasoning, "Seventeen, by sieve.");
    EXPECT_TRUE(a->calls.empty());

    a = ask(*model);
    ASSERT_TRUE(a) << a.error().message();
    EXPECT_EQ(a->text, "");
    ASSERT_EQ(a->calls.size(), 1U);
    EXPECT_EQ(a->calls[0].id, "call_3_1");
    EXPECT_EQ(a->calls[0].tool, "shell");
    EXPECT_EQ(a->calls[0].input.dump(), R"({"command":"ls"})");

    a = ask(*model);
    ASSERT_TRUE(a) << a.error().message();
    EXPECT_EQ(a->text, "Listing.");
    EXPECT_EQ(a->reasoning, "ls will do");
    ASSERT_EQ(a->calls.size(), 1U);
    EXPECT_EQ(a->calls[0].id, "call_4_1");
    EXPECT_TRUE(a->calls[0].input.view().is_object()); // {} when the script gives no input
    EXPECT_EQ(a->calls[0].input.dump(), "{}");
}

TEST(ScriptModel, SeveralCallsInOneTurnEachWithItsId) {
    auto model = parse_ok(R"({"turns": [
        {"text": "first"},
        {"calls": [
            {"tool": "read_file", "input": {"path": "a.txt"}},
            {"tool": "read_file", "input": {"path": "b.txt", "lines": [1, 20]}, "id": "mine"},
            {"tool": "count"}
        ]},
        {"fail": {"status": 529, "message": "Overloaded"}},
        {"calls": [{"tool": "shell"}, {"tool": "shell"}]}
    ]})");
    ASSERT_TRUE(model);
    ASSERT_TRUE(ask(*model));
    auto a = ask(*model);
    ASSERT_TRUE(a) << a.error().message();
    ASSERT_EQ(a->calls.size(), 3U);
    // A script's own "id" is ignored: ids are made up, turn then call, both from 1.
    EXPECT_EQ(a->calls[0].id, "call_2_1");
    EXPECT_EQ(a->calls[1].id, "call_2_2");
    EXPECT_EQ(a->calls[2].id, "call_2_3");
    EXPECT_EQ(a->calls[0].input.dump(), R"({"path":"a.txt"})");
    EXPECT_EQ(a->calls[1].input.dump(), R"({"path":"b.txt","lines":[1,20]})");
    EXPECT_EQ(a->calls[2].tool, "count");
    EXPECT_EQ(a->calls[2].input.dump(), "{}");
    // A failing turn is a turn: the next is the fourth.
    EXPECT_FALSE(ask(*model));
    a = ask(*model);
    ASSERT_TRUE(a) << a.error().message();
    ASSERT_EQ(a->calls.size(), 2U);
    EXPECT_EQ(a->calls[0].id, "call_4_1");
    EXPECT_EQ(a->calls[1].id, "call_4_2");
}

TEST(ScriptModel, WhatAnAnswerSaysOfItself) {
    auto model = parse_ok(R"({"turns": [
        {"text": "Hello."},
        {"calls": [{"tool": "shell"}]},
        {"text": "Cut.", "calls": [{"tool": "shell"}], "model": "claude-opus-5-5-20260101",
         "id": "msg_1", "finish_reason": "max_tokens"},
        {"text": "Bye.", "model": "gpt-5.2", "finish_reason": ""}
    ]})");
    ASSERT_TRUE(model);

    struct Want {
        const char* model;
        const char* id;
        const char* finish_reason;
    };

    // Unsaid: no model nor id, and it finished as the Messages API would have said.
    for (const Want& want : {Want{"", "", "end_turn"}, Want{"", "", "tool_use"},
                             Want{"claude-opus-5-5-20260101", "msg_1", "max_tokens"},
                             Want{"gpt-5.2", "", "end_turn"}}) {
        auto a = ask(*model);
        ASSERT_TRUE(a) << a.error().message();
        EXPECT_EQ(a->model, want.model);
        EXPECT_EQ(a->id, want.id);
        EXPECT_EQ(a->finish_reason, want.finish_reason);
    }
    // The answers of a summary and a sort with no turn of theirs left are whole answers too.
    for (Purpose purpose : {Purpose::summary, Purpose::sort}) {
        Request r;
        r.purpose = purpose;
        auto a = model->answer(r);
        ASSERT_TRUE(a) << a.error().message();
        EXPECT_EQ(a->finish_reason, "end_turn");
        EXPECT_EQ(a->model, "");
    }
}

TEST(ScriptModel, AnswersAreCopiesSoEachAskIsIndependent) {
    auto model = parse_ok(R"({"turns": [{"calls": [{"tool": "t", "input": {"k": "v"}}]}]})");
    ASSERT_TRUE(model);
    auto a = ask(*model);
    ASSERT_TRUE(a);
    model.reset(); // the answer owns its input
    EXPECT_EQ(a->calls[0].input.dump(), R"({"k":"v"})");
}

TEST(ScriptModel, UnknownMembersAreIgnored) {
    auto model = parse_ok(R"({"version": 3, "turns": [
        {"text": "hi", "extra": {"deep": [1]}, "calls": [{"tool": "t", "why": "x"}],
         "usage": {"input_tokens": 1, "output_tokens": 2, "cost": 0.5}},
        {"fail": {"status": 500, "message": "Internal Server Error", "retry_after": 3}}
    ]})");
    ASSERT_TRUE(model);
    EXPECT_EQ(model->turns(), 2U);
}

TEST(ScriptModel, TextIsUtf8AsGiven) {
    auto model = parse_ok(R"({"turns": [{"text": "caf\u00e9 \ud83d\ude00 日本"}]})");
    ASSERT_TRUE(model);
    auto a = ask(*model);
    ASSERT_TRUE(a);
    EXPECT_EQ(a->text, "caf\xc3\xa9 \xf0\x9f\x98\x80 \xe6\x97\xa5\xe6\x9c\xac");
}

// --- usage -----------------------------------------------------------------------------------

TEST(ScriptModel, UsageAsTheScriptGivesIt) {
    auto model = parse_ok(R"({"turns": [
        {"text": "a", "usage": {"input_tokens": 120, "output_tokens": 30}},
        {"text": "b", "usage": {"input_tokens": 180, "output_tokens": 14, "cache_read_tokens": 120,
                                "cache_write_tokens": 60}},
        {"text": "c", "usage": {"input_tokens": 0, "output_tokens": 0}},
        {"text": "d", "usage": {"input_tokens": 9007199254740991, "output_tokens": 1e3}}
    ]})");
    ASSERT_TRUE(model);
    // A request that would be estimated at something else, to show it is not.
    ToolSpec tool{"shell", "Runs a command.", Json::object()};
    Request request;
    request.system = "You are a careful agent.";
    request.tools = {&tool, 1};

    auto a = model->answer(request);
    ASSERT_TRUE(a);
    EXPECT_EQ(a->usage.input_tokens, 120);
    EXPECT_EQ(a->usage.output_tokens, 30);
    EXPECT_EQ(a->usage.cache_read_tokens, 0);
    EXPECT_EQ(a->usage.cache_write_tokens, 0);

    a = model->answer(request);
    ASSERT_TRUE(a);
    EXPECT_EQ(a->usage.input_tokens, 180);
    EXPECT_EQ(a->usage.output_tokens, 14);
    EXPECT_EQ(a->usage.cache_read_tokens, 120);
    EXPECT_EQ(a->usage.cache_write_tokens, 60);

    a = model->answer(request);
    ASSERT_TRUE(a);
    EXPECT_EQ(a->usage.input_tokens, 0); // zero is a count given, not one to estimate
    EXPECT_EQ(a->usage.output_tokens, 0);

    a = model->answer(request);
    ASSERT_TRUE(a);
    EXPECT_EQ(a->usage.input_tokens, 9007199254740991);
    EXPECT_EQ(a->usage.output_tokens, 1000);
}

TEST(ScriptModel, UsageEstimatedWhenTheScriptGivesNone) {
    auto model = parse_ok(R"({"turns": [
        {"text": "hello", "reasoning": "abc",
         "calls": [{"tool": "shell", "input": {"command": "ls"}}]},
        {"text": "x"}
    ]})");
    ASSERT_TRUE(model);
    ToolSpec tool{"shell", "Runs.", *Json::parse(R"({"type":"object"})")};
    std::vector<Json> conversation;
    conversation.push_back(*Json::parse(R"({"role":"user","text":"list"})"));
    Request request{.system = "Be brief.", .tools = {&tool, 1}, .conversation = conversation};
    // 9 (the system prompt) + 5 + 5 + 17 (the tool) + 29 (the message) = 65 bytes: 17 tokens.
    ASSERT_EQ(estimate_tokens(request), 17);

    auto a = model->answer(request);
    ASSERT_TRUE(a);
    EXPECT_EQ(a->usage.input_tokens, 17);
    // "hello" + "abc" + "shell" + {"command":"ls"}: 5 + 3 + 5 + 16 = 29 bytes, 8 tokens.
    EXPECT_EQ(a->usage.output_tokens, 8);
    EXPECT_EQ(a->usage.cache_read_tokens, 0);
    EXPECT_EQ(a->usage.cache_write_tokens, 0);

    a = ask(*model);
    ASSERT_TRUE(a);
    EXPECT_EQ(a->usage.input_tokens, 0);
    EXPECT_EQ(a->usage.output_tokens, 1);
}

TEST(EstimateTokens, AQuarterOfTheBytesRoundedUp) {
    EXPECT_EQ(estimate_tokens(""), 0);
    EXPECT_EQ(estimate_tokens("a"), 1);
    EXPECT_EQ(estimate_tokens("abcd"), 1);
    EXPECT_EQ(estimate_tokens("abcde"), 2);
    EXPECT_EQ(estimate_tokens("\xc3\xa9\xc3\xa9\xc3\xa9"), 2); // bytes, not characters
    EXPECT_EQ(estimate_tokens(std::string(4000, 'x')), 1000);
    EXPECT_EQ(estimate_tokens(Request{}), 0);
}

TEST(EstimateTokens, ARequestCountsEverythingItSends) {
    // "sys", then "ab" "cd" {"a":1}, "e" "" and nothing, then {"role":"user"} and the same for
    // "tool" as it dumps, compact: 3 + 11 + 1 + 15 + 15 = 45 bytes, 12 tokens.
    std::vector<ToolSpec> tools;
    tools.push_back(ToolSpec{"ab", "cd", *Json::parse(R"({"a":1})")});
    tools.push_back(ToolSpec{"e", "", Json()});
    std::vector<Json> conversation;
    conversation.push_back(*Json::parse(R"({"role":"user"})"));
    conversation.push_back(*Json::parse(R"( { "role" : "tool" } )"));
    Request request{.system = "sys", .tools = tools, .conversation = conversation};
    EXPECT_EQ(estimate_tokens(request), 12);
    request.max_output_tokens = 1; // what it may write is not what it sends
    EXPECT_EQ(estimate_tokens(request), 12);
}

// --- failures and running out ----------------------------------------------------------------

TEST(ScriptModel, FailuresAreAsAProviderWouldReportThem) {
    struct Case {
        int status;
        Exit exit;
    };

    const std::vector<Case> cases = {
        {429, Exit::unavailable}, {500, Exit::unavailable}, {502, Exit::unavailable},
        {503, Exit::unavailable}, {504, Exit::unavailable}, {529, Exit::unavailable},
        {400, Exit::data},        {401, Exit::no_perm},     {402, Exit::no_perm},
        {403, Exit::no_perm},     {404, Exit::unavailable}, {413, Exit::unavailable},
        {501, Exit::unavailable}, {100, Exit::unavailable}, {599, Exit::unavailable},
    };
    for (const Case& c : cases) {
        auto model = parse_ok(R"({"turns": [{"fail": {"status": )" + std::to_string(c.status)
                              + R"(, "message": "Overloaded"}}, {"text": "after"}]})");
        ASSERT_TRUE(model);
        auto a = ask(*model);
        ASSERT_FALSE(a) << c.status;
        EXPECT_EQ(a.error().exit(), c.exit) << c.status;
        EXPECT_EQ(a.error().message(), "HTTP " + std::to_string(c.status) + ": Overloaded");
        EXPECT_EQ(worth_another_model(a.error()), c.exit == Exit::unavailable) << c.status;
        // The failure took its turn; the script goes on.
        auto next = ask(*model);
        ASSERT_TRUE(next) << c.status;
        EXPECT_EQ(next->text, "after");
    }
}

TEST(ScriptModel, RunsOut) {
    auto model = parse_ok(
        R"({"turns": [{"text": "one"}, {"fail": {"status": 529, "message": "Overloaded"}}]})");
    ASSERT_TRUE(model);
    EXPECT_TRUE(ask(*model));
    EXPECT_FALSE(ask(*model));
    for (int i = 0; i < 2; ++i) { // and stays out
        auto a = ask(*model);
        ASSERT_FALSE(a);
        EXPECT_EQ(a.error().exit(), Exit::no_input);
        EXPECT_EQ(a.error().message(), "script 't.json' has no turn left (it has 2)");
        EXPECT_FALSE(worth_another_model(a.error()));
    }
}

TEST(ScriptModel, SummaryTurnsAnswerOnlyASummarysRequest) {
    auto model = parse_ok(R"({"turns": [
        {"text": "one"},
        {"summary": true, "text": "S1"},
        {"calls": [{"tool": "shell"}]},
        {"summary": true, "fail": {"status": 529, "message": "Overloaded"}}]})");
    ASSERT_TRUE(model);
    Request summary;
    summary.purpose = Purpose::summary;
    auto a = ask(*model);
    ASSERT_TRUE(a);
    EXPECT_EQ(a->text, "one");
    auto s = model->answer(summary);
    ASSERT_TRUE(s);
    EXPECT_EQ(s->text, "S1");
    a = ask(*model); // the summary's turn passed by
    ASSERT_TRUE(a);
    ASSERT_EQ(a->calls.size(), 1U);
    EXPECT_EQ(a->calls[0].id, "call_3_1");
    s = model->answer(summary);
    ASSERT_FALSE(s);
    EXPECT_EQ(s.error().message(), "HTTP 529: Overloaded");
    // None left: a summary's request is answered so, and uses nothing; the others run out.
    for (int i = 0; i < 2; ++i) {
        s = model->answer(summary);
        ASSERT_TRUE(s);
        EXPECT_EQ(s->text, "The scripted model writes no summary: its script has no turn marked "
                           "\"summary\" left.");
    }
    a = ask(*model);
    ASSERT_FALSE(a);
    EXPECT_EQ(a.error().message(), "script 't.json' has no turn left (it has 2)");
}

TEST(ScriptModel, SortTurnsAnswerOnlyASortersRequest) {
    auto model = parse_ok(R"({"turns": [
        {"sort": true, "text": "code"},
        {"text": "one"},
        {"summary": true, "text": "S1"}]})");
    ASSERT_TRUE(model);
    Request sort;
    sort.purpose = Purpose::sort;
    Request summary;
    summary.purpose = Purpose::summary;
    auto a = ask(*model); // the sorter's turn passed by
    ASSERT_TRUE(a);
    EXPECT_EQ(a->text, "one");
    auto s = model->answer(sort);
    ASSERT_TRUE(s);
    EXPECT_EQ(s->text, "code");
    auto m = model->answer(summary);
    ASSERT_TRUE(m);
    EXPECT_EQ(m->text, "S1");
    // None left: the sorter is answered none, and uses nothing.
    s = model->answer(sort);
    ASSERT_TRUE(s);
    EXPECT_EQ(s->text, "none");
    a = ask(*model);
    ASSERT_FALSE(a);
    EXPECT_EQ(a.error().message(), "script 't.json' has no turn left (it has 1)");
    auto both = ScriptModel::parse("script:t.json", "t.json",
                                   R"({"turns": [{"sort": true, "summary": true, "text": "x"}]})");
    ASSERT_FALSE(both);
    EXPECT_EQ(both.error().message(), "script 't.json': turn 1 is marked both summary and sort");
}

TEST(ScriptModel, AnEmptyScriptHasNoTurnAtAll) {
    auto model = parse_ok(R"({"turns": []})");
    ASSERT_TRUE(model);
    EXPECT_EQ(model->turns(), 0U);
    auto a = ask(*model);
    ASSERT_FALSE(a);
    EXPECT_EQ(a.error().exit(), Exit::no_input);
    EXPECT_EQ(a.error().message(), "script 't.json' has no turn left (it has 0)");
}

// --- malformed scripts -----------------------------------------------------------------------

TEST(ScriptParse, MalformedScriptsSayWhatAndWhere) {
    struct Case {
        const char* text;
        const char* message; // after "script 't.json': "
    };

    const std::vector<Case> cases = {
        {"", "invalid JSON at byte 0"},
        {"turns", "invalid JSON at byte 0"},
        {R"({"turns": [{"text": "hi"}]} x)", "invalid JSON at byte 28"},
        {"[]", "the document is an array, not an object"},
        {"\"turns\"", "the document is a string, not an object"},
        {"null", "the document is null, not an object"},
        {"{}", "member 'turns' is missing"},
        {R"({"turns": {}})", "member 'turns' is an object, not an array"},
        {R"({"turns": "x"})", "member 'turns' is a string, not an array"},
        {R"({"turns": null})", "member 'turns' is null, not an array"},
        {R"({"turns": [1]})", "turn 1 is a number, not an object"},
        {R"({"turns": [{"text": "a"}, []]})", "turn 2 is an array, not an object"},
        {R"({"turns": [{}]})", "turn 1 has neither text nor calls"},
        {R"({"turns": [{"text": "a"}, {"text": "b"}, {"reasoning": "r"}]})",
         "turn 3 has neither text nor calls"},
        {R"({"turns": [{"text": ""}]})", "turn 1 has neither text nor calls"},
        {R"({"turns": [{"calls": []}]})", "turn 1 has neither text nor calls"},
        {R"({"turns": [{"text": "", "calls": [], "reasoning": "r"}]})",
         "turn 1 has neither text nor calls"},
        {R"({"turns": [{"usage": {"input_tokens": 1, "output_tokens": 1}}]})",
         "turn 1 has neither text nor calls"},
        {R"({"turns": [{"text": 7}]})", "turn 1: member 'text' is a number, not a string"},
        {R"({"turns": [{"text": null, "calls": [{"tool": "t"}]}]})",
         "turn 1: member 'text' is null, not a string"},
        {R"({"turns": [{"text": "a", "reasoning": true}]})",
         "turn 1: member 'reasoning' is a boolean, not a string"},
        {R"({"turns": [{"text": "a", "model": 5}]})",
         "turn 1: member 'model' is a number, not a string"},
        {R"({"turns": [{"text": "a", "id": ["x"]}]})",
         "turn 1: member 'id' is an array, not a string"},
        {R"({"turns": [{"text": "a", "finish_reason": null}]})",
         "turn 1: member 'finish_reason' is null, not a string"},
        {R"({"turns": [{"text": "a"}, {"calls": "shell"}]})",
         "turn 2: member 'calls' is a string, not an array"},
        {R"({"turns": [{"calls": {"tool": "shell"}}]})",
         "turn 1: member 'calls' is an object, not an array"},
        {R"({"turns": [{"calls": null, "text": "a"}]})",
         "turn 1: member 'calls' is null, not an array"},
        {R"({"turns": [{"calls": ["shell"]}]})", "turn 1: call 1 is a string, not an object"},
        {R"({"turns": [{"calls": [{"tool": "a"}, {"input": {}}]}]})",
         "turn 1: call 2: member 'tool' is missing"},
        {R"({"turns": [{"calls": [{"tool": ""}]}]})", "turn 1: call 1: member 'tool' is empty"},
        {R"({"turns": [{"calls": [{"tool": ["a"]}]}]})",
         "turn 1: call 1: member 'tool' is an array, not a string"},
        {R"({"turns": [{"calls": [{"tool": "a", "input": []}]}]})",
         "turn 1: call 1: member 'input' is an array, not an object"},
        {R"({"turns": [{"calls": [{"tool": "a", "input": "{}"}]}]})",
         "turn 1: call 1: member 'input' is a string, not an object"},
        {R"({"turns": [{"calls": [{"tool": "a", "input": null}]}]})",
         "turn 1: call 1: member 'input' is null, not an object"},
        {R"({"turns": [{"text": "a", "usage": 5}]})",
         "turn 1: member 'usage' is a number, not an object"},
        {R"({"turns": [{"text": "a", "usage": {"input_tokens": -1, "output_tokens": 3}}]})",
         "turn 1: usage: member 'input_tokens' is -1, not a count of tokens"},
        {R"({"turns": [{"text": "a", "usage": {"input_tokens": 1, "output_tokens": -3}}]})",
         "turn 1: usage: member 'output_tokens' is -3, not a count of tokens"},
        {R"({"turns": [{"text": "a", "usage": {"input_tokens": 1, "output_tokens": 1,)"
         R"("cache_read_tokens": -1}}]})",
         "turn 1: usage: member 'cache_read_tokens' is -1, not a count of tokens"},
        {R"({"turns": [{"text": "a", "usage": {"input_tokens": 1, "output_tokens": 1,)"
         R"("cache_write_tokens": "2"}}]})",
         "turn 1: usage: member 'cache_write_tokens' is a string, not an integer"},
        {R"({"turns": [{"text": "a", "usage": {"input_tokens": 1.5, "output_tokens": 3}}]})",
         "turn 1: usage: member 'input_tokens' is not an integer"},
        {R"({"turns": [{"text": "a",)"
         R"("usage": {"input_tokens": 9007199254740992, "output_tokens": 3}}]})",
         "turn 1: usage: member 'input_tokens' is 9007199254740992, not a count of tokens"},
        {R"({"turns": [{"text": "a", "usage": {"input_tokens": 1e300, "output_tokens": 3}}]})",
         "turn 1: usage: member 'input_tokens' is not an integer"},
        {R"({"turns": [{"text": "a", "usage": {"output_tokens": 3}}]})",
         "turn 1: usage: member 'input_tokens' is missing"},
        {R"({"turns": [{"text": "a", "usage": {"input_tokens": 3}}]})",
         "turn 1: usage: member 'output_tokens' is missing"},
        {R"({"turns": [{"text": "a", "usage": {}}]})",
         "turn 1: usage: member 'input_tokens' is missing"},
        {R"({"turns": [{"fail": "Overloaded"}]})",
         "turn 1: member 'fail' is a string, not an object"},
        {R"({"turns": [{"fail": null}]})", "turn 1: member 'fail' is null, not an object"},
        {R"({"turns": [{"fail": {}}]})", "turn 1: fail: member 'status' is missing"},
        {R"({"turns": [{"fail": {"status": 529}}]})", "turn 1: fail: member 'message' is missing"},
        {R"({"turns": [{"fail": {"status": 529, "message": ""}}]})",
         "turn 1: fail: member 'message' is empty"},
        {R"({"turns": [{"fail": {"status": 529, "message": 5}}]})",
         "turn 1: fail: member 'message' is a number, not a string"},
        {R"({"turns": [{"fail": {"status": "529", "message": "m"}}]})",
         "turn 1: fail: member 'status' is a string, not an integer"},
        {R"({"turns": [{"fail": {"status": 529.5, "message": "m"}}]})",
         "turn 1: fail: member 'status' is not an integer"},
        {R"({"turns": [{"fail": {"status": 99, "message": "m"}}]})",
         "turn 1: fail: member 'status' is 99, not an HTTP status (100 to 599)"},
        {R"({"turns": [{"fail": {"status": 600, "message": "m"}}]})",
         "turn 1: fail: member 'status' is 600, not an HTTP status (100 to 599)"},
        {R"({"turns": [{"fail": {"status": -529, "message": "m"}}]})",
         "turn 1: fail: member 'status' is -529, not an HTTP status (100 to 599)"},
        {R"({"turns": [{"text": "a", "fail": {"status": 529, "message": "m"}}]})",
         "turn 1: member 'fail' cannot go with 'text'"},
        {R"({"turns": [{"fail": {"status": 529, "message": "m"}, "calls": []}]})",
         "turn 1: member 'fail' cannot go with 'calls'"},
        {R"({"turns": [{"fail": {"status": 529, "message": "m"}, "reasoning": "r"}]})",
         "turn 1: member 'fail' cannot go with 'reasoning'"},
        {R"({"turns": [{"fail": {"status": 529, "message": "m"},)"
         R"("usage": {"input_tokens": 1, "output_tokens": 1}}]})",
         "turn 1: member 'fail' cannot go with 'usage'"},
        {R"({"turns": [{"fail": {"status": 529, "message": "m"}, "model": "x"}]})",
         "turn 1: member 'fail' cannot go with 'model'"},
        {R"({"turns": [{"fail": {"status": 529, "message": "m"}, "id": "x"}]})",
         "turn 1: member 'fail' cannot go with 'id'"},
        {R"({"turns": [{"fail": {"status": 529, "message": "m"}, "finish_reason": "x"}]})",
         "turn 1: member 'fail' cannot go with 'finish_reason'"},
        // The fail object is checked before what goes with it.
        {R"({"turns": [{"text": "a", "fail": {"status": 1, "message": "m"}}]})",
         "turn 1: fail: member 'status' is 1, not an HTTP status (100 to 599)"},
    };
    for (const Case& c : cases)
        EXPECT_EQ(parse_error(c.text), std::string("script 't.json': ") + c.message) << c.text;
}

TEST(ScriptParse, TheFirstBadTurnIsTheOneNamed) {
    EXPECT_EQ(parse_error(R"({"turns": [{"text": "a"}, {"text": "b"}, {"calls": 1}, {}]})"),
              "script 't.json': turn 3: member 'calls' is a number, not an array");
}

TEST(ScriptParse, TheMessageNamesThePathAsGiven) {
    auto r = ScriptModel::parse("script:dir/x y.json", "dir/x y.json", "[]");
    ASSERT_FALSE(r);
    EXPECT_EQ(r.error().message(),
              "script 'dir/x y.json': the document is an array, not an object");
}

TEST(ScriptParse, InvalidUtf8) {
    EXPECT_EQ(parse_error("{\"turns\": [{\"text\": \"caf\xe9\"}]}"),
              "script 't.json': invalid UTF-8 at byte 24");
    EXPECT_EQ(parse_error("\xff{}"), "script 't.json': invalid UTF-8 at byte 0");
    // An overlong '/' and an encoded surrogate are not UTF-8 either.
    EXPECT_EQ(parse_error("{\"turns\": [{\"text\": \"\xc0\xaf\"}]}"),
              "script 't.json': invalid UTF-8 at byte 21");
    EXPECT_EQ(parse_error("{\"turns\": [{\"text\": \"\xed\xa0\x80\"}]}"),
              "script 't.json': invalid UTF-8 at byte 21");
    // Nor is half a surrogate pair, escaped.
    EXPECT_TRUE(parse_error(R"({"turns": [{"text": "\ud800"}]})")
                    .starts_with("script 't.json': invalid JSON at byte "));
}

TEST(ScriptParse, EveryTruncationIsRefused) {
    const std::string whole =
        R"({"turns": [{"text": "hi", "reasoning": "r", "calls": [{"tool": "shell",)"
        R"( "input": {"n": 12}}], "usage": {"input_tokens": 10, "output_tokens": 2}},)"
        R"( {"fail": {"status": 529, "message": "Overloaded"}}]})";
    ASSERT_TRUE(parse_ok(whole));
    for (size_t n = 0; n < whole.size(); ++n) {
        std::string message = parse_error(std::string_view(whole).substr(0, n));
        EXPECT_TRUE(message.starts_with("script 't.json': invalid JSON at byte "))
            << n << ": " << message;
    }
}

TEST(ScriptParse, SixteenMibAtMost) {
    const std::string script = R"({"turns": [{"text": "padded"}]})";
    std::string text = script + std::string(16 * k_mib - script.size(), ' ');
    ASSERT_EQ(text.size(), 16 * k_mib);
    EXPECT_TRUE(parse_ok(text));
    text += ' ';
    EXPECT_EQ(parse_error(text), "script 't.json': larger than 16 MiB");
}

// --- files -----------------------------------------------------------------------------------

TEST(ScriptLoad, ReadsAndPlaysAFile) {
    TempDir dir;
    std::string path = dir.write("shell.json", R"({"turns": [{"text": "from a file"}]})"
                                               "\n");
    auto r = ScriptModel::load("script:" + path, path);
    ASSERT_TRUE(r) << r.error().message();
    EXPECT_EQ((*r)->name(), "script:" + path);
    auto a = ask(**r);
    ASSERT_TRUE(a);
    EXPECT_EQ(a->text, "from a file");
    a = ask(**r);
    ASSERT_FALSE(a);
    EXPECT_EQ(a.error().message(), "script '" + path + "' has no turn left (it has 1)");
}

TEST(ScriptLoad, AMissingFile) {
    TempDir dir;
    std::string path = (dir.path() / "x.json").string();
    auto r = ScriptModel::load("script:" + path, path);
    ASSERT_FALSE(r);
    EXPECT_EQ(r.error().exit(), Exit::no_input);
    EXPECT_EQ(r.error().message(), "cannot read script '" + path + "': No such file or directory");
}

TEST(ScriptLoad, ADirectory) {
    TempDir dir;
    std::string path = dir.path().string();
    auto r = ScriptModel::load("script:" + path, path);
    ASSERT_FALSE(r);
    EXPECT_EQ(r.error().exit(), Exit::no_input);
    EXPECT_EQ(r.error().message(), "cannot read script '" + path + "': Is a directory");
}

TEST(ScriptLoad, AMalformedFile) {
    TempDir dir;
    std::string path = dir.write("bad.json", R"({"turns": [{"calls": "shell"}]})");
    auto r = ScriptModel::load("script:" + path, path);
    ASSERT_FALSE(r);
    EXPECT_EQ(r.error().exit(), Exit::data);
    EXPECT_EQ(r.error().message(),
              "script '" + path + "': turn 1: member 'calls' is a string, not an array");
}

TEST(ScriptLoad, ATruncatedFile) {
    TempDir dir;
    std::string path = dir.write("cut.json", R"({"turns": [{"text": "hi"}, {"te)");
    auto r = ScriptModel::load("script:" + path, path);
    ASSERT_FALSE(r);
    EXPECT_EQ(r.error().exit(), Exit::data);
    EXPECT_EQ(r.error().message(), "script '" + path + "': invalid JSON at byte 31");
}

TEST(ScriptLoad, AnEmptyFile) {
    TempDir dir;
    std::string path = dir.write("empty.json", "");
    auto r = ScriptModel::load("script:" + path, path);
    ASSERT_FALSE(r);
    EXPECT_EQ(r.error().exit(), Exit::data);
    EXPECT_EQ(r.error().message(), "script '" + path + "': invalid JSON at byte 0");
}

TEST(ScriptLoad, AnInvalidUtf8File) {
    TempDir dir;
    std::string path = dir.write("latin1.json", "{\"turns\": [{\"text\": \"caf\xe9\"}]}");
    auto r = ScriptModel::load("script:" + path, path);
    ASSERT_FALSE(r);
    EXPECT_EQ(r.error().exit(), Exit::data);
    EXPECT_EQ(r.error().message(), "script '" + path + "': invalid UTF-8 at byte 24");
}

TEST(ScriptLoad, AnOversizedFile) {
    TempDir dir;
    const std::string script = R"({"turns": [{"text": "padded"}]})";
    std::string text = script + std::string(16 * k_mib - script.size(), '\n');
    std::string exact = dir.write("exact.json", text);
    auto r = ScriptModel::load("script:" + exact, exact);
    EXPECT_TRUE(r) << r.error().message();
    text += '\n';
    std::string big = dir.write("big.json", text);
    r = ScriptModel::load("script:" + big, big);
    ASSERT_FALSE(r);
    EXPECT_EQ(r.error().exit(), Exit::data);
    EXPECT_EQ(r.error().message(), "script '" + big + "': larger than 16 MiB");
}

TEST(ScriptLoad, AnEndlessFile) {
    // Not a regular file: the limit is what stops the reading.
    auto r = ScriptModel::load("script:/dev/zero", "/dev/zero");
    ASSERT_FALSE(r);
    EXPECT_EQ(r.error().exit(), Exit::data);
    EXPECT_EQ(r.error().message(), "script '/dev/zero': larger than 16 MiB");
}

// --- the schema and the parser agree ---------------------------------------------------------

TEST(ScriptFixtures, EveryValidFixtureParses) {
    auto files = fixtures("script-model");
    ASSERT_GE(files.size(), 3U) << "fixtures not found under " << source_dir();
    for (const auto& [name, text] : files) {
        auto r = ScriptModel::parse("script:" + name, name, text);
        EXPECT_TRUE(r) << name << ": " << (r ? std::string() : r.error().message());
    }
}

TEST(ScriptFixtures, TheShellFixturePlaysAsWritten) {
    auto files = fixtures("script-model");
    ASSERT_TRUE(files.contains("shell.json"));
    auto r = ScriptModel::parse("script:shell.json", "shell.json", files["shell.json"]);
    ASSERT_TRUE(r) << r.error().message();
    ScriptModel& model = **r;
    auto a = ask(model);
    ASSERT_TRUE(a);
    ASSERT_EQ(a->calls.size(), 1U);
    EXPECT_EQ(a->calls[0].id, "call_1_1");
    EXPECT_EQ(a->calls[0].input.dump(), R"({"command":"ls"})");
    EXPECT_EQ(a->usage.input_tokens, 120);
    a = ask(model);
    ASSERT_FALSE(a);
    EXPECT_EQ(a.error().message(), "HTTP 529: Overloaded");
    EXPECT_TRUE(worth_another_model(a.error()));
    a = ask(model);
    ASSERT_TRUE(a);
    EXPECT_EQ(a->usage.cache_read_tokens, 120);
    a = ask(model);
    ASSERT_FALSE(a);
    EXPECT_EQ(a.error().message(), "script 'shell.json' has no turn left (it has 3)");
}

// Each invalid fixture is refused for the reason it was written for: its file is named here with
// the message, so that a new one comes with what the parser must say of it.
TEST(ScriptFixtures, EveryInvalidFixtureIsRefusedForItsReason) {
    const std::map<std::string, std::string> why = {
        {"call-input-array.json", "turn 1: call 1: member 'input' is an array, not an object"},
        {"call-input-string.json", "turn 1: call 1: member 'input' is a string, not an object"},
        {"call-string.json", "turn 1: call 1 is a string, not an object"},
        {"call-tool-empty.json", "turn 1: call 1: member 'tool' is empty"},
        {"call-tool-number.json", "turn 1: call 1: member 'tool' is a number, not a string"},
        {"call-without-tool.json", "turn 1: call 2: member 'tool' is missing"},
        {"empty-calls.json", "turn 1 has neither text nor calls"},
        {"empty-text.json", "turn 1 has neither text nor calls"},
        {"fail-message-empty.json", "turn 1: fail: member 'message' is empty"},
        {"fail-no-message.json", "turn 1: fail: member 'message' is missing"},
        {"fail-no-status.json", "turn 1: fail: member 'status' is missing"},
        {"fail-null.json", "turn 1: member 'fail' is null, not an object"},
        {"fail-status-fraction.json", "turn 1: fail: member 'status' is not an integer"},
        {"fail-status-high.json",
         "turn 1: fail: member 'status' is 600, not an HTTP status (100 to 599)"},
        {"fail-status-low.json",
         "turn 1: fail: member 'status' is 99, not an HTTP status (100 to 599)"},
        {"fail-status-string.json", "turn 1: fail: member 'status' is a string, not an integer"},
        {"fail-string.json", "turn 1: member 'fail' is a string, not an object"},
        {"fail-with-calls.json", "turn 1: member 'fail' cannot go with 'calls'"},
        {"fail-with-reasoning.json", "turn 1: member 'fail' cannot go with 'reasoning'"},
        {"fail-with-text.json", "turn 1: member 'fail' cannot go with 'text'"},
        {"fail-with-usage.json", "turn 1: member 'fail' cannot go with 'usage'"},
        {"neither.json", "turn 1 has neither text nor calls"},
        {"no-turns.json", "member 'turns' is missing"},
        {"not-object.json", "the document is an array, not an object"},
        {"nothing.json", "turn 1 has neither text nor calls"},
        {"reasoning-array.json", "turn 1: member 'reasoning' is an array, not a string"},
        {"second-turn-bad.json", "turn 2: member 'calls' is a string, not an array"},
        {"text-null.json", "turn 1: member 'text' is null, not a string"},
        {"text-number.json", "turn 1: member 'text' is a number, not a string"},
        {"turn-string.json", "turn 1 is a string, not an object"},
        {"turns-null.json", "member 'turns' is null, not an array"},
        {"turns-object.json", "member 'turns' is an object, not an array"},
        {"usage-array.json", "turn 1: member 'usage' is an array, not an object"},
        {"usage-cache-negative.json",
         "turn 1: usage: member 'cache_write_tokens' is -4, not a count of tokens"},
        {"usage-fraction.json", "turn 1: usage: member 'output_tokens' is not an integer"},
        {"usage-negative.json",
         "turn 1: usage: member 'input_tokens' is -1, not a count of tokens"},
        {"usage-no-output.json", "turn 1: usage: member 'output_tokens' is missing"},
        {"sort-and-summary.json", "turn 1 is marked both summary and sort"},
        {"usage-only.json", "turn 1 has neither text nor calls"},
        {"usage-string.json", "turn 1: usage: member 'input_tokens' is a string, not an integer"},
        {"usage-too-large.json",
         "turn 1: usage: member 'input_tokens' is 9007199254740992, not a count of tokens"},
    };
    auto files = fixtures("script-model-invalid");
    ASSERT_GE(files.size(), 3U) << "fixtures not found under " << source_dir();
    for (const auto& [name, text] : files) {
        auto r = ScriptModel::parse("script:" + name, name, text);
        ASSERT_FALSE(r) << name << " parsed";
        EXPECT_EQ(r.error().exit(), Exit::data) << name;
        auto it = why.find(name);
        if (it == why.end()) {
            ADD_FAILURE() << name << ": say here why it is refused; the parser says: "
                          << r.error().message();
            continue;
        }
        EXPECT_EQ(r.error().message(), "script '" + name + "': " + it->second) << name;
    }
    for (const auto& [name, message] : why)
        EXPECT_TRUE(files.contains(name)) << "no fixture " << name;
}

// --- open_model ------------------------------------------------------------------------------

TEST(OpenModel, AScript) {
    TempDir dir;
    std::string path = dir.write("a.json", R"({"turns": [{"text": "opened"}]})");
    auto r = open_model("script:" + path);
    ASSERT_TRUE(r) << r.error().message();
    EXPECT_EQ((*r)->name(), "script:" + path);
    auto a = (*r)->answer(Request{});
    ASSERT_TRUE(a);
    EXPECT_EQ(a->text, "opened");
}

TEST(OpenModel, OnlyTheFirstColonEndsTheProvider) {
    TempDir dir;
    std::string path = dir.write("a:b.json", R"({"turns": [{"text": "colon"}]})");
    auto r = open_model("script:" + path);
    ASSERT_TRUE(r) << r.error().message();
    EXPECT_EQ((*r)->name(), "script:" + path);
}

TEST(OpenModel, MalformedSpecs) {
    for (const char* spec : {"", "script", ":", ":x.json", "script:", "shell.json"}) {
        auto r = open_model(spec);
        ASSERT_FALSE(r) << spec;
        EXPECT_EQ(r.error().exit(), Exit::usage) << spec;
        EXPECT_EQ(r.error().message(),
                  std::string("invalid model '") + spec + "': give provider:model");
    }
}

TEST(OpenModel, UnknownProviders) {
    for (const char* spec : {"nope:x", "Script:a.json", "script :a.json", "x:y:z"}) {
        auto r = open_model(spec);
        ASSERT_FALSE(r) << spec;
        EXPECT_EQ(r.error().exit(), Exit::usage) << spec;
        std::string s(spec);
        EXPECT_EQ(r.error().message(),
                  "unknown model provider '" + s.substr(0, s.find(':')) + "' in '" + s + "'");
    }
}

TEST(OpenModel, AScriptsOwnErrors) {
    TempDir dir;
    std::string missing = (dir.path() / "missing.json").string();
    auto r = open_model("script:" + missing);
    ASSERT_FALSE(r);
    EXPECT_EQ(r.error().exit(), Exit::no_input);
    EXPECT_EQ(r.error().message(),
              "cannot read script '" + missing + "': No such file or directory");

    std::string bad = dir.write("bad.json", R"({"turns": [{}, {}]})");
    r = open_model("script:" + bad);
    ASSERT_FALSE(r);
    EXPECT_EQ(r.error().exit(), Exit::data);
    EXPECT_EQ(r.error().message(), "script '" + bad + "': turn 1 has neither text nor calls");
}

} // namespace
} // namespace sion::models
