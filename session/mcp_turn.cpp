// SPDX-License-Identifier: MIT
// The MCP servers' state per turn: their notices at the start, their tools refreshed before each
// model call, and the tools of this turn found by name.
#include "session/loop.hpp"

namespace sion::session {

Result<Tool*> Loop::find_tool(std::string_view name) const {
    for (size_t i = 0; i < m_specs.size(); ++i)
        if (m_specs[i].name == name)
            return m_tools[i];
    // Past 40, a server's tool not loaded is called as well: through tools_call, or by a name the
    // model found before.
    for (size_t i = 0; m_searching && i < m_found.tools.size(); ++i)
        if (m_found.index.name(i) == name)
            return const_cast<Tool*>(m_found.tools[i]);
    std::string line = "there is no tool named " + std::string(name);
    size_t cut = name.find('_');
    auto down = cut == std::string_view::npos ? m_mcp_down.end()
                                              : m_mcp_down.find(std::string(name.substr(0, cut)));
    if (down == m_mcp_down.end())
        return Error(Exit::data, line);
    std::string who = "MCP server " + down->first;
    return Error(Exit::data,
                 line + ": "
                     + (down->second.starts_with(who) ? down->second : who + " " + down->second));
}

Status Loop::mcp_line(const std::string& server, const std::string& text) {
    m_p.out->mcp(server, text);
    Json m = Json::object();
    m.set("role", "mcp");
    m.set("server", std::string_view(server));
    m.set("text", std::string_view(text));
    if (!m_calls.under_way().empty())
        m.set("during", std::string_view(m_calls.under_way()));
    return append_message(*m_p.db, m_p.row.id, m);
}

Status Loop::start_mcp() {
    if (m_p.mcp == nullptr)
        return {};
    for (const auto& server : m_p.mcp->first_state()) {
        for (const auto& notice : server.notices)
            SION_CHECK(mcp_line(server.name, notice));
        if (server.state != "connected" && server.notices.empty())
            SION_CHECK(mcp_line(server.name,
                                "MCP server " + server.name + " is not offered: "
                                    + (server.message.empty() ? server.state : server.message)));
    }
    if (m_p.prompt.empty() || m_p.row.tainted)
        return {};
    SION_CHECK(set_tainted(*m_p.db, m_p.row.id));
    m_p.row.tainted = true;
    m_p.out->notice("the session is tainted: its task is the prompt " + m_p.prompt
                    + ", whose words are the server's");
    return {};
}

std::optional<Json> Loop::refresh_mcp() {
    if (m_p.mcp == nullptr)
        return std::nullopt;
    McpTurn turn = mcp_turn(*m_p.mcp);
    if (turn.failure && !m_mcp_failed)
        m_p.out->notice("the MCP servers did not answer: " + turn.failure->message());
    m_mcp_failed = m_mcp_failed || turn.failure;
    m_mcp_tools = std::move(turn.tools);
    m_mcp_down = std::move(turn.down);
    m_specs.resize(m_p.tools.size());
    m_tools.resize(m_p.tools.size());
    m_searching = false;
    std::vector<std::pair<models::ToolSpec, Tool*>> offered;
    for (const auto& tool : m_mcp_tools) {
        models::ToolSpec spec = tool->spec();
        if (find_tool(spec.name))
            continue; // the session's own tool of that name is the one the model has
        offered.emplace_back(std::move(spec), tool.get());
    }
    if (offered.size() <= k_tool_search_past) {
        for (auto& [spec, tool] : offered) {
            m_specs.push_back(std::move(spec));
            m_tools.push_back(tool);
        }
    } else {
        index_tools(offered);
        for (const auto& search : m_search_tools) {
            m_specs.push_back(search->spec());
            m_tools.push_back(search.get());
        }
        // The tools loaded, after the rest in the order they were found, so that loading more
        // leaves the start of the list as it was.
        for (const std::string& name : m_found.loaded)
            for (auto& [spec, tool] : offered)
                if (spec.name == name) {
                    m_specs.push_back(
                        {spec.name, spec.description, Json::copy_of(spec.input_schema.view())});
                    m_tools.push_back(tool);
                }
        m_searching = true;
    }
    Json note = Json::object();
    note.set("role", "user");
    note.set("text", std::string_view(turn.paragraph));
    note.set("note", true);
    return note;
}

void Loop::index_tools(const std::vector<std::pair<models::ToolSpec, Tool*>>& offered) {
    std::string names; // and descriptions, which a review may change
    for (const auto& [spec, tool] : offered)
        names += spec.name + "\t" + spec.description + "\n";
    m_found.tools.clear();
    for (const auto& [spec, tool] : offered)
        m_found.tools.push_back(tool);
    if (names == m_indexed)
        return; // the same tools as the last turn's, in new objects
    m_found.index = ToolIndex();
    for (const auto& [spec, tool] : offered)
        m_found.index.add(spec.name, spec.description, spec.input_schema.view());
    m_indexed = std::move(names);
}

Result<std::vector<Json>> Loop::model_calls(const std::vector<models::ToolCall>& calls) {
    std::vector<CallPipeline::Asked> asked;
    for (const auto& call : calls) {
        JsonView name = call.input.view().get("name");
        JsonView arguments = call.input.view().get("arguments");
        bool through = m_searching && call.tool == "tools_call" && name.is_string()
                       && arguments.is_object() && *name.as_string() != "tools_call"
                       && *name.as_string() != "tools_search";
        // Answered as tools_call's, kept so too: Gemini pairs results with calls by name.
        if (through)
            asked.push_back({{call.id, std::string(*name.as_string()), Json::copy_of(arguments)},
                             "tools_call"});
        else
            asked.push_back({{call.id, call.tool, Json::copy_of(call.input)}, ""});
    }
    auto results = m_calls.model_calls(asked);
    // What subagents spent is the session's, within its budget.
    if (models::Usage spent = m_calls.take_spent(); spent.input_tokens + spent.output_tokens > 0) {
        add_to(m_ending.usage, spent);
        SION_CHECK(add_usage(*m_p.db, m_p.row.id, spent));
    }
    if (m_found.changed) {
        m_found.changed = false;
        Json kept = Json::object();
        kept.set("role", "tools");
        kept.set("loaded", Json::strings(m_found.loaded));
        SION_CHECK(append_message(*m_p.db, m_p.row.id, kept));
    }
    return results;
}

} // namespace sion::session
