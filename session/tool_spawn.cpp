// SPDX-License-Identifier: MIT
// agent_spawn (seed 000, "Spawning subagents together"): a subagent is an agent of the profile
// <parent's profile>-<name>, made on first use with the subagents' models and the parent's
// autonomy level, and its work is a session of its own: `sion-run run … --json`, with its own
// sandbox when the parent has a shell, never the parent's. Its budget comes out of the parent's.
// The child holds a pipe of the parent's (SION_PARENT_FD) and ends when the parent does, however
// the parent ends.
#include "lib/agents.hpp"
#include "lib/child.hpp"
#include "lib/db_schema.hpp"
#include "lib/fd.hpp"
#include "lib/policy.hpp"
#include "lib/programs.hpp"
#include "lib/proto/run_events.hpp"
#include "lib/text.hpp"
#include "lib/utf8.hpp"
#include "lib/worktree.hpp"
#include "session/tools.hpp"
#include "session/trace.hpp"
#include "session/transcript.hpp"

#include <fcntl.h>
#include <poll.h>
#include <unistd.h>

#include <algorithm>
#include <functional>

namespace sion::session {

namespace {

constexpr size_t k_max_name = 32;
// What is read of a subagent's events: its whole session, as --json prints it.
constexpr size_t k_events_max = size_t{64} << 20;
// What the parent is shown of what the subagent said last.
constexpr size_t k_said_max = 2000;

bool name_ok(std::string_view name) {
    bool ok = !name.empty() && name.size() <= k_max_name && name.front() != '-';
    for (char c : name)
        ok = ok && ((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-');
    return ok;
}

ToolResult refused(std::string text) {
    ToolResult r;
    r.text = std::move(text);
    r.is_error = true;
    r.changed_nothing = true;
    return r;
}

using proto::RunSeen;

// Reads a child's stdout and stderr to their ends at once, so that neither fills, keeping at most
// k_events_max of each and giving each whole line of stdout to `line` as it comes.
Status drain(Child& child, std::string& out, std::string& err,
             const std::function<void(std::string_view)>& line) {
    struct pollfd fds[2] = {{child.out().get(), POLLIN, 0}, {child.err().get(), POLLIN, 0}};
    size_t told = 0; // out's bytes given to `line`
    char buffer[65536];
    while (fds[0].fd >= 0 || fds[1].fd >= 0) {
        if (::poll(fds, 2, -1) < 0) {
            if (errno == EINTR)
                continue;
            return sys_error(Exit::os, errno, "cannot read a subagent's output");
        }
        for (int i = 0; i < 2; ++i) {
            if (fds[i].fd < 0 || fds[i].revents == 0)
                continue;
            ssize_t n = ::read(fds[i].fd, buffer, sizeof buffer);
            if (n < 0 && errno == EINTR)
                continue;
            if (n <= 0) {
                fds[i].fd = -1;
                continue;
            }
            std::string& kept = i == 0 ? out : err;
            if (kept.size() < k_events_max)
                kept.append(buffer, static_cast<size_t>(n));
        }
        for (size_t nl = out.find('\n', told); nl != std::string::npos; nl = out.find('\n', told)) {
            line(std::string_view(out).substr(told, nl - told));
            told = nl + 1;
        }
    }
    return {};
}

// What --json says of a subagent as it starts and ends (Output::subagent()).
class Said {
public:
    Said(const Delegation& d, std::string profile, std::string agent, int64_t budget,
         const Worktree* tree)
        : m_out(d.out), m_profile(std::move(profile)), m_agent(std::move(agent)), m_budget(budget),
          m_worktree(tree != nullptr ? tree->path() : std::string()) {}

    void line(std::string_view text) {
        if (m_started || m_out == nullptr)
            return;
        auto event = Json::parse(text);
        if (!event || event->view().string_or("event", "").value_or("") != "session")
            return;
        m_started = true;
        Json said = base("started");
        said.set("session", event->view().string_or("session", "").value_or(""));
        if (!m_worktree.empty())
            said.set("worktree", std::string_view(m_worktree));
        m_out->subagent(said);
    }

    void ended(const RunSeen& seen, const Worktree::Committed& committed);

private:
    Json base(const char* state) const {
        Json said = Json::object();
        said.set("state", state);
        said.set("subagent", std::string_view(m_profile));
        said.set("agent", std::string_view(m_agent));
        said.set("budget", m_budget);
        return said;
    }

    Output* m_out;
    std::string m_profile;
    std::string m_agent;
    int64_t m_budget;
    std::string m_worktree;
    bool m_started = false;
};

// "done", "out of budget", "failed: why", "interrupted".
std::string ending_text(const RunSeen& seen) {
    if (seen.state == "done")
        return "done";
    if (seen.state == "stopped")
        return "out of budget";
    if (seen.state == "failed")
        return "failed" + (seen.why.empty() ? std::string() : ": " + one_line(seen.why));
    return "interrupted";
}

void Said::ended(const RunSeen& seen, const Worktree::Committed& committed) {
    if (m_out == nullptr)
        return;
    Json said = base("ended");
    if (!seen.session.empty())
        said.set("session", std::string_view(seen.session));
    said.set("ended",
             seen.state.empty() ? std::string_view("interrupted") : std::string_view(seen.state));
    Json usage = Json::object();
    usage.set("input_tokens", seen.usage.input_tokens);
    usage.set("output_tokens", seen.usage.output_tokens);
    said.set("usage", std::move(usage));
    if (!committed.branch.empty()) {
        said.set("branch", std::string_view(committed.branch));
        said.set("changed", std::string_view(committed.stat));
    }
    m_out->subagent(said);
}

// Commits what the subagent `name` changed in its worktree and removes it: what the report adds.
std::string commit_worktree(Worktree& tree, const std::string& name, const std::string& agent,
                            std::string_view task, const RunSeen& seen,
                            Worktree::Committed& committed) {
    std::string subject = one_line(task.substr(0, task.find('\n')));
    if (subject.size() > 72)
        subject = subject.substr(0, utf8_boundary(subject, 71)) + "\u2026";
    std::string message =
        format("%s\n\nsion subagent %s (agent %.8s) worked in session %s: %s.\n", subject.c_str(),
               name.c_str(), agent.c_str(), seen.session.c_str(), ending_text(seen).c_str());
    auto made = tree.commit(message);
    if (!made) {
        std::string left = tree.path();
        tree.keep();
        return format(" Its changes could not be committed (%s): they are left in %s.",
                      made.error().message().c_str(), left.c_str());
    }
    committed = std::move(*made);
    tree.remove();
    if (committed.branch.empty())
        return " It changed nothing in its worktree: no branch was made.";
    const char* b = committed.branch.c_str();
    return format(" Its changes are committed on branch %s: %s. See them with git diff HEAD...%s; "
                  "merge them with git merge %s.",
                  b, committed.stat.c_str(), b, b);
}

class AgentSpawnTool final : public Tool {
public:
    [[nodiscard]] models::ToolSpec spec() const override { return tool_spec("agent_spawn"); }

    [[nodiscard]] Effect effect(JsonView) const override { return Effect::write; }

    [[nodiscard]] bool idempotent() const override { return false; }

    [[nodiscard]] bool runs_together() const override { return true; }

    [[nodiscard]] Result<ToolResult> run(JsonView input, ToolContext& context) override {
        if (context.delegation == nullptr)
            return refused("agent_spawn is for a session given --delegate");
        Delegation& d = *context.delegation;
        std::string_view name = input.string_or("name", "").value_or("");
        if (!name_ok(name))
            return refused("agent_spawn's name is '" + one_line(name)
                           + "': give 1 to 32 lowercase letters, digits and '-'");
        std::string_view task = input.string_or("task", "").value_or("");
        if (task.find_first_not_of(" \n\t") == std::string_view::npos)
            return refused("agent_spawn needs a task: what the subagent is to do, whole");
        auto asked = input.integer("budget");
        if (!asked || *asked < 1)
            return refused("agent_spawn needs a budget: the tokens the subagent may use, 1 or "
                           "more");
        int64_t budget = *asked;
        auto worktree = input.boolean_or("worktree", false);
        if (!worktree)
            return refused("agent_spawn's worktree is true or false");
        bool wants_worktree = *worktree;
        if (wants_worktree) {
            std::string why = no_worktree(d);
            if (!why.empty())
                return refused("agent_spawn gives no worktree here: " + why
                               + "; spawn it without \"worktree\", to work in this session's "
                                 "workspace");
        }
        {
            std::lock_guard lock(d.mutex);
            if (auto left = d.left()) {
                int64_t free = *left - d.promised;
                if (free < 1)
                    return refused(format("no tokens are left for a subagent: %lld of the "
                                          "budget are spent or promised to subagents at work",
                                          static_cast<long long>(*left + d.promised)));
                budget = std::min(budget, free);
            }
            d.promised += budget;
        }
        auto result = [&]() -> Result<ToolResult> {
            if (!wants_worktree)
                return spawn(d, std::string(name), task, budget, nullptr);
            auto dir = worktrees_dir();
            auto tree = dir ? Worktree::make(d.repository.git_dir, name, *dir)
                            : Result<Worktree>(dir.error());
            if (!tree)
                return refused("agent_spawn could not make a worktree: " + tree.error().message());
            return spawn(d, std::string(name), task, budget, &*tree);
        }();
        {
            std::lock_guard lock(d.mutex);
            d.promised -= budget;
        }
        return result;
    }

private:
    // Why this session can give a subagent no worktree, or "".
    static std::string no_worktree(const Delegation& d) {
        if (d.shell.empty())
            return "this session has no shell";
        return d.repository.git_dir.empty() ? d.repository.why_not : std::string();
    }

    static Result<ToolResult> spawn(const Delegation& d, const std::string& name,
                                    std::string_view task, int64_t budget, Worktree* tree) {
        std::string profile = d.profile + "-" + name;
        if (!check_profile_name(profile))
            return refused("agent_spawn's name '" + name + "' makes the profile name '" + profile
                           + "' too long: give a shorter name");
        Agent agent;
        {
            SION_TRY(Db db, open_state(d.home));
            SION_TRY(Profile made, ensure_profile(db, profile, d.models, d.autonomy));
            (void)made;
            SION_TRY(std::vector<Agent> agents, list_agents(db, std::string_view(profile)));
            if (agents.empty()) {
                SION_TRY(agent, create_agent(db, profile));
            } else {
                agent = agents.front();
            }
        }
        SION_TRY(std::string program, find_program("sion-run"));
        ChildSpec spec;
        spec.argv = {program,           "run",
                     profile,           agent.id,
                     "--task",          std::string(task),
                     "--budget-tokens", std::to_string(budget),
                     "--autonomy",      autonomy_name(d.autonomy),
                     "--json"};
        if (tree != nullptr || !d.workspace.empty()) {
            spec.argv.insert(spec.argv.end(),
                             {"--workspace", tree != nullptr ? tree->path() : d.workspace});
            spec.argv.insert(spec.argv.end(), d.shell.begin(), d.shell.end());
        }
        // The pipe the subagent watches: its end of file is this session's end.
        int ends[2];
        if (::pipe2(ends, O_CLOEXEC) != 0)
            return sys_error(Exit::os, errno, "cannot make a pipe for a subagent");
        Fd watched(ends[0]);
        Fd held(ends[1]);
        spec.extra_fds = {{watched.get(), 3}};
        spec.env = own_environment();
        env_set(spec.env, "SION_PARENT_FD", "3");
        // Its run is a trace of its own, linked to this call's span.
        if (!running_traceparent().empty())
            env_set(spec.env, "TRACEPARENT", running_traceparent());
        spec.in = Stdio::null();
        spec.out = Stdio::pipe();
        spec.err = Stdio::pipe();
        SION_TRY(Child child, Child::spawn(spec));
        watched.reset();
        // Its events as they come: the first names its session, which is said at once.
        std::string out;
        std::string err;
        Said telling(d, profile, agent.id, budget, tree);
        SION_CHECK(drain(child, out, err, [&](std::string_view line) { telling.line(line); }));
        SION_TRY(ExitStatus ended, child.wait());
        held.reset();
        RunSeen seen = proto::read_run_events(out);
        Worktree::Committed committed;
        std::string changes; // what the report says of the worktree
        if (tree != nullptr && !seen.session.empty())
            changes = commit_worktree(*tree, name, agent.id, task, seen, committed);
        telling.ended(seen, committed);
        ToolResult result;
        if (seen.session.empty()) {
            RunResult r;
            r.status = ended.status;
            r.err = err;
            result.text = format("subagent %s could not start: %s", profile.c_str(),
                                 first_said(r, "sion-run").c_str());
            result.is_error = true;
            return result;
        }
        std::string said = one_line(seen.said);
        if (said.size() > k_said_max)
            said = said.substr(0, k_said_max) + "\u2026";
        while (!said.empty() && said.back() == ' ')
            said.pop_back();
        if (!said.empty() && said.back() != '.' && said.back() != '!' && said.back() != '?')
            said += '.';
        std::string calls;
        for (const std::string& c : seen.calls)
            calls += (calls.empty() ? "" : ", ") + c;
        result.text =
            format("subagent %s (agent %.8s, budget %lld tokens) worked in session %s: "
                   "%s; %s %s",
                   profile.c_str(), agent.id.c_str(), static_cast<long long>(budget),
                   seen.session.c_str(), ending_text(seen).c_str(),
                   said.empty() ? "it said nothing." : ("it said: " + said).c_str(),
                   calls.empty() ? "It made no calls." : ("Its calls: " + calls + ".").c_str());
        result.text += changes;
        result.is_error = seen.state != "done";
        result.taints = seen.tainted;
        result.usage = seen.usage;
        return result;
    }
};

} // namespace

std::unique_ptr<Tool> make_agent_spawn_tool() {
    return std::make_unique<AgentSpawnTool>();
}

} // namespace sion::session
