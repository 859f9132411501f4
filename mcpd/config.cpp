// SPDX-License-Identifier: MIT
#include "mcpd/config.hpp"

#include "mcpd/authorize.hpp"
#include "mcpd/first_party.hpp"
#include "mcpd/grants.hpp"
#include "mcpd/server_secrets.hpp"

#include "lib/http.hpp"
#include "lib/secret_bytes.hpp"
#include "lib/programs.hpp"
#include "lib/text.hpp"

#include <algorithm>
#include <cstdlib>

namespace sion::mcpd {

namespace {

std::string one_line_of(std::string_view s) {
    std::string out;
    for (unsigned char ch : s)
        out += ch < 0x20 || ch == 0x7f ? '?' : static_cast<char>(ch);
    return out;
}

std::string joined(const std::vector<std::string>& words) {
    std::string out;
    for (const std::string& w : words) {
        if (!out.empty())
            out += ' ';
        out += w;
    }
    return out;
}

Json auth_to_json(const AuthConfig& a) {
    Json j = Json::object();
    auto text = [&j](const char* key, const std::string& value) {
        if (!value.empty())
            j.set(key, std::string_view(value));
    };
    text("issuer", a.issuer);
    text("client_id", a.client_id);
    text("secret_env", a.secret_env);
    text("client_metadata_url", a.client_metadata_url);
    text("scope", a.scope);
    text("workload_token_file", a.workload_token_file);
    if (a.callback_port != 0)
        j.set("callback_port", a.callback_port);
    if (a.client_credentials)
        j.set("client_credentials", true);
    return j;
}

Result<AuthConfig> auth_from_json(JsonView j) {
    if (!j.is_object())
        return Error(Exit::data, "member 'auth' is not an object");
    AuthConfig a;
    for (auto [key, into] : {std::pair{"issuer", &a.issuer}, {"client_id", &a.client_id},
                             {"secret_env", &a.secret_env},
                             {"client_metadata_url", &a.client_metadata_url},
                             {"scope", &a.scope},
                             {"workload_token_file", &a.workload_token_file}}) {
        SION_TRY(std::string_view value, j.string_or(key, ""));
        *into = std::string(value);
    }
    SION_TRY(int64_t port, j.integer_or("callback_port", 0));
    if (port < 0 || port > 65535)
        return Error(Exit::data, "member 'auth.callback_port' is not a port");
    a.callback_port = static_cast<int>(port);
    SION_TRY(a.client_credentials, j.boolean_or("client_credentials", false));
    return a;
}

Json grants_to_json(const std::vector<GrantConfig>& grants) {
    Json out = Json::array();
    for (const GrantConfig& g : grants) {
        Json j = Json::object();
        j.set("url", std::string_view(g.url));
        j.set("credential", std::string_view(g.credential));
        j.set("header", std::string_view(g.header));
        j.set("scheme", std::string_view(g.scheme));
        out.push(std::move(j));
    }
    return out;
}

Result<std::vector<GrantConfig>> grants_from_json(JsonView j) {
    if (!j.is_array())
        return Error(Exit::data, "member 'grants' is not an array");
    std::vector<GrantConfig> grants;
    for (JsonView item : j) {
        if (!item.is_object())
            return Error(Exit::data, "member 'grants' holds something not an object");
        GrantConfig g;
        SION_TRY(std::string_view url, item.string("url"));
        SION_TRY(std::string_view credential, item.string("credential"));
        SION_TRY(std::string_view header, item.string_or("header", "Authorization"));
        SION_TRY(std::string_view scheme, item.string_or("scheme", "Bearer"));
        g.url = std::string(url);
        g.credential = std::string(credential);
        g.header = std::string(header);
        g.scheme = std::string(scheme);
        grants.push_back(std::move(g));
    }
    return grants;
}

} // namespace

Json config_to_json(const ServerConfig& c) {
    Json j = Json::object();
    if (!c.url.empty()) {
        j.set("url", std::string_view(c.url));
        if (!c.headers.empty()) {
            Json h = Json::array();
            for (const auto& [name, value] : c.headers) {
                Json pair = Json::array();
                pair.push(Json::string(name));
                pair.push(Json::string(value));
                h.push(std::move(pair));
            }
            j.set("headers", std::move(h));
        }
        if (!c.transport.empty())
            j.set("transport", std::string_view(c.transport));
        if (!c.auth.empty())
            j.set("auth", auth_to_json(c.auth));
    } else {
        j.set("command", Json::strings(c.command));
    }
    if (!c.shown.empty() && c.shown != c.command)
        j.set("shown", Json::strings(c.shown));
    if (!c.dir.empty())
        j.set("dir", std::string_view(c.dir));
    if (!c.env.empty())
        j.set("env", Json::strings(c.env));
    if (!c.sandbox.empty())
        j.set("sandbox", std::string_view(c.sandbox));
    if (!c.network.empty())
        j.set("network", std::string_view(c.network));
    if (!c.sandbox_read.empty())
        j.set("sandbox_read", Json::strings(c.sandbox_read));
    if (!c.memory.empty())
        j.set("memory", std::string_view(c.memory));
    if (!c.effects.empty()) {
        Json e = Json::object();
        for (const auto& [tool, effect] : c.effects)
            e.set(tool, effect_name(effect));
        j.set("effects", std::move(e));
    }
    if (!c.local.empty())
        j.set("local", Json::strings({c.local.begin(), c.local.end()}));
    if (!c.grants.empty())
        j.set("grants", grants_to_json(c.grants));
    if (!c.first_party.empty())
        j.set("first_party", std::string_view(c.first_party));
    j.set("timeout", c.timeout_s);
    return j;
}

Result<ServerConfig> config_from_json(JsonView j) {
    ServerConfig c;
    SION_TRY(std::string_view url, j.string_or("url", ""));
    c.url = std::string(url);
    SION_TRY(std::string_view transport, j.string_or("transport", ""));
    c.transport = std::string(transport);
    if (JsonView h = j.get("headers"); h.exists()) {
        if (!h.is_array())
            return Error(Exit::data, "member 'headers' is not an array");
        for (JsonView pair : h) {
            if (!pair.is_array() || pair.size() != 2 || !pair.at(0).is_string()
                || !pair.at(1).is_string())
                return Error(Exit::data, "member 'headers' holds something not a [name, value]");
            c.headers.emplace_back(*pair.at(0).as_string(), *pair.at(1).as_string());
        }
    }
    if (JsonView a = j.get("auth"); a.exists()) {
        SION_TRY(c.auth, auth_from_json(a));
    }
    SION_TRY(c.command, j.strings("command"));
    if (c.command.empty() && c.url.empty())
        return Error(Exit::data, "member 'command' is empty");
    SION_TRY(c.shown, j.strings("shown"));
    if (c.shown.empty())
        c.shown = c.command;
    SION_TRY(std::string_view dir, j.string_or("dir", ""));
    c.dir = std::string(dir);
    SION_TRY(c.env, j.strings("env"));
    SION_TRY(std::string_view sandbox, j.string_or("sandbox", ""));
    c.sandbox = std::string(sandbox);
    SION_TRY(std::string_view network, j.string_or("network", ""));
    c.network = std::string(network);
    SION_TRY(c.sandbox_read, j.strings("sandbox_read"));
    SION_TRY(std::string_view memory, j.string_or("memory", ""));
    c.memory = std::string(memory);
    if (JsonView e = j.get("effects"); e.exists()) {
        if (!e.is_object())
            return Error(Exit::data, "member 'effects' is not an object");
        for (JsonView item : e) {
            SION_TRY(std::string_view name, item.as_string());
            SION_TRY(Effect effect, parse_effect(name));
            c.effects.emplace(std::string(item.key()), effect);
        }
    }
    SION_TRY(std::vector<std::string> local, j.strings("local"));
    c.local.insert(local.begin(), local.end());
    if (JsonView g = j.get("grants"); g.exists()) {
        SION_TRY(c.grants, grants_from_json(g));
    }
    SION_TRY(std::string_view first, j.string_or("first_party", ""));
    if (!first.empty() && first_party(first) == nullptr)
        return Error(Exit::data, "member 'first_party' is not " + first_party_kinds());
    c.first_party = std::string(first);
    SION_TRY(int64_t timeout, j.integer_or("timeout", k_default_timeout_s));
    if (timeout < 1 || timeout > 86400)
        return Error(Exit::data, "member 'timeout' is not between 1 and 86400");
    c.timeout_s = static_cast<int>(timeout);
    return c;
}

std::string describe(const ServerConfig& c) {
    if (!c.url.empty())
        return redact_url(c.url) + (c.transport == "sse" ? " over HTTP+SSE" : " over HTTP");
    std::string where = c.sandbox.empty() ? "unsandboxed"
        : c.sandbox == "bwrap"            ? "in bwrap"
                                          : "in " + c.sandbox;
    return joined(c.shown) + ", " + where;
}

std::vector<std::string> server_environment(const ServerConfig& c) {
    std::vector<std::string> names = {"PATH", "HOME", "LANG", "TMPDIR"};
    names.insert(names.end(), c.env.begin(), c.env.end());
    return env_keep(names);
}

Result<ServerLaunch> launch_spec(const ServerConfig& c) {
    ServerLaunch launch;
    ChildSpec& spec = launch.spec;
    spec.in = Stdio::pipe();
    spec.out = Stdio::pipe();
    spec.err = Stdio::null();
    spec.env = server_environment(c);
    if (c.sandbox.empty()) {
        spec.argv = c.command;
        spec.cwd = c.dir;
        return launch;
    }
    SION_TRY(std::string sandbox, find_program("sion-sandbox"));
    spec.argv = {sandbox, "run"};
    if (c.sandbox != "bwrap")
        spec.argv.insert(spec.argv.end(), {"--backend", c.sandbox});
    if (!c.dir.empty())
        spec.argv.insert(spec.argv.end(), {"--workspace", c.dir});
    // sion's mail and calendar servers: their settings as they are now, and their hosts.
    std::vector<std::string> hosts;
    std::vector<std::string> settings;
    if (const FirstParty* own = first_party(c.first_party); own != nullptr) {
        SION_TRY(auto given, first_party_settings(*own));
        hosts = first_party_hosts(*own, given);
        for (auto& [name, value] : given) {
            spec.env.push_back(name + "=" + value);
            wipe(value);
            settings.push_back(name);
        }
    }
    if (!c.grants.empty()) {
        // The grants' hosts are the sandbox's; their credentials go on a descriptor, read to its
        // end by sion-sandbox: never on a command line.
        std::string lines;
        for (const GrantConfig& g : c.grants) {
            SION_TRY(std::string line, grant_line(g));
            lines += line + "\n";
            wipe(line);
            if (std::string host = grant_host(g);
                std::find(hosts.begin(), hosts.end(), host) == hosts.end())
                hosts.push_back(std::move(host));
        }
        auto file = memory_file(lines, "the grants");
        wipe(lines);
        if (!file)
            return std::move(file).error();
        launch.grants = std::move(*file);
        spec.extra_fds.push_back({launch.grants.get(), 3});
    }
    if (hosts.empty()) {
        spec.argv.insert(spec.argv.end(), {"--network", c.network.empty() ? "none" : c.network});
    } else {
        spec.argv.insert(spec.argv.end(), {"--network", "declared"});
        for (const std::string& host : hosts)
            spec.argv.insert(spec.argv.end(), {"--allow-host", host});
    }
    if (!c.grants.empty())
        spec.argv.insert(spec.argv.end(), {"--grants-fd", "3"});
    for (const std::string& dir : c.sandbox_read)
        spec.argv.insert(spec.argv.end(), {"--sandbox-read", dir});
    if (!c.memory.empty())
        spec.argv.insert(spec.argv.end(), {"--memory", c.memory});
    for (const std::string& name : c.env)
        spec.argv.insert(spec.argv.end(), {"--env", name});
    for (const std::string& name : settings)
        spec.argv.insert(spec.argv.end(), {"--env", name});
    spec.argv.emplace_back("--");
    spec.argv.insert(spec.argv.end(), c.command.begin(), c.command.end());
    // sion-sandbox itself needs to find its home and its engine; the server inside gets only what
    // --env names.
    for (std::string& var : env_keep({"SION_HOME", "SION_EXEC_PATH", "DOCKER_HOST",
                                      "DOCKER_CONTEXT", "DOCKER_CONFIG", "XDG_RUNTIME_DIR",
                                      "SSL_CERT_FILE"}))
        spec.env.push_back(std::move(var));
    return launch;
}

Status set_effect(ServerConfig& c, std::string_view given) {
    size_t eq = given.find('=');
    std::string_view said = eq == std::string_view::npos ? "" : given.substr(eq + 1);
    bool local = said == "read-local" || said == "write-local";
    auto effect = parse_effect(local ? said.substr(0, said.size() - 6) : said);
    if (eq == std::string_view::npos || eq == 0)
        return Error(Exit::usage, "--effect takes TOOL=read|read-local|write|write-local|external|"
                                  "spend, not '" + one_line_of(given) + "'");
    if (!effect)
        return Error(Exit::usage, "unknown effect '" + one_line_of(said)
                                      + "': give read, read-local, write, write-local, external "
                                        "or spend");
    std::string tool(given.substr(0, eq));
    c.effects[tool] = *effect;
    if (local)
        c.local.insert(tool);
    else
        c.local.erase(tool);
    return {};
}

Result<std::pair<std::string, std::string>> parse_header(std::string_view given) {
    size_t colon = given.find(':');
    std::string_view name = given.substr(0, colon);
    if (colon == std::string_view::npos || !is_http_token(name))
        return Error(Exit::usage, "--header takes 'Name: value', not '" + one_line_of(given) + "'");
    std::string lower = ascii_lower(name);
    for (std::string_view own : {"accept", "content-type", "content-length", "host",
                                 "last-event-id", "transfer-encoding"})
        if (lower == own)
            return Error(Exit::usage, "--header cannot set " + std::string(name)
                                          + ": the client sets it");
    if (lower.starts_with("mcp-"))
        return Error(Exit::usage, "--header cannot set " + std::string(name)
                                      + ": the protocol's headers are the client's");
    std::string_view value = given.substr(colon + 1);
    while (!value.empty() && (value.front() == ' ' || value.front() == '\t'))
        value.remove_prefix(1);
    while (!value.empty() && (value.back() == ' ' || value.back() == '\t'))
        value.remove_suffix(1);
    for (unsigned char ch : value)
        if ((ch < 0x20 && ch != '\t') || ch == 0x7f)
            return Error(Exit::usage, "--header " + std::string(name)
                                          + ": the value holds a control character");
    return std::pair<std::string, std::string>(std::string(name), std::string(value));
}

namespace {

// A ${VAR} of a --header value: where it is and what it names.
struct Taken {
    size_t at = 0;   // of its "${"
    size_t size = 0; // through its "}"
    std::string name;
};

std::vector<Taken> taken_variables(std::string_view value) {
    std::vector<Taken> taken;
    for (size_t i = 0; i < value.size(); ++i) {
        size_t close = value.find('}', i);
        if (value.compare(i, 2, "${") != 0 || close == std::string_view::npos)
            continue;
        taken.push_back(Taken{i, close + 1 - i, std::string(value.substr(i + 2, close - i - 2))});
        i = close;
    }
    return taken;
}

} // namespace

std::vector<std::string> header_variables(std::string_view value) {
    std::vector<std::string> names;
    for (Taken& t : taken_variables(value))
        names.push_back(std::move(t.name));
    return names;
}

Result<HttpTarget> http_target(std::string_view name, const ServerConfig& c) {
    HttpTarget t;
    t.url = c.url;
    for (const auto& [header, value] : c.headers) {
        std::string out;
        size_t done = 0;
        for (const Taken& var : taken_variables(value)) {
            const char* set = std::getenv(var.name.c_str()); // NOLINT(concurrency-mt-unsafe)
            if (set == nullptr)
                return make_error(
                    Exit::config, "the header %s of MCP server %.*s takes ${%s}, which is not set",
                    header.c_str(), static_cast<int>(name.size()), name.data(), var.name.c_str());
            out.append(value, done, var.at - done);
            out += set;
            done = var.at + var.size;
        }
        out.append(value, done);
        t.headers.add(header, std::move(out));
    }
    for (const GrantConfig& g : c.grants) {
        if (!grant_covers(g, c.url))
            continue;
        SION_TRY(std::string value, grant_value(g));
        t.headers.add(g.header, std::move(value));
    }
    return t;
}

ClientOptions client_options(std::string_view name, const ServerConfig& c, std::string try_first) {
    ClientOptions o;
    o.name = std::string(name);
    o.try_first = std::move(try_first);
    o.timeout = std::chrono::seconds(c.timeout_s);
    o.transport = c.transport;
    if (!c.url.empty())
        return o;
    if (!c.sandbox.empty())
        o.root = "file:///workspace";
    else if (!c.dir.empty())
        o.root = "file://" + percent_encode(c.dir, true); // RFC 3986, as a URI is
    return o;
}

Result<std::unique_ptr<Client>> open_client(uv_loop_t* loop, std::string_view name,
                                            const ServerConfig& config, ClientOptions options,
                                            ClientEvents events, const Person* person) {
    options.secrets = [name = std::string(name), config] { return server_secrets(name, config); };
    if (!config.url.empty()) {
        SION_TRY(HttpTarget target, http_target(name, config));
        SION_CHECK(authorize(events, name, config, person));
        return Client::reach(loop, std::move(target), std::move(options), std::move(events));
    }
    SION_TRY(ServerLaunch launch, launch_spec(config));
    if (options.keep_last_words)
        launch.spec.err = Stdio::pipe();
    return Client::start(loop, launch.spec, std::move(options), std::move(events));
}

} // namespace sion::mcpd
