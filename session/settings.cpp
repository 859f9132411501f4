// SPDX-License-Identifier: MIT
// A session's settings: from flags over what was stored, then the sandbox judged by sion-sandbox.
#include "session/settings.hpp"

#include "lib/models/model.hpp"
#include "lib/proto/mcp_names.hpp"
#include "lib/proto/sandbox_options.hpp"
#include "lib/text.hpp"
#include "session/sandbox_client.hpp"

#include <unistd.h>

#include <algorithm>
#include <cstdlib>

namespace sion::session {

namespace {

// --FLAG's whole number, `least` or more.
Result<int64_t> whole_number(const Args& args, const char* flag, int64_t least = 1) {
    std::string text = *args.value(flag);
    auto n = parse_number(text, least, 999'999'999'999'999);
    if (!n && least == 1)
        return make_error(Exit::usage, "--%s takes a positive whole number, not '%s'", flag,
                          text.c_str());
    if (!n)
        return make_error(Exit::usage, "--%s takes a whole number of %lld or more, not '%s'", flag,
                          static_cast<long long>(least), text.c_str());
    return *n;
}

// The options sion-sandbox checks and takes, from the settings.
Result<std::vector<std::string>> sandbox_argv(JsonView settings, const std::string& home,
                                              bool shell) {
    std::vector<std::string> argv;
    SION_TRY(std::string_view workspace, settings.string("workspace"));
    argv = {"--workspace", std::string(workspace), "--home", home};
    if (!shell)
        return argv;
    SION_TRY(std::string_view backend, settings.string("shell"));
    argv.insert(argv.end(), {"--backend", std::string(backend)});
    SION_TRY(std::string_view network, settings.string_or("sandbox_network", "none"));
    argv.insert(argv.end(), {"--network", std::string(network)});
    SION_TRY(auto reads, settings.strings("sandbox_read"));
    for (auto& dir : reads)
        argv.insert(argv.end(), {"--sandbox-read", dir});
    if (settings.get("sandbox_timeout").exists()) {
        SION_TRY(int64_t timeout, settings.integer("sandbox_timeout"));
        argv.insert(argv.end(), {"--timeout", std::to_string(timeout)});
    }
    if (settings.get("sandbox_memory").exists()) {
        SION_TRY(std::string_view memory, settings.string("sandbox_memory"));
        argv.insert(argv.end(), {"--memory", std::string(memory)});
    }
    return argv;
}

} // namespace

Result<Json> settings_from_flags(const Args& args, JsonView base) {
    Json s = base.is_object() ? Json::copy_of(base) : Json::object();
    if (args.has("model")) {
        std::vector<std::string> models;
        for (const auto& m : args.values("model")) {
            SION_TRY(std::string kept, models::kept_model_spec(m));
            models.push_back(std::move(kept));
        }
        s.set("models", Json::strings(models));
    }
    if (auto ws = args.value("workspace"))
        s.set("workspace", std::string_view(*ws));
    if (auto shell = args.value("shell"))
        s.set("shell", std::string_view(shell->empty() ? "bwrap" : *shell));
    if (auto network = args.value("sandbox-network"))
        s.set("sandbox_network", std::string_view(*network));
    if (args.has("sandbox-read"))
        s.set("sandbox_read", Json::strings(args.values("sandbox-read")));
    if (args.has("sandbox-timeout")) {
        SION_TRY(int64_t t, whole_number(args, "sandbox-timeout"));
        s.set("sandbox_timeout", t);
    }
    if (auto memory = args.value("sandbox-memory")) {
        if (auto bytes = proto::parse_memory(*memory); !bytes)
            return bytes.error().context("option '--sandbox-memory'");
        s.set("sandbox_memory", std::string_view(*memory));
    }
    if (auto level = args.value("autonomy")) {
        SION_TRY(int n, parse_autonomy(*level));
        s.set("autonomy", std::string_view(autonomy_name(n)));
    }
    if (args.has("budget-tokens")) {
        SION_TRY(int64_t n, whole_number(args, "budget-tokens"));
        s.set("budget_tokens", n);
    }
    if (args.has("context-chars")) {
        SION_TRY(int64_t n, whole_number(args, "context-chars", k_least_context_chars));
        s.set("context_chars", n);
    }
    if (args.has("context-messages")) {
        SION_TRY(int64_t n, whole_number(args, "context-messages", k_least_context_messages));
        s.set("context_messages", n);
    }
    if (args.has("delegate"))
        s.set("delegate", true);
    if (args.has("web"))
        s.set("web", true);
    if (args.has("web-allow")) {
        std::vector<std::string> hosts;
        for (const auto& h : args.values("web-allow")) {
            if (h.empty() || h.find_first_of("/:@ ") != std::string::npos || h.front() == '[')
                return make_error(Exit::usage, "--web-allow takes a host's name, not '%s'",
                                  h.c_str());
            hosts.push_back(ascii_lower(h));
        }
        s.set("web_allow", Json::strings(hosts));
    }
    if (args.has("subagent-model")) {
        std::vector<std::string> models;
        for (const auto& m : args.values("subagent-model")) {
            SION_TRY(std::string kept, models::kept_model_spec(m));
            models.push_back(std::move(kept));
        }
        s.set("subagent_models", Json::strings(models));
    }
    if (args.has("mcp")) {
        std::vector<std::string> servers;
        for (const auto& name : args.values("mcp")) {
            SION_CHECK(proto::check_server_name(name));
            if (std::find(servers.begin(), servers.end(), name) == servers.end())
                servers.push_back(name);
        }
        s.set("mcp", Json::strings(servers));
    }
    return s;
}

Result<RunSettings> resolve_settings(JsonView settings, const Profile& profile,
                                     const std::string& home) {
    RunSettings rs;
    rs.stored = Json::copy_of(settings);
    SION_TRY(rs.models, settings.strings("models"));
    if (rs.models.empty())
        rs.models = profile.models;
    if (rs.models.empty())
        return make_error(Exit::usage, "no model: give --model, or create the agent with one");
    rs.autonomy = profile.autonomy;
    if (settings.get("autonomy").exists()) {
        SION_TRY(std::string_view level, settings.string("autonomy"));
        SION_TRY(rs.autonomy, parse_autonomy(level));
    }
    if (settings.get("budget_tokens").exists()) {
        SION_TRY(int64_t n, settings.integer("budget_tokens"));
        rs.budget_tokens = n;
    }
    const ContextLimits seed;
    SION_TRY(int64_t chars, settings.integer_or("context_chars", static_cast<int64_t>(seed.chars)));
    SION_TRY(int64_t messages,
             settings.integer_or("context_messages", static_cast<int64_t>(seed.messages)));
    rs.context = {static_cast<size_t>(std::max<int64_t>(chars, k_least_context_chars)),
                  static_cast<size_t>(std::max<int64_t>(messages, k_least_context_messages))};
    SION_TRY(rs.mcp, settings.strings("mcp"));
    SION_TRY(rs.delegate, settings.boolean_or("delegate", false));
    SION_TRY(rs.web, settings.boolean_or("web", false));
    SION_TRY(rs.web_allow, settings.strings("web_allow"));
    if (!rs.web_allow.empty() && !rs.web)
        return make_error(Exit::usage, "--web-allow is for a session with --web: add --web");
    SION_TRY(rs.subagent_models, settings.strings("subagent_models"));
    if (!rs.subagent_models.empty() && !rs.delegate)
        return make_error(Exit::usage, "--subagent-model is for a session that delegates: add "
                                       "--delegate");
    for (const auto& name : rs.mcp)
        SION_CHECK(proto::check_server_name(name));
    rs.shell = settings.get("shell").exists();
    bool has_workspace = settings.get("workspace").exists();
    for (const char* key : {"sandbox_network", "sandbox_read", "sandbox_timeout", "sandbox_memory"})
        if (settings.get(key).exists() && !rs.shell) {
            std::string flag = std::string("--") + key;
            flag[flag.find('_')] = '-';
            return make_error(Exit::usage, "%s is for a shell: add --shell", flag.c_str());
        }
    if (rs.shell && !has_workspace)
        return make_error(Exit::usage, "--shell needs a workspace: add --workspace DIR");
    if (!has_workspace)
        return rs;

    SION_TRY(rs.sandbox, sandbox_argv(settings, home, rs.shell));
    if (rs.shell)
        return rs; // serve judges the options as the sandbox starts: settle_sandbox() then
    // Judged by sion-sandbox, in its words (the seeds' refusals).
    SION_TRY(proto::Config config, describe_sandbox(rs.sandbox));
    settle_sandbox(rs, config);
    return rs;
}

void settle_sandbox(RunSettings& rs, const proto::Config& config) {
    rs.workspace = config.workspace;
    rs.stored.set("workspace", std::string_view(config.workspace));
    if (!rs.shell) {
        rs.sandbox.clear();
        return;
    }
    if (!config.reads.empty())
        rs.stored.set("sandbox_read", Json::strings(config.reads));
    rs.shell_external =
        config.network == proto::Network::host || config.network == proto::Network::named;
    rs.skill_network = config.network != proto::Network::none;
    // run_code's sandbox: the shell's backend and limits, with no workspace of the session's
    // (run_code gives it an empty one) and no network. Offered where Python 3 is: this machine's
    // for bubblewrap; a Docker image is taken to have it.
    if (config.backend == proto::BackendKind::docker || ::access("/usr/bin/python3", X_OK) == 0) {
        rs.code_sandbox = {"--backend", proto::backend_text(config), "--network", "none", "--home",
                           config.home};
        if (rs.stored.get("sandbox_timeout").exists())
            rs.code_sandbox.insert(rs.code_sandbox.end(),
                                   {"--timeout", std::to_string(config.limits.timeout.count())});
        if (rs.stored.get("sandbox_memory").exists())
            rs.code_sandbox.insert(rs.code_sandbox.end(),
                                   {"--memory", std::to_string(config.limits.memory)});
    }
}

} // namespace sion::session
