// SPDX-License-Identifier: MIT
// What a model is sent, built (issue 18's goal: at most 2 ms a model call at 120,000 characters):
// a session of 300 turns, each a read_file call of a file of N characters (3,000, and 15,000, which
// keeps what is sent near the 120,000), compacted as the session loop compacts it
// (session/compaction), then timed as each model call builds its request: the plan (nothing to do
// between compactions), the conversation sent, and the Messages API's body written out. Beside it,
// a compaction's own work but the narrative (a model call): a summary of the 300 calls.
#include "lib/models/anthropic.hpp"
#include "session/compaction.hpp"

#include <benchmark/benchmark.h>

#include <map>
#include <string>
#include <vector>

namespace {

using sion::Json;
using namespace sion::session;

struct Session {
    std::vector<Json> conversation;
    std::vector<CallRow> calls;
    Compaction compaction;
    std::string system = std::string(2'000, 's');
    std::vector<sion::models::ToolSpec> tools;
};

Json message(const char* role) {
    Json m = Json::object();
    m.set("role", role);
    return m;
}

// 300 turns of results of `size` characters, compacted whenever the loop would compact, with a
// summary of the calls so far.
Session make_session(size_t size) {
    Session s;
    for (int t = 0; t < 12; ++t) {
        Json schema = Json::object();
        schema.set("type", "object");
        s.tools.push_back({"tool_" + std::to_string(t), std::string(300, 'd'), std::move(schema)});
    }
    Json task = message("user");
    task.set("text", "Read every file of the project and say what it does.");
    s.conversation.push_back(std::move(task));
    for (int turn = 1; turn <= 300; ++turn) {
        std::string id = "toolu_" + std::to_string(turn);
        std::string path = "src/file" + std::to_string(turn) + ".c";
        Json input = Json::object();
        input.set("path", std::string_view(path));
        Json call = Json::object();
        call.set("id", std::string_view(id));
        call.set("tool", "read_file");
        call.set("input", Json::copy_of(input));
        Json calls = Json::array();
        calls.push(std::move(call));
        Json asked = message("assistant");
        asked.set("text", "Next, " + path + ".");
        asked.set("calls", std::move(calls));
        s.conversation.push_back(std::move(asked));
        std::string text(size, static_cast<char>('a' + turn % 26));
        Json result = message("tool");
        result.set("call", std::string_view(id));
        result.set("tool", "read_file");
        result.set("text", std::string_view(text));
        result.set("error", false);
        s.conversation.push_back(std::move(result));
        CallRow row;
        row.tool = "read_file";
        row.input = std::move(input);
        row.effect = "read";
        row.state = "ok";
        row.result = std::move(text);
        s.calls.push_back(std::move(row));
        CompactionPlan plan = plan_compaction(s.conversation, s.compaction, {});
        if (plan.empty())
            continue;
        std::string summary;
        if (plan.summarize_to)
            summary = summary_text(*plan.summarize_to - 1, s.calls, std::string(1'500, 'n'), false,
                                   summary_most({}));
        s.compaction.add(compaction_record(plan, s.compaction, summary));
    }
    return s;
}

const Session& long_session(size_t size) {
    static std::map<size_t, Session> made;
    auto it = made.find(size);
    if (it == made.end())
        it = made.emplace(size, make_session(size)).first;
    return it->second;
}

// One model call's request: the plan, the conversation sent, the body written.
void BM_BuildRequest(benchmark::State& state) {
    const Session& s = long_session(static_cast<size_t>(state.range(0)));
    size_t chars = 0;
    size_t bytes = 0;
    for (auto _ : state) {
        CompactionPlan plan = plan_compaction(s.conversation, s.compaction, {});
        benchmark::DoNotOptimize(plan);
        std::vector<Json> sent = sent_conversation(s.conversation, s.compaction);
        sion::models::Request request{s.system, s.tools, sent};
        std::string body = sion::models::anthropic_body(request, {}, 0, {}, false).dump();
        bytes = body.size();
        if (chars == 0)
            for (const Json& m : sent)
                chars += message_chars(m);
        benchmark::DoNotOptimize(body);
    }
    state.counters["chars_sent"] = static_cast<double>(chars);
    state.counters["body_bytes"] = static_cast<double>(bytes);
    state.counters["messages"] = static_cast<double>(s.conversation.size());
}

BENCHMARK(BM_BuildRequest)->Arg(3'000)->Arg(15'000)->Unit(benchmark::kMillisecond);

// A compaction's own work (without the narrative, which is a model call): the summary of 300 calls.
void BM_Summary(benchmark::State& state) {
    const Session& s = long_session(3'000);
    for (auto _ : state) {
        std::string text =
            summary_text(560, s.calls, std::string(1'500, 'n'), false, summary_most({}));
        benchmark::DoNotOptimize(text);
    }
}

BENCHMARK(BM_Summary)->Unit(benchmark::kMillisecond);

} // namespace

BENCHMARK_MAIN();
