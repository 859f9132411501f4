// SPDX-License-Identifier: MIT
// sion-run run: one run of an agent's session, new or continued.
#include "cmd/sion-run/commands.hpp"
#include "lib/agents.hpp"
#include "lib/db_schema.hpp"
#include "lib/fd.hpp"
#include "lib/home.hpp"
#include "lib/log.hpp"
#include "lib/picture.hpp"
#include "lib/proto/mcp_names.hpp"
#include "lib/routes.hpp"
#include "lib/secrets.hpp"
#include "lib/skills.hpp"
#include "lib/text.hpp"
#include "lib/version.hpp"
#include "session/mcp_client.hpp"
#include "session/routing.hpp"
#include "session/sandbox_client.hpp"
#include "session/session.hpp"

#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <optional>
#include <thread>

namespace sion::run_cmd {

using namespace sion::session; // the engine these commands drive

namespace {

const char* environment_variable(const char* name) {
    return std::getenv(name); // NOLINT(concurrency-mt-unsafe): no thread changes the environment
}

// The run's trace: exported as the OTEL_* variables say (one that is wrong is told, and the trace
// only kept), its spans redacted of the credentials kept, the environment's secrets and the
// collector's own headers, its root linked to the span TRACEPARENT names (a parent's agent_spawn).
void start_trace(SessionParts& parts, const std::string& home) {
    std::vector<std::string> secrets = secrets::values_to_hide(home);
    auto exporting = otlp::export_from_environment("sion", environment_variable);
    if (!exporting) {
        log_error("%s; the run's trace is kept with the session, not exported",
                  exporting.error().message().c_str());
    } else {
        for (const auto& header : exporting->headers)
            secrets.push_back(header.second);
        parts.trace->export_to(std::move(*exporting), version(), [](const std::string& why) {
            log_error("cannot export the run's trace: %s; its spans are kept with the session "
                      "(sion agent show SESSION --trace)",
                      why.c_str());
        });
    }
    parts.trace->set_secrets(secrets);
    if (const char* from = environment_variable("TRACEPARENT"))
        parts.trace_from = otlp::parse_traceparent(from);
}

// A check whose refusal keeps the session from starting: configuration refused as the seeds
// show it; anything else as any error.
template <class T>
T or_refuse(Result<T> r) {
    if (!r) {
        if (r.error().exit() == Exit::config || r.error().exit() == Exit::unavailable)
            refuse_session(r.error());
        die(r.error());
    }
    return std::move(*r);
}

// --prompt SERVER:PROMPT and its NAME=VALUE arguments.
struct PromptTask {
    std::string given; // as given: "notes:release"
    std::string server;
    std::string name;
    Json arguments = Json::object();
};

Result<PromptTask> prompt_task(const std::string& given, const std::vector<std::string>& operands) {
    PromptTask p;
    p.given = given;
    size_t colon = given.find(':');
    if (colon == std::string::npos || colon + 1 == given.size())
        return make_error(Exit::usage, "--prompt takes SERVER:PROMPT, not '%s'", given.c_str());
    p.server = given.substr(0, colon);
    p.name = given.substr(colon + 1);
    SION_CHECK(proto::check_server_name(p.server));
    for (size_t i = 2; i < operands.size(); ++i) {
        size_t eq = operands[i].find('=');
        if (eq == 0 || eq == std::string::npos)
            return make_error(Exit::usage, "give the prompt's arguments as NAME=VALUE, not '%s'",
                              operands[i].c_str());
        p.arguments.set(operands[i].substr(0, eq), std::string_view(operands[i]).substr(eq + 1));
    }
    return p;
}

// The pictures --picture gives the task, each read whole and known by its bytes, not its name.
Json task_pictures(const std::vector<std::string>& files) {
    if (files.size() > k_max_pictures)
        die(usage_error(format("give at most %zu pictures with --picture", k_max_pictures)));
    Json pictures = Json::array();
    for (const std::string& file : files) {
        int fd = ::open(file.c_str(), O_RDONLY | O_CLOEXEC);
        if (fd < 0)
            die(sys_error(Exit::no_input, errno, "cannot read --picture '%s'", file.c_str()));
        Fd opened(fd);

        struct stat st {};

        if (::fstat(opened.get(), &st) != 0)
            die(sys_error(Exit::no_input, errno, "cannot read --picture '%s'", file.c_str()));
        if (!S_ISREG(st.st_mode))
            die(make_error(Exit::no_input, "--picture '%s' is not a file", file.c_str()));
        if (static_cast<uint64_t>(st.st_size) > k_max_picture_bytes)
            die(make_error(Exit::data,
                           "--picture '%s' is %lld bytes, more than the %zu a model is sent",
                           file.c_str(), static_cast<long long>(st.st_size), k_max_picture_bytes));
        auto bytes = read_all(opened.get(), k_max_picture_bytes);
        if (!bytes)
            die(Error(bytes.error().exit(),
                      "cannot read --picture '" + file + "': " + bytes.error().message()));
        auto picture = make_picture(*bytes, file);
        if (!picture)
            die(Error(picture.error().exit(),
                      "--picture '" + file + "' " + picture.error().message()));
        pictures.push(std::move(*picture));
    }
    return pictures;
}

// The session's MCP servers: its --mcp ones, the profile's standing ones, and the one whose prompt
// is the task, each once.
std::vector<std::string> mcp_servers(Db& db, const RunSettings& settings, const Profile& profile,
                                     const std::optional<PromptTask>& prompt) {
    std::vector<std::string> servers = settings.mcp;
    std::vector<std::string> more = or_die(profile_servers(db, profile.name));
    if (prompt)
        more.push_back(prompt->server);
    for (auto& name : more)
        if (std::find(servers.begin(), servers.end(), name) == servers.end())
            servers.push_back(std::move(name));
    return servers;
}

// The directory an MCP server of the shelf works in (sion-mcp add --dir), or "" when it has none.
std::string mcp_server_dir(Db& db, const std::string& name) {
    auto q = db.prepare("SELECT json_extract(config, '$.dir') FROM mcp_servers WHERE name = ?1");
    if (!q || !q->bind(1, name))
        return {};
    auto row = q->step();
    return row && *row ? q->column_optional_text(0).value_or("") : std::string();
}

// The first run of a routed session, in its profile's log of routed sessions: a log that cannot
// be written is said, and the run's ending stands.
void note_routed(const std::string& home, const SessionParts& parts, const Ending& ending) {
    routes::Noted noted;
    noted.session = parts.row.id;
    if (auto route = parts.route.view().string("route"))
        noted.route = std::string(*route);
    noted.why = std::string(parts.route.view().string_or("why", "").value_or(""));
    noted.model = parts.settings.models.empty() ? "" : parts.settings.models[0];
    noted.ended = ending.state;
    noted.input_tokens = ending.usage.input_tokens;
    noted.output_tokens = ending.usage.output_tokens;
    noted.time_ms = now_ms();
    if (Status written = routes::append_noted(home, parts.row.profile, noted); !written)
        report(written.error().context("the routed session is not noted"));
}

// A subagent's session ends with its parent's (session/tool_spawn.cpp): the parent holds the
// other end of the pipe SION_PARENT_FD names, whose end of file comes however the parent ends.
void follow_parent() {
    const char* given = std::getenv("SION_PARENT_FD"); // NOLINT(concurrency-mt-unsafe)
    if (given == nullptr)
        return;
    auto fd = parse_number(given, 3, 1023);
    ::unsetenv("SION_PARENT_FD"); // NOLINT(concurrency-mt-unsafe): no thread runs yet
    if (!fd || ::fcntl(static_cast<int>(*fd), F_SETFD, FD_CLOEXEC) != 0)
        return;
    std::thread([fd = static_cast<int>(*fd)] {
        char c = 0;
        for (;;) {
            ssize_t n = ::read(fd, &c, 1);
            if (n == 0 || (n < 0 && errno != EINTR))
                break;
        }
        (void)::kill(::getpid(), SIGTERM);
    }).detach();
}

// The options that give a subagent a shell like its parent's, in a sandbox of its own: none
// without a shell.
std::vector<std::string> subagent_shell(JsonView stored) {
    std::vector<std::string> argv;
    auto shell = stored.string("shell");
    if (!shell)
        return argv;
    argv.push_back(*shell == "bwrap" ? std::string("--shell") : "--shell=" + std::string(*shell));
    if (auto network = stored.string("sandbox_network"))
        argv.insert(argv.end(), {"--sandbox-network", std::string(*network)});
    for (const std::string& dir :
         stored.strings("sandbox_read").value_or(std::vector<std::string>{}))
        argv.insert(argv.end(), {"--sandbox-read", dir});
    if (auto timeout = stored.integer("sandbox_timeout"))
        argv.insert(argv.end(), {"--sandbox-timeout", std::to_string(*timeout)});
    if (auto memory = stored.string("sandbox_memory"))
        argv.insert(argv.end(), {"--sandbox-memory", std::string(*memory)});
    return argv;
}

} // namespace

std::vector<OptionSpec> run_options() {
    return {
        {"task", 0, "TEXT", "what the agent is to do"},
        {"picture", 0, "FILE", "a PNG, JPEG, GIF or WebP picture for the task (repeatable)",
         nullptr, ":file"},
        {"model", 0, "M", "provider:model to think with, first first (repeatable)", nullptr,
         ":provider"},
        {"workspace", 0, "DIR", "the directory the agent works in, at /workspace", nullptr,
         ":directory"},
        {"shell", 0, "docker:IMAGE@sha256:D",
         "give it a shell in a bubblewrap sandbox, or in Docker", "docker:"},
        {"sandbox-network", 0, "NETWORK",
         "none (default), declared or host; with Docker none or NAME", nullptr,
         "none declared host"},
        {"sandbox-read", 0, "DIR", "a directory commands may read (repeatable)", nullptr,
         ":directory"},
        {"sandbox-timeout", 0, "S", "seconds a command may run (120)"},
        {"sandbox-memory", 0, "SIZE", "the sandbox's memory, as 512M or 8G (4G)"},
        {"autonomy", 0, "LEVEL", "L0 to L6: what runs without asking (the profile's)", nullptr,
         "L0 L1 L2 L3 L4 L5 L6"},
        {"budget-tokens", 0, "N", "stop the run once it has used N tokens"},
        {"context-chars", 0, "N", "keep the conversation sent within N characters (120000)"},
        {"context-messages", 0, "N", "keep the conversation sent within N messages (36)"},
        {"mcp", 0, "NAME", "give it the tools of MCP server NAME, from the shelf (repeatable)",
         nullptr, ":mcp-server"},
        {"delegate", 0, nullptr, "give it agent_spawn: subagents, each a session of its own"},
        {"web", 0, nullptr, "give it fetch_url, and web_search when a search provider is set"},
        {"web-allow", 0, "HOST", "let fetch_url reach HOST though it is private (repeatable)"},
        {"subagent-model", 0, "M", "provider:model its subagents think with (repeatable)", nullptr,
         ":provider"},
        {"prompt", 0, "SERVER:PROMPT",
         "the task is the server's prompt, its arguments NAME=VALUE operands"},
        {"session", 0, "ID", "continue a stored session with a new task", nullptr, ":session"},
        {"no-project-instructions", 0, nullptr, "read no AGENTS.md of the workspace"},
        colour_option(),
        {"json", 0, nullptr, "print one JSON event a line instead of the transcript"},
    };
}

void refuse_session(const Error& error) {
    std::fflush(stdout);
    std::fprintf(stderr, "error: %s\n", error.message().c_str());
    std::exit(to_int(Exit::no));
}

int run_command(int argc, const char* const* argv) {
    const CommandSpec spec{
        "sion-run run",
        "sion-run run PROFILE AGENT --task TEXT [options]\n"
        "sion-run run PROFILE AGENT --prompt SERVER:PROMPT [NAME=VALUE...] [options]",
        "Run a session of AGENT, of PROFILE, on the task: a new one, or the one --session names.",
        run_options(),
        false,
        {":profile", ":agent"},
    };
    Args args = parse_args_or_exit(spec, argc, argv);
    follow_parent();
    auto given_prompt = args.value("prompt");
    check_operands(args, 2, given_prompt ? SIZE_MAX : 2,
                   "give a profile and an agent: sion-run run PROFILE AGENT --task TEXT");
    auto task = args.value("task");
    if (task && given_prompt)
        die(usage_error("give the task with --task or --prompt, not both"));
    if (!given_prompt && (!task || task->empty()))
        die(usage_error("give the task: --task TEXT"));
    bool colour = or_die(colour_wanted(args, STDOUT_FILENO));
    std::optional<PromptTask> prompt;
    if (given_prompt)
        prompt = or_die(prompt_task(*given_prompt, args.operands()));
    const std::string& profile_name = args.operands()[0];
    or_die(check_profile_name(profile_name));

    std::string home = or_die(prepare_home());
    Db db = or_die(open_state(home));
    Agent agent = or_die(find_agent(db, args.operands()[1], std::string_view(profile_name)));
    Profile profile = *or_die(find_profile(db, profile_name));

    std::optional<SessionRow> stored;
    if (auto id = args.value("session")) {
        stored = or_die(find_session(db, *id));
        if (stored->agent != agent.id)
            die(make_error(Exit::data, "session %s is of agent %s, not %s", stored->id.c_str(),
                           short_agent_id(stored->agent).c_str(),
                           short_agent_id(agent.id).c_str()));
    }
    Json flags = or_die(settings_from_flags(args, stored ? stored->settings.view() : JsonView()));
    SessionParts parts;
    parts.db = &db;
    parts.task = task.value_or("");
    parts.pictures = task_pictures(args.values("picture"));
    // A new session's task is routed, unless the person chose its models (--model); one started
    // from a server's prompt is not, for its task is known only once its servers run.
    std::optional<Routed> routed;
    if (!stored && task && !args.has("model"))
        routed = or_die(route_task(db, profile, *task, parts.pictures.view().size()));
    if (routed) {
        if (!routed->models.empty())
            flags.set("models", Json::strings(routed->models));
        parts.route = std::move(routed->record);
        parts.route_usage = routed->usage;
    }
    parts.settings = or_refuse(resolve_settings(flags, profile, home));
    // Pre-flight: a skill's folder the agent could change through its workspace is refused.
    std::vector<skills::Skill> kept_skills = or_die(skills::list_skills(db, profile.name));
    bool skilled = !kept_skills.empty();
    if (!parts.settings.workspace.empty())
        for (const skills::Skill& skill : kept_skills)
            if (or_die(paths_overlap(skill.dir, parts.settings.workspace)))
                refuse_session(make_error(Exit::config,
                                          "the workspace %s and the folder of the skill %s, %s, "
                                          "overlap: give a workspace apart from it",
                                          parts.settings.workspace.c_str(),
                                          skill.name.c_str(), skill.dir.c_str()));
    for (const skills::Skill& skill : kept_skills)
        parts.skills.push_back({skill.name, skill.description});
    for (const auto& m : parts.settings.models)
        parts.models.push_back(or_die(models::open_model(m)));
    // A hooks file that others may change, or that is malformed, keeps every session from running.
    parts.hooks = or_die(Hooks::open(home));
    // An earlier run's sandbox that still runs is ended before this run's starts; one of a run
    // that still runs is refused, as claim() refuses the session.
    std::string id = stored ? stored->id : or_die(new_session_id());
    if (stored)
        or_die(check_not_running(*stored));
    std::optional<SandboxLock> sandbox_lock;
    std::unique_ptr<SandboxClient> sandbox;
    if (parts.settings.shell) {
        sandbox_lock = or_die(SandboxLock::take(home, id));
        if (!sandbox_lock->note().empty())
            log_error("%s", sandbox_lock->note().c_str());
        sandbox = or_refuse(SandboxClient::start(parts.settings.sandbox, &*sandbox_lock));
        settle_sandbox(parts.settings, or_refuse(sandbox->describe()));
    }
    SkillsContext skills_at{home, profile.name}; // outlives the session, which holds a pointer to it
    std::optional<WebSearchProvider> search;
    if (parts.settings.web)
        search = or_refuse(web_search_provider());
    parts.tools = make_tools({!parts.settings.workspace.empty(), parts.settings.shell,
                              parts.settings.shell_external, parts.settings.code_sandbox,
                              parts.settings.delegate, skilled ? &skills_at : nullptr,
                              parts.settings.skill_network, parts.settings.web,
                              parts.settings.web_allow, search});
    if (skilled)
        parts.context.skills = &skills_at;
    std::unique_ptr<Delegation> delegation; // outlives the session, which holds a pointer to it
    if (parts.settings.delegate) {
        delegation = std::make_unique<Delegation>();
        delegation->home = home;
        delegation->profile = profile.name;
        delegation->models = parts.settings.subagent_models.empty()
                                 ? parts.settings.models
                                 : parts.settings.subagent_models;
        delegation->autonomy = parts.settings.autonomy;
        delegation->workspace = parts.settings.workspace;
        delegation->shell = subagent_shell(parts.settings.stored);
        if (!parts.settings.workspace.empty())
            delegation->repository = find_workspace_repository(parts.settings.workspace);
        parts.context.delegation = delegation.get();
    }
    parts.context.sandbox = sandbox.get();
    std::optional<Confined> files; // outlives the session, which holds a pointer to it
    if (!parts.settings.workspace.empty()) {
        files = or_refuse(Confined::open(parts.settings.workspace));
        parts.context.files = &*files;
    }
    if (!stored) {
        std::error_code ec; // getcwd(3): links resolved, as the workspace's root is
        std::string cwd = std::filesystem::current_path(ec).string();
        parts.instructions = read_instructions(home, files ? &*files : nullptr,
                                               files ? start_within(files->root(), cwd) : "",
                                               !args.has("no-project-instructions"));
    }
    bool json = args.has("json");
    parts.person = Person::find(json);
    std::unique_ptr<McpClient> mcp;
    std::vector<std::string> servers = mcp_servers(db, parts.settings, profile, prompt);
    // Pre-flight: nor may an MCP server's directory overlap a skill's folder.
    for (const std::string& server : servers) {
        std::string dir = mcp_server_dir(db, server);
        for (const skills::Skill& skill : kept_skills)
            if (!dir.empty() && or_die(paths_overlap(skill.dir, dir)))
                refuse_session(make_error(Exit::config,
                                          "the directory %s of the MCP server %s and the folder "
                                          "of the skill %s, %s, overlap: give the server a "
                                          "directory apart from it",
                                          dir.c_str(), server.c_str(), skill.name.c_str(),
                                          skill.dir.c_str()));
    }
    if (!servers.empty())
        mcp =
            or_refuse(McpClient::start(servers, parts.person.present(), parts.settings.models[0]));
    parts.mcp = mcp.get();
    if (prompt) {
        parts.task = or_refuse(mcp->prompt(prompt->server, prompt->name, prompt->arguments));
        parts.prompt = prompt->given;
    }

    if (stored) {
        or_die(claim(db, stored->id));
        or_die(close_interrupted_calls(db, *stored));
        or_die(set_settings(db, stored->id, parts.settings.stored));
        parts.row = std::move(*stored);
        parts.row.settings = Json::copy_of(parts.settings.stored);
        parts.continued = true;
    } else {
        parts.row.id = id;
        parts.row.agent = agent.id;
        parts.row.profile = profile.name;
        parts.row.task = parts.task;
        parts.row.settings = Json::copy_of(parts.settings.stored);
        parts.row.state = "running";
        parts.row.owner = this_process();
        parts.row.started = now_ms();
        or_die(insert_session(db, parts.row));
    }
    parts.hooks.set_session(parts.row.id, parts.settings.workspace);
    start_trace(parts, home);
    auto out = make_output(json, stdout, colour);
    parts.out = out.get();
    if (delegation)
        delegation->out = out.get();
    Ending ending = or_die(run_session(parts));
    if (routed)
        note_routed(home, parts, ending);
    return exit_status(ending);
}

} // namespace sion::run_cmd
