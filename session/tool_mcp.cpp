// SPDX-License-Identifier: MIT
// The tools of the session's MCP servers, each called through the bridge (mcp_client.hpp): what a
// call may do is what the review made of the tool, as mcp/state says.
#include "session/mcp_client.hpp"
#include "session/tools.hpp"
#include "session/trace.hpp"

namespace sion::session {

namespace {

// The bridge's errors for tools/call.
constexpr int k_no_answer = -32001;     // the server died or its time ran out: it may have acted
constexpr int k_no_such_tool = -32002;  // nothing was sent
constexpr int k_not_connected = -32003; // nothing was sent

class ServerTool final : public Tool {
public:
    ServerTool(const McpTool& tool, McpClient& client)
        : m_name(tool.name), m_description(tool.description),
          m_schema(Json::copy_of(tool.input_schema)), m_effect(tool.effect),
          m_idempotent(tool.idempotent), m_taints(tool.taints), m_client(client) {}

    models::ToolSpec spec() const override {
        return {m_name, m_description, Json::copy_of(m_schema)};
    }

    Effect effect(JsonView) const override { return m_effect; }

    bool idempotent() const override { return m_idempotent; }

    bool journaled() const override { return m_effect != Effect::read && !m_idempotent; }

    // Concurrent requests to the bridge (McpClient's rpc::Caller), which makes them at once.
    bool runs_beside() const override { return true; }

    // No answer is an Error, which leaves a journaled call uncertain; the server's refusal, or a
    // tool's own error, is an answer.
    Result<ToolResult> run(JsonView input, ToolContext&) override {
        Json params = Json::object();
        params.set("name", std::string_view(m_name));
        params.set("arguments", Json::copy_of(input));
        // The server's own trace joins the run's (over HTTP, the traceparent header).
        if (!running_traceparent().empty())
            params.set("traceparent", std::string_view(running_traceparent()));
        Elsewhere spent{"mcp server", now_ns(), 0, Json::object()};
        auto answer = m_client.request("tools/call", params);
        spent.end_ns = now_ns();
        if (answer && answer->kind != rpc::Kind::error) {
            // The bridge's measure of the server's time, when it gives one.
            auto start = answer->result.integer("start_us");
            auto end = answer->result.integer("end_us");
            if (start && end && *start <= *end) {
                spent.start_ns = *start * 1000;
                spent.end_ns = *end * 1000;
            }
        }
        spent.attributes.set("sion.mcp.tool", std::string_view(m_name));
        note_elsewhere(std::move(spent));
        if (!answer)
            return Error(Exit::unavailable, "no answer: " + answer.error().message());
        if (answer->kind == rpc::Kind::error) {
            std::string message(answer->error_message);
            if (answer->error_code == k_no_answer)
                return Error(Exit::unavailable, message);
            ToolResult refused{message, true, false, {}};
            refused.changed_nothing =
                answer->error_code == k_no_such_tool || answer->error_code == k_not_connected;
            return refused;
        }
        SION_TRY(std::string_view text, answer->result.string_or("text", ""));
        SION_TRY(bool is_error, answer->result.boolean_or("isError", false));
        ToolResult result{std::string(text), is_error, m_taints, {}};
        if (JsonView structured = answer->result.get("structuredContent"); structured.exists()) {
            result.detail = Json::object();
            result.detail.set("structuredContent", Json::copy_of(structured));
        }
        if (JsonView images = answer->result.get("images"); images.size() > 0)
            result.images = Json::copy_of(images);
        return result;
    }

private:
    std::string m_name;
    std::string m_description;
    Json m_schema;
    Effect m_effect;
    bool m_idempotent;
    bool m_taints;
    McpClient& m_client;
};

} // namespace

McpTurn mcp_turn(McpClient& client) {
    McpTurn turn;
    auto state = client.state();
    std::vector<McpServer> servers;
    if (state) {
        servers = std::move(*state);
    } else {
        turn.failure = state.error();
        for (const auto& name : client.servers())
            servers.push_back(
                {name, "failed", "did not answer: " + state.error().message(), {}, {}});
    }
    for (const auto& server : servers) {
        if (server.state == "connected")
            for (const auto& tool : server.tools)
                turn.tools.push_back(std::make_unique<ServerTool>(tool, client));
        else
            turn.down[server.name] = server.message.empty() ? server.state : server.message;
    }
    turn.paragraph = servers_paragraph(servers);
    return turn;
}

} // namespace sion::session
