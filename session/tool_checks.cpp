// SPDX-License-Identifier: MIT
// diagnostics and run_tests: the project's checker and its tests, run in the shell's sandbox. A
// probe in the sandbox sees what is at the workspace root and which programs the sandbox has;
// session/code/checks chooses the command and reads what it printed. Problems found and tests failed
// are answers, not a broken tool; finding nothing to run is a failed call, saying what was looked
// for.
#include "session/code/checks.hpp"
#include "lib/text.hpp"
#include "session/tools.hpp"

namespace sion::session {

namespace {

ToolResult failed(std::string text) {
    return {std::move(text), true, false, {}};
}

Json problems_json(const std::vector<code::Problem>& problems) {
    Json list = Json::array();
    for (const auto& p : problems) {
        Json item = Json::object();
        item.set("file", p.file).set("line", p.line).set("column", p.column);
        item.set("severity", p.severity).set("code", p.code).set("message", p.message);
        list.push(std::move(item));
    }
    return list;
}

Json tally_json(const code::Tally& tally) {
    Json out = Json::object();
    auto count = [&](int n) { return tally.counted ? Json::integer(n) : Json::null(); };
    out.set("passed", count(tally.passed));
    out.set("failed", count(tally.failed));
    out.set("skipped", count(tally.skipped));
    Json names = Json::array();
    for (const auto& name : tally.failures)
        names.push(Json::string(name));
    out.set("failures", std::move(names));
    return out;
}

class Check final : public Tool {
public:
    Check(bool tests, bool network) : m_tests(tests), m_network(network) {}

    models::ToolSpec spec() const override {
        models::ToolSpec spec = tool_spec(name());
        if (m_network)
            spec.description += " The sandbox has a network: what it prints comes from outside.";
        return spec;
    }

    // With a network, a build may fetch what it depends on: external, as the shell is.
    Effect effect(JsonView) const override {
        if (m_network)
            return Effect::external;
        return m_tests ? Effect::write : Effect::read;
    }

    bool idempotent() const override { return !m_tests; }

    // Concurrent requests to sion-sandbox serve (SandboxClient's rpc::Caller).
    bool runs_beside() const override { return true; }

    bool journaled() const override { return false; }

    Result<ToolResult> run(JsonView input, ToolContext& context) override {
        std::optional<double> timeout;
        if (input.get("timeout").exists() && !input.get("timeout").is_null()) {
            auto t = input.number("timeout");
            if (!t || *t <= 0)
                return failed(format("%s's 'timeout' is a number of seconds, more than 0", name()));
            timeout = *t;
        }
        if (context.sandbox == nullptr)
            return failed("this session has no shell");
        auto probe = exec(context, code::probe_command(), std::nullopt, {});
        if (!probe)
            return failed(probe.error().message());
        code::Root root = code::read_root(probe->stdout_text);
        auto plan =
            m_tests ? code::choose_runner(root, m_network) : code::choose_checker(root, m_network);
        if (!plan)
            return failed(plan.error().message());
        auto done = exec(context, plan->command, timeout, plan->env);
        if (!done)
            return failed(done.error().message());
        code::Ran ran{done->exit, done->signal, done->timed_out, done->wall_ms, done->stdout_text};
        std::string_view lines = code::split_output(ran.printed).lines;
        Json detail = Json::object();
        detail.set(m_tests ? "runner" : "checker", plan->name);
        detail.set("exit", done->exit).set("timed_out", done->timed_out);
        detail.set("wall_ms", Json::integer(done->wall_ms));
        std::string text;
        if (m_tests) {
            code::Tally tally = code::parse_tests(plan->kind, lines);
            text = code::run_tests_answer(*plan, ran, tally);
            Json counts = tally_json(tally);
            for (const char* key : {"passed", "failed", "skipped", "failures"})
                detail.set(key, counts.take(key));
        } else {
            std::vector<code::Problem> problems = code::parse_problems(plan->kind, lines);
            text = code::diagnostics_answer(*plan, ran, problems);
            detail.set("problems", problems_json(problems));
        }
        return ToolResult{std::move(text), false, m_network, std::move(detail)};
    }

private:
    const char* name() const { return m_tests ? "run_tests" : "diagnostics"; }

    static Result<proto::ExecResult>
    exec(ToolContext& context, const std::string& command, std::optional<double> timeout,
         const std::vector<std::pair<std::string, std::string>>& env) {
        auto done = context.sandbox->exec(command, timeout, env);
        if (!done && done.error().exit() == Exit::unavailable)
            return Error(Exit::unavailable, "the sandbox is gone: " + done.error().message());
        return done;
    }

    bool m_tests;
    bool m_network;
};

} // namespace

std::unique_ptr<Tool> make_diagnostics_tool(bool network) {
    return std::make_unique<Check>(false, network);
}

std::unique_ptr<Tool> make_run_tests_tool(bool network) {
    return std::make_unique<Check>(true, network);
}

} // namespace sion::session
