// SPDX-License-Identifier: MIT
// The MCP servers' state per turn: their notices at the start, their tools refreshed before each
// model call, and the tools of this turn found by name.
#include "session/loop.hpp"

namespace sion::session {

Result<Tool*> Loop::find_tool(std::string_view name) const {
    for (size_t i = 0; i < m_specs.size(); ++i)
        if (m_specs[i].name == name)
            return m_tools[i];
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

bool Loop::refresh_mcp() {
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
        if (find_tool(spec.name))
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

} // namespace sion::session
