// SPDX-License-Identifier: MIT
// A session of `run` or `chat`, started (started.hpp).
#include "cmd/sion-run/started.hpp"

#include "cmd/sion-run/commands.hpp"
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

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>

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

// The session's MCP servers: its --mcp ones, the profile's standing ones, and the one whose prompt
// is the task, each once.
std::vector<std::string> mcp_servers(Db& db, const RunSettings& settings, const Profile& profile,
                                     const std::string& prompt_server) {
    std::vector<std::string> servers = settings.mcp;
    std::vector<std::string> more = or_die(profile_servers(db, profile.name));
    if (!prompt_server.empty())
        more.push_back(prompt_server);
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

// Why the MCP server `name` may not run beside the skills: its directory (sion-mcp add --dir)
// overlaps a skill's folder, which the server could change without the checks skills go through.
std::optional<Error> skill_overlap(Db& db, const std::string& name,
                                   const std::vector<skills::Skill>& skills) {
    std::string dir = mcp_server_dir(db, name);
    for (const skills::Skill& skill : skills)
        if (!dir.empty() && or_die(paths_overlap(skill.dir, dir)))
            return make_error(Exit::config,
                              "the directory %s of the MCP server %s and the folder of the skill "
                              "%s, %s, overlap: give the server a directory apart from it",
                              dir.c_str(), name.c_str(), skill.name.c_str(), skill.dir.c_str());
    return std::nullopt;
}

// Before a run after the first: the session's servers read again, so that a server the profile
// was given or lost since (a console's /mcp, `sion agent mcp give`) reaches the session now, or
// is not offered any more. One that may not run beside the skills is said, and left out.
void refresh_servers(Started& s) {
    SessionParts& parts = s.parts;
    std::vector<std::string> servers;
    for (std::string& name : mcp_servers(s.db, parts.settings, s.profile, s.prompt_server)) {
        if (auto overlap = skill_overlap(s.db, name, s.kept_skills))
            report(*overlap);
        else
            servers.push_back(std::move(name));
    }
    if (s.mcp && servers == s.mcp->servers())
        return;
    if (!s.mcp && servers.empty())
        return;
    Status changed = s.mcp ? s.mcp->set_servers(servers) : Status();
    if (!s.mcp) {
        auto started = McpClient::start(servers, parts.person->present(), parts.settings.models[0]);
        if (started)
            s.mcp = std::move(*started);
        else
            changed = started.error();
    }
    if (!changed)
        report(changed.error().context("the session's MCP servers are as they were"));
    parts.mcp = s.mcp.get();
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

std::vector<OptionSpec> session_options() {
    return {
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
        {"session", 0, "ID", "continue a stored session with a new task", nullptr, ":session"},
        {"no-project-instructions", 0, nullptr, "read no AGENTS.md of the workspace"},
        colour_option(),
        {"json", 0, nullptr, "print one JSON event a line instead of the transcript"},
    };
}

Result<PromptTask> prompt_task(const std::string& given, const std::vector<std::string>& words) {
    PromptTask p;
    p.given = given;
    size_t colon = given.find(':');
    if (colon == std::string::npos || colon + 1 == given.size())
        return make_error(Exit::usage, "--prompt takes SERVER:PROMPT, not '%s'", given.c_str());
    p.server = given.substr(0, colon);
    p.name = given.substr(colon + 1);
    SION_CHECK(proto::check_server_name(p.server));
    for (const std::string& word : words) {
        size_t eq = word.find('=');
        if (eq == 0 || eq == std::string::npos)
            return make_error(Exit::usage, "give the prompt's arguments as NAME=VALUE, not '%s'",
                              word.c_str());
        p.arguments.set(word.substr(0, eq), std::string_view(word).substr(eq + 1));
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

std::unique_ptr<Started> start_session(const Args& args, Starting starting) {
    const std::string& profile_name = args.operands()[0];
    or_die(check_profile_name(profile_name));

    std::string home = or_die(prepare_home());
    Db opened = or_die(open_state(home));
    Agent agent = or_die(find_agent(opened, args.operands()[1], std::string_view(profile_name)));
    Profile found = *or_die(find_profile(opened, profile_name));
    auto s = std::make_unique<Started>(home, std::move(opened), std::move(agent), std::move(found));
    Db& db = s->db;
    SessionParts& parts = s->parts;
    std::optional<SessionRow>& stored = s->stored;

    if (auto id = args.value("session")) {
        stored = or_die(find_session(db, *id));
        if (stored->agent != s->agent.id)
            die(make_error(Exit::data, "session %s is of agent %s, not %s", stored->id.c_str(),
                           short_agent_id(stored->agent).c_str(),
                           short_agent_id(s->agent.id).c_str()));
    }
    Json flags = or_die(settings_from_flags(args, stored ? stored->settings.view() : JsonView()));
    parts.db = &db;
    // A new session's task is routed, unless the person chose its models (--model); one started
    // from a server's prompt is not, for its task is known only once its servers run, nor a
    // console's started before its first message (/prompts).
    const Profile& profile = s->profile;
    std::optional<Routed>& routed = s->routed;
    if (!stored && starting.task && !args.has("model"))
        routed = or_die(route_task(db, profile, *starting.task, starting.pictures.view().size()));
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
                                          parts.settings.workspace.c_str(), skill.name.c_str(),
                                          skill.dir.c_str()));
    for (const skills::Skill& skill : kept_skills)
        parts.skills.push_back({skill.name, skill.description});
    for (const auto& m : parts.settings.models)
        parts.models.push_back(or_die(models::open_model(m)));
    // A hooks file that others may change, or that is malformed, keeps every session from running.
    parts.hooks = or_die(Hooks::open(home));
    // An earlier run's sandbox that still runs is ended before this run's starts; one of a run
    // that still runs is refused, as claim() refuses the session.
    s->id = stored ? stored->id : or_die(new_session_id());
    const std::string& id = s->id;
    if (stored)
        or_die(check_not_running(*stored));
    std::optional<SandboxLock>& sandbox_lock = s->sandbox_lock;
    std::unique_ptr<SandboxClient>& sandbox = s->sandbox;
    if (parts.settings.shell) {
        sandbox_lock = or_die(SandboxLock::take(home, id));
        if (!sandbox_lock->note().empty())
            log_error("%s", sandbox_lock->note().c_str());
        sandbox = or_refuse(SandboxClient::start(parts.settings.sandbox, &*sandbox_lock));
        settle_sandbox(parts.settings, or_refuse(sandbox->describe()));
    }
    s->kept_skills = kept_skills;
    s->skills_at = SkillsContext{home, profile.name};
    const SkillsContext& skills_at = s->skills_at;
    std::optional<WebSearchProvider>& search = s->search;
    if (parts.settings.web)
        search = or_refuse(web_search_provider());
    parts.tools = make_tools(
        {!parts.settings.workspace.empty(), parts.settings.shell, parts.settings.shell_external,
         parts.settings.code_sandbox, parts.settings.delegate, skilled ? &skills_at : nullptr,
         parts.settings.skill_network, parts.settings.web, parts.settings.web_allow, search});
    if (skilled)
        parts.context.skills = &skills_at;
    std::unique_ptr<Delegation>& delegation = s->delegation;
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
    std::optional<Confined>& files = s->files;
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
    parts.person = starting.person ? std::move(starting.person)
                                   : std::make_unique<Person>(Person::find(starting.json));
    std::unique_ptr<McpClient>& mcp = s->mcp;
    if (starting.prompt)
        s->prompt_server = starting.prompt->server;
    std::vector<std::string> servers = mcp_servers(db, parts.settings, profile, s->prompt_server);
    // Pre-flight: nor may an MCP server's directory overlap a skill's folder.
    for (const std::string& server : servers)
        if (auto overlap = skill_overlap(db, server, kept_skills))
            refuse_session(*overlap);
    if (!servers.empty())
        mcp =
            or_refuse(McpClient::start(servers, parts.person->present(), parts.settings.models[0]));
    parts.mcp = mcp.get();
    if (starting.prompt) {
        parts.task = or_refuse(mcp->prompt(starting.prompt->server, starting.prompt->name,
                                           starting.prompt->arguments));
        parts.prompt = starting.prompt->given;
    }
    s->out = make_output(starting.json, stdout, starting.colour, starting.streaming);
    parts.out = s->out.get();
    if (delegation)
        delegation->out = s->out.get();
    return s;
}

Ending run_once(Started& s, std::string task, Json pictures, std::string prompt) {
    SessionParts& parts = s.parts;
    parts.task = std::move(task);
    parts.pictures = std::move(pictures);
    if (!prompt.empty())
        parts.prompt = std::move(prompt);
    if (s.began) {
        // A console's next message: the session as its last run left it.
        or_die(claim(s.db, parts.row.id));
        parts.row.state = "running";
        parts.continued = true;
        parts.route = Json();
    } else if (s.stored) {
        or_die(claim(s.db, s.stored->id));
        or_die(close_interrupted_calls(s.db, *s.stored));
        or_die(set_settings(s.db, s.stored->id, parts.settings.stored));
        parts.row = std::move(*s.stored);
        s.stored.reset();
        parts.row.settings = Json::copy_of(parts.settings.stored);
        parts.continued = true;
    } else {
        parts.row.id = s.id;
        parts.row.agent = s.agent.id;
        parts.row.profile = s.profile.name;
        parts.row.task = parts.task;
        parts.row.settings = Json::copy_of(parts.settings.stored);
        parts.row.state = "running";
        parts.row.owner = this_process();
        parts.row.started = now_ms();
        or_die(insert_session(s.db, parts.row));
    }
    if (!s.began)
        parts.hooks.set_session(parts.row.id, parts.settings.workspace);
    else
        refresh_servers(s);
    parts.trace = std::make_unique<Trace>();
    start_trace(parts, s.home);
    Ending ending = or_die(run_session(parts));
    parts.prompt.clear();
    if (s.routed && !s.began)
        note_routed(s.home, parts, ending);
    s.began = true;
    return ending;
}

} // namespace sion::run_cmd
