// SPDX-License-Identifier: MIT
// The run's trace (issue 24): each run of a session is one OpenTelemetry trace, its spans kept
// with the session in sion.db (table spans) and, when the OTEL_* variables say so, exported as
// they are kept (lib/otlp_export.hpp). The spans:
//
//   invoke_agent sion                  the run (its root; linked to the span its TRACEPARENT names)
//     chat MODEL                       a model call, GenAI's conventions (one per model asked)
//     execute_tool TOOL                a tool call: its effect, decision, journal, taint
//       policy, person, hooks before-tool (hook N …), journal, call (sandbox | mcp server,
//       execute_tool … of run_code's programs), hooks after-tool, journal end
//     compaction                       a compaction, its narrative's chat under it
//
// What a span holds is redacted of the session's secrets always; prompts, completions and tools'
// inputs and results are in spans only when the operator opts in
// (OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT=true).
//
// Threads: begin() and end() may be called from any thread (the calls that run side by side);
// store() from the session's.
#pragma once

#include "lib/db.hpp"
#include "lib/otlp.hpp"
#include "lib/otlp_export.hpp"
#include "lib/redact.hpp"

#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace sion::session {

using otlp::now_ns;

class Trace {
public:
    // A trace of a new id that keeps its spans and exports none.
    Trace();
    Trace(const Trace&) = delete;
    Trace& operator=(const Trace&) = delete;

    // Exports the spans it keeps from now on as `where` says (nothing when it names no
    // endpoint); `failed` is told the first failure, once, from another thread.
    void export_to(otlp::Export where, std::string_view version, otlp::Exporter::Failed failed);

    // The secrets its spans are redacted of.
    void set_secrets(const std::vector<std::string>& secrets) { m_redactor = Redactor(secrets); }

    // Whether prompts, completions and tools' inputs and results may go in spans.
    [[nodiscard]] bool captures_content() const { return m_capture; }

    void set_capture(bool capture) { m_capture = capture; }

    [[nodiscard]] const std::string& id() const { return m_id; }

    // The run's span, every other span's ancestor; its id is known before it begins.
    [[nodiscard]] const std::string& root() const { return m_root; }

    // A span of this trace begun now under `parent`.
    [[nodiscard]] otlp::Span begin(std::string name, std::string_view parent,
                                   otlp::Kind kind = otlp::Kind::internal) const;
    // The run's span, begun now: its id root(), a link to `from` (the traceparent the run was
    // started with) when there is one.
    [[nodiscard]] otlp::Span begin_root(std::string name, std::optional<otlp::Link> from) const;
    // Ends `span` now (unless its end is set), redacted, to be kept at the next store().
    void end(otlp::Span span);

    // Redacted of the session's secrets (what a span's attribute holds).
    [[nodiscard]] std::string redact(std::string_view text) const {
        return m_redactor.redact(text);
    }

    // Stores the spans ended since the last store() with the session (in the caller's
    // transaction, if it has one), and hands them to the exporter. Spans that cannot be stored
    // are dropped: the trace never fails a run.
    void store(Db& db, std::string_view session);

private:
    std::string m_id;
    std::string m_root;
    Redactor m_redactor;
    bool m_capture = false;
    std::mutex m_lock;
    std::vector<otlp::Span> m_ended;
    std::unique_ptr<otlp::Exporter> m_exporter;
};

// The traceparent of the span a tool runs under on this thread, "" when none: what a tool passes
// on, to an MCP server (its tools/call) and to a subagent (TRACEPARENT).
[[nodiscard]] const std::string& running_traceparent();

// Time a call spent elsewhere — in the sandbox, at an MCP server — as the client that reached it
// saw it: a span under the call's run.
struct Elsewhere {
    std::string name; // "sandbox", "mcp server"
    int64_t start_ns = 0;
    int64_t end_ns = 0;
    Json attributes = Json::object();
};

// Notes time spent elsewhere by the call that runs on this thread (nothing when none does).
void note_elsewhere(Elsewhere spent);

// While it lives, a tool runs on this thread under the span `span_id` of `trace`: it sets
// running_traceparent() and gathers what note_elsewhere() is told. They nest, as calls of a
// program under run_code's do.
class RunningUnder {
public:
    RunningUnder(std::string_view trace, std::string_view span_id);
    RunningUnder(const RunningUnder&) = delete;
    RunningUnder& operator=(const RunningUnder&) = delete;
    ~RunningUnder();

    [[nodiscard]] std::vector<Elsewhere> take_elsewhere() { return std::move(m_elsewhere); }

private:
    friend void note_elsewhere(Elsewhere spent);
    friend const std::string& running_traceparent();
    std::string m_traceparent;
    RunningUnder* m_outer;
    std::vector<Elsewhere> m_elsewhere;
};

// GenAI's name of the provider a model spec names (gen_ai.provider.name): "anthropic",
// "openai", "aws.bedrock", "gcp.gemini", … ; a provider it has no name for, sion's own.
[[nodiscard]] std::string genai_provider(std::string_view spec_provider);

// A model call's span named for the model `spec` names ("anthropic:claude-opus-4-5#high"):
// "chat claude-opus-4-5", with gen_ai.operation.name, gen_ai.provider.name,
// gen_ai.request.model and sion.model (the spec).
void name_chat(otlp::Span& span, std::string_view spec);

// Stores `spans` with the session.
[[nodiscard]] Status insert_spans(Db& db, std::string_view session,
                                  const std::vector<otlp::Span>& spans);

// The session's spans as kept, every run's, by start.
[[nodiscard]] Result<std::vector<otlp::Span>> load_spans(Db& db, std::string_view session);

// The spans as a waterfall, a trace after another: a line for the trace (its id, when it began,
// how long it took), then a line a span, under its parent and indented by depth, with its
// duration and a bar of `bar` columns on the trace's time scale; a span that failed is marked
// '!'. A span whose parent is not among them is drawn at the top.
//
//   trace 4bf92f3577b34da6a3ce929d0e0e4736  2026-12-07 11:02:03 UTC  1.24 s
//   invoke_agent sion            1.24 s  |████████████████████████████████████████|
//     chat script:a.json         2.1 ms  |█                                       |
[[nodiscard]] std::string draw_waterfall(const std::vector<otlp::Span>& spans, size_t bar = 40);

} // namespace sion::session
