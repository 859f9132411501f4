// SPDX-License-Identifier: MIT
// The session loop: ask the model, make its calls, give it their results, until it is done.
#include "lib/text.hpp"
#include "session/loop.hpp"

#include <algorithm>
#include <map>

namespace sion::session {

Result<Ending> Loop::run() {
    m_run_span = m_p.trace->begin_root("invoke_agent sion", m_p.trace_from);
    m_run_open = true;
    m_asking_under = m_p.trace->root();
    {
        Json& a = m_run_span.attributes;
        a.set("gen_ai.operation.name", "invoke_agent");
        a.set("gen_ai.agent.id", std::string_view(m_p.row.agent));
        a.set("gen_ai.agent.name", std::string_view(m_p.row.profile));
        a.set("gen_ai.conversation.id", std::string_view(m_p.row.id));
        a.set("sion.run.continued", m_p.continued);
        if (m_p.trace->captures_content())
            a.set("sion.task", std::string_view(m_p.task));
    }
    SION_TRY(m_conversation, load_messages(*m_p.db, m_p.row.id));
    // The instructions the session began with are its system prompt's; the lines about MCP
    // servers a run showed, and the route its task took, are kept for `show`. None is the
    // conversation.
    bool kept = false;
    bool kept_skills = false;
    std::optional<std::string> began; // the system prompt the session began with
    std::erase_if(m_conversation, [&](const Json& m) {
        std::string_view role = m.view().string_or("role", "").value_or("");
        if (role == "instructions") {
            m_p.instructions = instructions_of(m.view());
            kept = true;
        }
        if (role == "skills") {
            m_p.skills.clear();
            for (JsonView k : m.view().get("skills"))
                m_p.skills.push_back({std::string(k.string_or("name", "").value_or("")),
                                      std::string(k.string_or("description", "").value_or(""))});
            kept_skills = true;
        }
        if (role == "tools") // the tools its searches loaded, the latest last
            m_found.loaded = m.view().strings("loaded").value_or(std::vector<std::string>{});
        if (role == "system")
            began = std::string(m.view().string_or("text", "").value_or(""));
        if (role == "compaction")
            m_compaction.add(m.view());
        return role == "mcp" || role == "instructions" || role == "tools" || role == "system"
               || role == "compaction" || role == "route" || role == "skills";
    });
    for (const Json& m : m_conversation)
        for (JsonView c : m.get("calls"))
            if (auto id = c.string("id"))
                m_call_ids.insert(std::string(*id));
    if (m_p.context.delegation != nullptr)
        m_p.context.delegation->left = [this]() -> std::optional<int64_t> {
            if (!m_p.settings.budget_tokens)
                return std::nullopt;
            return *m_p.settings.budget_tokens - tokens_used();
        };
    m_p.out->session(m_p.row, m_p.continued);
    if (m_p.route.exists()) {
        SION_CHECK(append_message(*m_p.db, m_p.row.id, m_p.route));
        m_p.out->routed(m_p.route.view());
        // What the sorter used is the session's, and counts against its budget.
        add_to(m_ending.usage, m_p.route_usage);
        SION_CHECK(add_usage(*m_p.db, m_p.row.id, m_p.route_usage));
    }
    if (!kept && !m_p.instructions.empty()) {
        SION_CHECK(append_message(*m_p.db, m_p.row.id, instructions_message(m_p.instructions)));
        m_p.out->notice(instructions_line(m_p.instructions));
    }
    if (!kept_skills && !m_p.skills.empty()) {
        Json listed = Json::object();
        listed.set("role", "skills");
        Json list = Json::array();
        for (const SkillListed& k : m_p.skills) {
            Json one = Json::object();
            one.set("name", std::string_view(k.name));
            one.set("description", std::string_view(k.description));
            list.push(std::move(one));
        }
        listed.set("skills", std::move(list));
        SION_CHECK(append_message(*m_p.db, m_p.row.id, listed));
    }
    SION_CHECK(start_mcp());
    // The system prompt stays as the session began (seed 001, "What a model is sent"), so that a
    // provider's cache of the start holds across its runs; a run whose settings would change it
    // says what they are now in a note before the person's message.
    std::string system = system_prompt(m_p);
    if (!began) {
        Json kept_prompt = Json::object();
        kept_prompt.set("role", "system");
        kept_prompt.set("text", std::string_view(system));
        SION_CHECK(append_message(*m_p.db, m_p.row.id, kept_prompt));
    } else if (*began != system) {
        system = *began;
        Json note = settings_note(m_p);
        SION_CHECK(append_message(*m_p.db, m_p.row.id, note));
        m_p.out->notice(k_settings_changed);
        m_conversation.push_back(std::move(note));
    }
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
    while (true) {
        if (stopping())
            return finish("stopped", k_stopped_by_person);
        std::optional<Json> noted = turn_note(refresh_mcp());
        SION_TRY(std::vector<Json> sent_now, sent());
        if (noted)
            sent_now.push_back(std::move(*noted));
        models::Request request{system, m_specs, sent_now};
        request.go_on = [this] { return !stopping(); };
        if (m_p.out->streams())
            request.on_text = [this](std::string_view piece) { m_p.out->text_piece(piece); };
        if (over_budget(request))
            return finish("stopped", format("the token budget of %lld tokens is spent (%lld used)",
                                            static_cast<long long>(*m_p.settings.budget_tokens),
                                            static_cast<long long>(tokens_used())));
        auto answer = ask(request);
        if (!answer && stopping())
            return finish("stopped", k_stopped_by_person);
        if (!answer)
            return finish("failed", answer.error().message());
        SION_CHECK(record_answer(*answer));
        if (answer->calls.empty())
            return finish("done", "");
        SION_TRY(auto results, model_calls(answer->calls));
        for (auto& result : results)
            m_conversation.push_back(std::move(result));
    }
}

bool Loop::stopping() const {
    return m_p.stop && m_p.stop();
}

std::optional<Json> Loop::turn_note(std::optional<Json> servers) const {
    if (m_p.standing.empty())
        return servers;
    std::string text = "## The person's instructions for this chat\n" + m_p.standing;
    if (servers)
        text += "\n\n" + std::string(servers->view().string_or("text", "").value_or(""));
    Json note = Json::object();
    note.set("role", "user");
    note.set("text", std::string_view(text));
    note.set("note", true);
    return note;
}

Result<Ending> Loop::finish(const char* state, std::string why) {
    m_ending.calls = m_calls.finished();
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
    Json& a = m_run_span.attributes;
    a.set("sion.run.state", std::string_view(m_ending.state));
    a.set("sion.run.calls", static_cast<int64_t>(m_ending.calls));
    a.set("sion.tainted", m_p.row.tainted);
    a.set("gen_ai.usage.input_tokens", m_ending.usage.input_tokens);
    a.set("gen_ai.usage.output_tokens", m_ending.usage.output_tokens);
    a.set("gen_ai.usage.cache_read.input_tokens", m_ending.usage.cache_read_tokens);
    a.set("gen_ai.usage.cache_write.input_tokens", m_ending.usage.cache_write_tokens);
    if (m_ending.state != "done") {
        m_run_span.error = m_ending.state == "failed";
        a.set("sion.run.why", std::string_view(m_ending.why));
        m_run_span.status_message = m_ending.why;
    }
    m_run_open = false;
    m_p.trace->end(std::move(m_run_span));
    m_p.trace->store(*m_p.db, m_p.row.id);
    m_p.out->end(m_p.row, m_ending);
    return m_ending;
}

void Loop::abandon_trace() {
    if (!m_run_open)
        return;
    m_run_open = false;
    m_calls.end_open_spans("interrupted");
    m_run_span.error = true;
    m_run_span.status_message = "the run stopped: the session's store failed";
    m_p.trace->end(std::move(m_run_span));
    m_p.trace->store(*m_p.db, m_p.row.id);
}

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
    SION_TRY(auto before, load_messages(db, row.id));
    // The tool each call was asked of by the model: tools_call for the tool it named.
    std::map<std::string, std::string> asked;
    for (const Json& m : before)
        for (JsonView c : m.get("calls"))
            if (auto id = c.string("id"))
                asked[std::string(*id)] = c.string_or("tool", "").value_or("");
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
        Json answer = tool_message(call);
        if (auto it = asked.find(call.call_id); it != asked.end() && it->second != call.tool)
            answer.set("tool", std::string_view(it->second));
        SION_CHECK(finish_call(db, row.id, call, call.parent.empty() ? answer.view() : JsonView()));
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

Json settings_note(const SessionParts& parts) {
    Json note = Json::object();
    note.set("role", "user");
    note.set("text", "The runtime's note: this run's settings are not those the session began "
                     "with, which the system prompt gives. Now: "
                         + settings_prompt(parts));
    note.set("note", true);
    return note;
}

std::string system_prompt(const SessionParts& parts) {
    std::string skills;
    if (!parts.skills.empty()) {
        skills = "\n\nYour skills: each is a folder of instructions, and of scripts they may name. "
                 "Read a skill's instructions with skill_read before you follow them";
        skills += parts.settings.shell ? "; run its scripts with skill_run, never by hand.\n"
                                       : ".\n";
        for (const SkillListed& k : parts.skills)
            skills += "- " + k.name + ": " + one_line(k.description) + "\n";
        skills.pop_back();
    }
    return settings_prompt(parts) + skills + instructions_prompt(parts.instructions);
}

std::string settings_prompt(const SessionParts& parts) {
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
