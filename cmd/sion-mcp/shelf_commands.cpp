// SPDX-License-Identifier: MIT
// sion-mcp add, list, review, remove, give, drop and sampling: the shelf of servers and their pins.
#include "cmd/sion-mcp/commands.hpp"

#include "mcpd/authorize.hpp"
#include "mcpd/first_party.hpp"
#include "mcpd/grants.hpp"

#include "mcpd/oauth_login.hpp"
#include "mcpd/oneshot.hpp"
#include "mcpd/review.hpp"
#include "mcpd/shelf.hpp"
#include "mcpd/transport_http.hpp"

#include "lib/agents.hpp"
#include "lib/db_schema.hpp"
#include "lib/home.hpp"
#include "lib/http.hpp"
#include "lib/listing.hpp"
#include "lib/log.hpp"
#include "lib/models/model.hpp"
#include "lib/programs.hpp"
#include "lib/proto/mcp_names.hpp"
#include "lib/proto/sandbox_options.hpp"
#include "lib/secrets.hpp"
#include "lib/text.hpp"

#include <sys/stat.h>

#include <algorithm>
#include <cstdio>
#include <utility>

namespace sion::mcp_cmd {

namespace {

const char* name_operand(const Args& args, const char* usage) {
    if (args.operands().empty())
        die(usage_error(std::string("give a server's name: ") + usage));
    or_die(proto::check_server_name(args.operands()[0]));
    return args.operands()[0].c_str();
}

// The server and its tools as the server gives them now.
struct Looked {
    mcpd::Connected connected;
    std::vector<mcpd::ToolDef> tools;
};

// Dies as served_or_die() does when the server fails (`on_shelf`: it is on the shelf already);
// nullopt when it wants a login and `person` does not log in.
std::optional<Looked> look(std::string_view name, const mcpd::ServerConfig& config,
                           const std::string& try_first, const mcpd::Person& person,
                           bool on_shelf) {
    Looked looked;
    std::vector<std::string> words;
    auto served = mcpd::with_server(
        name, config, try_first,
        [](mcpd::Client& client, const mcpd::Connected&, mcpd::Done done) {
            client.list_all("tools/list", "tools", std::move(done));
        },
        &looked.connected, person, &words);
    if (!served && !person.logs_in && served.error().exit() == Exit::no_perm)
        return std::nullopt;
    Json tools = served_or_die(std::move(served), name, config, words, on_shelf);
    looked.tools = mcpd::tool_defs(tools, config.effects, name, config.local);
    return looked;
}

// "MCP server notes (notes 1.0, protocol 2026-07-28)"
std::string heading(std::string_view name, const mcpd::Connected& c) {
    std::string who = one_line(c.server_name);
    if (!c.server_version.empty())
        who += " " + one_line(c.server_version);
    return "MCP server " + std::string(name) + " (" + who + ", protocol " + c.protocol + ")";
}

// --dir and --sandbox-read: absolute, existing directories outside $SION_HOME.
std::string directory(const std::string& given, const std::string& home, const char* what) {
    std::string path = or_die(resolve_path(given));
    struct stat st {};
    if (::stat(path.c_str(), &st) != 0 || !S_ISDIR(st.st_mode))
        die(make_error(Exit::no_input, "%s '%s' is not a directory", what, given.c_str()));
    if (or_die(paths_overlap(path, home)))
        die(make_error(Exit::usage, "%s '%s' overlaps $SION_HOME, which no server may see", what,
                       given.c_str()));
    return path;
}

// A word of an unsandboxed server's command that names an existing file here, made absolute.
std::string kept_word(const std::string& word) {
    if (word.empty() || word[0] == '-' || word[0] == '/')
        return word;
    struct stat st {};
    if (::stat(word.c_str(), &st) != 0)
        return word;
    auto path = resolve_path(word);
    return path ? *path : word;
}

// --effect and --timeout, which every server takes.
void effects_and_timeout(const Args& args, mcpd::ServerConfig& c) {
    for (const std::string& e : args.values("effect"))
        or_die(mcpd::set_effect(c, e));
    if (auto timeout = args.value("timeout")) {
        auto s = parse_number(*timeout, 1, 86400);
        if (!s)
            die(usage_error("--timeout takes seconds from 1 to 86400, not '" + *timeout + "'"));
        c.timeout_s = static_cast<int>(*s);
    }
}

// How a server over HTTP is logged in to: the OAuth options of `add` (and --scope of `login`).
mcpd::AuthConfig auth_config_from(const Args& args) {
    mcpd::AuthConfig a;
    a.issuer = args.value("issuer").value_or("");
    a.client_id = args.value("client-id").value_or("");
    a.secret_env = args.value("client-secret-env").value_or("");
    a.client_metadata_url = args.value("client-metadata-url").value_or("");
    a.scope = args.value("scope").value_or("");
    a.client_credentials = args.has("client-credentials");
    a.workload_token_file = args.value("workload-token-file").value_or("");
    if (auto port = args.value("callback-port")) {
        auto n = parse_number(*port, 1, 65535);
        if (!n)
            die(usage_error("--callback-port takes a port from 1 to 65535, not '" + *port + "'"));
        a.callback_port = static_cast<int>(*n);
    }
    if (!a.secret_env.empty() && a.client_id.empty())
        die(usage_error("--client-secret-env goes with --client-id"));
    if (a.client_credentials && (a.client_id.empty() || a.secret_env.empty()))
        die(usage_error("--client-credentials needs --client-id and --client-secret-env"));
    if (a.client_credentials && !a.client_metadata_url.empty())
        die(usage_error("--client-credentials does not go with --client-metadata-url"));
    if (args.has("workload-token-file")) {
        if (!a.workload_token_file.starts_with('/'))
            die(usage_error("--workload-token-file takes an absolute path, not '"
                            + a.workload_token_file + "'"));
        if (a.client_id.empty())
            die(usage_error("--workload-token-file needs --client-id"));
        if (a.client_credentials)
            die(usage_error("--workload-token-file does not go with --client-credentials"));
        if (!a.client_metadata_url.empty())
            die(usage_error("--workload-token-file does not go with --client-metadata-url"));
    }
    return a;
}

mcpd::Person person_from(const Args& args) {
    mcpd::Person person;
    person.no_browser = args.has("no-browser");
    return person;
}

// A server over HTTP: its URL and headers; nothing of the runtime applies to it.
mcpd::ServerConfig http_config_from(const Args& args) {
    mcpd::ServerConfig c;
    c.url = *args.value("url");
    if (mcpd::url_origin(c.url).empty())
        die(usage_error("--url takes an http or https URL, not '" + one_line(c.url) + "'"));
    if (args.operands().size() > 1)
        die(usage_error("give either --url or a command, not both"));
    for (const char* local : {"dir", "env", "sandbox", "sandbox-network", "sandbox-read",
                              "sandbox-memory"})
        if (args.has(local))
            die(usage_error(std::string("--") + local
                            + " does not go with --url: a server over HTTP runs elsewhere"));
    for (const std::string& h : args.values("header"))
        c.headers.push_back(or_die(mcpd::parse_header(h)));
    c.auth = auth_config_from(args);
    return c;
}

// --first-party KIND: one of sion's own servers (mcpd/first_party.hpp), in a bubblewrap sandbox.
// documents serves --dir DIR, the sandbox's workspace (the server is told /workspace), with no
// network; mail and calendar are given their settings and reach their URLs' hosts at each start.
mcpd::ServerConfig first_party_config(const Args& args, const std::string& home) {
    std::string kind = *args.value("first-party");
    const mcpd::FirstParty* own = mcpd::first_party(kind);
    if (own == nullptr)
        die(usage_error("--first-party takes " + mcpd::first_party_kinds() + ", not '"
                        + one_line(kind) + "'"));
    if (args.operands().size() > 1)
        die(usage_error("give either --first-party or a command, not both"));
    for (const char* other : {"url", "sandbox", "sandbox-network", "env", "header", "no-browser",
                              "login-later", "issuer", "client-id", "client-secret-env",
                              "client-metadata-url", "callback-port", "scope",
                              "client-credentials", "workload-token-file"})
        if (args.has(other))
            die(usage_error(std::string("--") + other + " does not go with --first-party: sion "
                                                        "runs its own server in bwrap"));
    auto dir = args.value("dir");
    if (kind == "documents" && !dir)
        die(usage_error("--first-party documents needs --dir DIR: the folder it serves"));
    if (kind != "documents" && dir)
        die(usage_error("--dir goes with --first-party documents: the " + kind
                        + " server keeps nothing in a folder"));
    std::string program = or_die(find_program(std::string(own->program).c_str()));
    mcpd::ServerConfig c;
    c.first_party = kind;
    c.sandbox = "bwrap";
    c.network = "none";
    if (auto memory = args.value("sandbox-memory")) {
        if (auto bytes = proto::parse_memory(*memory); !bytes)
            die(bytes.error().context("option '--sandbox-memory'"));
        c.memory = *memory;
    }
    for (const std::string& read : args.values("sandbox-read"))
        c.sandbox_read.push_back(directory(read, home, "--sandbox-read"));
    // The sandbox shows /usr; a program elsewhere (a build, another prefix) is shown read-only.
    std::string program_dir = program.substr(0, program.rfind('/'));
    if (program_dir != "/usr" && !program_dir.starts_with("/usr/"))
        c.sandbox_read.push_back(program_dir);
    effects_and_timeout(args, c);
    c.command = {program};
    if (dir) {
        c.dir = directory(*dir, home, "--dir");
        c.command.insert(c.command.end(), {"--dir", "/workspace"});
    }
    c.shown = c.command;
    return c;
}

mcpd::ServerConfig config_from(const Args& args, const std::string& home) {
    if (args.has("first-party"))
        return first_party_config(args, home);
    if (args.has("url")) {
        mcpd::ServerConfig c = http_config_from(args);
        effects_and_timeout(args, c);
        return c;
    }
    for (const char* remote : {"header", "no-browser", "login-later", "issuer", "client-id",
                               "client-secret-env", "client-metadata-url", "callback-port", "scope",
                               "client-credentials", "workload-token-file"})
        if (args.has(remote))
            die(usage_error(std::string("--") + remote + " goes with --url"));
    mcpd::ServerConfig c;
    std::vector<std::string> command(args.operands().begin() + 1, args.operands().end());
    if (command.empty())
        die(usage_error("give the server's command after --: sion-mcp add NAME [options] -- "
                        "COMMAND..."));
    if (auto dir = args.value("dir"))
        c.dir = directory(*dir, home, "--dir");
    for (const std::string& dir : args.values("sandbox-read"))
        c.sandbox_read.push_back(directory(dir, home, "--sandbox-read"));
    for (const std::string& name : args.values("env")) {
        bool ok = !name.empty() && name.find('=') == std::string::npos;
        if (!ok)
            die(usage_error("--env takes a variable's name, not '" + name + "'"));
        c.env.push_back(name);
    }
    if (auto sandbox = args.value("sandbox")) {
        proto::Config check;
        or_die(proto::parse_backend(check, *sandbox));
        if (auto network = args.value("sandbox-network"))
            or_die(proto::parse_network(check, *network));
        if (auto memory = args.value("sandbox-memory")) {
            if (auto bytes = proto::parse_memory(*memory); !bytes)
                die(bytes.error().context("option '--sandbox-memory'"));
            c.memory = *memory;
        }
        c.sandbox = *sandbox;
        c.network = args.value("sandbox-network").value_or("");
    } else if (args.has("sandbox-network") || args.has("sandbox-read")
               || args.has("sandbox-memory")) {
        die(usage_error("--sandbox-network, --sandbox-read and --sandbox-memory go with --sandbox"));
    }
    effects_and_timeout(args, c);
    c.shown = command;
    c.command = command;
    if (c.sandbox.empty())
        std::transform(c.command.begin(), c.command.end(), c.command.begin(), kept_word);
    return c;
}

void print_reviewed(std::string_view name, const Looked& looked) {
    std::printf("%s: reviewed tools\n", heading(name, looked.connected).c_str());
    for (const mcpd::ToolDef& t : looked.tools)
        if (t.unusable.empty())
            std::printf("%s\n", mcpd::review_line(t).c_str());
    for (const mcpd::ToolDef& t : looked.tools)
        if (!t.unusable.empty())
            std::printf("%s\n", mcpd::unusable_notice(name, t).c_str());
}

mcpd::Introduced introduced(const mcpd::Connected& c) {
    return {c.protocol, c.server_name, c.server_version, c.transport == "stdio" ? "" : c.transport};
}

// The shelf's entry of the server over HTTP that login or logout is about.
mcpd::ShelfEntry http_entry(const char* name) {
    Db db = or_die(open_state(or_die(prepare_home())));
    mcpd::ShelfEntry entry = or_die(mcpd::Shelf(db).get(name));
    if (entry.config.url.empty())
        die(make_error(Exit::usage, "MCP server %s runs here, not over HTTP: it has no login",
                       name));
    return entry;
}

// A server on the shelf as `list --json` prints it: what its lines show, member by member.
Json shelf_entry_json(const mcpd::ShelfEntry& e,
                      const std::optional<mcpd::Authorized>& authorization,
                      const std::vector<mcpd::ToolDef>& tools) {
    Json entry = Json::object();
    entry.set("name", e.name);
    if (e.config.url.empty()) {
        Json command = Json::array();
        for (const std::string& word : e.config.shown)
            command.push(Json::string(word));
        entry.set("command", std::move(command));
        if (!e.config.sandbox.empty())
            entry.set("sandbox", e.config.sandbox);
    } else {
        entry.set("url", redact_url(e.config.url));
        entry.set("transport", e.config.transport == "sse" ? "sse" : "http");
        if (authorization) {
            Json a = Json::object();
            a.set("issuer", authorization->issuer);
            if (!authorization->scope.empty())
                a.set("scope", authorization->scope);
            entry.set("authorization", std::move(a));
        }
    }
    Json listed = Json::array();
    for (const mcpd::ToolDef& t : tools) {
        Json tool = Json::object();
        tool.set("name", t.name);
        tool.set("effect", effect_name(t.effect));
        tool.set("local", t.local);
        tool.set("idempotent", t.idempotent);
        listed.push(std::move(tool));
    }
    entry.set("tools", std::move(listed));
    if (e.sampling) {
        Json sampling = Json::object();
        sampling.set("max_tokens", e.sampling->max_tokens);
        sampling.set("per_run", e.sampling->per_run);
        if (!e.sampling->model.empty())
            sampling.set("model", e.sampling->model);
        entry.set("sampling", std::move(sampling));
    }
    if (!e.config.grants.empty()) {
        Json grants = Json::array();
        for (const mcpd::GrantConfig& g : e.config.grants) {
            Json grant = Json::object();
            grant.set("url", g.url);
            grant.set("credential", g.credential);
            grant.set("header", g.header);
            grant.set("scheme", g.scheme);
            grants.push(std::move(grant));
        }
        entry.set("grants", std::move(grants));
    }
    return entry;
}

} // namespace

std::vector<OptionSpec> add_options() {
    return {
        {"url", 0, "URL", "the server is at URL, over HTTP, instead of a command"},
        {"first-party", 0, "SERVER",
         "one of sion's own servers instead of a command: mail, calendar, or documents (with "
         "--dir)",
         nullptr, "documents mail calendar"},
        {"header", 0, "'NAME: VALUE'",
         "a header of every request to the URL; ${VAR} is VAR's value where it runs (repeatable)"},
        {"dir", 0, "DIR", "where the server works (in a sandbox: /workspace)", nullptr,
         ":directory"},
        {"env", 0, "NAME", "a variable of yours the server is given (repeatable)"},
        {"sandbox", 0, "BACKEND",
         "bwrap or docker:IMAGE@sha256:DIGEST: run it in the shell's sandbox", nullptr,
         "bwrap docker:"},
        {"sandbox-network", 0, "NETWORK", "the sandbox's network (none)", nullptr,
         "none declared host"},
        {"sandbox-read", 0, "DIR", "a directory the sandbox shows read-only (repeatable)", nullptr,
         ":directory"},
        {"sandbox-memory", 0, "SIZE", "the sandbox's memory, as 512M or 8G (4G)"},
        {"no-browser", 0, nullptr, "print the authorization URL instead of opening a browser"},
        {"login-later", 0, nullptr,
         "a server that wants a login goes on the shelf unreviewed: login reviews it"},
        {"issuer", 0, "URL", "the authorization server to use, of several the server names"},
        {"client-id", 0, "ID", "a client registered beforehand with the authorization server"},
        {"client-secret-env", 0, "VAR", "the variable holding that client's secret or key"},
        {"client-metadata-url", 0, "URL", "the HTTPS URL of a client ID metadata document"},
        {"callback-port", 0, "N", "the port on 127.0.0.1 the browser comes back to"},
        {"scope", 0, "S", "scopes asked for besides those the server names"},
        {"client-credentials", 0, nullptr, "authorize the client itself: nobody logs in"},
        {"workload-token-file", 0, "PATH",
         "the file where the platform keeps the workload's identity token: nobody logs in", nullptr,
         ":file"},
        {"effect", 0, "TOOL=EFFECT",
         "what TOOL's calls do: read, read-local, write, write-local, external or spend "
         "(repeatable)"},
        {"timeout", 0, "S", "seconds a call may take before it is uncertain (60)"},
    };
}

int add_command(int argc, const char* const* argv) {
    const CommandSpec spec{
        "sion-mcp add",
        "sion-mcp add NAME [options] -- COMMAND [ARGS...]\n"
        "sion-mcp add NAME --url URL [--header 'NAME: VALUE']... [options]\n"
        "sion-mcp add NAME --first-party mail|calendar [options]\n"
        "sion-mcp add NAME --first-party documents --dir DIR [options]",
        "Start the server COMMAND, reach the one at URL, or start one of sion's own, review its\n"
        "tools and put it on the shelf with them pinned.",
        add_options(),
        false,
        {"", ":command", ":file..."},
    };
    Args args = parse_args_or_exit(spec, argc, argv);
    const char* name = name_operand(args, "sion-mcp add NAME [options] -- COMMAND...");
    std::string home = or_die(prepare_home());
    mcpd::ServerConfig config = config_from(args, home);
    Db db = or_die(open_state(home));
    mcpd::Shelf shelf(db);
    if (or_die(shelf.find(name)))
        die(make_error(Exit::usage,
                       "MCP server %s is on the shelf already: review it (`sion agent mcp review "
                       "%s`) or remove it first",
                       name, name));
    mcpd::ShelfEntry entry;
    entry.name = name;
    entry.config = config;
    // With --login-later a server that wants a login is asked as a session would ask it: not
    // logged in to now.
    mcpd::Person person = person_from(args);
    person.logs_in = !args.has("login-later");
    std::optional<Looked> seen = look(name, config, {}, person, false);
    if (!seen) {
        or_die(shelf.add(entry, {}));
        std::printf("MCP server %s wants an account first: log in with `sion agent mcp login %s`, "
                    "which reviews its tools.\n",
                    name, name);
        return 0;
    }
    const Looked& looked = *seen;
    entry.protocol = looked.connected.protocol;
    if (!config.url.empty())
        entry.config.transport = looked.connected.transport;
    entry.server_name = looked.connected.server_name;
    entry.server_version = looked.connected.server_version;
    or_die(shelf.add(entry, looked.tools));
    print_reviewed(name, looked);
    if (config.sandbox.empty() && config.url.empty())
        std::printf("It runs as you, outside any sandbox: add --sandbox bwrap (or a Docker image) "
                    "to contain it.\n");
    std::printf("Give it to a session with --mcp %s.\n", name);
    return 0;
}

int list_command(int argc, const char* const* argv) {
    const CommandSpec spec{
        "sion-mcp list",
        "sion-mcp list [--json]",
        "Show the servers on the shelf, how each runs, and its pinned tools; or with --json one\n"
        "JSON object a server (schemas/mcp.list.json).",
        {json_lines_option()},
    };
    Args args = parse_args_or_exit(spec, argc, argv);
    check_operands(args, 0, 0);
    Db db = or_die(open_state(or_die(prepare_home())));
    mcpd::Shelf shelf(db);
    const Listing listing(args.has("json"));
    bool first = true;
    for (const mcpd::ShelfEntry& e : or_die(shelf.list())) {
        std::optional<mcpd::Authorized> authorization;
        if (!e.config.url.empty())
            authorization = mcpd::authorized(e.name, e.config.url);
        std::string text = first ? "" : "\n";
        first = false;
        text += e.name + ": " + mcpd::describe(e.config) + mcpd::authorized_words(authorization);
        std::vector<mcpd::Pin> pins = or_die(shelf.pins(e.name));
        std::sort(pins.begin(), pins.end(),
                  [](const mcpd::Pin& a, const mcpd::Pin& b) { return a.tool < b.tool; });
        Json listed = Json::array();
        for (const mcpd::Pin& p : pins)
            listed.push(Json::copy_of(p.definition));
        std::vector<mcpd::ToolDef> tools =
            mcpd::tool_defs(listed, e.config.effects, e.name, e.config.local);
        for (const mcpd::ToolDef& t : tools)
            text += "\n" + one_line(t.name) + " (" + mcpd::effect_label(t) + ")";
        if (e.sampling)
            text += "\nsampling allowed: " + describe_sampling(*e.sampling);
        for (const mcpd::GrantConfig& g : e.config.grants)
            text += "\ngrant: " + mcpd::describe_grant(g);
        listing.print(shelf_entry_json(e, authorization, tools), text);
    }
    return 0;
}

int review_command(int argc, const char* const* argv) {
    const CommandSpec spec{
        "sion-mcp review",
        "sion-mcp review NAME [--accept] [--effect TOOL=EFFECT]...",
        "Start the server and show each tool against its pin: [new], [changed], [unchanged] or\n"
        "[removed]. --accept pins the tools as listed, with the effects --effect gives.",
        {{"accept", 0, nullptr, "pin the tools as they are now"},
         {"effect", 0, "TOOL=EFFECT",
          "what TOOL's calls do from now: read, read-local, write, write-local, external or "
          "spend (repeatable)"}},
        false,
        {":mcp-server"},
    };
    Args args = parse_args_or_exit(spec, argc, argv);
    const char* name =
        name_operand(args, "sion-mcp review NAME [--accept] [--effect TOOL=EFFECT]...");
    check_operands(args, 1, 1);
    Db db = or_die(open_state(or_die(prepare_home())));
    mcpd::Shelf shelf(db);
    mcpd::ShelfEntry entry = or_die(shelf.get(name));
    // Effects said now are shown in this review, and kept with --accept.
    const mcpd::ServerConfig stored = entry.config;
    for (const std::string& e : args.values("effect"))
        or_die(mcpd::set_effect(entry.config, e));
    bool effects_changed =
        entry.config.effects != stored.effects || entry.config.local != stored.local;
    std::vector<mcpd::Pin> pins = or_die(shelf.pins(name));
    Looked looked = *look(name, entry.config, entry.protocol, mcpd::Person{}, true);
    std::printf("%s:\n", heading(name, looked.connected).c_str());
    std::vector<mcpd::ToolDef> usable;
    for (const mcpd::ToolDef& t : looked.tools)
        if (t.unusable.empty())
            usable.push_back({t.name, t.description, Json::copy_of(t.definition), t.digest,
                              t.effect, t.idempotent, t.local, {}});
    bool changed = effects_changed;
    for (const mcpd::Reviewed& r : mcpd::compare(usable, pins)) {
        const char* mark = "unchanged";
        std::string line;
        switch (r.state) {
        case mcpd::PinState::unchanged:
            line = mcpd::review_line(*r.tool);
            break;
        case mcpd::PinState::changed:
            mark = "changed";
            line = mcpd::review_line(*r.tool);
            changed = true;
            break;
        case mcpd::PinState::added:
            mark = "new";
            line = mcpd::review_line(*r.tool);
            changed = true;
            break;
        case mcpd::PinState::removed: {
            mark = "removed";
            Json one = Json::array();
            one.push(Json::copy_of(r.pin->definition));
            auto was = mcpd::tool_defs(one, entry.config.effects, name, entry.config.local);
            line = was.empty() ? one_line(r.pin->tool) : mcpd::review_line(was.front());
            changed = true;
            break;
        }
        }
        std::printf("%s [%s]\n", line.c_str(), mark);
    }
    for (const mcpd::ToolDef& t : looked.tools)
        if (!t.unusable.empty())
            std::printf("%s\n", mcpd::unusable_notice(name, t).c_str());
    if (args.has("accept")) {
        or_die(shelf.pin(name, introduced(looked.connected), looked.tools,
                         effects_changed ? &entry.config : nullptr));
        std::printf("Pinned as listed.\n");
    } else if (changed) {
        std::printf("Nothing changed: add --accept to pin the tools as listed.\n");
    } else {
        std::printf("The tools are as they were pinned.\n");
    }
    return 0;
}

int login_command(int argc, const char* const* argv) {
    const CommandSpec spec{
        "sion-mcp login",
        "sion-mcp login NAME [--no-browser] [--callback-port N] [--scope S]",
        "Log in to the server NAME over HTTP again, as add did: its authorization server asks\n"
        "for your consent in a browser. --scope asks for more scopes besides. A server added\n"
        "with --login-later is reviewed and pinned once logged in to.",
        {{"no-browser", 0, nullptr, "print the authorization URL instead of opening a browser"},
         {"callback-port", 0, "N", "the port on 127.0.0.1 the browser comes back to"},
         {"scope", 0, "S", "scopes asked for besides those the server names"}},
        false,
        {":mcp-server"},
    };
    Args args = parse_args_or_exit(spec, argc, argv);
    const char* name = name_operand(args, "sion-mcp login NAME");
    check_operands(args, 1, 1);
    mcpd::ShelfEntry entry = http_entry(name);
    if (auto scope = args.value("scope"))
        entry.config.auth.scope = entry.config.auth.scope.empty()
            ? *scope
            : entry.config.auth.scope + " " + *scope;
    if (auto port = args.value("callback-port")) {
        auto n = parse_number(*port, 1, 65535);
        if (!n)
            die(usage_error("--callback-port takes a port from 1 to 65535, not '" + *port + "'"));
        entry.config.auth.callback_port = static_cast<int>(*n);
    }
    or_die(mcpd::log_in(name, entry.config, person_from(args)));
    // A server added to log in to later (add --login-later) is reviewed now, as add would have.
    Db db = or_die(open_state(or_die(prepare_home())));
    mcpd::Shelf shelf(db);
    if (or_die(shelf.pins(name)).empty() && entry.protocol.empty()) {
        Looked looked = *look(name, entry.config, {}, person_from(args), true);
        or_die(shelf.pin(name, introduced(looked.connected), looked.tools));
        print_reviewed(name, looked);
    }
    return 0;
}

int logout_command(int argc, const char* const* argv) {
    const CommandSpec spec{
        "sion-mcp logout",
        "sion-mcp logout NAME",
        "Revoke the tokens of the server NAME where its authorization server takes revocations,\n"
        "and forget them: sessions are not offered its tools until you log in again.",
        {},
        false,
        {":mcp-server"},
    };
    Args args = parse_args_or_exit(spec, argc, argv);
    const char* name = name_operand(args, "sion-mcp logout NAME");
    check_operands(args, 1, 1);
    (void)http_entry(name);
    or_die(mcpd::log_out(name, 1));
    return 0;
}

int remove_command(int argc, const char* const* argv) {
    const CommandSpec spec{
        "sion-mcp remove",
        "sion-mcp remove NAME",
        "Take a server off the shelf, and off every profile that had it. Its tokens are revoked\n"
        "where its authorization server takes revocations, and forgotten, as logout does.",
        {},
        false,
        {":mcp-server"},
    };
    Args args = parse_args_or_exit(spec, argc, argv);
    const char* name = name_operand(args, "sion-mcp remove NAME");
    check_operands(args, 1, 1);
    std::string home = or_die(prepare_home());
    Db db = or_die(open_state(home));
    mcpd::Shelf shelf(db);
    (void)or_die(shelf.get(name));
    // The tokens go first, as logout forgets them: a store that cannot be read (tampered) stops
    // the removal before anything changed. A revocation that fails does not.
    mcpd::AuthStore store = or_die(mcpd::AuthStore::open(home, false));
    mcpd::oauth::LogoutOutcome forgot = or_die(mcpd::oauth::logout(store, name, {}));
    or_die(shelf.remove(name));
    std::string unrevoked = std::exchange(forgot.revoke_error, {});
    if (!unrevoked.empty())
        log_error("could not revoke the tokens of MCP server %s, forgotten all the same: %s", name,
                  unrevoked.c_str());
    if (forgot.had_authorization)
        for (const std::string& line : mcpd::oauth::logout_lines(name, forgot))
            std::printf("%s\n", line.c_str());
    std::printf("removed MCP server %s from the shelf\n", name);
    return 0;
}

int give_command(int argc, const char* const* argv, bool give) {
    const CommandSpec spec{
        give ? "sion-mcp give" : "sion-mcp drop",
        give ? "sion-mcp give PROFILE NAME" : "sion-mcp drop PROFILE NAME",
        give ? "Give a profile's sessions the server NAME, without --mcp."
             : "Take the server NAME from a profile's sessions; it stays on the shelf.",
        {},
        false,
        {":profile", ":mcp-server"},
    };
    Args args = parse_args_or_exit(spec, argc, argv);
    if (args.operands().size() != 2)
        die(usage_error(std::string("give a profile and a server: ") + spec.usage));
    const std::string& profile = args.operands()[0];
    const std::string& name = args.operands()[1];
    or_die(check_profile_name(profile));
    or_die(proto::check_server_name(name));
    Db db = or_die(open_state(or_die(prepare_home())));
    mcpd::Shelf shelf(db);
    if (give) {
        or_die(shelf.give(profile, name));
        std::printf("profile %s has MCP server %s\n", profile.c_str(), name.c_str());
    } else {
        or_die(shelf.drop(profile, name));
        std::printf("profile %s no longer has MCP server %s\n", profile.c_str(), name.c_str());
    }
    return 0;
}

std::string describe_sampling(const mcpd::Sampling& s) {
    return format("at most %d tokens a completion and %d completions a run, written by %s",
                  s.max_tokens, s.per_run,
                  s.model.empty() ? "the session's first model" : s.model.c_str());
}

int sampling_command(int argc, const char* const* argv) {
    const CommandSpec spec{
        "sion-mcp sampling",
        "sion-mcp sampling NAME [--max-tokens N] [--per-run N] [--model M]\n"
        "sion-mcp sampling NAME --off",
        "Let the server ask the session's model for completions (sampling), within limits; --off\n"
        "takes that back. Sampling is off for every server until this allows it.",
        {
            {"max-tokens", 0, "N", "tokens a completion, at most (1000)"},
            {"per-run", 0, "N", "completions a run, at most (5)"},
            {"model", 0, "M", "provider:model that writes them (the session's first)", nullptr,
             ":provider"},
            {"off", 0, nullptr, "no sampling for this server"},
        },
        false,
        {":mcp-server"},
    };
    Args args = parse_args_or_exit(spec, argc, argv);
    const char* name = name_operand(args, "sion-mcp sampling NAME [options]");
    check_operands(args, 1, 1);
    auto count = [&](const char* option, int fallback) {
        auto v = args.value(option);
        if (!v)
            return fallback;
        auto n = parse_number(*v, 1, 1000000);
        if (!n)
            die(usage_error(std::string("--") + option + " takes a number from 1 to 1000000, not '"
                            + *v + "'"));
        return static_cast<int>(*n);
    };
    std::optional<mcpd::Sampling> sampling;
    if (!args.has("off")) {
        sampling.emplace();
        sampling->max_tokens = count("max-tokens", mcpd::k_default_sampling_tokens);
        sampling->per_run = count("per-run", mcpd::k_default_sampling_per_run);
        if (auto model = args.value("model"))
            sampling->model = or_die(models::kept_model_spec(*model));
    } else if (args.has("max-tokens") || args.has("per-run") || args.has("model")) {
        die(usage_error("--off takes no limits"));
    }
    Db db = or_die(open_state(or_die(prepare_home())));
    or_die(mcpd::Shelf(db).set_sampling(name, sampling));
    if (sampling)
        std::printf("MCP server %s may ask for sampling: %s\n", name,
                    describe_sampling(*sampling).c_str());
    else
        std::printf("MCP server %s may not ask for sampling\n", name);
    return 0;
}

int grant_command(int argc, const char* const* argv) {
    const CommandSpec spec{
        "sion-mcp grant",
        "sion-mcp grant NAME [URL] --credential VAR [--header NAME] [--scheme WORD]\n"
        "sion-mcp grant NAME [URL] --off",
        "Write the credential VAR (the environment's, else the one kept with `sion agent\n"
        "credential add`) into the server's requests to URL and the paths under it, as\n"
        "'Authorization: Bearer <value>' unless --header and --scheme say otherwise, so that the\n"
        "server never holds it: its sandbox's proxy writes it for a command in bubblewrap, the\n"
        "client for a server over HTTP (whose URL is the default). --off takes it back.",
        {
            {"credential", 0, "VAR", "the credential's name, as `sion agent credential` keeps it",
             nullptr, ":credential"},
            {"header", 0, "NAME", "the header it is written as (Authorization)"},
            {"scheme", 0, "WORD", "the word before it (Bearer; '' for none)"},
            {"off", 0, nullptr, "take the grant for URL back"},
        },
        false,
        {":mcp-server"},
    };
    Args args = parse_args_or_exit(spec, argc, argv);
    const char* name = name_operand(args, "sion-mcp grant NAME [URL] --credential VAR");
    check_operands(args, 1, 2);
    bool off = args.has("off");
    if (off && (args.has("credential") || args.has("header") || args.has("scheme")))
        die(usage_error("--off takes no credential, header or scheme"));
    if (!off && !args.has("credential"))
        die(usage_error("say which credential: sion-mcp grant NAME [URL] --credential VAR"));
    Db db = or_die(open_state(or_die(prepare_home())));
    mcpd::Shelf shelf(db);
    mcpd::ShelfEntry e = or_die(shelf.get(name));
    std::string url = args.operands().size() > 1 ? args.operands()[1] : e.config.url;
    if (url.empty())
        die(usage_error("give the URL its requests go to: sion-mcp grant NAME URL --credential VAR"));
    mcpd::GrantConfig g = or_die(mcpd::make_grant(
        name, e.config, url, off ? "X" : std::string(*args.value("credential")),
        args.value("header").value_or("Authorization"), args.value("scheme").value_or("Bearer")));
    std::vector<mcpd::GrantConfig> grants;
    std::string replaced;
    for (const mcpd::GrantConfig& kept : e.config.grants) {
        // One grant a host and port: sion-sandbox's proxy writes one.
        if (mcpd::grant_host(kept) == mcpd::grant_host(g)
            && kept.url.starts_with(g.url.substr(0, g.url.find("://") + 3)))
            replaced = kept.url;
        else
            grants.push_back(kept);
    }
    const char* by = e.config.url.empty() ? "its sandbox's proxy" : "sion-mcp";
    if (off) {
        if (replaced != g.url)
            die(make_error(Exit::no, "MCP server %s has no grant for %s", name, g.url.c_str()));
        or_die(shelf.set_grants(name, grants));
        std::printf("MCP server %s's requests to %s get no credential\n", name, g.url.c_str());
        return 0;
    }
    grants.push_back(g);
    or_die(shelf.set_grants(name, grants));
    if (!replaced.empty() && replaced != g.url)
        std::printf("(the grant for %s is replaced: one a host)\n", replaced.c_str());
    std::printf("MCP server %s's requests to %s get %s: %s${%s}, written by %s\n", name,
                g.url.c_str(), g.header.c_str(), g.scheme.empty() ? "" : (g.scheme + " ").c_str(),
                g.credential.c_str(), by);
    auto kept = secrets::lookup(g.credential);
    if (kept && !*kept)
        log_error("note: no credential %s is kept or set yet: keep it with `sion agent credential "
                  "add %s`",
                  g.credential.c_str(), g.credential.c_str());
    return 0;
}

} // namespace sion::mcp_cmd
