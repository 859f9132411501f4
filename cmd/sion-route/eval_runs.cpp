// SPDX-License-Identifier: MIT
// An evaluation's runs: the plan kept for a job array, one run made, Ctrl-C, the progress line.
#include "cmd/sion-route/eval_runs.hpp"

#include "lib/confined.hpp"
#include "lib/fd.hpp"
#include "lib/private_file.hpp"
#include "lib/proto/run_events.hpp"
#include "lib/text.hpp"

#include <fcntl.h>
#include <pthread.h>
#include <unistd.h>

#include <csignal>
#include <cstdio>
#include <filesystem>

namespace sion::route_cmd {

using eval::Outcome;
using eval::RunRecord;

namespace {

// What is kept of a session's and a check's messages for a run's why.
constexpr size_t k_why_max = 300;
// What is read of a session's events and a check's result.
constexpr size_t k_events_max = size_t{64} << 20;

} // namespace

Status save_result(const Plan& plan, const Planned& p, const RunRecord& run) {
    return write_private_file(plan.dir + "/runs/" + run_name(plan, p) + "/result.json",
                              eval::run_json(run, plan.models).dump() + "\n");
}

std::vector<Planned> planned_runs(const Plan& plan) {
    std::vector<Planned> out;
    for (int64_t r = 1; r <= plan.runs; ++r)
        for (size_t c = 0; c < plan.cases.size(); ++c)
            for (size_t m = 0; m < plan.models.size(); ++m)
                out.push_back(Planned{m, c, r});
    return out;
}

Status save_plan(const Plan& plan, std::string_view set_text) {
    Json p = Json::object();
    p.set("profile", std::string_view(plan.profile));
    p.set("route", std::string_view(plan.route));
    p.set("models", Json::strings(plan.models));
    p.set("agents", Json::strings(plan.agents));
    p.set("agents_created", plan.agents_created);
    p.set("runs", plan.runs);
    p.set("budget_tokens", plan.budget);
    p.set("autonomy", std::string_view(plan.autonomy));
    SION_CHECK(write_private_file(plan.dir + "/set.json", set_text));
    return write_private_file(plan.dir + "/plan.json", p.dump() + "\n");
}

Result<Plan> load_plan(const std::string& dir) {
    Plan plan;
    plan.dir = dir;
    SION_TRY(std::string text, read_text(dir + "/plan.json", size_t{1} << 20));
    SION_TRY(Json p, Json::parse(text));
    JsonView v = p.view();
    SION_TRY(std::string_view profile, v.string("profile"));
    SION_TRY(std::string_view route, v.string("route"));
    plan.profile = std::string(profile);
    plan.route = std::string(route);
    SION_TRY(plan.models, v.strings("models"));
    SION_TRY(plan.agents, v.strings("agents"));
    SION_TRY(plan.agents_created, v.integer("agents_created"));
    SION_TRY(plan.runs, v.integer("runs"));
    SION_TRY(plan.budget, v.integer("budget_tokens"));
    SION_TRY(std::string_view autonomy, v.string("autonomy"));
    plan.autonomy = std::string(autonomy);
    if (plan.models.empty() || plan.agents.size() != plan.models.size() || plan.runs < 1)
        return make_error(Exit::data, "'%s/plan.json' is not an evaluation's plan", dir.c_str());
    SION_TRY(plan.cases, eval::read_set(dir + "/set.json"));
    return plan;
}

std::string first_line(std::string_view text) {
    size_t start = text.find_first_not_of(" \n");
    if (start == std::string_view::npos)
        return "";
    std::string line(text.substr(start, text.find('\n', start) - start));
    if (line.size() > k_why_max)
        line = line.substr(0, k_why_max) + "\u2026";
    return line;
}

// "m2-parser-3": where a run's workspace, events and result are, under runs/.
std::string last_line(std::string_view text) {
    size_t end = text.find_last_not_of(" \n");
    if (end == std::string_view::npos)
        return "";
    size_t start = text.rfind('\n', end);
    return first_line(text.substr(start == std::string_view::npos ? 0 : start + 1));
}

std::string run_name(const Plan& plan, const Planned& p) {
    return format("m%zu-%s-%lld", p.model + 1, plan.cases[p.case_index].name.c_str(),
                  static_cast<long long>(p.number));
}

Result<std::string> read_text(const std::string& path, size_t limit) {
    Fd fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC));
    if (!fd)
        return sys_error(Exit::io, errno, "cannot read '%s'", path.c_str());
    return read_all(fd.get(), limit);
}

void Running::add(pid_t pid) {
    std::lock_guard lock(m_mutex);
    m_pids.insert(pid);
    if (m_stopping)
        (void)::kill(-pid, SIGTERM);
}

void Running::remove(pid_t pid) {
    std::lock_guard lock(m_mutex);
    m_pids.erase(pid);
}

void Running::stop() {
    std::lock_guard lock(m_mutex);
    m_stopping = true;
    for (pid_t pid : m_pids)
        (void)::kill(-pid, SIGTERM);
}

bool Running::stopping() {
    std::lock_guard lock(m_mutex);
    return m_stopping;
}

// Runs `spec` to its end, known to `running` meanwhile.
Result<ExitStatus> run_known(ChildSpec spec, Running& running) {
    SION_TRY(Child child, Child::spawn(spec));
    running.add(child.pid());
    pid_t pid = child.pid();
    auto status = child.wait();
    running.remove(pid);
    return status;
}

namespace {

// Whether a session or check was ended from outside, as Ctrl-C and Slurm's scancel end them (TERM,
// INT, or KILL after them), which leaves its run unfinished rather than failed: the signal may
// reach it before this process has taken its own.
bool ended_from_outside(const ExitStatus& status) {
    int signal = status.status - 128;
    return status.status > 128 && (signal == SIGTERM || signal == SIGINT || signal == SIGKILL);
}

// A file of the run's directory, opened for a child's output.
Result<Fd> output_file(const std::string& path) {
    Fd fd(::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0600));
    if (!fd)
        return sys_error(Exit::io, errno, "cannot write '%s'", path.c_str());
    return fd;
}

} // namespace

Result<std::optional<RunRecord>> make_run(const Plan& plan, const Planned& p, Running& running) {
    const eval::Case& c = plan.cases[p.case_index];
    RunRecord run;
    run.model = p.model;
    run.case_name = c.name;
    run.number = p.number;
    std::string at = plan.dir + "/runs/" + run_name(plan, p);
    std::string workspace = at + "/workspace";
    SION_CHECK(ensure_private_directory(at));
    std::error_code ec;
    std::filesystem::create_directory(workspace, ec);
    if (ec)
        return make_error(Exit::io, "cannot make '%s': %s", workspace.c_str(),
                          ec.message().c_str());
    {
        SION_TRY(Confined files, Confined::open(workspace));
        for (const auto& [path, text] : c.files)
            SION_CHECK(files.write(path, text));
    }
    auto started = std::chrono::steady_clock::now();
    ChildSpec session;
    session.argv = {plan.sion_run,
                    "run",
                    plan.profile,
                    plan.agents[p.model],
                    "--task",
                    c.task,
                    "--model",
                    plan.models[p.model],
                    "--workspace",
                    workspace,
                    "--shell",
                    "--autonomy",
                    plan.autonomy,
                    "--budget-tokens",
                    std::to_string(plan.budget),
                    "--json"};
    session.env = own_environment();
    if (!plan.home.empty())
        env_set(session.env, "SION_HOME", plan.home);
    session.in = Stdio::null();
    SION_TRY(Fd events, output_file(at + "/events.jsonl"));
    SION_TRY(Fd errors, output_file(at + "/stderr.txt"));
    session.out = Stdio::from_fd(events.get());
    session.err = Stdio::from_fd(errors.get());
    SION_TRY(ExitStatus ended, run_known(std::move(session), running));
    events.reset();
    errors.reset();
    proto::RunSeen seen =
        proto::read_run_events(read_text(at + "/events.jsonl", k_events_max).value_or(""));
    run.session = seen.session;
    run.input_tokens = seen.usage.input_tokens;
    run.output_tokens = seen.usage.output_tokens;
    if ((running.stopping() || ended_from_outside(ended)) && seen.state.empty())
        return std::optional<RunRecord>();
    std::string said = !seen.why.empty()
                           ? first_line(seen.why)
                           : first_line(read_text(at + "/stderr.txt", k_events_max).value_or(""));
    if (ended.status != 0 && ended.status != 1) {
        // 69: no model answered, the provider down; anything else: the session could not run.
        run.outcome = Outcome::not_made;
        run.why =
            "the session "
            + (seen.state == "failed" ? std::string("failed") : format("exited %d", ended.status))
            + (said.empty() ? "" : ": " + said);
    } else {
        ChildSpec check;
        check.argv = {plan.sion_sandbox,
                      "exec",
                      "--workspace",
                      workspace,
                      "--timeout",
                      std::to_string(c.timeout),
                      "--json",
                      "--",
                      "sh",
                      "-c",
                      c.check};
        check.env = own_environment();
        if (!plan.home.empty())
            env_set(check.env, "SION_HOME", plan.home);
        check.in = Stdio::null();
        SION_TRY(Fd result, output_file(at + "/check.json"));
        SION_TRY(Fd check_errors, output_file(at + "/check-stderr.txt"));
        check.out = Stdio::from_fd(result.get());
        check.err = Stdio::from_fd(check_errors.get());
        SION_TRY(ExitStatus checked, run_known(std::move(check), running));
        result.reset();
        check_errors.reset();
        auto text = read_text(at + "/check.json", k_events_max);
        auto json = text ? Json::parse(*text) : Result<Json>(text.error());
        if ((running.stopping() || ended_from_outside(checked)) && (!json || checked.status != 0))
            return std::optional<RunRecord>();
        if (!json || !json->view().get("exit").is_number()) {
            run.outcome = Outcome::not_made;
            run.why = "the check could not start: "
                      + first_line(read_text(at + "/check-stderr.txt", k_events_max).value_or(""));
        } else {
            JsonView r = json->view();
            int64_t exit = r.integer_or("exit", 1).value_or(1);
            std::string out = last_line(r.string_or("stderr", "").value_or(""));
            if (out.empty())
                out = last_line(r.string_or("stdout", "").value_or(""));
            if (exit == 0) {
                run.outcome = Outcome::pass;
            } else if (r.boolean_or("timed_out", false).value_or(false)) {
                run.outcome = Outcome::fail;
                run.why =
                    format("the check ran out of its %lld s", static_cast<long long>(c.timeout));
            } else if (exit == 126 || exit == 127) {
                run.outcome = Outcome::not_made;
                run.why =
                    format("the check could not start (exit %lld)%s", static_cast<long long>(exit),
                           out.empty() ? "" : (": " + out).c_str());
            } else {
                run.outcome = Outcome::fail;
                run.why = format("the check exited %lld%s", static_cast<long long>(exit),
                                 out.empty() ? "" : (": " + out).c_str());
            }
        }
    }
    run.wall_ms = std::chrono::duration_cast<std::chrono::milliseconds>(
                      std::chrono::steady_clock::now() - started)
                      .count();
    return std::optional<RunRecord>(std::move(run));
}

namespace {

// "2m05s", "48s".
std::string duration_text(int64_t seconds) {
    if (seconds >= 3600)
        return format("%lldh%02lldm", static_cast<long long>(seconds / 3600),
                      static_cast<long long>(seconds % 3600 / 60));
    if (seconds >= 60)
        return format("%lldm%02llds", static_cast<long long>(seconds / 60),
                      static_cast<long long>(seconds % 60));
    return format("%llds", static_cast<long long>(seconds));
}

} // namespace

Progress::Progress(const Plan& plan, size_t total, bool shown)
    : m_plan(plan), m_total(total), m_shown(shown), m_passes(plan.models.size(), 0),
      m_started(std::chrono::steady_clock::now()) {}

void Progress::add(const RunRecord& run) {
    ++m_done;
    if (run.outcome == Outcome::pass)
        ++m_passes[run.model];
    if (!m_shown)
        return;
    auto elapsed = std::chrono::duration_cast<std::chrono::seconds>(std::chrono::steady_clock::now()
                                                                    - m_started)
                       .count();
    int64_t left = static_cast<int64_t>(static_cast<double>(elapsed) / static_cast<double>(m_done)
                                        * static_cast<double>(m_total - m_done));
    std::string line = format("%zu of %zu runs; passes:", m_done, m_total);
    for (size_t i = 0; i < m_plan.models.size(); ++i)
        line += format(" %s %zu%s", m_plan.models[i].c_str(), m_passes[i],
                       i + 1 < m_plan.models.size() ? "," : "");
    line += "; " + duration_text(left) + " left";
    std::fprintf(stderr, "\r\033[K%s", line.c_str());
    std::fflush(stderr);
}

void Progress::finish() {
    if (m_shown && m_done > 0)
        std::fprintf(stderr, "\r\033[K");
}

void emit(const Json& event) {
    std::printf("%s\n", event.dump().c_str());
    std::fflush(stdout);
}

Interrupts::Interrupts(Running& running) : m_running(running) {
    sigemptyset(&m_set);
    sigaddset(&m_set, SIGINT);
    sigaddset(&m_set, SIGTERM);
    // Blocked, and taken by sigtimedwait(); a shell that started this in the background set
    // SIGINT ignored, which would drop it before it was pending.
    (void)std::signal(SIGINT, SIG_DFL);
    (void)std::signal(SIGTERM, SIG_DFL);
    pthread_sigmask(SIG_BLOCK, &m_set, nullptr);
    m_thread = std::thread([this] {
        const struct timespec tick = {0, 100 * 1000 * 1000};
        while (!m_done.load()) {
            if (sigtimedwait(&m_set, nullptr, &tick) > 0) {
                m_signalled = true;
                m_running.stop();
            }
        }
    });
}

Interrupts::~Interrupts() {
    m_done = true;
    m_thread.join();
}

} // namespace sion::route_cmd
