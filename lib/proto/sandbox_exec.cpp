// SPDX-License-Identifier: MIT
// sandbox/exec's params and result as JSON (sandbox_exec.hpp).
#include "lib/proto/sandbox_exec.hpp"

#include "lib/text.hpp"
#include "lib/utf8.hpp"

#include <algorithm>
#include <cctype>
#include <cinttypes>
#include <cmath>

namespace sion::proto {

namespace {

// A name as the shell takes one: a letter or '_', then letters, digits and '_'.
bool valid_env_name(std::string_view name) {
    if (name.empty() || std::isdigit(static_cast<unsigned char>(name[0])))
        return false;
    for (char c : name)
        if (!std::isalnum(static_cast<unsigned char>(c)) && c != '_')
            return false;
    return true;
}

Status read_env(JsonView params, ExecRequest& request) {
    JsonView env = params.get("env");
    if (!env || env.is_null())
        return {};
    if (!env.is_object())
        return make_error(Exit::data, "member 'env' is %s, not an object", env.type_name());
    for (JsonView item : env) {
        std::string name(item.key());
        if (!valid_env_name(name))
            return make_error(Exit::data, "environment variable name '%s' is not a name",
                              name.c_str());
        auto value = item.as_string();
        if (!value)
            return make_error(Exit::data, "environment variable '%s' is %s, not a string",
                              name.c_str(), item.type_name());
        request.env.emplace_back(std::move(name), std::string(*value));
    }
    return {};
}

Status read_timeout(JsonView params, ExecRequest& request) {
    JsonView t = params.get("timeout");
    if (!t || t.is_null())
        return {};
    SION_TRY(double seconds, t.as_number());
    if (!(seconds > 0) || !std::isfinite(seconds) || seconds > 366.0 * 24 * 3600)
        return make_error(Exit::data, "member 'timeout' must be more than 0 seconds, and finite");
    request.timeout = std::chrono::milliseconds(static_cast<int64_t>(std::ceil(seconds * 1000)));
    return {};
}

} // namespace

Result<ExecRequest> exec_request_from_json(JsonView params) {
    if (!params.is_object())
        return make_error(Exit::data, "the params are %s, not an object", params.type_name());
    ExecRequest request;
    bool has_command = params.get("command").exists();
    bool has_argv = params.get("argv").exists();
    if (has_command == has_argv)
        return make_error(Exit::data, "give either 'command' or 'argv'");
    if (has_command) {
        SION_TRY(std::string_view command, params.string("command"));
        request.command = std::string(command);
    } else {
        SION_TRY(request.argv, params.strings("argv"));
        if (request.argv.empty())
            return make_error(Exit::data, "member 'argv' is empty");
    }
    if (params.get("stdin").exists()) {
        SION_TRY(std::string_view input, params.string_or("stdin", ""));
        request.input = std::string(input);
    }
    SION_CHECK(read_env(params, request));
    SION_CHECK(read_timeout(params, request));
    if (JsonView skill = params.get("skill"); skill && !skill.is_null()) {
        if (!skill.is_object())
            return make_error(Exit::data, "member 'skill' is %s, not an object", skill.type_name());
        SION_TRY(std::string_view dir, skill.string("dir"));
        if (dir.empty() || dir.front() != '/')
            return make_error(Exit::data, "member 'skill.dir' is not an absolute path");
        request.skill = std::string(dir);
        SION_TRY(request.skill_hosts, skill.strings("hosts"));
    }
    return request;
}

Json exec_request_to_json(const ExecRequest& request) {
    Json out = Json::object();
    if (!request.argv.empty()) {
        Json argv = Json::array();
        for (const std::string& a : request.argv)
            argv.push(Json::string(a));
        out.set("argv", std::move(argv));
    } else {
        out.set("command", request.command);
    }
    if (!request.input.empty())
        out.set("stdin", request.input);
    if (!request.env.empty()) {
        Json env = Json::object();
        for (const auto& [name, value] : request.env)
            env.set(name, value);
        out.set("env", std::move(env));
    }
    if (request.timeout)
        out.set("timeout", Json::number(static_cast<double>(request.timeout->count()) / 1000));
    if (!request.skill.empty()) {
        Json skill = Json::object();
        skill.set("dir", request.skill);
        skill.set("hosts", Json::strings(request.skill_hosts));
        out.set("skill", std::move(skill));
    }
    return out;
}

Json exec_result_to_json(const ExecResult& result) {
    Json out = Json::object();
    out.set("exit", result.exit);
    out.set("signal", result.signal ? Json::integer(*result.signal) : Json::null());
    out.set("timed_out", result.timed_out);
    if (result.out_of_memory)
        out.set("out_of_memory", true);
    out.set("stdout", text_for_json(result.stdout_text));
    out.set("stderr", text_for_json(result.stderr_text));
    out.set("truncated", result.truncated);
    out.set("wall_ms", result.wall_ms);
    out.set("cpu_ms", result.cpu_ms);
    out.set("max_rss_kib", result.max_rss_kib);
    return out;
}

Result<ExecResult> exec_result_from_json(JsonView json) {
    if (!json.is_object())
        return make_error(Exit::data, "the result is %s, not an object", json.type_name());
    ExecResult r;
    SION_TRY(int64_t exit, json.integer("exit"));
    r.exit = static_cast<int>(exit);
    JsonView signal = json.get("signal");
    if (signal && !signal.is_null()) {
        SION_TRY(int64_t n, signal.as_int());
        r.signal = static_cast<int>(n);
    }
    SION_TRY(r.timed_out, json.boolean("timed_out"));
    if (json.get("out_of_memory").exists()) {
        SION_TRY(r.out_of_memory, json.boolean("out_of_memory"));
    }
    SION_TRY(std::string_view out, json.string("stdout"));
    SION_TRY(std::string_view err, json.string("stderr"));
    r.stdout_text = std::string(out);
    r.stderr_text = std::string(err);
    SION_TRY(r.truncated, json.boolean("truncated"));
    SION_TRY(r.wall_ms, json.integer("wall_ms"));
    SION_TRY(r.cpu_ms, json.integer("cpu_ms"));
    SION_TRY(r.max_rss_kib, json.integer("max_rss_kib"));
    return r;
}

std::vector<std::string> request_argv(const ExecRequest& request) {
    if (!request.argv.empty())
        return request.argv;
    return {"/bin/sh", "-c", request.command};
}

} // namespace sion::proto
