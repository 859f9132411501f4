// SPDX-License-Identifier: MIT
// sion-hooks as the session's hooks: check once, fire once an event.
#include "session/hooks_client.hpp"

#include "lib/child.hpp"
#include "lib/programs.hpp"

#include <unistd.h>

namespace sion::session {

namespace {

// sion-hooks's first line on stderr, for a message of ours.
std::string said(const RunResult& r) {
    return first_said(r, "sion-hooks");
}

} // namespace

Result<Hooks> Hooks::open(const std::string& home) {
    std::string file = home + "/agents/hooks.json";
    if (::access(file.c_str(), F_OK) != 0)
        return Hooks(std::move(file), {});
    auto program = find_program("sion-hooks");
    if (!program)
        return make_error(Exit::not_found, "the hooks in '%s' cannot be run: sion-hooks not found",
                          file.c_str());
    ChildSpec spec;
    spec.argv = {*program, "check"};
    spec.env = own_environment();
    SION_TRY(RunResult r, run(std::move(spec), "", size_t{64} << 10));
    if (r.status != 0)
        return Error(r.status == 77 ? Exit::no_perm : Exit::data, said(r));
    return Hooks(std::move(file), std::move(*program));
}

HookVerdict Hooks::fire(const char* event, Json fields) {
    HookVerdict verdict;
    if (m_file.empty() || ::access(m_file.c_str(), F_OK) != 0)
        return verdict;
    bool blocking = std::string_view(event) == "before-tool";
    if (m_program.empty()) {
        auto program = find_program("sion-hooks");
        if (!program) {
            if (blocking) {
                verdict.allow = false;
                verdict.reason =
                    "the hooks could not be asked, so the call is blocked: sion-hooks not found";
            }
            return verdict;
        }
        m_program = std::move(*program);
    }
    verdict.asked = true;
    fields.set("event", event);
    fields.set("session", std::string_view(m_session));
    if (!m_workspace.empty())
        fields.set("workspace", std::string_view(m_workspace));
    ChildSpec spec;
    spec.argv = {m_program, "fire", event};
    spec.env = own_environment();
    auto r = run(std::move(spec), fields.dump() + "\n", size_t{4} << 20);
    auto line = r && r->status == 0 ? Json::parse(r->out) : Result<Json>(Error(Exit::software, ""));
    if (!line || !line->view().get("allow").is_bool()) {
        if (blocking) {
            verdict.allow = false;
            verdict.reason = "the hooks could not be asked, so the call is blocked: "
                             + (r ? said(*r) : r.error().message());
        }
        return verdict;
    }
    verdict.allow = line->view().boolean_or("allow", true).value_or(true);
    verdict.reason = std::string(line->view().string_or("reason", "").value_or(""));
    verdict.added = std::string(line->view().string_or("added", "").value_or(""));
    if (!verdict.allow && verdict.reason.empty())
        verdict.reason = "a hook blocked this call";
    for (JsonView h : line->view().get("hooks")) {
        HookRun run;
        run.hook = h.integer_or("hook", 0).value_or(0);
        run.command = std::string(h.string_or("command", "").value_or(""));
        run.start_ns = h.integer_or("start_us", 0).value_or(0) * 1000;
        run.end_ns = h.integer_or("end_us", 0).value_or(0) * 1000;
        run.failed = std::string(h.string_or("failed", "").value_or(""));
        verdict.runs.push_back(std::move(run));
    }
    return verdict;
}

} // namespace sion::session
