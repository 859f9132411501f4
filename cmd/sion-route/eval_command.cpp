// SPDX-License-Identifier: MIT
// sion-route eval: each of a route's models as one agent on the same cases, each run a real
// sion-run session in a workspace and sandbox of its own, checked in the sandbox afterwards; the
// pass rates with Wilson's intervals, the differences from the first model with Newcombe's, and
// the model that earns first place moved there.
#include "cmd/sion-route/commands.hpp"
#include "lib/child.hpp"
#include "lib/cli.hpp"
#include "lib/confined.hpp"
#include "lib/eval.hpp"
#include "lib/fd.hpp"
#include "lib/home.hpp"
#include "lib/log.hpp"
#include "lib/policy.hpp"
#include "lib/private_file.hpp"
#include "lib/programs.hpp"
#include "lib/text.hpp"

#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <ctime>
#include <filesystem>
#include <mutex>
#include <set>
#include <thread>

namespace sion::route_cmd {

namespace {

using eval::Outcome;
using eval::RunRecord;

constexpr int64_t k_default_runs = 3;
constexpr int64_t k_default_budget = 200000;
constexpr int64_t k_most_runs = 1000;
constexpr int64_t k_most_jobs = 256;
// What is kept of a session's and a check's messages for a run's why.
constexpr size_t k_why_max = 300;
// What is read of a session's events and a check's result.
constexpr size_t k_events_max = size_t{64} << 20;

// One run to make: the model's index, the case's, and the run's number from 1.
struct Planned {
    size_t model = 0;
    size_t case_index = 0;
    int64_t number = 1;
};

struct Plan {
    std::string profile;
    std::string route;
    std::vector<std::string> models;
    std::vector<std::string> agents; // one a model
    std::vector<eval::Case> cases;
    int64_t runs = k_default_runs;
    int64_t budget = k_default_budget;
    std::string autonomy = "L3";
    std::string dir; // absolute
    std::string sion_run;
    std::string sion_sandbox;
};

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

// The process groups of the sessions and checks running, for Ctrl-C to end.
class Running {
public:
    void add(pid_t pid) {
        std::lock_guard lock(m_mutex);
        m_pids.insert(pid);
        if (m_stopping)
            (void)::kill(-pid, SIGTERM);
    }

    void remove(pid_t pid) {
        std::lock_guard lock(m_mutex);
        m_pids.erase(pid);
    }

    void stop() {
        std::lock_guard lock(m_mutex);
        m_stopping = true;
        for (pid_t pid : m_pids)
            (void)::kill(-pid, SIGTERM);
    }

    [[nodiscard]] bool stopping() {
        std::lock_guard lock(m_mutex);
        return m_stopping;
    }

private:
    std::mutex m_mutex;
    std::set<pid_t> m_pids;
    bool m_stopping = false;
};

// Runs `spec` to its end, known to `running` meanwhile.
Result<ExitStatus> run_known(ChildSpec spec, Running& running) {
    SION_TRY(Child child, Child::spawn(spec));
    running.add(child.pid());
    pid_t pid = child.pid();
    auto status = child.wait();
    running.remove(pid);
    return status;
}

// The session's id and what it used, from its events; the end's state when it came to one.
struct SessionSeen {
    std::string id;
    std::string state;
    std::string why; // the end's, when it says one
    int64_t input_tokens = 0;
    int64_t output_tokens = 0;
};

SessionSeen read_events(const std::string& path) {
    SessionSeen seen;
    auto text = read_text(path, k_events_max);
    if (!text)
        return seen;
    for (size_t at = 0; at < text->size();) {
        size_t nl = text->find('\n', at);
        std::string_view line = std::string_view(*text).substr(
            at, nl == std::string::npos ? std::string::npos : nl - at);
        at = nl == std::string::npos ? text->size() : nl + 1;
        auto event = Json::parse(line);
        if (!event)
            continue;
        JsonView v = event->view();
        std::string_view kind = v.string_or("event", "").value_or("");
        if (kind == "session")
            seen.id = std::string(v.string_or("session", "").value_or(""));
        if (kind == "end") {
            seen.state = std::string(v.string_or("state", "").value_or(""));
            seen.why = first_line(v.string_or("why", "").value_or(""));
            seen.input_tokens = v.get("usage").integer_or("input_tokens", 0).value_or(0);
            seen.output_tokens = v.get("usage").integer_or("output_tokens", 0).value_or(0);
        }
    }
    return seen;
}

// A file of the run's directory, opened for a child's output.
Result<Fd> output_file(const std::string& path) {
    Fd fd(::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0600));
    if (!fd)
        return sys_error(Exit::io, errno, "cannot write '%s'", path.c_str());
    return fd;
}

// Makes one run: the workspace, the session, the check. nullopt when Ctrl-C ended it first.
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
    session.in = Stdio::null();
    SION_TRY(Fd events, output_file(at + "/events.jsonl"));
    SION_TRY(Fd errors, output_file(at + "/stderr.txt"));
    session.out = Stdio::from_fd(events.get());
    session.err = Stdio::from_fd(errors.get());
    SION_TRY(ExitStatus ended, run_known(std::move(session), running));
    events.reset();
    errors.reset();
    SessionSeen seen = read_events(at + "/events.jsonl");
    run.session = seen.id;
    run.input_tokens = seen.input_tokens;
    run.output_tokens = seen.output_tokens;
    if (running.stopping() && seen.state.empty())
        return std::optional<RunRecord>();
    std::string said = !seen.why.empty()
                           ? seen.why
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
        if (running.stopping() && (!json || checked.status != 0))
            return std::optional<RunRecord>();
        if (!json || !json->view().get("exit").is_number()) {
            run.outcome = Outcome::not_made;
            run.why = "the check could not start: "
                      + first_line(read_text(at + "/check-stderr.txt", k_events_max).value_or(""));
        } else {
            JsonView r = json->view();
            int64_t exit = r.integer_or("exit", 1).value_or(1);
            std::string out = first_line(r.string_or("stderr", "").value_or(""));
            if (out.empty())
                out = first_line(r.string_or("stdout", "").value_or(""));
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
    SION_CHECK(
        write_private_file(at + "/result.json", eval::run_json(run, plan.models).dump() + "\n"));
    return std::optional<RunRecord>(std::move(run));
}

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

// What a terminal is shown while the runs go on, on one line of stderr.
class Progress {
public:
    Progress(const Plan& plan, size_t total, bool shown)
        : m_plan(plan), m_total(total), m_shown(shown), m_passes(plan.models.size(), 0),
          m_started(std::chrono::steady_clock::now()) {}

    void add(const RunRecord& run) {
        ++m_done;
        if (run.outcome == Outcome::pass)
            ++m_passes[run.model];
        if (!m_shown)
            return;
        auto elapsed = std::chrono::duration_cast<std::chrono::seconds>(
                           std::chrono::steady_clock::now() - m_started)
                           .count();
        int64_t left =
            static_cast<int64_t>(static_cast<double>(elapsed) / static_cast<double>(m_done)
                                 * static_cast<double>(m_total - m_done));
        std::string line = format("%zu of %zu runs; passes:", m_done, m_total);
        for (size_t i = 0; i < m_plan.models.size(); ++i)
            line += format(" %s %zu%s", m_plan.models[i].c_str(), m_passes[i],
                           i + 1 < m_plan.models.size() ? "," : "");
        line += "; " + duration_text(left) + " left";
        std::fprintf(stderr, "\r\033[K%s", line.c_str());
        std::fflush(stderr);
    }

    void finish() {
        if (m_shown && m_done > 0)
            std::fprintf(stderr, "\r\033[K");
    }

private:
    const Plan& m_plan;
    size_t m_total;
    bool m_shown;
    size_t m_done = 0;
    std::vector<size_t> m_passes;
    std::chrono::steady_clock::time_point m_started;
};

void emit(const Json& event) {
    std::printf("%s\n", event.dump().c_str());
    std::fflush(stdout);
}

// Ctrl-C (SIGINT) and SIGTERM, taken by a thread of their own: the runs under way are ended, and
// no more start.
class Interrupts {
public:
    explicit Interrupts(Running& running) : m_running(running) {
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

    Interrupts(const Interrupts&) = delete;
    Interrupts& operator=(const Interrupts&) = delete;

    ~Interrupts() {
        m_done = true;
        m_thread.join();
    }

    [[nodiscard]] bool signalled() const { return m_signalled.load(); }

private:
    Running& m_running;
    sigset_t m_set{};
    std::atomic<bool> m_done{false};
    std::atomic<bool> m_signalled{false};
    std::thread m_thread;
};

std::string default_dir(const std::string& profile, const std::string& route) {
    std::time_t now = std::time(nullptr);
    struct tm local = {};
    char stamp[32] = "0";
    if (::localtime_r(&now, &local) != nullptr)
        (void)std::strftime(stamp, sizeof stamp, "%Y%m%d-%H%M%S", &local);
    return "sion-eval-" + profile + "-" + route + "-" + stamp;
}

int64_t number_option(const Args& args, const char* name, int64_t fallback, int64_t least,
                      int64_t most, const char* what) {
    auto given = args.value(name);
    if (!given)
        return fallback;
    auto n = parse_number(*given, least, most);
    if (!n)
        die(usage_error(format("invalid --%s '%s': give %s, %lld to %lld", name, given->c_str(),
                               what, static_cast<long long>(least), static_cast<long long>(most))));
    return *n;
}

} // namespace

int eval_command(int argc, const char* const* argv) {
    const CommandSpec spec{
        "sion-route eval",
        "sion-route eval PROFILE ROUTE --set CASES.json [--runs N] [--budget-tokens T] [-j N]\n"
        "                [--autonomy LEVEL] [--dir DIR] [--plot FILE.svg] [--json]",
        "Run each of ROUTE's models as one agent on the cases of CASES.json, each case --runs\n"
        "times on --budget-tokens a run, each run a sion-run session in a workspace and sandbox\n"
        "of its own whose check runs after it in the sandbox. Report each model's pass rate with\n"
        "its 95% Wilson interval and its difference from the route's first model with\n"
        "Newcombe's; a model whose difference has its lower end above zero earns first place in\n"
        "the route.",
        {
            {"set", 0, "CASES.json", "the cases (schemas/eval-set.schema.json)", nullptr, ":file"},
            {"runs", 0, "N", "runs of each case by each model (3)"},
            {"budget-tokens", 0, "T", "tokens each run may use (200000)"},
            {"jobs", 'j', "N", "runs at once on this machine (1)"},
            {"autonomy", 0, "LEVEL", "the sessions' autonomy level (L3: writes run)", nullptr,
             "L0 L1 L2 L3 L4 L5 L6"},
            {"dir", 0, "DIR", "where the runs are kept (./sion-eval-PROFILE-ROUTE-TIME)", nullptr,
             ":directory"},
            {"plot", 0, "FILE.svg", "write the result as a chart too", nullptr, ":file"},
            {"json", 0, nullptr, "print one JSON event a line (schemas/route.event.json)"},
        },
        false,
        {":profile", ":route"},
    };
    Args args = parse_args_or_exit(spec, argc, argv);
    check_operands(args, 2, 2,
                   "give a profile and a route: sion-route eval PROFILE ROUTE --set CASES.json");
    auto set_path = args.value("set");
    if (!set_path)
        die(usage_error("give the cases: --set CASES.json"));
    Plan plan;
    plan.profile = args.operands()[0];
    plan.route = args.operands()[1];
    or_die(check_profile_name(plan.profile));
    or_die(routes::check_route_name(plan.route));
    plan.runs = number_option(args, "runs", k_default_runs, 1, k_most_runs, "a number of runs");
    plan.budget = number_option(args, "budget-tokens", k_default_budget, 1, int64_t{1} << 40,
                                "a number of tokens");
    int64_t jobs = number_option(args, "jobs", 1, 1, k_most_jobs, "a number of runs at once");
    if (auto level = args.value("autonomy"))
        plan.autonomy = autonomy_name(or_die(parse_autonomy(*level)));
    bool json = args.has("json");
    plan.cases = or_die(eval::read_set(*set_path));
    State state = open_profile(plan.profile);
    std::vector<routes::Route> all = or_die(routes::list_routes(state.db, plan.profile));
    const routes::Route* route = nullptr;
    for (const routes::Route& r : all)
        if (r.name == plan.route)
            route = &r;
    if (route == nullptr)
        die(make_error(Exit::no, "no route '%s' in profile '%s' (sion-route list %s)",
                       plan.route.c_str(), plan.profile.c_str(), plan.profile.c_str()));
    plan.models = route->models;
    plan.sion_run = or_die(find_program("sion-run"));
    plan.sion_sandbox = or_die(find_program("sion-sandbox"));
    std::string dir = args.value("dir").value_or(default_dir(plan.profile, plan.route));
    plan.dir = or_die(resolve_path(dir));
    if (or_die(paths_overlap(plan.dir, state.home)))
        die(make_error(Exit::usage,
                       "--dir '%s' is within $SION_HOME ('%s'): give a directory "
                       "outside it",
                       dir.c_str(), state.home.c_str()));
    if (::mkdir(plan.dir.c_str(), 0700) != 0)
        die(sys_error(errno == EEXIST ? Exit::usage : Exit::io, errno,
                      errno == EEXIST ? "cannot make '%s' for the runs: give another --dir"
                                      : "cannot make '%s' for the runs",
                      dir.c_str()));
    or_die(ensure_private_directory(plan.dir + "/runs"));
    for (size_t i = 0; i < plan.models.size(); ++i)
        plan.agents.push_back(or_die(create_agent(state.db, plan.profile)).id);

    // Run by run, then case by case, then model by model: what is done when Ctrl-C comes is as
    // even as it can be between the models.
    std::vector<Planned> planned;
    for (int64_t r = 1; r <= plan.runs; ++r)
        for (size_t c = 0; c < plan.cases.size(); ++c)
            for (size_t m = 0; m < plan.models.size(); ++m)
                planned.push_back(Planned{m, c, r});
    if (json) {
        Json start = Json::object();
        start.set("event", "eval");
        start.set("profile", std::string_view(plan.profile));
        start.set("route", std::string_view(plan.route));
        start.set("models", Json::strings(plan.models));
        std::vector<std::string> names;
        for (const eval::Case& c : plan.cases)
            names.push_back(c.name);
        start.set("cases", Json::strings(names));
        start.set("runs", plan.runs);
        start.set("dir", std::string_view(plan.dir));
        emit(start);
    } else {
        std::printf("evaluating route %s of %s: %zu models, %zu cases, %lld run%s each: %zu "
                    "sessions in %s\n",
                    plan.route.c_str(), plan.profile.c_str(), plan.models.size(), plan.cases.size(),
                    static_cast<long long>(plan.runs), plan.runs == 1 ? "" : "s", planned.size(),
                    plan.dir.c_str());
        std::fflush(stdout);
    }

    Running running;
    Interrupts interrupts(running);
    Progress progress(plan, planned.size(), !json && ::isatty(STDERR_FILENO) == 1);
    std::mutex done_mutex;
    std::vector<RunRecord> done;
    std::optional<Error> failure;
    std::atomic<size_t> next{0};
    auto worker = [&] {
        for (;;) {
            size_t i = next.fetch_add(1);
            if (i >= planned.size() || running.stopping())
                return;
            auto made = make_run(plan, planned[i], running);
            std::lock_guard lock(done_mutex);
            if (!made) {
                if (!failure)
                    failure = made.error();
                running.stop();
                return;
            }
            if (!*made)
                continue;
            progress.add(**made);
            if (json) {
                Json event = Json::object();
                event.set("event", "run");
                Json kept = eval::run_json(**made, plan.models);
                for (JsonView member : kept.view())
                    event.set(member.key(), Json::copy_of(member));
                emit(event);
            }
            done.push_back(std::move(**made));
        }
    };
    std::vector<std::thread> workers;
    for (int64_t j = 0; j < std::min<int64_t>(jobs, static_cast<int64_t>(planned.size())); ++j)
        workers.emplace_back(worker);
    for (std::thread& t : workers)
        t.join();
    progress.finish();
    bool interrupted = interrupts.signalled();
    if (failure)
        die(*failure);

    std::vector<eval::Tally> tallies = eval::tally(plan.models, done);
    // The model that earns first place; none (the route's size) when no model does.
    size_t first = interrupted ? plan.models.size()
                               : eval::earns_first_place(tallies).value_or(plan.models.size());
    bool promoted = first < plan.models.size();
    std::vector<std::string> models = plan.models;
    if (promoted) {
        routes::Route moved = *route;
        moved.models = eval::moved_first(plan.models, first);
        or_die(routes::set_route(state.db, moved));
        models = moved.models;
    }
    if (auto plot = args.value("plot"))
        or_die(write_private_file(
            *plot, eval::report_svg(tallies, "route " + plan.route + " of " + plan.profile)));
    std::string verdict;
    if (interrupted)
        verdict = format("interrupted: %zu of %zu runs finished; the route's order stays",
                         done.size(), planned.size());
    else if (promoted)
        verdict = format("%s earns first place in route %s: its difference from %s is %s (%s, "
                         "%s), above zero; the route's models are now %s",
                         plan.models[first].c_str(), plan.route.c_str(), plan.models[0].c_str(),
                         eval::percent(tallies[first].difference->difference, true).c_str(),
                         eval::percent(tallies[first].difference->interval.low, true).c_str(),
                         eval::percent(tallies[first].difference->interval.high, true).c_str(),
                         [&] {
                             std::string list;
                             for (const std::string& m : models)
                                 list += (list.empty() ? "" : ", ") + m;
                             return list;
                         }()
                             .c_str());
    else if (plan.models.size() > 1)
        verdict = format("no model earns first place: none's difference from %s has its lower "
                         "end above zero; the route's order stays",
                         plan.models[0].c_str());
    if (json) {
        for (const eval::Tally& t : tallies) {
            Json e = Json::object();
            e.set("event", "model");
            e.set("model", std::string_view(t.model));
            e.set("passes", t.passes);
            e.set("runs", t.runs);
            e.set("not_made", t.not_made);
            if (t.rate) {
                e.set("rate", Json::number(t.rate->rate));
                e.set("low", Json::number(t.rate->interval.low));
                e.set("high", Json::number(t.rate->interval.high));
            }
            if (t.difference) {
                Json d = Json::object();
                d.set("difference", Json::number(t.difference->difference));
                d.set("low", Json::number(t.difference->interval.low));
                d.set("high", Json::number(t.difference->interval.high));
                e.set("from_first", std::move(d));
            }
            emit(e);
        }
        Json end = Json::object();
        end.set("event", "end");
        end.set("finished", static_cast<int64_t>(done.size()));
        end.set("planned", static_cast<int64_t>(planned.size()));
        end.set("interrupted", interrupted);
        end.set("first_place", promoted ? Json::string(plan.models[first]) : Json::null());
        end.set("models", Json::strings(models));
        emit(end);
    } else {
        std::printf("\n%s\n", eval::report_text(tallies).c_str());
        if (!verdict.empty())
            std::printf("\n%s\n", verdict.c_str());
    }
    return interrupted ? 128 + SIGINT : 0;
}

} // namespace sion::route_cmd
