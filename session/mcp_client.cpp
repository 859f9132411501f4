// SPDX-License-Identifier: MIT
// sion-mcp serve as the session's bridge to its MCP servers, over the pipes, and the completions
// its servers have the session's model write.
#include "session/mcp_client.hpp"

#include "lib/child.hpp"
#include "lib/programs.hpp"
#include "lib/text.hpp"

#include <signal.h>
#include <unistd.h>

#include <chrono>

namespace sion::session {

namespace {

// The bridge cuts what a tool returns to size; a line this long is not an answer worth waiting on.
constexpr size_t k_max_line = size_t{64} << 20;

Result<McpTool> parse_tool(JsonView t) {
    McpTool tool;
    SION_TRY(std::string_view name, t.string("name"));
    SION_TRY(std::string_view description, t.string_or("description", ""));
    SION_TRY(std::string_view effect, t.string("effect"));
    auto parsed = parse_effect(effect);
    if (!parsed)
        return Error(Exit::data, parsed.error().message());
    SION_TRY(tool.idempotent, t.boolean_or("idempotent", false));
    SION_TRY(tool.taints, t.boolean_or("taints", true));
    JsonView schema = t.get("inputSchema");
    if (schema.exists() && !schema.is_object())
        return make_error(Exit::data, "member 'inputSchema' is %s, not an object",
                          schema.type_name());
    if (schema.exists()) {
        tool.input_schema = Json::copy_of(schema);
    } else {
        tool.input_schema = Json::object();
        tool.input_schema.set("type", "object");
    }
    tool.name = std::string(name);
    tool.description = std::string(description);
    tool.effect = *parsed;
    return tool;
}

Result<std::vector<std::string>> notices_of(JsonView s) {
    std::vector<std::string> notices;
    if (!s.get("notices").exists())
        return notices;
    SION_TRY(JsonView list, s.array("notices"));
    for (JsonView n : list) {
        SION_TRY(std::string_view text, n.as_string());
        notices.emplace_back(text);
    }
    return notices;
}

Result<McpServer> parse_server(JsonView s) {
    McpServer server;
    SION_TRY(std::string_view name, s.string("name"));
    SION_TRY(std::string_view state, s.string("state"));
    SION_TRY(std::string_view message, s.string_or("message", ""));
    server.name = std::string(name);
    server.state = std::string(state);
    server.message = std::string(message);
    SION_TRY(server.notices, notices_of(s));
    if (!s.get("tools").exists())
        return server;
    SION_TRY(JsonView tools, s.array("tools"));
    for (JsonView t : tools) {
        auto tool = parse_tool(t);
        if (!tool)
            return tool.error().context(format("tool %zu", server.tools.size() + 1));
        server.tools.push_back(std::move(*tool));
    }
    return server;
}

// The text of a SamplingMessage's content: a block or a list of them. What is not text is named
// in brackets: a completion for a server sees no pictures.
Result<std::string> content_text(JsonView content) {
    if (content.is_array()) {
        std::string all;
        for (JsonView block : content) {
            SION_TRY(std::string text, content_text(block));
            all += (all.empty() ? "" : "\n") + text;
        }
        return all;
    }
    SION_TRY(std::string_view type, content.string("type"));
    if (type == "text") {
        SION_TRY(std::string_view text, content.string("text"));
        return std::string(text);
    }
    return "[" + std::string(type) + " content, not shown]";
}

// A sampling/createMessage request as a model's: the server's messages as the whole conversation,
// its system prompt, its maxTokens, and the model it names ("" for the session's first).
struct SamplingRequest {
    std::string server;
    std::string model;
    std::string system;
    std::vector<Json> conversation;
    int64_t max_tokens = 1000;
};

// Exit::data for params that are not a CreateMessageRequest's: "message 2 has no role of user or
// assistant".
Result<SamplingRequest> sampling_request(JsonView params) {
    SamplingRequest r;
    SION_TRY(std::string_view server, params.string_or("server", ""));
    SION_TRY(std::string_view model, params.string_or("model", ""));
    SION_TRY(std::string_view system, params.string_or("systemPrompt", ""));
    SION_TRY(r.max_tokens, params.integer_or("maxTokens", r.max_tokens));
    if (r.max_tokens <= 0)
        return make_error(Exit::data, "maxTokens is %lld, not a count of tokens",
                          static_cast<long long>(r.max_tokens));
    r.server = std::string(server);
    r.model = std::string(model);
    r.system = std::string(system);
    SION_TRY(JsonView messages, params.array("messages"));
    for (JsonView m : messages) {
        std::string where = format("message %zu", r.conversation.size() + 1);
        auto role = m.string("role");
        if (!role || (*role != "user" && *role != "assistant"))
            return make_error(Exit::data, "%s has no role of user or assistant", where.c_str());
        auto text = content_text(m.get("content"));
        if (!text)
            return text.error().context(where);
        Json message = Json::object();
        message.set("role", *role);
        message.set("text", std::string_view(*text));
        r.conversation.push_back(std::move(message));
    }
    if (r.conversation.empty())
        return make_error(Exit::data, "there are no messages to answer");
    return r;
}

// MCP's CreateMessageResult for `answer`, written by `model`.
Json sampling_result(const models::Answer& answer, std::string_view model) {
    Json content = Json::object();
    content.set("type", "text");
    content.set("text", std::string_view(answer.text));
    Json result = Json::object();
    result.set("role", "assistant");
    result.set("content", std::move(content));
    result.set("model", model);
    result.set("stopReason", "endTurn");
    return result;
}

} // namespace

Result<std::vector<McpServer>> parse_mcp_state(JsonView result) {
    SION_TRY(JsonView list, result.array("servers"));
    std::vector<McpServer> servers;
    for (JsonView s : list) {
        auto server = parse_server(s);
        if (!server)
            return server.error().context(format("server %zu", servers.size() + 1));
        servers.push_back(std::move(*server));
    }
    return servers;
}

std::string servers_paragraph(const std::vector<McpServer>& servers) {
    std::string s = "## The MCP servers you have\n"
                    "Read at the start of this turn. A server's tools can change between turns, "
                    "and a server can stop answering, so this is the list that is true now — not "
                    "whatever was said about them earlier in the conversation.";
    for (const auto& server : servers) {
        s += "\n- `" + server.name + "` — ";
        if (server.state != "connected")
            s += server.message.empty() ? server.state : server.message;
        else if (server.tools.empty())
            s += "connected, with no tools offered.";
        else
            s += format("connected. %zu tool%s, named `%s_*`.", server.tools.size(),
                        server.tools.size() == 1 ? "" : "s", server.name.c_str());
    }
    return s;
}

Completion write_completion(JsonView params, const ModelFor& model_for,
                            std::optional<int64_t> budget, int64_t used) {
    Completion c;
    auto asked = sampling_request(params);
    if (!asked) {
        c.reply = rpc::Reply::fail(rpc::k_invalid_params, asked.error().message());
        return c;
    }
    c.server = asked->server;
    auto model = model_for(asked->model);
    if (!model) {
        c.reply = rpc::Reply::fail(rpc::k_internal_error, model.error().message());
        return c;
    }
    models::Request request{
        asked->system, {}, asked->conversation, asked->max_tokens, models::Purpose::completion};
    int64_t wanted = models::estimate_tokens(request) + asked->max_tokens;
    if (budget && used + wanted > *budget) {
        c.reply = rpc::Reply::fail(
            rpc::k_internal_error,
            format("the run's token budget of %lld tokens would be passed: %lld are used, and "
                   "this completion may take %lld",
                   static_cast<long long>(*budget), static_cast<long long>(used),
                   static_cast<long long>(wanted)));
        return c;
    }
    const std::string& name = (*model)->name();
    auto answer = (*model)->answer(request);
    if (!answer) {
        c.reply = rpc::Reply::fail(rpc::k_internal_error,
                                   "the model " + name + " failed: " + answer.error().message());
        return c;
    }
    c.usage = answer->usage;
    c.said = format("MCP server %s had %s write a completion (%lld tokens read, %lld written)",
                    c.server.c_str(), name.c_str(), static_cast<long long>(c.usage.input_tokens),
                    static_cast<long long>(c.usage.output_tokens));
    c.reply = rpc::Reply::ok(sampling_result(*answer, name));
    return c;
}

Result<std::unique_ptr<McpClient>> McpClient::start(const std::vector<std::string>& servers,
                                                    bool ask, const std::string& sampling_model) {
    auto program = find_program("sion-mcp");
    if (!program)
        return Error(Exit::unavailable,
                     "cannot start sion-mcp serve: " + program.error().message());
    ChildSpec spec;
    spec.argv = {*program, "serve"};
    if (ask)
        spec.argv.emplace_back("--ask");
    if (!sampling_model.empty())
        spec.argv.insert(spec.argv.end(), {"--sampling-model", sampling_model});
    spec.argv.insert(spec.argv.end(), servers.begin(), servers.end());
    spec.env = own_environment();
    spec.in = Stdio::pipe();
    spec.out = Stdio::pipe();
    spec.err = Stdio::inherit(); // its one-line messages are this session's log
    auto child = Child::spawn(spec);
    if (!child)
        return Error(Exit::unavailable, "cannot start sion-mcp serve: " + child.error().message());
    std::unique_ptr<McpClient> client(new McpClient(std::move(*child), servers));
    client->m_rpc = std::make_unique<rpc::Connection>(client->m_child.out().get(),
                                                      client->m_child.in().get(), k_max_line);
    McpClient* self = client.get();
    client->m_caller = std::make_unique<rpc::Caller>(
        *client->m_rpc, [self](const rpc::Message& request) { self->answer(request); });
    auto first = client->state();
    if (!first)
        return Error(Exit::unavailable, "sion-mcp serve does not work: " + first.error().message());
    client->m_first = std::move(*first);
    return client;
}

Status McpClient::set_servers(const std::vector<std::string>& servers) {
    Json params = Json::object();
    params.set("servers", Json::strings(servers));
    SION_TRY(rpc::Message m, request("mcp/servers", params));
    if (m.kind == rpc::Kind::error)
        return Error(Exit::unavailable,
                     "sion-mcp serve refused the servers: " + std::string(m.error_message));
    m_servers = servers;
    SION_TRY(m_first, state());
    return {};
}

McpClient::~McpClient() {
    if (!m_gone && m_rpc)
        (void)m_rpc->request("mcp/close", Json::object());
    m_child.in().reset();
    auto ended = m_child.wait_for(std::chrono::seconds(10));
    if (!ended || !*ended)
        (void)m_child.kill_group(SIGKILL);
}

Error McpClient::gone(const Error& why) {
    std::lock_guard lock(m_gone_mutex);
    if (!m_gone) {
        auto status = m_child.wait_for(std::chrono::milliseconds(500));
        m_gone = status && *status ? make_error(Exit::unavailable, "sion-mcp exited with status %d",
                                                (*status)->status)
                                   : Error(Exit::unavailable, "sion-mcp: " + why.message());
    }
    return *m_gone;
}

void McpClient::answer(const rpc::Message& request) {
    rpc::Reply reply;
    if (request.method == "elicitation/create") {
        Json declined = Json::object();
        declined.set("action", "decline");
        reply = rpc::Reply::ok(m_asks.elicit ? m_asks.elicit(request.params) : std::move(declined));
    } else if (request.method == "sampling/createMessage") {
        reply = m_asks.sample ? m_asks.sample(request.params)
                              : rpc::Reply::fail(rpc::k_internal_error,
                                                 "this session writes no completions for servers");
    } else {
        reply = rpc::Reply::fail(rpc::k_method_not_found,
                                 "method not found: " + std::string(request.method));
    }
    if (auto sent = m_rpc->reply(request, reply); !sent)
        (void)gone(sent.error());
}

Result<rpc::Message> McpClient::request(std::string_view method, JsonView params) {
    auto answer = m_caller->call(method, params);
    if (!answer)
        return gone(answer.error());
    return answer;
}

Result<std::vector<McpServer>> McpClient::state() {
    SION_TRY(rpc::Message m, request("mcp/state", Json::object()));
    if (m.kind == rpc::Kind::error)
        return Error(Exit::unavailable, "sion-mcp: " + std::string(m.error_message));
    auto servers = parse_mcp_state(m.result);
    if (!servers)
        return servers.error().context("the state sion-mcp gave");
    return servers;
}

Result<std::string> McpClient::prompt(std::string_view server, std::string_view name,
                                      JsonView arguments) {
    std::string where =
        "cannot get the prompt " + std::string(name) + " of MCP server " + std::string(server);
    Json params = Json::object();
    params.set("server", server);
    params.set("name", name);
    params.set("arguments", Json::copy_of(arguments));
    auto m = request("prompts/get", params);
    if (!m)
        return m.error().context(where);
    if (m->kind == rpc::Kind::error)
        return Error(Exit::unavailable, where + ": " + std::string(m->error_message));
    auto text = m->result.string("text");
    if (!text)
        return Error(Exit::unavailable, where + ": sion-mcp's answer: " + text.error().message());
    return std::string(*text);
}

} // namespace sion::session
