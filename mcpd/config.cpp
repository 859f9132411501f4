// SPDX-License-Identifier: MIT
#include "mcpd/config.hpp"

#include "lib/programs.hpp"
#include "lib/text.hpp"

namespace sion::mcpd {

namespace {

Json strings(const std::vector<std::string>& items) {
    Json a = Json::array();
    for (const std::string& s : items)
        a.push(Json::string(s));
    return a;
}

Result<std::vector<std::string>> strings_of(JsonView json, std::string_view key) {
    std::vector<std::string> out;
    JsonView a = json.get(key);
    if (!a.exists())
        return out;
    if (!a.is_array())
        return make_error(Exit::data, "member '%.*s' is not an array", static_cast<int>(key.size()),
                          key.data());
    for (JsonView item : a) {
        SION_TRY(std::string_view s, item.as_string());
        out.emplace_back(s);
    }
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

} // namespace

Json config_to_json(const ServerConfig& c) {
    Json j = Json::object();
    j.set("command", strings(c.command));
    if (!c.shown.empty() && c.shown != c.command)
        j.set("shown", strings(c.shown));
    if (!c.dir.empty())
        j.set("dir", std::string_view(c.dir));
    if (!c.env.empty())
        j.set("env", strings(c.env));
    if (!c.sandbox.empty())
        j.set("sandbox", std::string_view(c.sandbox));
    if (!c.network.empty())
        j.set("network", std::string_view(c.network));
    if (!c.sandbox_read.empty())
        j.set("sandbox_read", strings(c.sandbox_read));
    if (!c.effects.empty()) {
        Json e = Json::object();
        for (const auto& [tool, effect] : c.effects)
            e.set(tool, effect_name(effect));
        j.set("effects", std::move(e));
    }
    j.set("timeout", c.timeout_s);
    return j;
}

Result<ServerConfig> config_from_json(JsonView j) {
    ServerConfig c;
    SION_TRY(c.command, strings_of(j, "command"));
    if (c.command.empty())
        return Error(Exit::data, "member 'command' is empty");
    SION_TRY(c.shown, strings_of(j, "shown"));
    if (c.shown.empty())
        c.shown = c.command;
    SION_TRY(std::string_view dir, j.string_or("dir", ""));
    c.dir = std::string(dir);
    SION_TRY(c.env, strings_of(j, "env"));
    SION_TRY(std::string_view sandbox, j.string_or("sandbox", ""));
    c.sandbox = std::string(sandbox);
    SION_TRY(std::string_view network, j.string_or("network", ""));
    c.network = std::string(network);
    SION_TRY(c.sandbox_read, strings_of(j, "sandbox_read"));
    if (JsonView e = j.get("effects"); e.exists()) {
        if (!e.is_object())
            return Error(Exit::data, "member 'effects' is not an object");
        for (JsonView item : e) {
            SION_TRY(std::string_view name, item.as_string());
            SION_TRY(Effect effect, parse_effect(name));
            c.effects.emplace(std::string(item.key()), effect);
        }
    }
    SION_TRY(int64_t timeout, j.integer_or("timeout", k_default_timeout_s));
    if (timeout < 1 || timeout > 86400)
        return Error(Exit::data, "member 'timeout' is not between 1 and 86400");
    c.timeout_s = static_cast<int>(timeout);
    return c;
}

std::string describe(const ServerConfig& c) {
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

Result<ChildSpec> launch_spec(const ServerConfig& c) {
    ChildSpec spec;
    spec.in = Stdio::pipe();
    spec.out = Stdio::pipe();
    spec.err = Stdio::null();
    spec.env = server_environment(c);
    if (c.sandbox.empty()) {
        spec.argv = c.command;
        spec.cwd = c.dir;
        return spec;
    }
    SION_TRY(std::string sandbox, find_program("sion-sandbox"));
    spec.argv = {sandbox, "run"};
    if (c.sandbox != "bwrap")
        spec.argv.insert(spec.argv.end(), {"--backend", c.sandbox});
    if (!c.dir.empty())
        spec.argv.insert(spec.argv.end(), {"--workspace", c.dir});
    spec.argv.insert(spec.argv.end(), {"--network", c.network.empty() ? "none" : c.network});
    for (const std::string& dir : c.sandbox_read)
        spec.argv.insert(spec.argv.end(), {"--sandbox-read", dir});
    for (const std::string& name : c.env)
        spec.argv.insert(spec.argv.end(), {"--env", name});
    spec.argv.emplace_back("--");
    spec.argv.insert(spec.argv.end(), c.command.begin(), c.command.end());
    // sion-sandbox itself needs to find its home and its engine; the server inside gets only what
    // --env names.
    for (std::string& var : env_keep({"SION_HOME", "SION_EXEC_PATH", "DOCKER_HOST",
                                      "DOCKER_CONTEXT", "DOCKER_CONFIG", "XDG_RUNTIME_DIR"}))
        spec.env.push_back(std::move(var));
    return spec;
}

ClientOptions client_options(std::string_view name, const ServerConfig& c, std::string try_first) {
    ClientOptions o;
    o.name = std::string(name);
    o.try_first = std::move(try_first);
    o.timeout = std::chrono::seconds(c.timeout_s);
    if (!c.sandbox.empty())
        o.root = "file:///workspace";
    else if (!c.dir.empty())
        o.root = "file://" + percent_encode(c.dir, true); // RFC 3986, as a URI is
    return o;
}

} // namespace sion::mcpd
