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
    // The call's line is in the transcript already when the person sees that.
    std::string question =
        m_p.person->sees_transcript()
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
    open_span(row, now_ns());
    otlp::Span policy = step(row, "policy");
    Decision decision = judge(tool, row).decision;
    policy.attributes.set("sion.policy.decision", std::string_view(row.decision));
    policy.attributes.set("sion.policy.why", std::string_view(row.why));
    m_p.trace->end(std::move(policy));
    row.state = "running";
    SION_TRY(row.seq, insert_call(*m_p.db, m_p.session->id, row));
    m_p.out->call(row);
    return decision;
}

Result<ToolResult> CallPipeline::timed_run(Tool& tool, CallRow& row, otlp::Span run) {
    int64_t started = models::steady_ms();
    row.started_ms = now_ms();
    RunningUnder under(m_p.trace->id(), run.span_id);
    auto done = tool.run(row.input, *m_p.context);
    row.wall_ms = models::steady_ms() - started;
    for (Elsewhere& e : under.take_elsewhere()) {
        otlp::Span spent = m_p.trace->begin(std::move(e.name), run.span_id, otlp::Kind::client);
        spent.start_ns = e.start_ns;
        spent.end_ns = e.end_ns;
        spent.attributes = std::move(e.attributes);
        m_p.trace->end(std::move(spent));
    }
    if (!done) {
        run.error = true;
        // What the runtime says of a failed run may quote the call: content.
        run.status_message =
            m_p.trace->captures_content() ? done.error().message() : "the tool's run failed";
    }
    m_p.trace->end(std::move(run));
    return done;
}

void CallPipeline::open_span(const CallRow& row, int64_t start_ns) {
    std::string parent;
    {
        std::lock_guard<std::mutex> hold(m_spans_lock);
        parent = row.parent.empty() ? m_p.trace->root() : m_under_way_span;
    }
    otlp::Span span = m_p.trace->begin("execute_tool " + row.tool, parent);
    span.start_ns = start_ns;
    span.attributes.set("gen_ai.operation.name", "execute_tool");
    span.attributes.set("gen_ai.tool.name", std::string_view(row.tool));
    span.attributes.set("gen_ai.tool.call.id", std::string_view(row.call_id));
    span.attributes.set("gen_ai.tool.type", "function");
    if (m_p.trace->captures_content())
        span.attributes.set("gen_ai.tool.call.arguments",
                            std::string_view(canonical_json(row.input)));
    std::lock_guard<std::mutex> hold(m_spans_lock);
    m_spans[row.call_id] = std::move(span);
}

otlp::Span CallPipeline::step(const CallRow& row, std::string name) {
    std::string parent;
    {
        std::lock_guard<std::mutex> hold(m_spans_lock);
        if (auto it = m_spans.find(row.call_id); it != m_spans.end())
            parent = it->second.span_id;
    }
    return m_p.trace->begin(std::move(name), parent);
}

void CallPipeline::tag(const CallRow& row, std::string_view key, Json value) {
    std::lock_guard<std::mutex> hold(m_spans_lock);
    if (auto it = m_spans.find(row.call_id); it != m_spans.end())
        it->second.attributes.set(key, std::move(value));
}

void CallPipeline::hooks_step(const CallRow& row, const char* event, int64_t start_ns,
                              const HookVerdict& verdict) {
    if (!verdict.asked)
        return;
    otlp::Span hooks = step(row, std::string("hooks ") + event);
    hooks.start_ns = start_ns;
    hooks.attributes.set("sion.hooks.ran", static_cast<int64_t>(verdict.runs.size()));
    if (!verdict.allow) {
        hooks.attributes.set("sion.hooks.blocked", true);
        if (m_p.trace->captures_content()) // what the hook said, for the model
            hooks.attributes.set("sion.hooks.reason", std::string_view(verdict.reason));
    }
    for (const HookRun& h : verdict.runs) {
        if (h.start_ns <= 0 || h.end_ns < h.start_ns)
            continue; // told without its times
        otlp::Span one =
            m_p.trace->begin(format("hook %lld", static_cast<long long>(h.hook)), hooks.span_id);
        one.start_ns = h.start_ns;
        one.end_ns = h.end_ns;
        one.attributes.set("sion.hook.command", std::string_view(h.command));
        if (!h.failed.empty()) {
            one.error = true;
            one.status_message = h.failed;
        }
        m_p.trace->end(std::move(one));
    }
    m_p.trace->end(std::move(hooks));
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
        open_span(row, now_ns());
        SION_TRY(row.seq, insert_call(*m_p.db, m_p.session->id, row));
        m_p.out->call(row);
        return finish(row);
    }
    CallRow row;
    SION_TRY(Decision decision, begin_row(call, **tool, row));
    std::optional<std::string> refused;
    if (decision == Decision::refuse) {
        refused = row.why;
    } else if (decision == Decision::ask) {
        otlp::Span person = step(row, "person");
        refused = ask_person(row);
        person.attributes.set("sion.person.allowed", !refused);
        m_p.trace->end(std::move(person));
    }
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
    open_span(row, now_ns());
    if (!tool) {
        row.state = "error";
        row.result = tool.error().message();
    } else {
        otlp::Span policy = step(row, "policy");
        Judgement judged = judge(**tool, row);
        m_p.trace->end(std::move(policy));
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
    int64_t start = now_ns();
    HookVerdict before = m_p.hooks->fire("before-tool", hook_event(row));
    hooks_step(row, "before-tool", start, before);
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
        otlp::Span journal = step(row, "journal");
        SION_TRY(Begun begun, m_journal.begin(m_p.session->id, row.tool, row.input));
        journal_step(row, journal, begun);
        if (begun.kind != Begun::Kind::proceed)
            return journal_answers(row, begun);
        entry = begun.entry;
    }
    std::string outer = m_under_way;
    std::string outer_span = m_under_way_span;
    otlp::Span run = step(row, "call");
    if (row.parent.empty()) {
        m_under_way = row.call_id;
        m_program_calls = 0;
        std::lock_guard<std::mutex> hold(m_spans_lock);
        m_under_way_span = run.span_id;
    }
    auto done = timed_run(tool, row, std::move(run));
    m_under_way = outer;
    {
        std::lock_guard<std::mutex> hold(m_spans_lock);
        m_under_way_span = outer_span;
    }
    if (m_store_failure) {
        Error failure = std::move(*m_store_failure);
        m_store_failure.reset();
        return failure;
    }
    return ran(tool, row, std::move(done), entry);
}

Result<Json> CallPipeline::ran(Tool& tool, CallRow& row, Result<ToolResult> done,
                               std::optional<int64_t> entry) {
    std::optional<otlp::Span> journal_end;
    if (entry)
        journal_end = step(row, "journal end");
    if (!done) {
        row.state = "error";
        row.result = done.error().message();
        if (entry) {
            SION_CHECK(m_journal.mark_uncertain(*entry, done.error().message()));
            journal_end->attributes.set("sion.journal.entry", "uncertain");
            m_p.trace->end(std::move(*journal_end));
        }
        return finish(row);
    }
    if (entry && done->is_error && (tool.fails_cleanly() || done->changed_nothing)) {
        SION_CHECK(m_journal.forget(*entry));
        journal_end->attributes.set("sion.journal.entry", "forgotten");
    } else if (entry) {
        SION_CHECK(m_journal.finish(*entry, done->text, done->is_error));
        journal_end->attributes.set("sion.journal.entry", "recorded");
    }
    if (journal_end)
        m_p.trace->end(std::move(*journal_end));
    tag(row, "sion.from_outside", Json::boolean(done->taints));
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
    int64_t hooks_start = now_ns();
    HookVerdict hooked = m_p.hooks->fire("after-tool", std::move(after));
    hooks_step(row, "after-tool", hooks_start, hooked);
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
        otlp::Span run;                // the span of its tool's run
    };

    std::vector<Running> running(calls.size());
    for (size_t k = 0; k < calls.size(); ++k) {
        Running& r = running[k];
        r.tool = *m_p.find_tool(calls[k].call.tool);
        SION_CHECK(begin_row(calls[k].call, *r.tool, r.row));
        r.blocked = hook_blocks(r.row);
        if (r.blocked || !r.tool->journaled())
            continue;
        otlp::Span journal = step(r.row, "journal");
        SION_TRY(Begun begun, m_journal.begin(m_p.session->id, r.row.tool, r.row.input));
        journal_step(r.row, journal, begun);
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
        r.run = step(r.row, "call");
        {
            std::lock_guard<std::mutex> hold(m_spans_lock);
            if (m_under_way_span.empty())
                m_under_way_span = r.run.span_id;
        }
        auto run = [&r, this] { r.done = timed_run(*r.tool, r.row, std::move(r.run)); };
        try {
            threads.emplace_back(run);
        } catch (const std::system_error&) {
            run(); // no thread to be had (a limit on processes): this one runs it
        }
    }
    for (auto& t : threads)
        t.join();
    m_under_way.clear();
    {
        std::lock_guard<std::mutex> hold(m_spans_lock);
        m_under_way_span.clear();
    }
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

void CallPipeline::end_open_spans(const char* why) {
    std::map<std::string, otlp::Span> open;
    {
        std::lock_guard<std::mutex> hold(m_spans_lock);
        open.swap(m_spans);
    }
    for (auto& [id, span] : open) {
        span.error = true;
        span.status_message = why;
        m_p.trace->end(std::move(span));
    }
}

void CallPipeline::journal_step(const CallRow& row, otlp::Span& journal, const Begun& begun) {
    const char* outcome = begun.kind == Begun::Kind::proceed     ? "new"
                          : begun.kind == Begun::Kind::uncertain ? "uncertain"
                                                                 : "made before";
    journal.attributes.set("sion.journal", outcome);
    tag(row, "sion.journal", Json::string(outcome));
    m_p.trace->end(std::move(journal));
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
    std::optional<otlp::Span> span;
    {
        std::lock_guard<std::mutex> hold(m_spans_lock);
        if (auto it = m_spans.find(row.call_id); it != m_spans.end()) {
            span = std::move(it->second);
            m_spans.erase(it);
        }
    }
    if (span) {
        Json& a = span->attributes;
        if (!row.effect.empty())
            a.set("sion.effect", std::string_view(row.effect));
        if (!row.decision.empty())
            a.set("sion.policy.decision", std::string_view(row.decision));
        a.set("sion.call.state", std::string_view(row.state));
        a.set("sion.tainted", m_p.session->tainted);
        if (!row.parent.empty())
            a.set("sion.call.parent", std::string_view(row.parent));
        if (m_p.trace->captures_content())
            a.set("gen_ai.tool.call.result", std::string_view(row.result));
        if (row.state != "ok") {
            span->error = true;
            span->status_message = row.state;
            a.set("error.type", std::string_view(row.state));
        }
        m_p.trace->end(std::move(*span));
    }
    ++m_finished;
    m_p.out->result(row);
    return message;
}

} // namespace sion::session
