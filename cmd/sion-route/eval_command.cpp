// SPDX-License-Identifier: MIT
// sion-route eval: each of a route's models as one agent on the same cases, each run a real
// sion-run session in a workspace and sandbox of its own, checked in the sandbox afterwards; the
// pass rates with Wilson's intervals, the differences from the first model with Newcombe's, and
// the model that earns first place moved there.
#include "cmd/sion-route/commands.hpp"
#include "cmd/sion-route/eval_runs.hpp"
#include "lib/cli.hpp"
#include "lib/eval.hpp"
#include "lib/fd.hpp"
#include "lib/home.hpp"
#include "lib/log.hpp"
#include "lib/policy.hpp"
#include "lib/private_file.hpp"
#include "lib/programs.hpp"
#include "lib/text.hpp"

#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <csignal>
#include <cstdio>
#include <ctime>
#include <functional>
#include <mutex>
#include <thread>

namespace sion::route_cmd {

namespace {

using eval::Outcome;
using eval::RunRecord;

constexpr int64_t k_most_runs = 1000;
constexpr int64_t k_most_jobs = 256;

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
        "                [--autonomy LEVEL] [--dir DIR] [--plot FILE.svg] [--json]\n"
        "                [--on slurm [--partition P] [--time T]]",
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
            {"jobs", 'j', "N", "runs at once (1); with --on slurm, the array's limit (none)"},
            {"autonomy", 0, "LEVEL", "the sessions' autonomy level (L3: writes run)", nullptr,
             "L0 L1 L2 L3 L4 L5 L6"},
            {"dir", 0, "DIR", "where the runs are kept (./sion-eval-PROFILE-ROUTE-TIME)", nullptr,
             ":directory"},
            {"plot", 0, "FILE.svg", "write the result as a chart too", nullptr, ":file"},
            {"json", 0, nullptr, "print one JSON event a line (schemas/route.event.json)"},
            {"on", 0, "slurm", "run the runs as one Slurm job array (sbatch)", nullptr, "slurm"},
            {"partition", 0, "P", "with --on slurm: the partition (sbatch --partition)"},
            {"time", 0, "T", "with --on slurm: each task's time limit (sbatch --time)"},
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
    auto on = args.value("on");
    if (on && *on != "slurm")
        die(usage_error("unknown --on '" + *on + "': give slurm, or leave it out to run here"));
    SlurmOptions slurm;
    slurm.partition = args.value("partition");
    slurm.time = args.value("time");
    if (!on && (slurm.partition || slurm.time))
        die(usage_error(std::string(slurm.partition ? "--partition" : "--time")
                        + " goes with --on slurm"));
    if (on && args.value("jobs"))
        slurm.at_once = jobs;
    slurm.say_job = !json;
    std::string set_text = or_die(eval::read_set_text(*set_path));
    plan.cases = or_die(eval::parse_set(set_text, *set_path));
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
    for (size_t i = 0; i < plan.models.size(); ++i) {
        Agent agent = or_die(create_agent(state.db, plan.profile));
        plan.agents.push_back(agent.id);
        plan.agents_created = agent.created;
    }
    or_die(save_plan(plan, set_text));
    std::vector<Planned> planned = planned_runs(plan);
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
    std::vector<RunRecord> done;
    // Each run that finished, as it finishes, on one thread at a time.
    auto finished = [&](RunRecord run) {
        progress.add(run);
        if (json) {
            Json event = Json::object();
            event.set("event", "run");
            Json kept = eval::run_json(run, plan.models);
            for (JsonView member : kept.view())
                event.set(member.key(), Json::copy_of(member));
            emit(event);
        }
        done.push_back(std::move(run));
    };
    if (on) {
        Status made = run_on_slurm(plan, slurm, state.db, running, finished);
        progress.finish();
        if (!made)
            die(made.error());
    } else {
        std::mutex done_mutex;
        std::optional<Error> failure;
        std::atomic<size_t> next{0};
        auto worker = [&] {
            for (;;) {
                size_t i = next.fetch_add(1);
                if (i >= planned.size() || running.stopping())
                    return;
                auto made = make_run(plan, planned[i], running);
                if (made && *made)
                    if (Status saved = save_result(plan, planned[i], **made); !saved)
                        made = saved.error();
                std::lock_guard lock(done_mutex);
                if (!made) {
                    if (!failure)
                        failure = made.error();
                    running.stop();
                    return;
                }
                if (*made)
                    finished(std::move(**made));
            }
        };
        std::vector<std::thread> workers;
        for (int64_t j = 0; j < std::min<int64_t>(jobs, static_cast<int64_t>(planned.size())); ++j)
            workers.emplace_back(worker);
        for (std::thread& t : workers)
            t.join();
        progress.finish();
        if (failure)
            die(*failure);
    }
    bool interrupted = interrupts.signalled();

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
