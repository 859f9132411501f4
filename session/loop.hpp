// SPDX-License-Identifier: MIT
// The session loop's state and parts, shared by the files that hold them by concern: the run
// (session.cpp), the model turn (model_turn.cpp), the MCP servers per turn (mcp_turn.cpp) and input
// rounds (input_rounds.cpp); its calls go through the call pipeline (call_pipeline.hpp). Internal
// to session/.
#pragma once

#include "session/call_pipeline.hpp"
#include "session/compaction.hpp"
#include "session/session.hpp"

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

namespace sion::session {

// How long a model that was busy or failing is left alone (seed 001, "Models").
constexpr int64_t k_model_rest_ms = 30'000;

class Loop {
public:
    explicit Loop(SessionParts& parts)
        : m_p(parts),
          m_calls({parts.db, &parts.row, parts.settings.autonomy, parts.person.get(), &parts.hooks,
                   parts.out, &parts.context,
                   [this](std::string_view name) { return find_tool(name); }, parts.trace.get()}),
          m_resting_until(parts.models.size(), 0) {
        for (const auto& t : parts.tools) {
            m_specs.push_back(t->spec());
            m_tools.push_back(t.get());
        }
        m_search_tools.push_back(make_tools_search_tool(m_found));
        m_search_tools.push_back(make_tools_call_tool());
        if (parts.mcp != nullptr)
            parts.mcp->set_asks({[this](JsonView params) { return elicit(params); },
                                 [this](JsonView params) { return sample(params); }});
    }

    Loop(const Loop&) = delete;
    Loop& operator=(const Loop&) = delete;

    ~Loop() {
        if (m_p.mcp != nullptr)
            m_p.mcp->set_asks({});
        abandon_trace();
    }

    Result<Ending> run();

private:
    // The model turn (model_turn.cpp): asking, fallback, budget.

    // The first model that answers, in order, passing over those that were busy or failing in the
    // last 30 seconds (unless every one was). Each failing one is named, and the next asked when
    // the failure is one another model may not have.
    // Each model asked is a span of the trace (GenAI's "chat"), under m_asking_under.
    Result<models::Answer> ask(const models::Request& request);

    Status record_answer(models::Answer& answer);

    // The MCP servers' state per turn (mcp_turn.cpp), and the tools it leaves the model.

    // The tool `name` this turn; when there is none, "there is no tool named ghost_read_graph", and
    // why when its name is a server's that is not connected now: ": MCP server ghost ended (killed
    // by signal 9)".
    Result<Tool*> find_tool(std::string_view name) const;

    // A line about an MCP server: shown now, and kept among the session's messages as
    // {"role":"mcp","server","text"} (with "during": the call it came during, if one), so that
    // `show` shows it where the run did. Never sent to a model.
    Status mcp_line(const std::string& server, const std::string& text);

    // MCP servers (mcp_client.hpp). At the start: the bridge's notices (tools not offered, and
    // why), and the taint of a task that is a server's prompt.
    Status start_mcp();

    // Before each model call: the servers' state now, their tools in place of the last turn's,
    // and the model told of them at the end of what it is sent (not stored, and not in the system
    // prompt, which stays the same from call to call for prompt caching): that note, for the
    // caller to send last. Past 40 of the servers' tools, the model is shown tools_search,
    // tools_call and the tools loaded instead (tools.hpp).
    std::optional<Json> refresh_mcp();

    // The model's calls of an answer, through the pipeline (those that only read side by side):
    // a call of tools_call as a call of the tool it names (its policy, hooks, journal and
    // transcript the tool's), answered as tools_call's; the tools its searches loaded kept with
    // the session as {"role":"tools","loaded":[…]}.
    Result<std::vector<Json>> model_calls(const std::vector<models::ToolCall>& calls);

    // tool search's index of the servers' tools this turn, made again only when they changed.
    void index_tools(const std::vector<std::pair<models::ToolSpec, Tool*>>& offered);

    // Input rounds (input_rounds.cpp): what a server asks of the person or of a model mid-call.

    // A server's question, asked at the terminal; declined with no one to ask.
    Json elicit(JsonView params);

    // A server's completion (mcp_client.hpp), its tokens the run's.
    rpc::Reply sample(JsonView params);

    Result<models::Model*> sampling_model(const std::string& spec);

    // Compaction (compact_turn.cpp, compaction.hpp).

    // What the model is sent of the conversation now, compacted first when it has grown past the
    // limits.
    Result<std::vector<Json>> sent();

    // Makes the compaction `plan` says, records it with the session and shows its line; returns
    // what the model is sent from now on.
    Result<std::vector<Json>> compact(const CompactionPlan& plan);

    // The narrative of the conversation's [from, to) (and the summary before), written by the
    // session's model as data with no tools, its tokens the run's; or why there is none.
    struct Narrative {
        std::string text;
        bool failed = false;
    };

    Result<Narrative> narrate(size_t from, size_t to);

    // The run's tokens as its budget counts them (model_turn.cpp): all that was read, cached or
    // not, and written.
    int64_t tokens_used() const;

    // Whether `request` could take the run past its token budget: what the run has used, the
    // request's estimate, and the most room for thinking any of its models is given.
    bool over_budget(const models::Request& request) const;

    // Whether the person asked to stop the run (SessionParts::stop).
    bool stopping() const;

    // What is sent last each turn: the person's standing instructions of a console (/system), if
    // any, then the MCP servers' note `servers`; nullopt when there is neither.
    std::optional<Json> turn_note(std::optional<Json> servers) const;

    // The end of the run (session.cpp): stored, told to the run-end hooks, shown.
    Result<Ending> finish(const char* state, std::string why);

    // A run that ended without finish() (its store failed): its spans ended as interrupted and
    // kept as they can be.
    void abandon_trace();

    SessionParts& m_p;
    CallPipeline m_calls;
    std::vector<models::ToolSpec> m_specs;
    std::vector<Tool*> m_tools;                     // each spec's tool
    std::vector<std::unique_ptr<Tool>> m_mcp_tools; // the MCP servers' this turn
    std::map<std::string, std::string> m_mcp_down;  // the servers not connected this turn, why
    FoundTools m_found;                             // tool search's, past 40 of the servers' tools
    std::vector<std::unique_ptr<Tool>> m_search_tools; // tools_search and tools_call
    std::string m_indexed; // the names and descriptions m_found.index holds, a line each
    bool m_searching = false;                       // this turn's servers have more than 40 tools
    bool m_mcp_failed = false;                      // the bridge stopped answering, and was named
    std::map<std::string, std::unique_ptr<models::Model>> m_sampling_models; // named by servers
    std::vector<Json> m_conversation;
    Compaction m_compaction; // what is sent of it, as the last compaction left it
    std::set<std::string> m_call_ids;
    std::vector<int64_t> m_resting_until; // steady ms, per model: left alone until then
    Ending m_ending;
    otlp::Span m_run_span;      // the trace's root, ended by finish()
    bool m_run_open = false;    // begun, and not ended yet
    std::string m_asking_under; // the span models' calls go under: the run's, or a compaction's
};

} // namespace sion::session
