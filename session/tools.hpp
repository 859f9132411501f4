// SPDX-License-Identifier: MIT
// The session's tools: what each is called, what it takes, what its calls may do (its effect), and
// running it. The session finds a call's tool here, asks the policy, the journal and the person,
// and then runs it.
#pragma once

#include "lib/confined.hpp"
#include "lib/json.hpp"
#include "lib/models/model.hpp"
#include "lib/policy.hpp"
#include "lib/result.hpp"
#include "lib/worktree.hpp"
#include "session/ranking.hpp"
#include "session/sandbox_client.hpp"

#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

namespace sion::session {

class McpClient;
class Output;

// What a call came to. A tool's failure (a file that is not there, a command that could not
// start) is an answer too: the model is shown it, marked as an error, and may try again.
struct ToolResult {
    std::string text; // what the model is shown
    bool is_error = false;
    bool taints = false; // it came from outside: the session is tainted from now on
    Json detail;         // structured, for JSON events and the store (the shell's result object)
    // An error that is known to have changed nothing (an MCP call that was never sent): the
    // journal forgets it, as it does a failure of a tool that fails_cleanly().
    bool changed_nothing = false;
    Json images{}; // pictures the model is shown besides the text (lib/picture.hpp), or nothing
    models::Usage usage{}; // tokens the call spent (a subagent's), the session's to count
};

// A call a program makes from run_code: made as the model's would be (policy, journal, hooks, the
// transcript), or refused when it would change something, reach outside or wait for a person.
using CodeCall = std::function<ToolResult(std::string_view tool, JsonView input)>;

// What a session that delegates (--delegate) gives its subagents (tool_spawn.cpp).
struct Delegation {
    std::string home;                // $SION_HOME
    std::string profile;             // the parent's: a subagent's is <profile>-<name>
    std::vector<std::string> models; // the subagents' (--subagent-model), else the parent's
    int autonomy = 0;                // the parent's: a subagent's is at most that
    std::string workspace;           // the parent's, or ""
    std::vector<std::string> shell;  // sion-run's shell options for a subagent: its own sandbox
    WorkspaceRepository repository;  // the workspace's, for worktrees: found before the model ran
    // The tokens the parent may still spend (its budget less what it used); nullopt: no budget.
    std::function<std::optional<int64_t>()> left;
    // Given out to subagents at work, not yet counted as the parent's.
    int64_t promised = 0;
    Output* out = nullptr; // where their starts and ends are said
    std::mutex mutex;
};

// Where a session's skills are (tool_skills.cpp): sion.db under `home`, of `profile`.
struct SkillsContext {
    std::string home;
    std::string profile;
};

// What tools run against: the session's workspace and sandbox.
struct ToolContext {
    SandboxClient* sandbox = nullptr; // nullptr without a shell
    CodeCall call_from_code;          // set by the session while run_code runs
    // The workspace, opened once for the session: every file tool's path is resolved beneath it by
    // the kernel (lib/confined.hpp). nullptr without a workspace.
    const Confined* files = nullptr;
    Delegation* delegation = nullptr; // with --delegate
    const SkillsContext* skills = nullptr; // when the profile has skills
};

class Tool {
public:
    Tool() = default;
    Tool(const Tool&) = delete;
    Tool& operator=(const Tool&) = delete;
    virtual ~Tool() = default;

    [[nodiscard]] virtual models::ToolSpec spec() const = 0;
    // What a call with `input` may do.
    [[nodiscard]] virtual Effect effect(JsonView input) const = 0;
    // Whether making the same call again does no more than making it once ("repeats run again").
    [[nodiscard]] virtual bool idempotent() const = 0;

    // Whether its calls go through the journal: those neither read-only nor idempotent, unless the
    // tool says otherwise (a shell command is run again when asked again, as a test suite should).
    [[nodiscard]] virtual bool journaled() const { return !idempotent(); }

    // Whether its calls may run on threads of their own, beside others of its own or other tools
    // (seed 001: calls that only read, one after another in a turn, run side by side): its run()
    // touches nothing another call's does but through what is made for that (rpc::Caller).
    [[nodiscard]] virtual bool runs_beside() const { return false; }

    // Whether its calls in one turn run together though each is journaled (agent_spawn: the
    // subagents spawned together work at the same time).
    [[nodiscard]] virtual bool runs_together() const { return false; }

    // Whether a call that fails has changed nothing (an edit or a patch that does not fit is
    // refused whole): the journal then forgets it, so the same call made later runs again.
    [[nodiscard]] virtual bool fails_cleanly() const { return false; }

    // Runs the call. An Error is a failure of the runtime, not of the call (the sandbox died).
    [[nodiscard]] virtual Result<ToolResult> run(JsonView input, ToolContext& context) = 0;
};

// The search provider the operator set (tool_web.cpp): "brave", "tavily" or "searxng", its base
// URL, and its key (none for SearXNG).
struct WebSearchProvider {
    std::string name;
    std::string base;
    std::string key;
};

// SION_SEARCH (brave, tavily or searxng:URL), else the provider whose key is set or kept
// (BRAVE_SEARCH_API_KEY first, then TAVILY_API_KEY), at BRAVE_SEARCH_BASE_URL or TAVILY_BASE_URL
// when set; none when nothing is set. Exit::config for a SION_SEARCH that names no provider, or
// one whose key is missing.
[[nodiscard]] Result<std::optional<WebSearchProvider>> web_search_provider();

struct ToolOptions {
    bool files = false;          // a workspace: the file tools
    bool shell = false;          // a shell in the sandbox
    bool shell_external = false; // its commands have a network: they are external and taint
    // run_code: sion-sandbox's options for its own sandbox (no workspace, no network), when Python
    // 3 is there; empty: not offered.
    std::vector<std::string> code_sandbox;
    bool delegate = false; // --delegate: agent_spawn
    // The profile's skills: skill_read and skill_write, and skill_run with a shell, whose scripts
    // are external when `shell_network` (the sandbox has a network) and their skill names hosts.
    const SkillsContext* skills = nullptr;
    bool shell_network = false;
    // --web: fetch_url, reaching these private hosts too (--web-allow), and web_search with a
    // provider.
    bool web = false;
    std::vector<std::string> web_allow;
    std::optional<WebSearchProvider> search;
};

// The tools a session with these options has, in the order the model is shown them.
[[nodiscard]] std::vector<std::unique_ptr<Tool>> make_tools(const ToolOptions& options);

// The tool `name`'s description and input schema, from schemas/tools/<name>.json (built in).
[[nodiscard]] models::ToolSpec tool_spec(std::string_view name);

// A command's result as the model is shown it: "exit status 0", then "--- stdout" and "--- stderr"
// with what each held (tool_shell.cpp).
[[nodiscard]] std::string exec_result_text(const proto::ExecResult& result);

// Each tool's own file.
[[nodiscard]] std::unique_ptr<Tool> make_shell_tool(bool external);
[[nodiscard]] std::unique_ptr<Tool> make_write_file_tool();
[[nodiscard]] std::unique_ptr<Tool> make_read_file_tool();
[[nodiscard]] std::unique_ptr<Tool> make_find_files_tool();
[[nodiscard]] std::unique_ptr<Tool> make_search_files_tool();
[[nodiscard]] std::unique_ptr<Tool> make_edit_file_tool();
[[nodiscard]] std::unique_ptr<Tool> make_apply_patch_tool();
// diagnostics and run_tests, in the shell's sandbox; `network`: it has one (they are external).
[[nodiscard]] std::unique_ptr<Tool> make_diagnostics_tool(bool network);
[[nodiscard]] std::unique_ptr<Tool> make_run_tests_tool(bool network);
[[nodiscard]] std::unique_ptr<Tool> make_run_code_tool(std::vector<std::string> sandbox_options);
[[nodiscard]] std::unique_ptr<Tool> make_agent_spawn_tool();
[[nodiscard]] std::unique_ptr<Tool> make_fetch_url_tool(std::vector<std::string> allowed);
[[nodiscard]] std::unique_ptr<Tool> make_web_search_tool(const WebSearchProvider& provider);
[[nodiscard]] std::unique_ptr<Tool> make_skill_read_tool();
[[nodiscard]] std::unique_ptr<Tool> make_skill_write_tool();
[[nodiscard]] std::unique_ptr<Tool> make_skill_run_tool(const SkillsContext* at, bool network);

// Tool search (seed 001, "What a model is sent"; tool_tools.cpp): past 40 tools of the MCP
// servers, the model is shown its own tools, tools_search and tools_call, and the tools its
// searches loaded, not all of the servers'.
constexpr size_t k_tool_search_past = 40;
constexpr size_t k_tools_loaded = 24; // the tools found last that stay loaded
constexpr size_t k_found_default = 5;
constexpr size_t k_found_most = 10;

// What tools_search searches and loads, kept by the session loop.
struct FoundTools {
    ToolIndex index;                 // the servers' tools this turn
    std::vector<const Tool*> tools;  // each, by the index's numbers
    std::vector<std::string> loaded; // the names found last, the oldest first, at most 24
    bool changed = false;            // loaded changed since the loop last kept it
};

[[nodiscard]] std::unique_ptr<Tool> make_tools_search_tool(FoundTools& found);
// tools_call: the session loop makes a call of it as a call of the tool it names; this tool
// only answers a call that names none ("tools_call needs 'name', …").
[[nodiscard]] std::unique_ptr<Tool> make_tools_call_tool();

// What a session has of its MCP servers for a turn (tool_mcp.cpp): the tools they offer now, called
// through `client`, and what the model is told of them (servers_paragraph()). When the bridge does
// not answer, every server is taken as not answering and there are no tools.
struct McpTurn {
    std::vector<std::unique_ptr<Tool>> tools;
    std::string paragraph;
    std::optional<Error> failure; // why the bridge did not answer
    // The servers not connected, by name: why ("MCP server ghost ended (killed by signal 9)").
    std::map<std::string, std::string> down;
};

[[nodiscard]] McpTurn mcp_turn(McpClient& client);

} // namespace sion::session
