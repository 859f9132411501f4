// SPDX-License-Identifier: MIT
// The hooks file: strict parsing (a hook read wrongly is a guard that does not fire), its text, and
// the checks that nobody else can change it before a word of it is believed.
#include "hooks/hooks_file.hpp"

#include "hooks/pattern.hpp"
#include "lib/fd.hpp"
#include "lib/home.hpp"
#include "lib/json.hpp"
#include "lib/private_file.hpp"
#include "lib/text.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>

namespace sion::hooks {

namespace {

constexpr std::array<std::string_view, 4> k_hook_members = {"event", "tools", "timeout", "command"};

std::string directory_of(const std::string& path) {
    size_t slash = path.rfind('/');
    if (slash == std::string::npos)
        return ".";
    return slash == 0 ? "/" : path.substr(0, slash);
}

Error bad(const std::string& why) {
    return {Exit::data, why};
}

Result<Hook> parse_hook(JsonView v) {
    if (!v.is_object())
        return bad(format("it is %s, not an object", v.type_name()));
    for (JsonView m : v)
        if (std::find(k_hook_members.begin(), k_hook_members.end(), m.key())
            == k_hook_members.end())
            return bad("unknown member '" + std::string(m.key())
                       + "' (a hook has event, tools, timeout and command)");
    Hook hook;
    JsonView event = v.get("event");
    if (!event.exists())
        return bad("member 'event' is missing");
    if (!event.is_string())
        return bad(format("member 'event' is %s, not a string", event.type_name()));
    auto e = parse_event_name(*event.as_string());
    if (!e)
        return bad("member 'event': " + e.error().message());
    hook.event = *e;
    SION_TRY(hook.tools, v.strings("tools"));
    if (JsonView timeout = v.get("timeout"); timeout.exists()) {
        auto t = timeout.as_int();
        if (!t)
            return bad("member 'timeout' is "
                       + (timeout.is_number() ? timeout.dump() : std::string(timeout.type_name()))
                       + ", not a whole number of seconds");
        if (*t < 1 || *t > k_max_timeout_s)
            return bad(format("member 'timeout' is %lld, not 1 to %d seconds",
                              static_cast<long long>(*t), k_max_timeout_s));
        hook.timeout_s = static_cast<int>(*t);
    }
    if (!v.get("command").exists())
        return bad("member 'command' is missing");
    SION_TRY(hook.command, v.strings("command"));
    SION_CHECK(check_hook(hook));
    return hook;
}

void append_strings(std::string& out, const std::vector<std::string>& words) {
    out += '[';
    for (size_t i = 0; i < words.size(); ++i) {
        if (i > 0)
            out += ", ";
        append_json_string(out, words[i]);
    }
    out += ']';
}

} // namespace

Status check_hook(const Hook& hook) {
    if (!is_tool_event(hook.event) && !hook.tools.empty())
        return bad(
            format("a %s hook is for no tool, yet it has tool patterns", event_name(hook.event)));
    for (const auto& p : hook.tools)
        SION_CHECK(check_pattern(p));
    if (hook.timeout_s < 1 || hook.timeout_s > k_max_timeout_s)
        return bad(
            format("the timeout %d is not 1 to %d seconds", hook.timeout_s, k_max_timeout_s));
    if (hook.command.empty())
        return bad("the command is empty");
    const std::string& program = hook.command.front();
    if (program.empty())
        return bad("the command's first word is empty");
    if (program.front() != '/' && program.find('/') != std::string::npos)
        return bad("the command '" + program
                   + "' is a relative path: give an absolute path, or a bare name found on PATH");
    return {};
}

Result<std::vector<Hook>> parse_hooks(std::string_view text) {
    SION_TRY(Json json, Json::parse(text));
    JsonView root = json.view();
    if (!root.is_object())
        return bad(format("it is %s, not an object with a member 'hooks'", root.type_name()));
    for (JsonView m : root)
        if (m.key() != "hooks")
            return bad("unknown member '" + std::string(m.key()) + "' (the file has only 'hooks')");
    JsonView list = root.get("hooks");
    if (!list.exists())
        return bad("member 'hooks' is missing");
    if (!list.is_array())
        return bad(format("member 'hooks' is %s, not an array", list.type_name()));
    std::vector<Hook> hooks;
    size_t number = 0;
    for (JsonView item : list) {
        ++number;
        auto hook = parse_hook(item);
        if (!hook)
            return hook.error().context(format("hook %zu", number));
        hooks.push_back(std::move(*hook));
    }
    return hooks;
}

std::string render_hooks(const std::vector<Hook>& hooks) {
    if (hooks.empty())
        return "{\n  \"hooks\": []\n}\n";
    std::string out = "{\n  \"hooks\": [\n";
    for (size_t i = 0; i < hooks.size(); ++i) {
        const Hook& h = hooks[i];
        out += "    {\"event\": ";
        append_json_string(out, event_name(h.event));
        out += ", \"tools\": ";
        append_strings(out, h.tools);
        out += format(", \"timeout\": %d, \"command\": ", h.timeout_s);
        append_strings(out, h.command);
        out += i + 1 < hooks.size() ? "},\n" : "}\n";
    }
    out += "  ]\n}\n";
    return out;
}

std::string hooks_path(const std::string& home) {
    return (home == "/" ? std::string() : home) + "/agents/hooks.json";
}

Status check_hooks_safe(const std::string& path) {
    struct stat st = {};
    if (::lstat(path.c_str(), &st) == 0)
        SION_CHECK(check_private(path, "hooks file"));
    else if (errno != ENOENT)
        return sys_error(Exit::os, errno, "cannot inspect hooks file '%s'", path.c_str());
    std::string dir = directory_of(path);
    if (::lstat(dir.c_str(), &st) == 0)
        SION_CHECK(check_private(dir, "hooks directory"));
    else if (errno != ENOENT)
        return sys_error(Exit::os, errno, "cannot inspect hooks directory '%s'", dir.c_str());
    return {};
}

Result<std::vector<Hook>> load_hooks(const std::string& path) {
    SION_CHECK(check_hooks_safe(path));
    Fd fd(::open(path.c_str(), O_RDONLY | O_NOFOLLOW | O_CLOEXEC));
    if (!fd) {
        if (errno == ENOENT)
            return std::vector<Hook>{};
        return sys_error(errno == EACCES ? Exit::no_perm : Exit::io, errno,
                         "cannot read hooks file '%s'", path.c_str());
    }
    struct stat st = {};
    if (::fstat(fd.get(), &st) != 0)
        return sys_error(Exit::io, errno, "cannot read hooks file '%s'", path.c_str());
    if (!S_ISREG(st.st_mode))
        return make_error(Exit::data, "invalid hooks file '%s': not a regular file", path.c_str());
    auto text = read_all(fd.get(), k_max_hooks_file);
    if (!text) {
        if (text.error().exit() == Exit::data)
            return make_error(Exit::data, "invalid hooks file '%s': larger than %zu bytes",
                              path.c_str(), k_max_hooks_file);
        return text.error().context("cannot read hooks file '" + path + "'");
    }
    auto hooks = parse_hooks(*text);
    if (!hooks)
        return hooks.error().context("invalid hooks file '" + path + "'");
    return hooks;
}

Status save_hooks(const std::string& path, const std::vector<Hook>& hooks) {
    return write_private_file(path, render_hooks(hooks));
}

} // namespace sion::hooks
