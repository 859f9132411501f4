// SPDX-License-Identifier: MIT
// The session's MCP servers: `sion-mcp serve NAME…`, started once per session that has servers,
// asked over its pipes for their state (mcp/state), to call their tools (tools/call) and for their
// prompts (prompts/get), and closed at the end (mcp/close). While it waits for an answer it answers
// what the bridge asks of the session: a person's input (elicitation/create) and a completion by
// the session's model (sampling/createMessage), through the session's Asks.
//
// A bridge that dies fails the requests made after it (Exit::unavailable), not the session: the
// session goes on without the servers' tools. Requests may be made from several threads at once
// (rpc::Caller: read calls side by side); the bridge's own requests are answered one at a time.
#pragma once

#include "lib/child.hpp"
#include "lib/db.hpp"
#include "lib/json.hpp"
#include "lib/models/model.hpp"
#include "lib/policy.hpp"
#include "lib/result.hpp"
#include "lib/rpc/caller.hpp"
#include "lib/rpc/connection.hpp"

#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace sion::session {

// A tool a server offers, as mcp/state says: reviewed, pinned, named <server>_<tool>.
struct McpTool {
    std::string name;
    std::string description;
    Json input_schema;
    Effect effect = Effect::spend;
    bool idempotent = false;
    bool taints = true; // its results come from outside
};

struct McpServer {
    std::string name;
    std::string state;                // "connected", "failed", …
    std::string message;              // why it is not connected: "did not answer: …"
    std::vector<std::string> notices; // for the start of the session: tools not offered, and why
    std::vector<McpTool> tools;
};

// An mcp/state result. Exit::data naming what is wrong: "server 2: tool 1: member 'effect' is
// missing".
[[nodiscard]] Result<std::vector<McpServer>> parse_mcp_state(JsonView result);

// What the model is told of its servers at the start of each turn (seed 002):
//   ## The MCP servers you have
//   Read at the start of this turn. …
//   - `notes` — connected. 4 tools, named `notes_*`.
//   - `web` — did not answer: the program exited with status 1
[[nodiscard]] std::string servers_paragraph(const std::vector<McpServer>& servers);

// A completion a server asked for (sampling/createMessage), and what it cost.
struct Completion {
    rpc::Reply reply;    // MCP's CreateMessageResult, or an error for the bridge
    models::Usage usage; // what the model used; none when it was not asked
    std::string server;
    std::string said; // for the transcript, once written: "MCP server notes had script:s.json
                      // write a completion (40 tokens read, 10 written)"
};

// Which model writes a completion: the one `spec` names, or the session's first for "".
using ModelFor = std::function<Result<models::Model*>(const std::string& spec)>;

// Writes the completion of `params` (a CreateMessageRequest's: server, messages, systemPrompt,
// maxTokens, model) from the server's messages and system prompt alone, with no tools; what is not
// text in them is named, not shown. Refused with an error reply when it could take the run past
// `budget` tokens, `used` being spent: its request's estimate and its maxTokens are counted.
[[nodiscard]] Completion write_completion(JsonView params, const ModelFor& model_for,
                                          std::optional<int64_t> budget, int64_t used);

class McpClient {
public:
    // What the session answers when the bridge asks: an ElicitResult for elicitation/create's
    // params; a CreateMessageResult, or an error, for sampling/createMessage's. Called on the
    // thread that waits for a request's answer: while calls run side by side, a thread of theirs,
    // the session's own thread waiting for them all; one at a time, and never making a request of
    // this client (rpc::Caller).
    struct Asks {
        std::function<Json(JsonView params)> elicit;
        std::function<rpc::Reply(JsonView params)> sample;
    };

    // Starts `sion-mcp serve [--ask] [--sampling-model MODEL] SERVER…` (found as find_program()
    // finds programs, given this process's whole environment: sion-mcp gives each server what its
    // --env names) and asks its state once, so a bridge that does not work is known before the
    // session starts. `ask`: a person can be asked, so servers are told the client can elicit.
    // Errors: Exit::unavailable, "sion-mcp serve does not work: it exited with status 66", with
    // what sion-mcp said on stderr before it.
    [[nodiscard]] static Result<std::unique_ptr<McpClient>>
    start(const std::vector<std::string>& servers, bool ask, const std::string& sampling_model);

    McpClient(const McpClient&) = delete;
    McpClient& operator=(const McpClient&) = delete;
    // Closes the bridge: mcp/close, then waits for it (briefly; then kills it).
    ~McpClient();

    void set_asks(Asks asks) { m_asks = std::move(asks); }

    [[nodiscard]] const std::vector<std::string>& servers() const { return m_servers; }

    // The state asked for at the start.
    [[nodiscard]] const std::vector<McpServer>& first_state() const { return m_first; }

    // The session's servers from now on (mcp/servers): those not among them end, new ones start,
    // and first_state() is asked again. Exit::unavailable once the bridge is gone.
    [[nodiscard]] Status set_servers(const std::vector<std::string>& servers);

    // The servers' state now. Exit::unavailable once the bridge is gone, Exit::data for an answer
    // that is not one.
    [[nodiscard]] Result<std::vector<McpServer>> state();

    // Sends a request and reads until its answer (a result or an error message), answering the
    // bridge's own requests meanwhile. Exit::unavailable when the bridge is gone, before or during.
    [[nodiscard]] Result<rpc::Message> request(std::string_view method, JsonView params);

    // The text of the prompt `name` of `server` with `arguments` (prompts/get). Exit::unavailable,
    // "cannot get the prompt release of MCP server notes: …".
    [[nodiscard]] Result<std::string> prompt(std::string_view server, std::string_view name,
                                             JsonView arguments);

private:
    McpClient(Child child, std::vector<std::string> servers)
        : m_child(std::move(child)), m_servers(std::move(servers)) {}

    void answer(const rpc::Message& request);
    [[nodiscard]] Error gone(const Error& why);

    Child m_child;
    std::vector<std::string> m_servers;
    std::unique_ptr<rpc::Connection> m_rpc;
    std::unique_ptr<rpc::Caller> m_caller;
    std::vector<McpServer> m_first;
    Asks m_asks;
    std::mutex m_gone_mutex;
    std::optional<Error> m_gone; // why the bridge is gone, once it is
};

} // namespace sion::session
