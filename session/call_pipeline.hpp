// SPDX-License-Identifier: MIT
// The call pipeline: every call a session makes (the model's, and a program's from run_code) goes
// through this one object, in one order:
//
//   policy → person → before-tool hooks → journal → tool → after-tool hooks → store
//
// Each call is stored as it starts and as it ends (store.hpp) and shown so (transcript.hpp). The
// policy (lib/policy.hpp) decides from the tool's effect, the autonomy and the session's taint; a
// call it would ask about is asked of the person, and refused with no one to ask; a before-tool
// hook may block it; a call that is neither read-only nor idempotent goes through the journal
// (lib/journal.hpp), so that it never runs twice; what after-tool hooks print is added to its
// result, marked as theirs. A program's call runs only when it reads and runs without anyone.
//
// Each call is a span of the run's trace, "execute_tool TOOL", with a span for each of its steps:
// "policy", "person", "hooks before-tool" (a span "hook N" each), "journal", "call" (the tool's
// run: the sandbox's or the MCP server's time, and the calls of run_code's program, under it),
// "hooks after-tool", "journal end".
#pragma once

#include "lib/journal.hpp"
#include "session/hooks_client.hpp"
#include "session/person.hpp"
#include "session/store.hpp"
#include "session/tools.hpp"
#include "session/trace.hpp"
#include "session/transcript.hpp"

#include <functional>
#include <map>
#include <mutex>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace sion::session {

// What a pipeline makes its calls with, and where it records and shows them. Each must outlive it.
struct CallParts {
    Db* db = nullptr;
    SessionRow* session = nullptr; // its id; its taint, set once a call's result came from outside
    int autonomy = 0;
    Person* person = nullptr;
    Hooks* hooks = nullptr;
    Output* out = nullptr;
    // What tools run against; the pipeline sets its call_from_code while it lives.
    ToolContext* context = nullptr;
    // The tool a call names, now; an Error that says why there is none ("there is no tool named
    // ghost_read_graph: MCP server ghost ended (killed by signal 9)").
    std::function<Result<Tool*>(std::string_view name)> find_tool;
    // The run's trace (trace.hpp): a span each call, under the run's, with a span each step.
    Trace* trace = nullptr;
};

// A call's result as the conversation holds it: {"role":"tool","call","tool","text","error"},
// and "images" when it returned pictures.
[[nodiscard]] Json tool_message(const CallRow& row);

class CallPipeline {
public:
    explicit CallPipeline(CallParts parts);
    CallPipeline(const CallPipeline&) = delete;
    CallPipeline& operator=(const CallPipeline&) = delete;
    ~CallPipeline();

    // Makes the model's call and records it; returns its result as the conversation holds it. An
    // Error only when the store fails. `asked_as`: the tool the model's request named, when that is
    // not the tool run (tools_call for the tool it names), for the result in the conversation.
    [[nodiscard]] Result<Json> model_call(const models::ToolCall& call,
                                          std::string_view asked_as = {});

    // A call the model asked for: `asked_as`, the tool its request named when that is not the
    // tool run (model_call()).
    struct Asked {
        models::ToolCall call;
        std::string asked_as;
    };

    // The model's calls of one answer, in order, and their results in that order. A run of two or
    // more that may go side by side (each only reads, runs without anyone, is not journaled, and
    // its tool runs_beside()) runs at once, a thread each, once the before-tool hooks of them all
    // have let them: their lines are shown before they run and their results in order once all
    // have ended. Every other call is made alone, as model_call() makes it, after those before
    // it have ended. An Error only when the store fails.
    [[nodiscard]] Result<std::vector<Json>> model_calls(const std::vector<Asked>& calls);

    // A call a program makes from run_code, during the model's call that runs it: made as the
    // model's would be when it only reads and runs without anyone, refused otherwise ("…: a
    // program does not make that call; make it yourself"). Recorded and shown under its parent
    // ("<parent>.1", "<parent>.2", …), and not part of the conversation: only what the program
    // prints is.
    [[nodiscard]] ToolResult program_call(std::string_view tool, JsonView input);

    // The model's call under way, "" between calls: what happens during it (a server's question)
    // is recorded as happening during it.
    [[nodiscard]] const std::string& under_way() const { return m_under_way; }

    // The store failed while a call was under way (a server's question could not be recorded):
    // that call ends with this Error, and so does the run.
    void store_failed(Error error);

    // The span of the run of the call under way (of the first, of calls side by side), "" between
    // calls: what happens during it (a server's completion) goes under it.
    [[nodiscard]] std::string under_way_span() {
        std::lock_guard<std::mutex> hold(m_spans_lock);
        return m_under_way_span;
    }

    // Ends the spans of calls that were begun and will not finish (the store failed), as `why`.
    void end_open_spans(const char* why);

    // The calls finished so far, programs' included.
    [[nodiscard]] int finished() const { return m_finished; }

    // What the calls spent since the last take (subagents' tokens), for the session to count.
    [[nodiscard]] models::Usage take_spent() { return std::exchange(m_spent, models::Usage{}); }

private:
    struct Judgement {
        Effect effect;
        Decision decision;
    };

    // The policy's decision on a call of `tool`, recorded on its row.
    Judgement judge(Tool& tool, CallRow& row) const;
    // The model's call of `tool` as it starts, on `row`: judged, stored as running, shown; the
    // policy's decision.
    Result<Decision> begin_row(const models::ToolCall& call, Tool& tool, CallRow& row);
    // Runs the call's tool, its start and how long it ran on its row, under the span `run`
    // (step(row, "call")), which it ends.
    Result<ToolResult> timed_run(Tool& tool, CallRow& row, otlp::Span run);
    // The call's span, begun at `start_ns` (under the run's, or a program's under the run of the
    // call under way) and kept until finish() ends it.
    void open_span(const CallRow& row, int64_t start_ns);
    // A step of the call `row`, begun now under its span; ended with m_p.trace->end().
    otlp::Span step(const CallRow& row, std::string name);
    // Sets an attribute of the call's span.
    void tag(const CallRow& row, std::string_view key, Json value);
    // The step of the hooks of `event`, with a span each hook that ran, when there are hooks.
    void hooks_step(const CallRow& row, const char* event, int64_t start_ns,
                    const HookVerdict& verdict);
    // Why a before-tool hook blocks the call, or nullopt when none does.
    std::optional<std::string> hook_blocks(const CallRow& row);
    // Asks the person about a call the policy asks about: why it is refused, or nullopt to run it.
    std::optional<std::string> ask_person(const CallRow& row);
    // Whether `call` may run beside others (model_calls()).
    bool may_run_beside(const models::ToolCall& call) const;
    // Runs `calls` side by side, each on a thread.
    Result<std::vector<Json>> run_beside(std::span<const Asked> calls);
    // Each ends the call, as finish() does, and returns what it returns.
    Result<Json> run_tool(Tool& tool, CallRow& row);
    // What follows a tool's run: the journal's entry (if any) closed, the after-tool hooks,
    // finish().
    Result<Json> ran(Tool& tool, CallRow& row, Result<ToolResult> done,
                     std::optional<int64_t> entry);
    Result<Json> refuse(CallRow& row, std::string why);
    // Ends the journal's step of a call with what the journal said: "new", "made before",
    // "uncertain", also the call's sion.journal.
    void journal_step(const CallRow& row, otlp::Span& journal, const Begun& begun);
    // A journaled call the journal answers: made before (its answer then), or uncertain.
    Result<Json> journal_answers(CallRow& row, const Begun& begun);
    // Stores and shows the ended call; returns its result as the conversation holds it, for the
    // model's call (tool_message()), or null for a program's.
    Result<Json> finish(CallRow& row);

    CallParts m_p;
    Journal m_journal;
    std::string m_under_way;
    std::string m_asked_as;  // the model's name for the call under way, when not its tool's
    int m_program_calls = 0; // those of the program of the call under way
    std::optional<Error> m_store_failure;
    int m_finished = 0;
    models::Usage m_spent;
    // The spans of the calls under way, by call id, and the run of the call under way (its
    // programs' calls go under it): touched by a program's calls and a server's questions from
    // the threads they come on.
    std::mutex m_spans_lock;
    std::map<std::string, otlp::Span> m_spans;
    std::string m_under_way_span;
};

} // namespace sion::session
