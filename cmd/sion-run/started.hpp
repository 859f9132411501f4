// SPDX-License-Identifier: MIT
// A session of `run` or `chat`, started: its store, settings, models, sandbox, MCP servers and
// tools, everything the engine's SessionParts points to, held while its runs go on. `run` starts
// one and runs it once; `chat` starts one at its first message and runs it once a message.
#pragma once

#include "lib/agents.hpp"
#include "lib/cli.hpp"
#include "lib/confined.hpp"
#include "lib/skills.hpp"
#include "session/routing.hpp"
#include "session/sandbox_client.hpp"
#include "session/sandbox_lock.hpp"
#include "session/session.hpp"

#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace sion::run_cmd {

// --prompt SERVER:PROMPT (or a console's /prompt) and its NAME=VALUE arguments.
struct PromptTask {
    std::string given; // as given: "notes:release"
    std::string server;
    std::string name;
    Json arguments = Json::object();
};

// What the session starts on: its first task and its pictures, or the prompt that will be its
// task; neither for a console that needs the session before its first message (/prompts).
struct Starting {
    std::optional<std::string> task;
    Json pictures = Json::array();
    std::optional<PromptTask> prompt;
    bool json = false;      // --json: events, and no one to ask
    bool colour = false;    // the transcript coloured
    bool streaming = false; // the model's text shown as it comes (a console)
    // Who is asked: the terminal (Person::find), unless a console gives its own.
    std::unique_ptr<session::Person> person;
};

struct Started {
    Started(std::string home_, Db db_, Agent agent_, Profile profile_)
        : home(std::move(home_)), db(std::move(db_)), agent(std::move(agent_)),
          profile(std::move(profile_)) {}

    std::string home;
    Db db;
    Agent agent;
    Profile profile;
    std::optional<session::SessionRow> stored; // --session's, until the first run claims it
    std::string id;                            // the session's, new or stored
    session::SessionParts parts;
    std::optional<session::Routed> routed;
    std::optional<session::SandboxLock> sandbox_lock;
    std::unique_ptr<session::SandboxClient> sandbox;
    session::SkillsContext skills_at;
    std::optional<session::WebSearchProvider> search;
    std::unique_ptr<session::Delegation> delegation;
    std::optional<Confined> files;
    std::unique_ptr<session::McpClient> mcp;
    std::string prompt_server;              // the server whose prompt the session began with
    std::vector<skills::Skill> kept_skills; // the profile's, when the session started
    std::unique_ptr<session::Output> out;
    bool began = false; // a run has claimed or inserted the session
};

// The options `run` and `chat` share (all of `run`'s but --task, --picture and --prompt).
[[nodiscard]] std::vector<OptionSpec> session_options();

// Parses --prompt's SERVER:PROMPT and its NAME=VALUE words. Exit::usage for a malformed one.
[[nodiscard]] Result<PromptTask> prompt_task(const std::string& given,
                                             const std::vector<std::string>& words);

// The pictures --picture gives the task, each read whole (dies with one line for a bad one).
[[nodiscard]] Json task_pictures(const std::vector<std::string>& files);

// Starts the session PROFILE AGENT of `args` (operands 0 and 1) as its options say: a new task
// routed unless --model chose its models, the pre-flight checks, the sandbox, the MCP servers.
// Dies with the seeds' refusals ("error: …", exit 1) or any error's line.
[[nodiscard]] std::unique_ptr<Started> start_session(const Args& args, Starting starting);

// Runs the session once on `task` (`run`'s task, a console's message): the first run inserts or
// claims it, a later one claims it again, each with a trace of its own; a routed session's first
// run is noted in its profile's log of routed sessions. `prompt` ("SERVER:PROMPT") when the task
// is a server's prompt, which taints the session. Dies when the store fails.
[[nodiscard]] session::Ending run_once(Started& s, std::string task, Json pictures,
                                       std::string prompt = {});

} // namespace sion::run_cmd
