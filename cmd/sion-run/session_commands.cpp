// SPDX-License-Identifier: MIT
// sion-run sessions and show: what the stored sessions did.
#include "cmd/sion-run/commands.hpp"
#include "session/instructions.hpp"
#include "session/session.hpp"
#include "session/store.hpp"
#include "session/shown.hpp"
#include "session/trace.hpp"
#include "session/transcript.hpp"
#include "lib/agents.hpp"
#include "lib/db_schema.hpp"
#include "lib/home.hpp"
#include "lib/listing.hpp"
#include "lib/log.hpp"
#include "lib/models/model.hpp"
#include "lib/otlp.hpp"
#include "lib/text.hpp"
#include "lib/version.hpp"

#include <unistd.h>

#include <cstdio>
#include <functional>
#include <map>

namespace sion::run_cmd {

using namespace sion::session; // the engine these commands drive

namespace {

// A stored session's state as it is now: one left "running" by a process that is gone was
// interrupted.
std::string state_now(const SessionRow& row) {
    if (row.state == "running" && !process_alive(row.owner))
        return "interrupted";
    return row.state;
}

// The first line of the task, cut to 60 characters (whole UTF-8 sequences).
std::string headline(std::string_view task) {
    task = task.substr(0, task.find('\n'));
    if (task.size() <= 60)
        return std::string(task);
    size_t cut = 60;
    while (cut > 0 && (static_cast<unsigned char>(task[cut]) & 0xC0) == 0x80)
        --cut;
    return std::string(task.substr(0, cut)) + "…";
}

} // namespace

int sessions_command(int argc, const char* const* argv) {
    const CommandSpec spec{
        "sion-run sessions",
        "sion-run sessions [AGENT] [--json]",
        "List the sessions, of AGENT or of every agent, newest first: the id, the agent, the\n"
        "state, the calls made, and the first task; or with --json one JSON object a line\n"
        "(schemas/run.sessions.json).",
        {json_lines_option()},
        false,
        {":agent"},
    };
    Args args = parse_args_or_exit(spec, argc, argv);
    check_operands(args, 0, 1);
    std::string home = or_die(prepare_home());
    Db db = or_die(open_state(home));
    std::optional<std::string> agent;
    if (!args.operands().empty())
        agent = or_die(find_agent(db, args.operands()[0], std::nullopt)).id;
    auto rows =
        or_die(list_sessions(db, agent ? std::optional<std::string_view>(*agent) : std::nullopt));
    const Listing listing(args.has("json"));
    for (const auto& row : rows) {
        auto calls = or_die(load_calls(db, row.id));
        std::string state = state_now(row);
        Json entry = Json::object();
        entry.set("session", row.id);
        entry.set("agent", row.agent);
        entry.set("state", state);
        entry.set("calls", static_cast<int64_t>(calls.size()));
        entry.set("task", row.task);
        listing.print(entry,
                      format("%s %s %s %zu call%s %s", row.id.c_str(),
                             short_agent_id(row.agent).c_str(), state.c_str(), calls.size(),
                             calls.size() == 1 ? "" : "s", shown_line(headline(row.task)).c_str()));
    }
    return 0;
}

namespace {

// The session's traces: a waterfall, or one line of OTLP JSON (an ExportTraceServiceRequest).
int show_trace(Db& db, const SessionRow& row, bool json) {
    std::vector<otlp::Span> spans = or_die(load_spans(db, row.id));
    if (spans.empty())
        die(make_error(Exit::no_input,
                       "session %s has no trace: its runs were made before sion kept traces, or "
                       "were killed before their first answer",
                       row.id.c_str()));
    if (json) {
        otlp::Origin origin;
        origin.resource.set("service.name", "sion");
        origin.scope_version = version();
        std::printf("%s\n", otlp::encode_json(origin, spans).dump().c_str());
    } else {
        std::fputs(draw_waterfall(spans).c_str(), stdout);
    }
    return 0;
}

} // namespace

int show_command(int argc, const char* const* argv) {
    const CommandSpec spec{
        "sion-run show",
        "sion-run show SESSION [--color WHEN] [--json] [--trace]",
        "Print a stored session's transcript, as its runs printed it, with the person's tasks as\n"
        "\"you:\" lines; or its events, one JSON object a line; or with --trace its runs' traces\n"
        "as a waterfall, a line a span (with --json, as OTLP JSON).",
        {{"json", 0, nullptr, "print one JSON event a line instead of the transcript"},
         {"trace", 0, nullptr, "print the runs' traces: each span a line, indented, with a bar"},
         colour_option()},
        false,
        {":session"},
    };
    Args args = parse_args_or_exit(spec, argc, argv);
    check_operands(args, 1, 1, "give a session: sion-run show SESSION");
    bool colour = or_die(colour_wanted(args, STDOUT_FILENO));
    std::string home = or_die(prepare_home());
    Db db = or_die(open_state(home));
    SessionRow row = or_die(find_session(db, args.operands()[0]));
    if (args.has("trace"))
        return show_trace(db, row, args.has("json"));
    auto messages = or_die(load_messages(db, row.id));
    auto calls = or_die(load_calls(db, row.id));
    // The pictures a call returned are kept with what the model was shown of it.
    for (const Json& m : messages)
        if (m.get("images").size() > 0)
            for (auto& c : calls)
                if (c.parent.empty() && c.call_id == m.view().string_or("call", "").value_or(""))
                    c.images = Json::copy_of(m.get("images"));
    std::map<std::string, const CallRow*> by_id;
    std::multimap<std::string, const CallRow*> children; // a run_code call's own calls, in order
    for (const auto& c : calls) {
        by_id[c.call_id] = &c;
        if (!c.parent.empty())
            children.emplace(c.parent, &c);
    }
    // The lines about MCP servers shown during a call, by the call.
    std::multimap<std::string, JsonView> during;
    for (const Json& m : messages)
        if (m.view().string_or("role", "").value_or("") == "mcp")
            if (auto call = m.view().string("during"))
                during.emplace(std::string(*call), m.view());
    bool live = state_now(row) == "running";
    auto out = make_output(args.has("json"), stdout, colour);
    auto mcp_line = [&](JsonView m) {
        out->mcp(m.string_or("server", "").value_or(""), m.string_or("text", "").value_or(""));
    };
    // A call, the calls its program made, then its result; one left without an answer says why.
    std::function<void(const CallRow&)> show = [&](const CallRow& call) {
        out->call(call);
        auto [first, last] = children.equal_range(call.call_id);
        for (auto it = first; it != last; ++it)
            show(*it->second);
        auto [said, said_end] = during.equal_range(call.call_id);
        for (auto it = said; it != said_end; ++it)
            mcp_line(it->second);
        if (call.state != "running") {
            out->result(call);
            return;
        }
        CallRow open;
        open.call_id = call.call_id;
        open.parent = call.parent;
        open.tool = call.tool;
        open.state = live ? "running" : "interrupted";
        open.result = live ? "no answer yet: the session is running"
                           : "no answer: the session stopped during this call";
        out->result(open);
    };
    out->session(row, false);
    for (const Json& m : messages) {
        std::string_view role = m.view().string_or("role", "").value_or("");
        if (role == "mcp" && !m.view().get("during").exists()) {
            mcp_line(m.view());
            continue;
        }
        if (role == "instructions") {
            out->notice(instructions_line(instructions_of(m.view())));
            continue;
        }
        if (role == "compaction") {
            out->compacted(m.view());
            continue;
        }
        if (role == "route") {
            out->routed(m.view());
            continue;
        }
        if (models::is_note(m.view())) {
            out->notice(k_settings_changed);
            continue;
        }
        if (role == "user") {
            out->task(m.view().string_or("text", "").value_or(""), m.get("images"));
            continue;
        }
        if (role != "assistant")
            continue;
        if (auto r = m.view().string("reasoning"))
            out->reasoning(*r);
        if (auto t = m.view().string("text"))
            out->text(*t);
        for (JsonView c : m.get("calls")) {
            std::string id(c.string_or("id", "").value_or(""));
            auto found = by_id.find(id);
            if (found != by_id.end()) {
                show(*found->second);
                continue;
            }
            CallRow never;
            never.call_id = id;
            never.tool = std::string(c.string_or("tool", "").value_or(""));
            never.input = Json::copy_of(c.get("input"));
            never.state = "interrupted";
            never.result = "the session stopped before this call was made";
            out->call(never);
            out->result(never);
        }
    }
    Ending ending{state_now(row), row.ended_why, static_cast<int64_t>(calls.size()), row.usage};
    if (ending.state == "interrupted")
        ending.why =
            format("it stopped after %zu call%s", calls.size(), calls.size() == 1 ? "" : "s");
    out->end(row, ending);
    return 0;
}

} // namespace sion::run_cmd
