// SPDX-License-Identifier: MIT
// One run of a session: the task goes to the model, the model's calls go through the policy, the
// person, the journal and their tools, their results go back to the model, until it answers
// without a call, the token budget is spent, or every model fails. Everything is stored as it
// happens (store.hpp) and shown as it happens (transcript.hpp).
#pragma once

#include "session/hooks_client.hpp"
#include "session/instructions.hpp"
#include "session/mcp_client.hpp"
#include "session/person.hpp"
#include "session/settings.hpp"
#include "session/store.hpp"
#include "session/tools.hpp"
#include "session/trace.hpp"
#include "session/transcript.hpp"
#include "lib/db.hpp"
#include "lib/models/model.hpp"

#include <functional>
#include <memory>
#include <optional>
#include <vector>

namespace sion::session {

// A skill as the system prompt names it.
struct SkillListed {
    std::string name;
    std::string description;
};

struct SessionParts {
    Db* db = nullptr;
    SessionRow row; // claimed or inserted, state "running"
    bool continued = false;
    std::string task;
    Json pictures = Json::array(); // given with the task (--picture), as lib/picture.hpp has them
    RunSettings settings;
    std::vector<std::unique_ptr<models::Model>> models;
    std::vector<std::unique_ptr<Tool>> tools;
    ToolContext context;
    std::unique_ptr<Person> person = std::make_unique<Person>(); // no one to ask, unless set
    Hooks hooks;
    Output* out = nullptr;
    McpClient* mcp = nullptr; // the session's MCP servers; nullptr when it has none
    std::string prompt;       // "SERVER:PROMPT" when the task is a server's prompt (--prompt)
    // The AGENTS.md files read for a new session; a continued one's are the ones it kept.
    std::vector<InstructionFile> instructions;
    // The profile's skills for a new session; a continued one's are the ones it began with, kept
    // as {"role":"skills","skills":[{"name","description"}]}.
    std::vector<SkillListed> skills;
    // A new session whose task was routed: the route it took (session/routing.hpp), kept as its
    // first message, and what the sorter used; empty otherwise.
    Json route;
    models::Usage route_usage;
    // The run's trace (trace.hpp), and the span it was started under (TRACEPARENT), if any: its
    // root links to that span.
    std::unique_ptr<Trace> trace = std::make_unique<Trace>();
    std::optional<otlp::Link> trace_from;
    // Asked between the run's steps and while a model's answer is awaited: true when the person
    // asked to stop the run (a console's /stop or Ctrl-C). The run then ends "stopped" as soon as
    // the call under way, if any, has ended; an answer awaited is given up. Empty: never.
    std::function<bool()> stop;
    // What the person's instructions of a console add to the system prompt (/system): sent after
    // the conversation each turn, with the MCP servers' note, so that the start a provider caches
    // stays the same. Empty for none.
    std::string standing;
    // The tokens a console's earlier runs used: its --budget-tokens counts the whole chat.
    int64_t used_before = 0;
    // How long a server's question waits for an answer before it is cancelled (a console's ten
    // minutes); nullopt: until the input ends.
    std::optional<int64_t> question_within_ms;
};

// Runs the session to the end of this run and records how it ended. Returns its Ending; an Error
// only when the store itself fails (then the session stays "running" in it, and `show` says it was
// interrupted).
[[nodiscard]] Result<Ending> run_session(SessionParts& parts);

// The `why` of a run the person stopped.
inline constexpr const char* k_stopped_by_person = "the person stopped it";

// The exit status of `sion-run run` for a run that ended so: 0 done, 1 stopped (budget), 69 failed
// (no model answered).
[[nodiscard]] int exit_status(const Ending& ending);

// Closes what an earlier run left open: calls that started and were never answered are marked
// "interrupted" and answered, for the model, as such; journaled ones become uncertain.
[[nodiscard]] Status close_interrupted_calls(Db& db, const SessionRow& row);

// The system prompt of a session: who it is and what it has (settings_prompt()), the skills it
// began with, then the AGENTS.md files it began with (instructions_prompt()). A session keeps the one it began with
// as {"role":"system","text"} and is sent that one at every run.
[[nodiscard]] std::string system_prompt(const SessionParts& parts);

// Who the session is and what it has: its agent, autonomy, workspace, shell and MCP servers.
[[nodiscard]] std::string settings_prompt(const SessionParts& parts);

// What a run whose settings_prompt() is not the one the session began with tells the model, as a
// note before the person's message: "The runtime's note: this run's settings are not those the
// session began with, which the system prompt gives. Now: …". Kept with the session.
[[nodiscard]] Json settings_note(const SessionParts& parts);

// The transcript's line for that note, at the run and in `show`.
inline constexpr const char* k_settings_changed =
    "this run's settings are not those the session began with: the model is told them in a note";

} // namespace sion::session
