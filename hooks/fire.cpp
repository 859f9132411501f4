// SPDX-License-Identifier: MIT
// Running the hooks of an event in turn and making one verdict of how they ended. A hook that does
// not end well blocks a before-tool call: a guard that crashed has not said yes.
#include "hooks/fire.hpp"

#include "hooks/describe.hpp"
#include "hooks/pattern.hpp"
#include "lib/child.hpp"
#include "lib/home.hpp"
#include "lib/json.hpp"
#include "lib/otlp.hpp"
#include "lib/text.hpp"

#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <cstring>

namespace sion::hooks {

namespace {

// How one hook ended.
struct Ending {
    enum class Kind { ok, blocked, failed };
    Kind kind = Kind::failed;
    std::string out; // shown_output() of its stdout
    std::string err; // shown_output() of its stderr
    std::string why; // for failed: "exited with status 1", ...
};

std::string signal_text(int signal) {
    const char* abbrev = sigabbrev_np(signal);
    return format("was killed by SIG%s (%s)", abbrev != nullptr ? abbrev : "?",
                  strsignal(signal)); // NOLINT(concurrency-mt-unsafe): fire runs on one thread
}

std::string path_of(const std::vector<std::string>& env) {
    for (const auto& e : env)
        if (e.rfind("PATH=", 0) == 0)
            return e.substr(5);
    return "/bin:/usr/bin";
}

bool executable_file(const std::string& path) {
    struct stat st = {};
    return ::stat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode)
           && ::access(path.c_str(), X_OK) == 0;
}

// `path` is `dir` or below it, by name alone.
bool below_by_name(std::string_view path, std::string_view dir) {
    while (dir.size() > 1 && dir.back() == '/')
        dir.remove_suffix(1);
    if (dir == "/")
        return true;
    return path.substr(0, dir.size()) == dir
           && (path.size() == dir.size() || path[dir.size()] == '/');
}

// A program in the workspace is one the agent can rewrite: the guard would be the guarded's. It is
// judged by name (a link in the workspace that points out can be changed too) and with links
// resolved (a link outside that points in).
Status check_outside_workspace(const std::string& program, const std::string& workspace) {
    if (workspace.empty())
        return {};
    bool inside = below_by_name(program, workspace);
    if (!inside) {
        SION_TRY(inside, paths_overlap(workspace, program));
    }
    if (inside)
        return Error(Exit::no_perm, "its program '" + program + "' is in the workspace '"
                                        + workspace + "', which the agent can change");
    return {};
}

ChildSpec child_spec(const Hook& hook, std::string program, const EventInput& event,
                     const FireOptions& options) {
    ChildSpec spec;
    spec.argv = hook.command;
    spec.argv.front() = std::move(program);
    spec.env = options.env;
    env_set(spec.env, "SION_HOOK_EVENT", event_name(event.event));
    env_set(spec.env, "SION_SESSION", event.session);
    spec.cwd = event.workspace;
    spec.time_limit = std::chrono::seconds(hook.timeout_s);
    return spec;
}

Ending run_hook(const Hook& hook, const EventInput& event, const std::string& input,
                const FireOptions& options) {
    Ending end;
    auto program = find_hook_program(hook.command.front(), options.env);
    if (program) {
        if (Status outside = check_outside_workspace(*program, event.workspace); !outside)
            program = outside.error();
    }
    if (!program) {
        end.why = "could not run (" + program.error().message() + ")";
        return end;
    }
    auto r =
        run(child_spec(hook, std::move(*program), event, options), input, options.output_limit);
    if (!r) {
        end.why = "could not run (" + r.error().message() + ")";
        return end;
    }
    end.out = shown_output(r->out, r->out_total);
    end.err = shown_output(r->err, r->err_total);
    if (r->timed_out)
        end.why = format("ran out of time (%d s) and was killed", hook.timeout_s);
    else if (r->signal != 0)
        end.why = signal_text(r->signal);
    else if (r->exit_code == 0)
        end.kind = Ending::Kind::ok;
    else if (r->exit_code == 2 && event.event == Event::before_tool)
        end.kind = Ending::Kind::blocked;
    else
        end.why = format("exited with status %d", r->exit_code);
    return end;
}

bool is_for(const Hook& hook, const EventInput& event) {
    if (hook.event != event.event)
        return false;
    return !is_tool_event(event.event) || patterns_match(hook.tools, event.tool);
}

void add_text(std::string& added, size_t number, const std::string& command,
              const std::string& text) {
    if (text.empty())
        return;
    if (!added.empty())
        added += '\n';
    added += format("[hook %zu: %s] ", number, command.c_str()) + text;
}

} // namespace

Result<std::string> find_hook_program(const std::string& word,
                                      const std::vector<std::string>& env) {
    if (word.find('/') != std::string::npos)
        return word;
    std::string path = path_of(env);
    size_t start = 0;
    for (;;) {
        size_t colon = path.find(':', start);
        std::string dir = path.substr(start, colon == std::string::npos ? colon : colon - start);
        // An empty or relative entry is the current directory: the workspace, when there is one.
        if (!dir.empty() && dir.front() == '/') {
            std::string candidate = dir;
            if (candidate.back() != '/')
                candidate += '/';
            candidate += word;
            if (executable_file(candidate))
                return candidate;
        }
        if (colon == std::string::npos)
            break;
        start = colon + 1;
    }
    return Error(Exit::not_found, "'" + word + "' is not on PATH");
}

Verdict fire(const std::vector<Hook>& hooks, const EventInput& event, const FireOptions& options) {
    Verdict verdict;
    verdict.event = event.event;
    const std::string input = event.json.dump() + "\n";
    for (size_t i = 0; i < hooks.size(); ++i) {
        const Hook& hook = hooks[i];
        if (!is_for(hook, event))
            continue;
        ++verdict.ran;
        size_t number = i + 1;
        std::string command = command_text(hook.command);
        int64_t start = otlp::now_ns();
        Ending end = run_hook(hook, event, input, options);
        verdict.runs.push_back({number, command, start, otlp::now_ns(),
                                end.kind == Ending::Kind::failed ? end.why : ""});
        if (end.kind == Ending::Kind::failed)
            verdict.failures.push_back({number, command, end.why, end.err});
        if (event.event == Event::before_tool && end.kind != Ending::Kind::ok) {
            verdict.allow = false;
            verdict.hook = number;
            verdict.command = command;
            if (end.kind == Ending::Kind::failed)
                verdict.reason = format("hook %zu (%s) %s, which blocks the call", number,
                                        command.c_str(), end.why.c_str());
            else if (!end.err.empty() || !end.out.empty())
                verdict.reason = !end.err.empty() ? end.err : end.out;
            else
                verdict.reason = format("blocked by hook %zu (%s)", number, command.c_str());
            break;
        }
        if (end.kind == Ending::Kind::ok
            && (event.event == Event::after_tool || event.event == Event::run_start))
            add_text(verdict.added, number, command, end.out);
    }
    return verdict;
}

std::string failure_text(const Failure& failure) {
    return format("hook %zu (%s) %s", failure.hook, failure.command.c_str(), failure.why.c_str());
}

std::string verdict_json(const Verdict& verdict) {
    Json out = Json::object();
    out.set("event", event_name(verdict.event));
    out.set("allow", verdict.allow);
    if (!verdict.allow) {
        out.set("reason", verdict.reason);
        out.set("hook", static_cast<int64_t>(verdict.hook));
        out.set("command", verdict.command);
    }
    if (verdict.event == Event::after_tool || verdict.event == Event::run_start)
        out.set("added", verdict.added);
    out.set("ran", static_cast<int64_t>(verdict.ran));
    Json failures = Json::array();
    for (const auto& f : verdict.failures)
        failures.push(Json::string(failure_text(f)));
    out.set("failures", std::move(failures));
    Json runs = Json::array();
    for (const auto& r : verdict.runs) {
        Json one = Json::object();
        one.set("hook", static_cast<int64_t>(r.hook));
        one.set("command", r.command);
        one.set("start_us", r.start_ns / 1000);
        one.set("end_us", r.end_ns / 1000);
        if (!r.failed.empty())
            one.set("failed", r.failed);
        runs.push(std::move(one));
    }
    out.set("hooks", std::move(runs));
    return out.dump();
}

} // namespace sion::hooks
