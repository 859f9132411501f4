// SPDX-License-Identifier: MIT
// Unit tests of session/call_pipeline: the one order every call goes through (policy → person →
// before-tool hooks → journal → tool → after-tool hooks → store), with fakes for the person, for
// sion-hooks and for the tools, and a real sion.db in memory.
#include "lib/agents.hpp"
#include "lib/db_schema.hpp"
#include "session/call_pipeline.hpp"

#include <gtest/gtest.h>

#include <functional>
#include <memory>
#include <string>
#include <utility>
#include <vector>

namespace sion::session {
namespace {

#define ASSERT_OK(r) ASSERT_TRUE(r) << (r).error().message()

Json parse(std::string_view text) {
    auto json = Json::parse(text);
    EXPECT_TRUE(json) << text;
    return json ? std::move(*json) : Json();
}

// What happened, in order, across the fakes: "ask", "before-tool", "run <tool>", "after-tool".
using Log = std::vector<std::string>;

class FakePerson : public Person {
public:
    FakePerson(Log& log, bool present, bool answer)
        : m_log(log), m_present(present), m_answer(answer) {}

    bool present() const override { return m_present; }

    const std::string& absent_why() const override { return m_why; }

    bool allows(std::string_view question) override {
        m_log.push_back("ask");
        questions.emplace_back(question);
        return m_answer;
    }

    std::vector<std::string> questions;

private:
    Log& m_log;
    bool m_present;
    bool m_answer;
    std::string m_why = "no terminal";
};

class FakeHooks : public Hooks {
public:
    explicit FakeHooks(Log& log) : m_log(log) {}

    HookVerdict fire(const char* event, Json fields) override {
        m_log.emplace_back(event);
        events.push_back(std::move(fields));
        HookVerdict v;
        if (std::string_view(event) == "before-tool" && !block.empty()) {
            v.allow = false;
            v.reason = block;
        }
        if (std::string_view(event) == "after-tool")
            v.added = add;
        if (one_hook) { // as sion-hooks tells of a hook it ran
            v.asked = true;
            v.runs.push_back({1, "/opt/hooks/audit.sh", now_ns(), now_ns(), ""});
        }
        return v;
    }

    std::string block; // before-tool: blocks with this reason when not empty
    std::string add;   // after-tool: what the hooks printed
    bool one_hook = false; // a hook runs at each event
    std::vector<Json> events;

private:
    Log& m_log;
};

class FakeTool : public Tool {
public:
    FakeTool(Log& log, std::string name, Effect effect, bool idempotent)
        : m_log(log), m_name(std::move(name)), m_effect(effect), m_idempotent(idempotent) {}

    models::ToolSpec spec() const override { return {m_name, "a fake", parse("{}")}; }

    Effect effect(JsonView) const override { return m_effect; }

    bool idempotent() const override { return m_idempotent; }

    bool fails_cleanly() const override { return clean_failures; }

    Result<ToolResult> run(JsonView input, ToolContext& context) override {
        m_log.push_back("run " + m_name);
        ++runs;
        if (during)
            during(context);
        if (!breaks.empty())
            return Error(Exit::unavailable, breaks);
        return ToolResult{answer + " " + canonical_json(input), fails, taints, {}, false, {}};
    }

    int runs = 0;
    std::string answer = "done";
    bool fails = false;          // answers with an error
    bool clean_failures = false; // and that error changed nothing
    bool taints = false;
    std::string breaks; // fails as the runtime would (the sandbox died)
    std::function<void(ToolContext&)> during;

private:
    Log& m_log;
    std::string m_name;
    Effect m_effect;
    bool m_idempotent;
};

// Counts what the transcript is shown: a call as it starts, and as it ends.
class CountingOutput : public Output {
public:
    void session(const SessionRow&, bool) override {}

    void task(std::string_view, JsonView) override {}

    void notice(std::string_view) override {}

    void mcp(std::string_view, std::string_view) override {}

    void reasoning(std::string_view) override {}

    void text(std::string_view) override {}

    void call(const CallRow& row) override { shown.push_back("call " + row.call_id); }

    void result(const CallRow& row) override {
        shown.push_back("result " + row.call_id + " " + row.state);
    }

    void compacted(JsonView) override {}

    void routed(JsonView) override {}

    void subagent(JsonView) override {}

    void end(const SessionRow&, const Ending&) override {}

    std::vector<std::string> shown;
};

class CallPipelineTest : public testing::Test {
protected:
    CallPipelineTest() {
        auto db = Db::open(":memory:");
        EXPECT_TRUE(db) << db.error().message();
        m_db = std::make_unique<Db>(std::move(*db));
        EXPECT_TRUE(migrate_state(*m_db));
        EXPECT_TRUE(ensure_profile(*m_db, "coder", {}, 1));
        auto agent = create_agent(*m_db, "coder");
        EXPECT_TRUE(agent) << agent.error().message();
        m_session.id = "af88d6083cc5587b";
        m_session.agent = agent ? agent->id : "";
        m_session.profile = "coder";
        m_session.settings = Json::object();
        m_session.state = "running";
        EXPECT_TRUE(insert_session(*m_db, m_session));
    }

    FakeTool& tool(std::string name, Effect effect, bool idempotent = true) {
        m_tools.push_back(std::make_unique<FakeTool>(m_log, std::move(name), effect, idempotent));
        return *m_tools.back();
    }

    // A pipeline at `autonomy`, its person present and answering `answer` when `present`.
    CallPipeline& pipeline(int autonomy, bool present = false, bool answer = false) {
        m_person = std::make_unique<FakePerson>(m_log, present, answer);
        m_pipeline = std::make_unique<CallPipeline>(CallParts{
            m_db.get(), &m_session, autonomy, m_person.get(), &m_hooks, &m_out, &m_context,
            [this](std::string_view name) -> Result<Tool*> {
                for (auto& t : m_tools)
                    if (t->spec().name == name)
                        return t.get();
                return Error(Exit::data, "there is no tool named " + std::string(name));
            },
            &m_trace});
        return *m_pipeline;
    }

    // The model's call `id` of `tool` with `input`: its message for the conversation.
    Json call(std::string id, std::string tool, std::string_view input = "{}") {
        auto message = m_pipeline->model_call({std::move(id), std::move(tool), parse(input)});
        EXPECT_TRUE(message) << message.error().message();
        return message ? std::move(*message) : Json();
    }

    std::vector<CallRow> stored() {
        auto calls = load_calls(*m_db, m_session.id);
        EXPECT_TRUE(calls) << calls.error().message();
        return calls ? std::move(*calls) : std::vector<CallRow>();
    }

    std::vector<JournalEntry> journal() {
        Journal j(*m_db);
        auto entries = j.entries(m_session.id);
        EXPECT_TRUE(entries) << entries.error().message();
        return entries ? std::move(*entries) : std::vector<JournalEntry>();
    }

    Log m_log;
    std::unique_ptr<Db> m_db;
    SessionRow m_session;
    FakeHooks m_hooks{m_log};
    CountingOutput m_out;
    Trace m_trace;
    ToolContext m_context;
    std::vector<std::unique_ptr<FakeTool>> m_tools;
    std::unique_ptr<FakePerson> m_person;
    std::unique_ptr<CallPipeline> m_pipeline;
};

std::string text_of(const Json& message) {
    return std::string(message.view().string_or("text", "").value_or(""));
}

// The policy's table (lib/policy.hpp), as the pipeline carries it out with no one to ask: each
// effect at each level, tainted or not, runs, is refused for want of a person, or is refused.
TEST_F(CallPipelineTest, ThePolicyDecidesEveryEffectAtEveryLevel) {
    struct Row {
        Effect effect;
        bool tainted;
        int runs_from; // asks one level below, is refused below that
    };

    const Row table[] = {
        {Effect::read, false, 1},    {Effect::write, false, 3}, {Effect::external, false, 5},
        {Effect::spend, false, 6},   {Effect::read, true, 1},   {Effect::write, true, 3},
        {Effect::external, true, 6}, {Effect::spend, true, 7},
    };
    int n = 0;
    for (const Row& r : table) {
        for (int level = 0; level <= k_max_autonomy; ++level) {
            std::string name = "t" + std::to_string(++n);
            FakeTool& t = tool(name, r.effect);
            m_session.tainted = r.tainted;
            pipeline(level);
            Json message = call("c" + std::to_string(n), name);
            const CallRow row = std::move(stored().back());
            SCOPED_TRACE(name + " " + effect_name(r.effect) + (r.tainted ? " tainted" : "")
                         + " at L" + std::to_string(level));
            if (level >= r.runs_from) {
                EXPECT_EQ(row.state, "ok");
                EXPECT_EQ(row.decision, "run");
                EXPECT_EQ(t.runs, 1);
            } else if (level == r.runs_from - 1) {
                EXPECT_EQ(row.state, "refused");
                EXPECT_EQ(row.decision, "ask");
                EXPECT_EQ(t.runs, 0);
                EXPECT_EQ(row.result, row.why + ", and there is no one to ask here (no terminal)");
            } else {
                EXPECT_EQ(row.state, "refused");
                EXPECT_EQ(row.decision, "refuse");
                EXPECT_EQ(t.runs, 0);
                EXPECT_EQ(row.result, row.why);
            }
            EXPECT_EQ(row.effect, effect_name(r.effect));
            EXPECT_EQ(text_of(message), row.result);
            EXPECT_EQ(message.view().boolean_or("error", false).value_or(false), row.state != "ok");
        }
    }
}

TEST_F(CallPipelineTest, ThePersonIsAskedBeforeTheHooksAndTheTool) {
    FakeTool& t = tool("shell", Effect::write, false);
    pipeline(2, true, true);
    call("c1", "shell", R"({"command":"make"})");
    EXPECT_EQ(m_log, (Log{"ask", "before-tool", "run shell", "after-tool"}));
    ASSERT_EQ(m_person->questions.size(), 1U);
    EXPECT_NE(m_person->questions[0].find("Run it? [y/N] "), std::string::npos);
    EXPECT_NE(m_person->questions[0].find("shell is a write, which asks a person at L2"),
              std::string::npos);
    EXPECT_EQ(t.runs, 1);
    EXPECT_EQ(stored().back().state, "ok");
}

TEST_F(CallPipelineTest, APersonWhoSaysNoRefusesTheCallBeforeAnyHook) {
    FakeTool& t = tool("shell", Effect::write, false);
    pipeline(2, true, false);
    Json message = call("c1", "shell", R"({"command":"rm -rf build"})");
    EXPECT_EQ(m_log, (Log{"ask"}));
    EXPECT_EQ(t.runs, 0);
    EXPECT_EQ(text_of(message),
              "the person did not allow this call (shell is a write, which asks a person at L2)");
    EXPECT_TRUE(journal().empty());
}

TEST_F(CallPipelineTest, ABeforeToolHookBlocksTheCallBeforeTheJournal) {
    FakeTool& t = tool("write_file", Effect::write, false);
    pipeline(3);
    m_hooks.block = "no writes on Fridays";
    Json message = call("c1", "write_file", R"({"path":"a"})");
    EXPECT_EQ(text_of(message), "a hook blocked this call: no writes on Fridays");
    EXPECT_EQ(t.runs, 0);
    EXPECT_TRUE(journal().empty());
    EXPECT_EQ(stored().back().state, "refused");
    // Once the hook lets it, the same call runs: a blocked call was never begun.
    m_hooks.block.clear();
    call("c2", "write_file", R"({"path":"a"})");
    EXPECT_EQ(t.runs, 1);
    EXPECT_EQ(m_log, (Log{"before-tool", "before-tool", "run write_file", "after-tool"}));
}

TEST_F(CallPipelineTest, AJournaledCallIsNeverMadeTwice) {
    FakeTool& t = tool("send", Effect::write, false);
    pipeline(3);
    call("c1", "send", R"({"to":"a","n":1})");
    // The same input, its members in another order: the same call.
    Json again = call("c2", "send", R"({"n":1,"to":"a"})");
    EXPECT_EQ(t.runs, 1);
    EXPECT_EQ(text_of(again), "[made before in this session: not made again; its answer then]\n"
                              "done {\"n\":1,\"to\":\"a\"}");
    ASSERT_EQ(journal().size(), 1U);
    EXPECT_EQ(journal()[0].state, "done");
    // Another input is another call.
    call("c3", "send", R"({"to":"b","n":1})");
    EXPECT_EQ(t.runs, 2);
}

TEST_F(CallPipelineTest, AnIdempotentToolIsNotJournaled) {
    FakeTool& t = tool("read_file", Effect::read, true);
    pipeline(1);
    call("c1", "read_file", R"({"path":"a"})");
    call("c2", "read_file", R"({"path":"a"})");
    EXPECT_EQ(t.runs, 2);
    EXPECT_TRUE(journal().empty());
}

TEST_F(CallPipelineTest, ACallThatGotNoAnswerIsUncertainAndNotMadeAgain) {
    FakeTool& t = tool("deploy", Effect::write, false);
    t.breaks = "the sandbox ended";
    pipeline(3);
    Json first = call("c1", "deploy", R"({"env":"prod"})");
    EXPECT_EQ(text_of(first), "the sandbox ended");
    EXPECT_EQ(stored().back().state, "error");
    t.breaks.clear();
    Json second = call("c2", "deploy", R"({"env":"prod"})");
    EXPECT_EQ(t.runs, 1);
    EXPECT_EQ(stored().back().state, "uncertain");
    EXPECT_NE(text_of(second).find("it may have taken effect"), std::string::npos)
        << text_of(second);
}

TEST_F(CallPipelineTest, AFailureThatChangedNothingIsForgottenAndMayBeMadeAgain) {
    FakeTool& t = tool("edit_file", Effect::write, false);
    t.fails = true;
    t.clean_failures = true;
    pipeline(3);
    call("c1", "edit_file", R"({"path":"a"})");
    EXPECT_TRUE(journal().empty());
    t.fails = false;
    call("c2", "edit_file", R"({"path":"a"})");
    EXPECT_EQ(t.runs, 2);
    EXPECT_EQ(stored().back().state, "ok");
}

TEST_F(CallPipelineTest, AFailureThatMayHaveChangedSomethingIsKept) {
    FakeTool& t = tool("shell_like", Effect::write, false);
    t.fails = true;
    pipeline(3);
    call("c1", "shell_like", R"({"x":1})");
    Json again = call("c2", "shell_like", R"({"x":1})");
    EXPECT_EQ(t.runs, 1);
    EXPECT_EQ(stored().back().state, "error");
    EXPECT_TRUE(text_of(again).starts_with("[made before in this session"));
}

TEST_F(CallPipelineTest, AfterToolHooksAreToldTheOutcomeAndAddToTheResult) {
    tool("read_file", Effect::read);
    m_hooks.add = "[hook lint] 2 warnings";
    pipeline(1);
    Json message = call("c1", "read_file", R"({"path":"a"})");
    EXPECT_EQ(text_of(message), "done {\"path\":\"a\"}\n[hook lint] 2 warnings");
    ASSERT_EQ(m_hooks.events.size(), 2U);
    JsonView before = m_hooks.events[0].view();
    EXPECT_EQ(before.string_or("call", "").value_or(""), "c1");
    EXPECT_EQ(before.string_or("effect", "").value_or(""), "read");
    EXPECT_FALSE(before.get("outcome").exists());
    JsonView outcome = m_hooks.events[1].view().get("outcome");
    EXPECT_EQ(outcome.string_or("state", "").value_or(""), "ok");
    EXPECT_EQ(outcome.string_or("text", "").value_or(""), "done {\"path\":\"a\"}");
}

TEST_F(CallPipelineTest, ACallIsStoredAsRunningBeforeItsToolRuns) {
    FakeTool& t = tool("shell", Effect::write, false);
    std::vector<CallRow> seen;
    t.during = [&](ToolContext&) { seen = stored(); };
    pipeline(3);
    call("c1", "shell", R"({"command":"true"})");
    ASSERT_EQ(seen.size(), 1U);
    EXPECT_EQ(seen[0].state, "running");
    EXPECT_EQ(seen[0].seq, 1);
    EXPECT_EQ(stored()[0].state, "ok");
    EXPECT_EQ(m_out.shown, (std::vector<std::string>{"call c1", "result c1 ok"}));
    EXPECT_EQ(m_pipeline->finished(), 1);
}

TEST_F(CallPipelineTest, UnknownToolsAndInputsThatAreNoObjectsAreErrors) {
    tool("read_file", Effect::read);
    pipeline(6);
    EXPECT_EQ(text_of(call("c1", "ghost")), "there is no tool named ghost");
    EXPECT_EQ(text_of(call("c2", "read_file", "[1]")), "the input of read_file is not an object");
    std::vector<CallRow> rows = stored();
    ASSERT_EQ(rows.size(), 2U);
    EXPECT_EQ(rows[0].state, "error");
    EXPECT_EQ(rows[0].decision, "");
    EXPECT_EQ(rows[1].state, "error");
    EXPECT_TRUE(m_log.empty());
}

TEST_F(CallPipelineTest, AResultFromOutsideTaintsTheSessionForTheNextCall) {
    FakeTool& fetch = tool("fetch", Effect::external);
    fetch.taints = true;
    FakeTool& post = tool("post", Effect::external);
    pipeline(5);
    call("c1", "fetch");
    EXPECT_TRUE(m_session.tainted);
    EXPECT_TRUE(stored().back().tainted);
    // An external call runs on its own from L6 once the session is tainted.
    Json message = call("c2", "post");
    EXPECT_EQ(post.runs, 0);
    EXPECT_EQ(stored().back().decision, "ask");
    EXPECT_NE(text_of(message).find("since the session is tainted"), std::string::npos);
}

TEST_F(CallPipelineTest, AProgramsCallsReadOnlyAndAreRecordedUnderItsCall) {
    FakeTool& reader = tool("read_file", Effect::read);
    FakeTool& writer = tool("write_file", Effect::write, false);
    FakeTool& runner = tool("run_code", Effect::read);
    std::vector<ToolResult> got;
    std::string during;
    runner.during = [&](ToolContext& context) {
        during = m_pipeline->under_way();
        got.push_back(context.call_from_code("read_file", parse(R"({"path":"a"})")));
        got.push_back(context.call_from_code("write_file", parse(R"({"path":"a"})")));
        got.push_back(context.call_from_code("run_code", parse("{}")));
        got.push_back(context.call_from_code("ghost", parse("{}")));
    };
    pipeline(6);
    Json message = call("c7", "run_code");
    EXPECT_EQ(during, "c7");
    EXPECT_EQ(m_pipeline->under_way(), "");
    ASSERT_EQ(got.size(), 4U);
    EXPECT_FALSE(got[0].is_error);
    EXPECT_EQ(got[0].text, "done {\"path\":\"a\"}");
    EXPECT_TRUE(got[1].is_error);
    EXPECT_EQ(got[1].text,
              "write_file is a write, which runs on its own from L3: a program does not "
              "make that call; make it yourself");
    EXPECT_EQ(got[2].text, "there is no tool named run_code");
    EXPECT_EQ(got[3].text, "there is no tool named ghost");
    EXPECT_EQ(reader.runs, 1);
    EXPECT_EQ(writer.runs, 0);
    EXPECT_EQ(runner.runs, 1);
    std::vector<CallRow> rows = stored();
    ASSERT_EQ(rows.size(), 5U);
    EXPECT_EQ(rows[0].call_id, "c7");
    EXPECT_EQ(rows[1].call_id, "c7.1");
    EXPECT_EQ(rows[1].parent, "c7");
    EXPECT_EQ(rows[2].call_id, "c7.2");
    EXPECT_EQ(rows[2].state, "refused");
    EXPECT_EQ(rows[2].decision, "refuse");
    EXPECT_EQ(rows[4].call_id, "c7.4");
    // Only the program's own call is part of the conversation.
    EXPECT_EQ(message.view().string_or("call", "").value_or(""), "c7");
    auto conversation = load_messages(*m_db, m_session.id);
    ASSERT_OK(conversation);
    EXPECT_EQ(conversation->size(), 1U);
    EXPECT_EQ(m_pipeline->finished(), 5);
}

// The spans of the trace as kept, and each one's children by start.
struct Kept {
    std::vector<otlp::Span> spans;

    const otlp::Span& named(std::string_view name, std::string_view parent = {}) const {
        for (const otlp::Span& s : spans)
            if (s.name == name && (parent.empty() || s.parent_id == parent))
                return s;
        ADD_FAILURE() << "no span " << name;
        return spans.front();
    }

    std::vector<std::string> children(const otlp::Span& of) const {
        std::vector<std::string> names;
        for (const otlp::Span& s : spans)
            if (s.parent_id == of.span_id)
                names.push_back(s.name);
        return names;
    }
};

TEST_F(CallPipelineTest, EachCallIsASpanWithASpanForEachStep) {
    tool("send", Effect::write, false);
    pipeline(2, true, true); // a write is asked about at L2
    m_hooks.one_hook = true;
    call("c1", "send", R"({"to":"a"})");
    call("c2", "send", R"({"to":"a"})"); // made before: the journal answers
    m_trace.store(*m_db, m_session.id);
    auto spans = load_spans(*m_db, m_session.id);
    ASSERT_OK(spans);
    Kept kept{std::move(*spans)};
    ASSERT_EQ(kept.spans.size(), 16U); // 10 of the first call (a hook each side), 6 of the second
    const otlp::Span& first = kept.named("execute_tool send"); // c1's: the first begun
    EXPECT_EQ(first.parent_id, m_trace.root());
    EXPECT_EQ(first.trace_id, m_trace.id());
    EXPECT_EQ(first.attributes.view().dump(),
              R"({"gen_ai.operation.name":"execute_tool","gen_ai.tool.name":"send",)"
              R"("gen_ai.tool.call.id":"c1","gen_ai.tool.type":"function","sion.journal":"new",)"
              R"("sion.from_outside":false,"sion.effect":"write","sion.policy.decision":"ask",)"
              R"("sion.call.state":"ok","sion.tainted":false})");
    EXPECT_FALSE(first.error);
    EXPECT_EQ(kept.children(first),
              (std::vector<std::string>{"policy", "person", "hooks before-tool", "journal", "call",
                                        "journal end", "hooks after-tool"}));
    EXPECT_EQ(kept.named("person", first.span_id).attributes.view().dump(),
              R"({"sion.person.allowed":true})");
    EXPECT_EQ(kept.named("journal", first.span_id).attributes.view().dump(),
              R"({"sion.journal":"new"})");
    EXPECT_EQ(kept.named("journal end", first.span_id).attributes.view().dump(),
              R"({"sion.journal.entry":"recorded"})");
    const otlp::Span& hooks = kept.named("hooks before-tool", first.span_id);
    EXPECT_EQ(kept.children(hooks), (std::vector<std::string>{"hook 1"}));
    EXPECT_EQ(kept.named("hook 1", hooks.span_id).attributes.view().dump(),
              R"({"sion.hook.command":"/opt/hooks/audit.sh"})");
    // Each step within its call, one after another.
    int64_t last = first.start_ns;
    for (const otlp::Span& s : kept.spans)
        if (s.parent_id == first.span_id) {
            EXPECT_LE(last, s.start_ns) << s.name;
            EXPECT_LE(s.end_ns, first.end_ns) << s.name;
            last = s.end_ns;
        }
    // The same call again: the journal answers, nothing runs.
    const otlp::Span* second = nullptr;
    for (const otlp::Span& s : kept.spans)
        if (s.name == "execute_tool send" && s.span_id != first.span_id)
            second = &s;
    ASSERT_NE(second, nullptr);
    EXPECT_LT(first.start_ns, second->start_ns);
    EXPECT_EQ(kept.children(*second),
              (std::vector<std::string>{"policy", "person", "hooks before-tool", "journal"}));
    EXPECT_EQ(kept.named("journal", second->span_id).attributes.view().dump(),
              R"({"sion.journal":"made before"})");
}

TEST_F(CallPipelineTest, AProgramsCallsAreSpansUnderItsRun) {
    tool("read_file", Effect::read);
    FakeTool& runner = tool("run_code", Effect::read);
    runner.during = [&](ToolContext& context) {
        (void)context.call_from_code("read_file", parse(R"({"path":"a"})"));
        (void)context.call_from_code("ghost", parse("{}"));
    };
    pipeline(6);
    call("c7", "run_code");
    m_trace.store(*m_db, m_session.id);
    auto spans = load_spans(*m_db, m_session.id);
    ASSERT_OK(spans);
    Kept kept{std::move(*spans)};
    const otlp::Span& code = kept.named("execute_tool run_code", m_trace.root());
    const otlp::Span& run = kept.named("call", code.span_id);
    EXPECT_EQ(kept.children(run),
              (std::vector<std::string>{"execute_tool read_file", "execute_tool ghost"}));
    const otlp::Span& read = kept.named("execute_tool read_file", run.span_id);
    EXPECT_NE(read.attributes.view().dump().find(R"("sion.call.parent":"c7")"), std::string::npos);
    EXPECT_EQ(kept.children(read), (std::vector<std::string>{"policy", "call"}));
    const otlp::Span& ghost = kept.named("execute_tool ghost", run.span_id);
    EXPECT_TRUE(ghost.error);
    EXPECT_EQ(ghost.status_message, "error");
}

TEST_F(CallPipelineTest, AStoreFailureDuringACallEndsIt) {
    FakeTool& t = tool("ask_server", Effect::read);
    t.during = [&](ToolContext&) {
        m_pipeline->store_failed(Error(Exit::io, "disk full"));
        m_pipeline->store_failed(Error(Exit::io, "later"));
    };
    pipeline(1);
    auto message = m_pipeline->model_call({"c1", "ask_server", parse("{}")});
    ASSERT_FALSE(message);
    EXPECT_EQ(message.error().message(), "disk full");
    // The next call is not failed by it.
    t.during = nullptr;
    EXPECT_EQ(text_of(call("c2", "ask_server")), "done {}");
}

TEST_F(CallPipelineTest, ThePipelineIsWhatProgramsCallWhileItLives) {
    pipeline(1);
    EXPECT_TRUE(static_cast<bool>(m_context.call_from_code));
    m_pipeline.reset();
    EXPECT_FALSE(static_cast<bool>(m_context.call_from_code));
}

} // namespace
} // namespace sion::session
