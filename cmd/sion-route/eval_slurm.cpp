// SPDX-License-Identifier: MIT
// sion-route eval --on slurm: the runs as one Slurm job array. Each task runs `sion-route
// eval-task DIR N` on whichever node Slurm picks, in a $SION_HOME of its own on that node's disk
// (SQLite's write-ahead log needs shared memory, which a network file system does not give), made
// from what its run needs: the agent and its profile. It writes its session, exported, and then
// its result under DIR, which the nodes share; the keys reach it in the job's environment
// (sbatch --export), never on the shared file system. Here, squeue is followed, each result is
// taken as it appears and its session brought into the user's store, and Ctrl-C cancels the array.
#include "cmd/sion-route/commands.hpp"
#include "cmd/sion-route/eval_runs.hpp"
#include "lib/agents.hpp"
#include "lib/cli.hpp"
#include "lib/db_schema.hpp"
#include "lib/home.hpp"
#include "lib/log.hpp"
#include "lib/policy.hpp"
#include "lib/private_file.hpp"
#include "lib/programs.hpp"
#include "lib/secrets.hpp"
#include "lib/session_export.hpp"
#include "lib/text.hpp"

#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <csignal>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <thread>

namespace sion::route_cmd {

namespace {

using eval::Outcome;
using eval::RunRecord;

// How long sbatch, squeue and scancel may take, each.
constexpr std::chrono::milliseconds k_slurm_command_time{60000};
// How often squeue is asked while tasks remain.
constexpr std::chrono::milliseconds k_follow_every{1000};
// squeue failing this many times in a row (the controller gone) ends the following.
constexpr int k_squeue_failures = 60;
// What is read of an exported session.
constexpr size_t k_session_max = size_t{256} << 20;

// `text` as one word of sh: in single quotes, each ' as '\''.
std::string sh_quoted(std::string_view text) {
    std::string out = "'";
    for (char c : text)
        out += c == '\'' ? std::string("'\\''") : std::string(1, c);
    return out + "'";
}

// The environment sbatch passes to the tasks (--export=ALL): this one, and the credentials kept
// sealed that it does not set, so that a task's providers find their keys as they would here.
std::vector<std::string> job_environment(const std::string& home) {
    std::vector<std::string> env = own_environment();
    auto store = secrets::Store::open(home, false);
    auto names = store ? store->names() : Result<std::vector<std::string>>(store.error());
    if (!names)
        return env;
    for (const std::string& name : *names) {
        if (std::getenv(name.c_str()) != nullptr) // NOLINT(concurrency-mt-unsafe)
            continue;
        auto value = store->get(name);
        if (value && *value)
            env_set(env, name, **value);
    }
    return env;
}

// A Slurm command run to its end, bounded; its output, or an error naming it.
Result<RunResult> slurm_command(std::vector<std::string> argv, std::vector<std::string> env) {
    ChildSpec spec;
    std::string name = argv[0];
    spec.argv = std::move(argv);
    spec.env = std::move(env);
    spec.time_limit = k_slurm_command_time;
    auto r = run(std::move(spec), "");
    if (!r && r.error().exit() == Exit::not_found)
        return make_error(Exit::unavailable,
                          "--on slurm needs Slurm's %s, which is not found: install Slurm's "
                          "commands, or run here with -j",
                          name.c_str());
    return r;
}

// Why a task left no result: what slurmstepd wrote in its output ("*** JOB 12 ON n1 CANCELLED AT
// … DUE TO TIME LIMIT ***"), else the last state squeue showed.
std::string why_not_made(const Plan& plan, size_t index, const std::string& last_state) {
    auto out =
        read_text(format("%s/slurm/task-%zu.out", plan.dir.c_str(), index), size_t{16} << 20);
    std::string said;
    if (out) {
        for (size_t at = 0; at < out->size();) {
            size_t nl = out->find('\n', at);
            std::string line =
                out->substr(at, nl == std::string::npos ? std::string::npos : nl - at);
            at = nl == std::string::npos ? out->size() : nl + 1;
            // "slurmstepd: error: …", or "slurmstepd-NODE: error: …" as newer Slurms write.
            size_t e = line.find(": error: ");
            if (line.rfind("slurmstepd", 0) == 0 && e != std::string::npos)
                said = first_line(line.substr(e + 9));
            else if (!line.empty() && said.empty() && line.find("sion-route") == 0)
                said = first_line(line);
        }
    }
    if (!said.empty())
        return "Slurm's task ended with no result: " + said;
    return "Slurm's task ended with no result"
           + (last_state.empty() ? std::string() : " (last seen " + last_state + ")");
}

// The array's tasks still in squeue, by index, with their state; nullopt when squeue failed.
std::optional<std::map<size_t, std::string>> tasks_left(const std::string& job) {
    auto r = slurm_command({"squeue", "-h", "-r", "-j", job, "-o", "%K %T"}, own_environment());
    if (!r)
        return std::nullopt;
    std::map<size_t, std::string> left;
    if (r->status != 0)
        return r->err.find("Invalid job id") != std::string::npos ? std::optional(left)
                                                                  : std::nullopt;
    for (size_t at = 0; at < r->out.size();) {
        size_t nl = r->out.find('\n', at);
        std::string line = r->out.substr(at, nl == std::string::npos ? std::string::npos : nl - at);
        at = nl == std::string::npos ? r->out.size() : nl + 1;
        size_t space = line.find(' ');
        if (space == std::string::npos)
            continue;
        auto index = parse_number(line.substr(0, space), 0, int64_t{1} << 30);
        if (index)
            left[static_cast<size_t>(*index)] = line.substr(space + 1);
    }
    return left;
}

// A task's run in its own store (plan.home): the agent and its profile put there, the run made,
// its session exported and then its result written under DIR. false when SIGTERM ended it first.
Result<bool> make_task_run(const Plan& plan, const Planned& p) {
    {
        SION_TRY(Db db, open_state(plan.home));
        SION_TRY(int autonomy, parse_autonomy(plan.autonomy));
        SION_TRY(Profile profile,
                 ensure_profile(db, plan.profile, {plan.models[p.model]}, autonomy));
        (void)profile;
        SION_CHECK(add_agent(db, Agent{plan.agents[p.model], plan.profile, plan.agents_created}));
    }
    Running running;
    Interrupts interrupts(running);
    SION_TRY(std::optional<RunRecord> made, make_run(plan, p, running));
    if (!made)
        return false;
    if (!made->session.empty()) {
        SION_TRY(Db db, open_state(plan.home));
        SION_TRY(Json exported, export_session(db, made->session));
        SION_CHECK(write_private_file(plan.dir + "/runs/" + run_name(plan, p) + "/session.json",
                                      exported.dump() + "\n"));
    }
    SION_CHECK(save_result(plan, p, *made));
    return true;
}

} // namespace

Status run_on_slurm(const Plan& plan, const SlurmOptions& options, Db& home, Running& running,
                    const std::function<void(eval::RunRecord)>& finished) {
    std::vector<Planned> planned = planned_runs(plan);
    std::string slurm_dir = plan.dir + "/slurm";
    SION_CHECK(ensure_private_directory(slurm_dir));
    SION_TRY(std::string self, find_program("sion-route"));
    std::string script = "#!/bin/sh\n# sion-route eval --on slurm: array task N makes run N of "
                         "the evaluation (sion-route(1)).\nexec "
                         + sh_quoted(self) + " eval-task " + sh_quoted(plan.dir)
                         + " \"$SLURM_ARRAY_TASK_ID\"\n";
    SION_CHECK(write_private_file(slurm_dir + "/task.sh", script));
    if (::chmod((slurm_dir + "/task.sh").c_str(), 0700) != 0)
        return sys_error(Exit::os, errno, "cannot make '%s/task.sh' runnable", slurm_dir.c_str());
    std::string array = format("0-%zu", planned.size() - 1);
    if (options.at_once > 0)
        array += format("%%%lld", static_cast<long long>(options.at_once));
    std::vector<std::string> sbatch = {"sbatch",
                                       "--parsable",
                                       "--job-name=sion-eval-" + plan.route,
                                       "--array=" + array,
                                       "--output=" + slurm_dir + "/task-%a.out",
                                       "--chdir=" + plan.dir,
                                       "--export=ALL"};
    if (options.partition)
        sbatch.push_back("--partition=" + *options.partition);
    if (options.time)
        sbatch.push_back("--time=" + *options.time);
    sbatch.push_back(slurm_dir + "/task.sh");
    SION_TRY(std::string home_dir, resolve_home());
    SION_TRY(RunResult submitted, slurm_command(sbatch, job_environment(home_dir)));
    if (submitted.status != 0)
        return make_error(Exit::unavailable, "sbatch refused the job: %s",
                          first_line(submitted.err).c_str());
    std::string job = first_line(submitted.out);
    job = job.substr(0, job.find(';'));
    if (job.empty() || job.find_first_not_of("0123456789") != std::string::npos)
        return make_error(Exit::unavailable, "sbatch answered no job id: '%s'",
                          first_line(submitted.out).c_str());
    SION_CHECK(write_private_file(slurm_dir + "/job", job + "\n"));
    if (options.say_job) {
        std::printf("submitted Slurm job %s: an array of %zu tasks, one a run\n", job.c_str(),
                    planned.size());
        std::fflush(stdout);
    }

    std::vector<bool> seen(planned.size(), false);
    std::map<size_t, std::string> last_state;
    // Takes each result that appeared: the run, and its session brought home.
    auto gather = [&]() -> Status {
        for (size_t i = 0; i < planned.size(); ++i) {
            if (seen[i])
                continue;
            std::string at = plan.dir + "/runs/" + run_name(plan, planned[i]);
            if (::access((at + "/result.json").c_str(), F_OK) != 0)
                continue;
            seen[i] = true;
            auto text = read_text(at + "/result.json", size_t{1} << 20);
            auto json = text ? Json::parse(*text) : Result<Json>(text.error());
            auto run = json ? eval::run_from_json(json->view(), plan.models)
                            : Result<RunRecord>(json.error());
            if (!run) {
                RunRecord broken;
                broken.model = planned[i].model;
                broken.case_name = plan.cases[planned[i].case_index].name;
                broken.number = planned[i].number;
                broken.why = "its result cannot be read: " + run.error().message();
                finished(std::move(broken));
                continue;
            }
            if (!run->session.empty()) {
                auto exported = read_text(at + "/session.json", k_session_max);
                auto parsed = exported ? Json::parse(*exported) : Result<Json>(exported.error());
                auto imported =
                    parsed ? import_session(home, parsed->view()) : Result<bool>(parsed.error());
                if (!imported)
                    log_error("the session %s of %s is not brought home: %s", run->session.c_str(),
                              run_name(plan, planned[i]).c_str(),
                              imported.error().message().c_str());
            }
            finished(std::move(*run));
        }
        return {};
    };
    bool cancelled = false;
    int failures = 0;
    for (;;) {
        if (running.stopping() && !cancelled) {
            auto r = slurm_command({"scancel", job}, own_environment());
            if (!r || r->status != 0)
                log_error("scancel %s failed: %s", job.c_str(),
                          r ? first_line(r->err).c_str() : r.error().message().c_str());
            cancelled = true;
        }
        SION_CHECK(gather());
        auto left = tasks_left(job);
        if (!left) {
            if (++failures >= k_squeue_failures)
                return make_error(Exit::unavailable,
                                  "squeue has failed %d times in a row: job %s is left to Slurm",
                                  failures, job.c_str());
        } else {
            failures = 0;
            if (left->empty())
                break;
            for (const auto& [index, state] : *left)
                last_state[index] = state;
        }
        auto until = std::chrono::steady_clock::now() + k_follow_every;
        bool stopping = running.stopping();
        while (std::chrono::steady_clock::now() < until && running.stopping() == stopping)
            std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
    SION_CHECK(gather());
    if (cancelled)
        return {};
    // A task that left no result did not make its run: Slurm failed it, cancelled it or timed it
    // out.
    for (size_t i = 0; i < planned.size(); ++i) {
        if (seen[i])
            continue;
        RunRecord run;
        run.model = planned[i].model;
        run.case_name = plan.cases[planned[i].case_index].name;
        run.number = planned[i].number;
        run.outcome = Outcome::not_made;
        run.why = why_not_made(plan, i, last_state[i]);
        SION_CHECK(save_result(plan, planned[i], run));
        finished(std::move(run));
    }
    return {};
}

int eval_task_command(int argc, const char* const* argv) {
    const CommandSpec spec{
        "sion-route eval-task",
        "sion-route eval-task DIR N",
        "Make run N of the evaluation in DIR, in a $SION_HOME of its own under $TMPDIR: a task\n"
        "of the job array sion-route eval --on slurm submits.",
        {},
    };
    Args args = parse_args_or_exit(spec, argc, argv);
    check_operands(args, 2, 2, "give the evaluation's directory and the run: DIR N");
    Plan plan = or_die(load_plan(args.operands()[0]));
    std::vector<Planned> planned = planned_runs(plan);
    auto index = parse_number(args.operands()[1], 0, static_cast<int64_t>(planned.size()) - 1);
    if (!index)
        die(usage_error(format("invalid run '%s': give 0 to %zu", args.operands()[1].c_str(),
                               planned.size() - 1)));
    const Planned& p = planned[static_cast<size_t>(*index)];
    plan.sion_run = or_die(find_program("sion-run"));
    plan.sion_sandbox = or_die(find_program("sion-sandbox"));
    const char* tmp = std::getenv("TMPDIR"); // NOLINT(concurrency-mt-unsafe)
    std::string pattern =
        std::string(tmp != nullptr && *tmp != '\0' ? tmp : "/tmp") + "/sion-eval-XXXXXX";
    if (::mkdtemp(pattern.data()) == nullptr)
        die(sys_error(Exit::os, errno, "cannot make a $SION_HOME in '%s'", pattern.c_str()));
    plan.home = pattern;
    auto made = make_task_run(plan, p);
    std::error_code ec;
    std::filesystem::remove_all(plan.home, ec); // the run's own store, whatever happened
    if (!made)
        die(made.error());
    return *made ? 0 : 128 + SIGTERM;
}

} // namespace sion::route_cmd
