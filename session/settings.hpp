// SPDX-License-Identifier: MIT
// How a session runs: its models, workspace, shell and sandbox, autonomy level and token budget.
// Kept with the session as JSON (sessions.settings), so `--session` continues it as it was, the
// flags given again replacing what they name:
//   {"models":["script:shell.json"],"workspace":"/home/me/work","shell":"bwrap",
//    "sandbox_network":"none","sandbox_read":["/opt"],"sandbox_timeout":120,"sandbox_memory":"8G",
//    "autonomy":"L3","budget_tokens":100000,"context_chars":120000,"context_messages":36,
//    "mcp":["notes"]}
#pragma once

#include "lib/agents.hpp"
#include "lib/cli.hpp"
#include "lib/json.hpp"
#include "lib/policy.hpp"
#include "lib/proto/sandbox_options.hpp"
#include "lib/result.hpp"
#include "session/compaction.hpp"

#include <optional>
#include <string>
#include <vector>

namespace sion::session {

struct RunSettings {
    std::vector<std::string> models;
    std::string workspace; // absolute; "" without one
    bool shell = false;
    bool shell_external = false;           // its commands reach a network: external, and they taint
    bool skill_network = false;            // skills' scripts may reach their hosts (not "none")
    std::vector<std::string> sandbox;      // sion-sandbox serve's options, when there is a shell
    std::vector<std::string> code_sandbox; // run_code's sandbox options; empty: no run_code
    int autonomy = k_default_autonomy;
    std::optional<int64_t> budget_tokens;
    ContextLimits context;        // --context-chars, --context-messages (compaction.hpp)
    std::vector<std::string> mcp; // --mcp: MCP servers on the shelf, by name
    bool delegate = false;        // --delegate: agent_spawn
    bool web = false;             // --web: fetch_url, and web_search with a provider
    std::vector<std::string> web_allow; // --web-allow: private hosts fetch_url may reach
    std::vector<std::string> subagent_models; // --subagent-model; empty: the session's
    Json stored;                              // what sessions.settings keeps
};

// The settings members the flags of `sion-run run` give, laid over `base` (a stored session's, or
// an empty object). Exit::usage for malformed values ("--budget-tokens takes a positive whole
// number, not 'x'", "option '--sandbox-memory': '8K' is too little: give 16M or more",
// "unknown autonomy level 'L9': give L0 to L6", "invalid server name 'X': …").
[[nodiscard]] Result<Json> settings_from_flags(const Args& args, JsonView base);

// The settings checked and made whole: the profile's models and autonomy where the settings give
// none, and a workspace without a shell judged by `sion-sandbox describe` (describe_sandbox(): the
// seeds' refusals in its words, with paths as the user wrote them) and settled. With a shell,
// `sandbox` holds serve's options and the rest waits for settle_sandbox(): serve judges them as it
// starts, and sion-sandbox is asked once. `home` is $SION_HOME. Errors:
//   Exit::usage   "no model: give --model, or create the agent with one"
//   Exit::usage   "--sandbox-network is for a shell: add --shell"
//   Exit::config  "with bubblewrap the network is none, declared or host, not sion-egress", …
[[nodiscard]] Result<RunSettings> resolve_settings(JsonView settings, const Profile& profile,
                                                   const std::string& home);

// The settings completed with the sandbox sion-sandbox judged the options to describe: the
// workspace resolved (and stored so), and with a shell the --sandbox-read directories resolved,
// whether its commands reach a network, and run_code's sandbox.
void settle_sandbox(RunSettings& rs, const proto::Config& config);

} // namespace sion::session
