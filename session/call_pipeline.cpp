// SPDX-License-Identifier: MIT
// The call pipeline (call_pipeline.hpp): policy, person, before-tool hooks, journal, tool,
// after-tool hooks, store, for the model's calls and a program's alike.
#include "session/call_pipeline.hpp"

#include "lib/db_schema.hpp"
#include "lib/models/wire.hpp"
#include "lib/text.hpp"
#include "session/shown.hpp"

#include <unistd.h>

#include <system_error>
#include <thread>

namespace sion::session {
namespace {

// The call as hooks are told of it.
Json hook_event(const CallRow& row) {
    Json e = Json::object();
    e.set("call", std::string_view(row.call_id));
    e.set("tool", std::string_view(row.tool));
    e.set("input", Json::copy_of(row.input));
    e.set("effect", std::string_view(row.effect));
    return e;
}

} // namespace

Json tool_message(const CallRow& row) {
    Json m = Json::object();
    m.set("role", "tool");
    m.set("call", std::string_view(row.call_id));
    m.set("tool", std::string_view(row.tool));
    m.set("text", std::string_view(row.result));
    m.set("error", row.state != "ok");
    if (row.images.view().size() > 0)
        m.set("images", Json::copy_of(row.images));
    return m;
}

CallPipeline::CallPipeline(CallParts parts) : m_p(std::move(parts)), m_journal(*m_p.db) {
    m_p.context->call_from_code = [this](std::string_view tool, JsonView input) {
        return program_call(tool, input);
    };
}

CallPipeline::~CallPipeline() {
    m_p.context->call_from_code = nullptr;
}

void CallPipeline::store_failed(Error error) {
    if (!m_store_failure)
        m_store_failure = std::move(error);
}

CallPipeline::Judgement CallPipeline::judge(Tool& tool, CallRow& row) const {
    Effect effect = tool.effect(row.input);
    Decision decision = decide(effect, m_p.autonomy, m_p.session->tainted);
    row.effect = effect_name(effect);
    row.decision = decision_name(decision);
    row.why = explain(row.tool, effect, m_p.autonomy, m_p.session->tainted);
    return {effect, decision};
}

std::optional<std::string> CallPipeline::ask_person(const CallRow& row) {
    if (!m_p.person->present())
        return row.why + ", and there is no one to ask here (" + m_p.person->absent_why() + ")";
    // The call's line is in the transcript already when that is on the terminal too.
    std::string question =
        ::isatty(STDOUT_FILENO) == 1
            ? shown_line(row.why) + ". Run it? [y/N] "
            : format("→ %s %s\n%s. Run it? [y/N] ", shown_line(row.tool).c_str(),
                     shown_line(canonical_json(row.input)).c_str(), shown_line(row.why).c_str());
    if (!m_p.person->allows(question))
        return "the person did not allow this call (" + row.why + ")";
    return std::nullopt;
}

Result<Decision> CallPipeline::begin_row(const models::ToolCall& call, Tool& tool, CallRow& row) {
    row.call_id = call.id;
    row.tool = call.tool;
    row.input = Json::copy_of(call.input);
    row.started_ms = now_ms();
    Decision decision = judge(tool, row).decision;
    row.state = "running";
    SION_TRY(row.seq, insert_call(*m_p.db, m_p.session->id, row));
    m_p.out->call(row);
    return decision;
}

Result<ToolResult> CallPipeline::timed_run(Tool& tool, CallRow& row) {
    int64_t started = models::steady_ms();
    row.started_ms = now_ms();
    auto done = tool.run(row.input, *m_p.context);
    row.wall_ms = models::steady_ms() - started;
    return done;
}

Result<Json> CallPipeline::model_call(const models::ToolCall& call, std::string_view asked_as) {
    m_asked_as = asked_as;
    auto tool = m_p.find_tool(call.tool);
    if (!tool || !call.input.view().is_object()) {
        CallRow row;
        row.call_id = call.id;
        row.tool = call.tool;
        row.input = Json::copy_of(call.input);
        row.started_ms = now_ms();
        row.state = "error";
        row.result =
            !tool ? tool.error().message() : "the input of " + call.tool + " is not an object";
        SION_TRY(row.seq, insert_call(*m_p.db, m_p.session->id, row));
        m_p.out->call(row);
        return finish(row);
    }
    CallRow row;
    SION_TRY(Decision decision, begin_row(call, **tool, row));
    std::optional<std::string> refused;
    if (decision == Decision::refuse)
        refused = row.why;
    else if (decision == Decision::ask)
        refused = ask_person(row);
    return refused ? refuse(row, std::move(*refused)) : run_tool(**tool, row);
}

ToolResult CallPipeline::program_call(std::string_view name, JsonView input) {
    CallRow row;
    row.parent = m_under_way;
    row.call_id = format("%s.%d", m_under_way.c_str(), ++m_program_calls);
    row.tool = std::string(name);
    row.input = Json::copy_of(input);
    row.started_ms = now_ms();
    auto tool = name == "run_code"
                    ? Result<Tool*>(Error(Exit::data, "there is no tool named run_code"))
                    : m_p.find_tool(name);
    if (!tool) {
        row.state = "error";
        row.result = tool.error().message();
    } else {
        Judgement judged = judge(**tool, row);
        if (judged.decision != Decision::run || judged.effect != Effect::read) {
            row.decision = decision_name(Decision::refuse);
            row.state = "refused";
            row.result = row.why + ": a program does not make that call; make it yourself";
        } else {
            row.state = "running";
        }
    }
    Result<Json> done = [&]() -> Result<Json> {
        SION_TRY(row.seq, insert_call(*m_p.db, m_p.session->id, row));
        m_p.out->call(row);
        if (row.state != "running")
            return finish(row);
        return run_tool(**tool, row);
    }();
    if (!done) {
        store_failed(done.error());
        return {"the session cannot record this call: " + done.error().message(), true, false, {}};
    }
    return {row.result, row.state != "ok", row.tainted, {}};
}

std::optional<std::string> CallPipeline::hook_blocks(const CallRow& row) {
    HookVerdict before = m_p.hooks->fire("before-tool", hook_event(row));
    if (before.allow)
        return std::nullopt;
    return "a hook blocked this call: " + before.reason;
}

Result<Json> CallPipeline::run_tool(Tool& tool, CallRow& row) {
    // before-tool hooks, once the policy and the person let the call run.
    if (auto blocked = hook_blocks(row))
        return refuse(row, std::move(*blocked));
    std::optional<int64_t> entry;
    if (tool.journaled()) {
        SION_TRY(Begun begun, m_journal.begin(m_p.session->id, row.tool, row.input));
        if (begun.kind != Begun::Kind::proceed)
            return journal_answers(row, begun);
        entry = begun.entry;
    }
    std::string outer = m_under_way;
    if (row.parent.empty()) {
        m_under_way = row.call_id;
        m_program_calls = 0;
    }
    auto done = timed_run(tool, row);
    m_under_way = outer;
    if (m_store_failure) {
        Error failure = std::move(*m_store_failure);
        m_store_failure.reset();
        return failure;
    }
    return ran(tool, row, std::move(done), entry);
}

Result<Json> CallPipeline::ran(Tool& tool, CallRow& row, Result<ToolResult> done,
                               std::optional<int64_t> entry) {
    if (!done) {
        row.state = "error";
        row.result = done.error().message();
        if (entry)
            SION_CHECK(m_journal.mark_uncertain(*entry, done.error().message()));
        return finish(row);
    }
    if (entry && done->is_error && (tool.fails_cleanly() || done->changed_nothing))
        SION_CHECK(m_journal.forget(*entry));
    else if (entry)
        SION_CHECK(m_journal.finish(*entry, done->text, done->is_error));
    add_to(m_spent, done->usage);
    row.state = done->is_error ? "error" : "ok";
    row.result = std::move(done->text);
    row.detail = std::move(done->detail);
    row.images = std::move(done->images);
    row.tainted = done->taints && !m_p.session->tainted;
    // What after-tool hooks print is added to what the model is shown, marked as theirs.
    Json after = hook_event(row);
    Json outcome = Json::object();
    outcome.set("state", std::string_view(row.state));
    outcome.set("text", std::string_view(row.result));
    after.set("outcome", std::move(outcome));
    HookVerdict hooked = m_p.hooks->fire("after-tool", std::move(after));
    if (!hooked.added.empty())
        row.result += "\n" + hooked.added;
    return finish(row);
}

bool CallPipeline::may_run_beside(const models::ToolCall& call) const {
    auto tool = m_p.find_tool(call.tool);
    if (!tool || !call.input.view().is_object())
        return false;
    Effect effect = (*tool)->effect(call.input);
    bool beside = ((*tool)->runs_beside() && !(*tool)->journaled() && effect == Effect::read)
                  || (*tool)->runs_together();
    return beside && decide(effect, m_p.autonomy, m_p.session->tainted) == Decision::run;
}

Result<std::vector<Json>> CallPipeline::model_calls(const std::vector<Asked>& calls) {
    std::vector<Json> results;
    for (size_t i = 0; i < calls.size();) {
        size_t j = i;
        while (j < calls.size() && may_run_beside(calls[j].call))
            ++j;
        if (j - i >= 2) {
            SION_TRY(auto beside, run_beside(std::span(calls).subspan(i, j - i)));
            for (auto& r : beside)
                results.push_back(std::move(r));
            i = j;
            continue;
        }
        SION_TRY(Json one, model_call(calls[i].call, calls[i].asked_as));
        results.push_back(std::move(one));
        ++i;
    }
    return results;
}

Result<std::vector<Json>> CallPipeline::run_beside(std::span<const Asked> calls) {
    struct Running {
        CallRow row;
        Tool* tool = nullptr;
        std::optional<std::string> blocked; // why a hook stopped it
        std::optional<Result<ToolResult>> done;
        std::optional<int64_t> entry;  // its journal entry, when it is journaled
        std::optional<Begun> answered; // the journal's answer instead of a run
    };

    std::vector<Running> running(calls.size());
    for (size_t k = 0; k < calls.size(); ++k) {
        Running& r = running[k];
        r.tool = *m_p.find_tool(calls[k].call.tool);
        SION_CHECK(begin_row(calls[k].call, *r.tool, r.row));
        r.blocked = hook_blocks(r.row);
        if (r.blocked || !r.tool->journaled())
            continue;
        SION_TRY(Begun begun, m_journal.begin(m_p.session->id, r.row.tool, r.row.input));
        if (begun.kind == Begun::Kind::proceed)
            r.entry = begun.entry;
        else
            r.answered = std::move(begun);
    }
    // What a server asks meanwhile is recorded as happening during the first of them.
    m_under_way = calls[0].call.id;
    m_program_calls = 0;
    std::vector<std::thread> threads;
    for (Running& r : running) {
        if (r.blocked || r.answered)
            continue;
        auto run = [&r, this] { r.done = timed_run(*r.tool, r.row); };
        try {
            threads.emplace_back(run);
        } catch (const std::system_error&) {
            run(); // no thread to be had (a limit on processes): this one runs it
        }
    }
    for (auto& t : threads)
        t.join();
    m_under_way.clear();
    if (m_store_failure) {
        Error failure = std::move(*m_store_failure);
        m_store_failure.reset();
        return failure;
    }
    std::vector<Json> results;
    for (size_t k = 0; k < calls.size(); ++k) {
        Running& r = running[k];
        m_asked_as = calls[k].asked_as;
        if (r.answered) {
            SION_TRY(Json result, journal_answers(r.row, *r.answered));
            results.push_back(std::move(result));
            continue;
        }
        SION_TRY(Json result, r.blocked ? refuse(r.row, std::move(*r.blocked))
                                        : ran(*r.tool, r.row, std::move(*r.done), r.entry));
        results.push_back(std::move(result));
    }
    m_asked_as.clear();
    return results;
}

Result<Json> CallPipeline::journal_answers(CallRow& row, const Begun& begun) {
    if (begun.kind == Begun::Kind::uncertain) {
        row.state = "uncertain";
        row.result = begun.result;
    } else {
        row.state = begun.is_error ? "error" : "ok";
        row.result =
            "[made before in this session: not made again; its answer then]\n" + begun.result;
    }
    return finish(row);
}

Result<Json> CallPipeline::refuse(CallRow& row, std::string why) {
    row.state = "refused";
    row.result = std::move(why);
    return finish(row);
}

Result<Json> CallPipeline::finish(CallRow& row) {
    Json message = row.parent.empty() ? tool_message(row) : Json::null();
    if (row.parent.empty() && !m_asked_as.empty())
        message.set("tool", std::string_view(m_asked_as)); // as the model's request named it
    SION_CHECK(finish_call(*m_p.db, m_p.session->id, row,
                           row.parent.empty() ? message.view() : JsonView()));
    if (row.tainted)
        m_p.session->tainted = true;
    ++m_finished;
    m_p.out->result(row);
    return message;
}

} // namespace sion::session
