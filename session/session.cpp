// SPDX-License-Identifier: MIT
// The session loop: ask the model, make its calls, give it their results, until it is done.
#include "session/session.hpp"

#include "session/elicit.hpp"
#include "session/shown.hpp"
#include "lib/journal.hpp"
#include "lib/state.hpp"
#include "lib/text.hpp"

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <map>
#include <optional>
#include <set>

namespace sion::session {

namespace {

// How long a model that was busy or failing is left alone (seed 001, "Models").
constexpr int64_t k_model_rest_ms = 30'000;

int64_t steady_ms() {
    using namespace std::chrono;
    return duration_cast<milliseconds>(steady_clock::now().time_since_epoch()).count();
}

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

class Loop {
public:
    explicit Loop(SessionParts& parts)
        : m_p(parts), m_journal(*parts.db), m_resting_until(parts.models.size(), 0) {
        for (const auto& t : parts.tools) {
            m_specs.push_back(t->spec());
            m_tools.push_back(t.get());
        }
        parts.context.call_from_code = [this](std::string_view tool, JsonView input) {
            return call_from_code(tool, input);
        };
        if (parts.mcp != nullptr)
            parts.mcp->set_asks({[this](JsonView params) { return elicit(params); },
                                 [this](JsonView params) { return sample(params); }});
    }

    Loop(const Loop&) = delete;
    Loop& operator=(const Loop&) = delete;

    ~Loop() {
        if (m_p.mcp != nullptr)
            m_p.mcp->set_asks({});
    }

    Result<Ending> run() {
        SION_TRY(m_conversation, load_messages(*m_p.db, m_p.row.id));
        // The lines about MCP servers a run showed are kept for `show`, not for the model.
        std::erase_if(m_conversation, [](const Json& m) {
            return m.view().string_or("role", "").value_or("") == "mcp";
        });
        for (const Json& m : m_conversation)
            for (JsonView c : m.get("calls"))
                if (auto id = c.string("id"))
                    m_call_ids.insert(std::string(*id));
        m_p.out->session(m_p.row, m_p.continued);
        SION_CHECK(start_mcp());
        // What run-start hooks print is added to the person's message, marked as theirs.
        std::string said = m_p.task;
        Json start = Json::object();
        start.set("said", std::string_view(m_p.task));
        HookVerdict hooked = m_p.hooks.fire("run-start", std::move(start));
        if (!hooked.added.empty())
            said += "\n\n" + hooked.added;
        Json task = Json::object();
        task.set("role", "user");
        task.set("text", std::string_view(said));
        if (m_p.pictures.view().size() > 0)
            task.set("images", std::move(m_p.pictures));
        SION_CHECK(append_message(*m_p.db, m_p.row.id, task));
        m_conversation.push_back(std::move(task));
        std::string system = system_prompt(m_p);
        while (true) {
            bool noted = refresh_mcp();
            models::Request request{system, m_specs, m_conversation};
            if (m_p.settings.budget_tokens) {
                int64_t budget = *m_p.settings.budget_tokens;
                int64_t used = tokens_used();
                // A model told how hard to think may use its room for thinking besides.
                int64_t room = 0;
                for (const auto& model : m_p.models)
                    room = std::max(room, model->thinking_room());
                if (used + models::estimate_tokens(request) + room > budget)
                    return finish("stopped",
                                  format("the token budget of %lld tokens is spent (%lld used)",
                                         static_cast<long long>(budget),
                                         static_cast<long long>(used)));
            }
            auto answer = ask(request);
            if (noted)
                m_conversation.pop_back();
            if (!answer)
                return finish("failed", answer.error().message());
            SION_CHECK(record_answer(*answer));
            if (answer->calls.empty())
                return finish("done", "");
            for (auto& call : answer->calls)
                SION_CHECK(make_call(call));
        }
    }

private:
    // The first model that answers, in order, passing over those that were busy or failing in the
    // last 30 seconds (unless every one was). Each failing one is named, and the next asked when
    // the failure is one another model may not have.
    Result<models::Answer> ask(const models::Request& request) {
        int64_t now = steady_ms();
        std::vector<size_t> order;
        for (size_t i = 0; i < m_p.models.size(); ++i)
            if (m_resting_until[i] <= now)
                order.push_back(i);
        for (size_t i = 0; i < m_p.models.size(); ++i)
            if (m_resting_until[i] > now)
                order.push_back(i);
        Error last(Exit::unavailable, "no model");
        for (size_t k = 0; k < order.size(); ++k) {
            models::Model& model = *m_p.models[order[k]];
            auto answer = model.answer(request);
            if (answer)
                return answer;
            last = Error(answer.error().exit(),
                         "the model " + model.name() + " failed: " + answer.error().message());
            if (!models::worth_another_model(answer.error()) || k + 1 == order.size())
                break;
            m_resting_until[order[k]] = steady_ms() + k_model_rest_ms;
            m_p.out->notice(last.message() + "; asking " + m_p.models[order[k + 1]]->name());
        }
        return last;
    }

    Status record_answer(models::Answer& answer) {
        Json m = Json::object();
        m.set("role", "assistant");
        if (!answer.text.empty())
            m.set("text", std::string_view(answer.text));
        if (!answer.reasoning.empty())
            m.set("reasoning", std::string_view(answer.reasoning));
        // What the provider keeps to be given back (signed thinking), in members of its own.
        for (JsonView kept : answer.kept.view())
            m.set(kept.key(), Json::copy_of(kept));
        if (!answer.calls.empty()) {
            Json calls = Json::array();
            for (auto& c : answer.calls) {
                // Ids must be unique in the session: a scripted model starts its numbering again
                // in each run.
                std::string base = c.id.empty() ? "call" : c.id;
                std::string id = base;
                for (int n = 2; m_call_ids.count(id) != 0; ++n)
                    id = base + "_" + std::to_string(n);
                m_call_ids.insert(id);
                c.id = id;
                Json one = Json::object();
                one.set("id", std::string_view(c.id));
                one.set("tool", std::string_view(c.tool));
                one.set("input", Json::copy_of(c.input));
                calls.push(std::move(one));
            }
            m.set("calls", std::move(calls));
        }
        add_to(m_ending.usage, answer.usage);
        {
            SION_TRY(Txn txn, Txn::begin(*m_p.db));
            SION_CHECK(append_message(*m_p.db, m_p.row.id, m));
            SION_CHECK(add_usage(*m_p.db, m_p.row.id, answer.usage));
            SION_CHECK(txn.commit());
        }
        m_conversation.push_back(std::move(m));
        if (!answer.reasoning.empty())
            m_p.out->reasoning(answer.reasoning);
        if (!answer.text.empty())
            m_p.out->text(answer.text);
        return {};
    }

    // "there is no tool named ghost_read_graph", and why when its name is a server's that is not
    // connected now: ": MCP server ghost ended (killed by signal 9)".
    std::string no_tool(const std::string& name) const {
        std::string line = "there is no tool named " + name;
        size_t cut = name.find('_');
        if (cut == std::string::npos)
            return line;
        auto down = m_mcp_down.find(name.substr(0, cut));
        if (down == m_mcp_down.end())
            return line;
        std::string who = "MCP server " + down->first;
        return line + ": " + (down->second.starts_with(who) ? down->second
                                                              : who + " " + down->second);
    }

    Tool* find_tool(std::string_view name) {
        for (size_t i = 0; i < m_specs.size(); ++i)
            if (m_specs[i].name == name)
                return m_tools[i];
        return nullptr;
    }

    // A line about an MCP server: shown now, and kept among the session's messages as
    // {"role":"mcp","server","text"} (with "during": the call it came during, if one), so that
    // `show` shows it where the run did. Never sent to a model.
    Status mcp_line(const std::string& server, const std::string& text) {
        m_p.out->mcp(server, text);
        Json m = Json::object();
        m.set("role", "mcp");
        m.set("server", std::string_view(server));
        m.set("text", std::string_view(text));
        if (!m_code_parent.empty())
            m.set("during", std::string_view(m_code_parent));
        return append_message(*m_p.db, m_p.row.id, m);
    }

    // MCP servers (mcp_client.hpp). At the start: the bridge's notices (tools not offered, and
    // why), and the taint of a task that is a server's prompt.
    Status start_mcp() {
        if (m_p.mcp == nullptr)
            return {};
        for (const auto& server : m_p.mcp->first_state()) {
            for (const auto& notice : server.notices)
                SION_CHECK(mcp_line(server.name, notice));
            if (server.state != "connected" && server.notices.empty())
                SION_CHECK(mcp_line(server.name,
                                    "MCP server " + server.name + " is not offered: "
                                        + (server.message.empty() ? server.state
                                                                  : server.message)));
        }
        if (m_p.prompt.empty() || m_p.row.tainted)
            return {};
        SION_CHECK(set_tainted(*m_p.db, m_p.row.id));
        m_p.row.tainted = true;
        m_p.out->notice("the session is tainted: its task is the prompt " + m_p.prompt
                        + ", whose words are the server's");
        return {};
    }

    // Before each model call: the servers' state now, their tools in place of the last turn's,
    // and the model told of them at the end of what it is sent (not stored, and not in the system
    // prompt, which stays the same from call to call for prompt caching). True when that note is
    // the last of m_conversation, for the caller to take away.
    bool refresh_mcp() {
        if (m_p.mcp == nullptr)
            return false;
        McpTurn turn = mcp_turn(*m_p.mcp);
        if (turn.failure && !m_mcp_failed)
            m_p.out->notice("the MCP servers did not answer: " + turn.failure->message());
        m_mcp_failed = m_mcp_failed || turn.failure;
        m_mcp_tools = std::move(turn.tools);
        m_mcp_down = std::move(turn.down);
        m_specs.resize(m_p.tools.size());
        m_tools.resize(m_p.tools.size());
        for (const auto& tool : m_mcp_tools) {
            models::ToolSpec spec = tool->spec();
            if (find_tool(spec.name) != nullptr)
                continue; // the session's own tool of that name is the one the model has
            m_specs.push_back(std::move(spec));
            m_tools.push_back(tool.get());
        }
        Json note = Json::object();
        note.set("role", "user");
        note.set("text", std::string_view(turn.paragraph));
        note.set("note", true);
        m_conversation.push_back(std::move(note));
        return true;
    }

    // A server's question, asked at the terminal; declined with no one to ask.
    Json elicit(JsonView params) {
        std::string server(params.string_or("server", "").value_or(""));
        Terminal terminal{[this](std::string_view text) { m_p.person.say(text); },
                          [this](std::string_view prompt) { return m_p.person.ask(prompt); }};
        Elicited asked = m_p.person.present()
                             ? sion::session::elicit(params, terminal)
                             : declined("declined, since there is no one to ask here ("
                                        + m_p.person.absent_why() + ")");
        if (auto kept = mcp_line(server, "MCP server " + server + " asked for input: " + asked.said);
            !kept && !m_store_failure)
            m_store_failure = kept.error();
        return std::move(asked.result);
    }

    // A server's completion (mcp_client.hpp), its tokens the run's.
    rpc::Reply sample(JsonView params) {
        Completion c = write_completion(
            params, [this](const std::string& spec) { return sampling_model(spec); },
            m_p.settings.budget_tokens, tokens_used());
        if (c.said.empty())
            return std::move(c.reply);
        add_to(m_ending.usage, c.usage);
        if (auto added = add_usage(*m_p.db, m_p.row.id, c.usage); !added) {
            m_store_failure = added.error();
            return rpc::Reply::fail(rpc::k_internal_error, "the session cannot record it");
        }
        if (auto kept = mcp_line(c.server, c.said); !kept) {
            m_store_failure = kept.error();
            return rpc::Reply::fail(rpc::k_internal_error, "the session cannot record it");
        }
        return std::move(c.reply);
    }

    Result<models::Model*> sampling_model(const std::string& spec) {
        if (spec.empty())
            return m_p.models.front().get();
        for (const auto& model : m_p.models)
            if (model->name() == spec)
                return model.get();
        std::unique_ptr<models::Model>& opened = m_sampling_models[spec];
        if (!opened) {
            SION_TRY(opened, models::open_model(spec));
        }
        return opened.get();
    }

    Status make_call(const models::ToolCall& call) {
        CallRow row;
        row.call_id = call.id;
        row.tool = call.tool;
        row.input = Json::copy_of(call.input);
        row.started_ms = now_ms();
        Tool* tool = find_tool(call.tool);
        if (tool == nullptr || !call.input.view().is_object()) {
            row.state = "error";
            row.result = tool == nullptr ? no_tool(call.tool)
                                         : "the input of " + call.tool + " is not an object";
            SION_TRY(row.seq, insert_call(*m_p.db, m_p.row.id, row));
            m_p.out->call(row);
            return finish_call_now(row);
        }
        Effect effect = tool->effect(call.input);
        Decision decision = decide(effect, m_p.settings.autonomy, m_p.row.tainted);
        row.effect = effect_name(effect);
        row.decision = decision_name(decision);
        row.why = explain(call.tool, effect, m_p.settings.autonomy, m_p.row.tainted);
        row.state = "running";
        SION_TRY(row.seq, insert_call(*m_p.db, m_p.row.id, row));
        m_p.out->call(row);
        if (decision == Decision::refuse)
            return refuse(row, row.why);
        if (decision == Decision::ask) {
            if (!m_p.person.present())
                return refuse(row, row.why + ", and there is no one to ask here ("
                                       + m_p.person.absent_why() + ")");
            // The call's line is in the transcript already when that is on the terminal too.
            std::string question =
                ::isatty(STDOUT_FILENO) == 1
                    ? shown_line(row.why) + ". Run it? [y/N] "
                    : format("→ %s %s\n%s. Run it? [y/N] ", shown_line(call.tool).c_str(),
                             shown_line(canonical_json(call.input)).c_str(),
                             shown_line(row.why).c_str());
            if (!m_p.person.allows(question))
                return refuse(row, "the person did not allow this call (" + row.why + ")");
        }
        return run_tool(*tool, row);
    }

    // A call a program makes from run_code (the call m_code_parent): made as the model's would be
    // when it only reads and may run without anyone; refused otherwise, for the model to make.
    // Recorded and shown under its parent, and not part of the conversation: only what the program
    // prints is.
    ToolResult call_from_code(std::string_view name, JsonView input) {
        CallRow row;
        row.parent = m_code_parent;
        row.call_id = format("%s.%d", m_code_parent.c_str(), ++m_code_calls);
        row.tool = std::string(name);
        row.input = Json::copy_of(input);
        row.started_ms = now_ms();
        Tool* tool = name == "run_code" ? nullptr : find_tool(name);
        if (tool == nullptr) {
            row.state = "error";
            row.result = no_tool(row.tool);
        } else {
            Effect effect = tool->effect(input);
            Decision decision = decide(effect, m_p.settings.autonomy, m_p.row.tainted);
            row.effect = effect_name(effect);
            row.decision = decision_name(decision);
            row.why = explain(row.tool, effect, m_p.settings.autonomy, m_p.row.tainted);
            if (effect != Effect::read || decision != Decision::run) {
                row.decision = decision_name(Decision::refuse);
                row.state = "refused";
                row.result = row.why + ": a program does not make that call; make it yourself";
            } else {
                row.state = "running";
            }
        }
        Status done = record_code_call(tool, row);
        if (!done) {
            m_store_failure = done.error();
            return {
                "the session cannot record this call: " + done.error().message(), true, false, {}};
        }
        return {row.result, row.state != "ok", row.tainted, {}};
    }

    Status record_code_call(Tool* tool, CallRow& row) {
        SION_TRY(row.seq, insert_call(*m_p.db, m_p.row.id, row));
        m_p.out->call(row);
        if (row.state != "running")
            return finish_call_now(row);
        return run_tool(*tool, row);
    }

    // The call as hooks are told of it.
    static Json hook_event(const CallRow& row) {
        Json e = Json::object();
        e.set("call", std::string_view(row.call_id));
        e.set("tool", std::string_view(row.tool));
        e.set("input", Json::copy_of(row.input));
        e.set("effect", std::string_view(row.effect));
        return e;
    }

    Status run_tool(Tool& tool, CallRow& row) {
        // before-tool hooks, once the policy and the person let the call run.
        HookVerdict before = m_p.hooks.fire("before-tool", hook_event(row));
        if (!before.allow)
            return refuse(row, "a hook blocked this call: " + before.reason);
        std::optional<int64_t> entry;
        if (tool.journaled()) {
            SION_TRY(Begun begun, m_journal.begin(m_p.row.id, row.tool, row.input));
            if (begun.kind == Begun::Kind::recorded) {
                row.state = begun.is_error ? "error" : "ok";
                row.result = "[made before in this session: not made again; its answer then]\n"
                             + begun.result;
                return finish_call_now(row);
            }
            if (begun.kind == Begun::Kind::uncertain) {
                row.state = "uncertain";
                row.result = begun.result;
                return finish_call_now(row);
            }
            entry = begun.entry;
        }
        int64_t started = steady_ms();
        std::string outer = m_code_parent;
        if (row.parent.empty()) {
            m_code_parent = row.call_id;
            m_code_calls = 0;
        }
        auto done = tool.run(row.input, m_p.context);
        m_code_parent = outer;
        row.wall_ms = steady_ms() - started;
        if (m_store_failure) {
            Error failure = std::move(*m_store_failure);
            m_store_failure.reset();
            return failure;
        }
        if (!done) {
            row.state = "error";
            row.result = done.error().message();
            if (entry)
                SION_CHECK(m_journal.mark_uncertain(*entry, done.error().message()));
            return finish_call_now(row);
        }
        if (entry && done->is_error && (tool.fails_cleanly() || done->changed_nothing))
            SION_CHECK(m_journal.forget(*entry));
        else if (entry)
            SION_CHECK(m_journal.finish(*entry, done->text, done->is_error));
        row.state = done->is_error ? "error" : "ok";
        row.result = std::move(done->text);
        row.detail = std::move(done->detail);
        row.images = std::move(done->images);
        row.tainted = done->taints && !m_p.row.tainted;
        // What after-tool hooks print is added to what the model is shown, marked as theirs.
        Json after = hook_event(row);
        Json outcome = Json::object();
        outcome.set("state", std::string_view(row.state));
        outcome.set("text", std::string_view(row.result));
        after.set("outcome", std::move(outcome));
        HookVerdict hooked = m_p.hooks.fire("after-tool", std::move(after));
        if (!hooked.added.empty())
            row.result += "\n" + hooked.added;
        return finish_call_now(row);
    }

    Status refuse(CallRow& row, std::string why) {
        row.state = "refused";
        row.result = std::move(why);
        return finish_call_now(row);
    }

    Status finish_call_now(CallRow& row) {
        if (row.parent.empty()) {
            Json m = tool_message(row);
            SION_CHECK(finish_call(*m_p.db, m_p.row.id, row, m));
            m_conversation.push_back(std::move(m));
        } else {
            SION_CHECK(finish_call(*m_p.db, m_p.row.id, row, JsonView()));
        }
        if (row.tainted)
            m_p.row.tainted = true;
        ++m_ending.calls;
        m_p.out->result(row);
        return {};
    }

    // The run's tokens as its budget counts them: all that was read, cached or not, and written.
    int64_t tokens_used() const {
        return m_ending.usage.input_tokens + m_ending.usage.output_tokens;
    }

    Result<Ending> finish(const char* state, std::string why) {
        m_ending.state = state;
        m_ending.why = std::move(why);
        SION_CHECK(end_run(*m_p.db, m_p.row.id, m_ending.state, m_ending.why));
        m_p.row.state = m_ending.state;
        Json ended = Json::object();
        ended.set("state", std::string_view(m_ending.state));
        if (!m_ending.why.empty())
            ended.set("why", std::string_view(m_ending.why));
        Json end = Json::object();
        end.set("ended", std::move(ended));
        (void)m_p.hooks.fire("run-end", std::move(end));
        m_p.out->end(m_p.row, m_ending);
        return m_ending;
    }

    SessionParts& m_p;
    Journal m_journal;
    std::vector<models::ToolSpec> m_specs;
    std::vector<Tool*> m_tools;                     // each spec's tool
    std::vector<std::unique_ptr<Tool>> m_mcp_tools; // the MCP servers' this turn
    std::map<std::string, std::string> m_mcp_down;  // the servers not connected this turn, why
    bool m_mcp_failed = false;                      // the bridge stopped answering, and was named
    std::map<std::string, std::unique_ptr<models::Model>> m_sampling_models; // named by servers
    std::vector<Json> m_conversation;
    std::set<std::string> m_call_ids;
    std::vector<int64_t> m_resting_until; // steady ms, per model: left alone until then
    std::string m_code_parent;            // the run_code call whose program is running
    int m_code_calls = 0;                 // the calls its program has made
    std::optional<Error> m_store_failure; // the store failed under a program's call
    Ending m_ending;
};

} // namespace

Result<Ending> run_session(SessionParts& parts) {
    return Loop(parts).run();
}

int exit_status(const Ending& ending) {
    if (ending.state == "done")
        return 0;
    if (ending.state == "failed")
        return to_int(Exit::unavailable);
    return to_int(Exit::no);
}

Status close_interrupted_calls(Db& db, const SessionRow& row) {
    SION_TRY(auto calls, load_calls(db, row.id));
    Journal journal(db);
    SION_TRY(auto entries, journal.entries(row.id));
    for (auto& call : calls) {
        if (call.state != "running")
            continue;
        std::string why = "the session stopped before this call was answered";
        for (const auto& e : entries)
            if (e.state == "pending" && e.tool == call.tool
                && e.input == canonical_json(call.input))
                SION_CHECK(journal.mark_uncertain(e.id, why));
        call.state = "interrupted";
        call.result = why + ": it may have taken effect";
        SION_CHECK(finish_call(db, row.id, call,
                               call.parent.empty() ? tool_message(call).view() : JsonView()));
    }
    // Calls the model asked for that the session never started: answered as not made.
    SION_TRY(auto messages, load_messages(db, row.id));
    std::set<std::string> answered;
    for (const Json& m : messages)
        if (auto id = m.view().string("call"))
            answered.insert(std::string(*id));
    for (const Json& m : messages)
        for (JsonView c : m.get("calls")) {
            auto id = c.string("id");
            if (!id || answered.count(std::string(*id)) != 0)
                continue;
            CallRow never;
            never.call_id = std::string(*id);
            never.tool = std::string(c.string_or("tool", "").value_or(""));
            never.state = "interrupted";
            never.result = "the session stopped before this call was made";
            Json tm = tool_message(never);
            SION_CHECK(append_message(db, row.id, tm));
        }
    return {};
}

std::string system_prompt(const SessionParts& parts) {
    std::string s =
        format("You are agent %.8s of sion, working for a person on the task they give you. "
               "You act only through your tools; each call passes the session's policy "
               "(autonomy %s), and a call it refuses comes back saying why.",
               parts.row.agent.c_str(), autonomy_name(parts.settings.autonomy).c_str());
    if (!parts.settings.workspace.empty())
        s += " Your workspace is /workspace: name files relative to it.";
    if (parts.settings.shell)
        s += " Shell commands run with /bin/sh in /workspace, in a sandbox that can write only the "
             "workspace.";
    if (parts.mcp != nullptr)
        s += " Tools named <server>_<tool> are an MCP server's; each turn ends with a note of the "
             "servers you have then.";
    s += " When the task is done, say so briefly, without a tool call.";
    return s;
}

} // namespace sion::session
