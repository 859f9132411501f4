// SPDX-License-Identifier: MIT
// sion-route eval's runs: the plan, one run made (workspace, session, check), the runs under way
// that Ctrl-C ends, and the progress line. eval_command.cpp makes them on this machine,
// eval_slurm.cpp as a Slurm job array whose tasks each make one (eval-task).
#pragma once

#include "lib/child.hpp"
#include "lib/db.hpp"
#include "lib/eval.hpp"
#include "lib/json.hpp"
#include "lib/result.hpp"

#include <signal.h>
#include <sys/types.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <thread>
#include <vector>

namespace sion::route_cmd {

inline constexpr int64_t k_default_runs = 3;
inline constexpr int64_t k_default_budget = 200000;

// One run to make: the model's index, the case's, and the run's number from 1.
struct Planned {
    size_t model = 0;
    size_t case_index = 0;
    int64_t number = 1;
};

// What an evaluation runs, as DIR/plan.json keeps it for the tasks of a job array.
struct Plan {
    std::string profile;
    std::string route;
    std::vector<std::string> models;
    std::vector<std::string> agents; // one a model
    int64_t agents_created = 0;      // when they were made, ms since the epoch
    std::vector<eval::Case> cases;
    int64_t runs = k_default_runs;
    int64_t budget = k_default_budget;
    std::string autonomy = "L3";
    std::string dir; // absolute
    // Found where the runs are made.
    std::string sion_run;
    std::string sion_sandbox;
    std::string home; // the sessions' $SION_HOME when not this process's: a task's own
};

// Run by run, then case by case, then model by model: what is done when Ctrl-C comes is as even
// as it can be between the models. A job array's task N makes the Nth.
[[nodiscard]] std::vector<Planned> planned_runs(const Plan& plan);

// "m2-parser-3": where a run's workspace, events and result are, under DIR/runs/.
[[nodiscard]] std::string run_name(const Plan& plan, const Planned& p);

// DIR/plan.json and DIR/set.json (the set's text as given); and back, for a task.
[[nodiscard]] Status save_plan(const Plan& plan, std::string_view set_text);
[[nodiscard]] Result<Plan> load_plan(const std::string& dir);

// The first line of `text` that is not blank, cut at 300 characters; and the last, as a test
// runner ends with what failed (Python's AssertionError, pytest's summary).
[[nodiscard]] std::string first_line(std::string_view text);
[[nodiscard]] std::string last_line(std::string_view text);

// A file's text, at most `limit` bytes.
[[nodiscard]] Result<std::string> read_text(const std::string& path, size_t limit);

// The process groups of the sessions and checks running, for Ctrl-C to end.
class Running {
public:
    void add(pid_t pid);
    void remove(pid_t pid);
    // Ends those running (SIGTERM to each group) and those that start from now on.
    void stop();
    [[nodiscard]] bool stopping();

private:
    std::mutex m_mutex;
    std::set<pid_t> m_pids;
    bool m_stopping = false;
};

// Runs `spec` to its end, known to `running` meanwhile.
[[nodiscard]] Result<ExitStatus> run_known(ChildSpec spec, Running& running);

// Makes one run: the workspace, the session, the check. nullopt when Ctrl-C ended it first.
[[nodiscard]] Result<std::optional<eval::RunRecord>> make_run(const Plan& plan, const Planned& p,
                                                              Running& running);

// The run's result.json, written last of its files: a run with one is finished.
[[nodiscard]] Status save_result(const Plan& plan, const Planned& p, const eval::RunRecord& run);

// What a terminal is shown while the runs go on, on one line of stderr.
class Progress {
public:
    Progress(const Plan& plan, size_t total, bool shown);
    void add(const eval::RunRecord& run);
    void finish();

private:
    const Plan& m_plan;
    size_t m_total;
    bool m_shown;
    size_t m_done = 0;
    std::vector<size_t> m_passes;
    std::chrono::steady_clock::time_point m_started;
};

// Ctrl-C (SIGINT) and SIGTERM, taken by a thread of their own while it lives: the runs under way
// are ended, and no more start.
class Interrupts {
public:
    explicit Interrupts(Running& running);
    Interrupts(const Interrupts&) = delete;
    Interrupts& operator=(const Interrupts&) = delete;
    ~Interrupts();

    [[nodiscard]] bool signalled() const { return m_signalled.load(); }

private:
    Running& m_running;
    sigset_t m_set{};
    std::atomic<bool> m_done{false};
    std::atomic<bool> m_signalled{false};
    std::thread m_thread;
};

// One JSON line on stdout, flushed.
void emit(const Json& event);

// --on slurm's: sbatch's --partition and --time when given, and how many tasks may run at once
// (-j; 0 for as many as Slurm likes).
struct SlurmOptions {
    std::optional<std::string> partition;
    std::optional<std::string> time;
    int64_t at_once = 0;
    bool say_job = false; // print a line naming the job once it is submitted
};

// Makes the plan's runs as one Slurm job array, each task `sion-route eval-task DIR N` in a
// $SION_HOME of its own on its node, and follows it with squeue until no task is left; each run's
// result is given to `finished` as it appears, and its session is brought into `home` (the user's
// store). A task Slurm failed, cancelled or timed out is a run not made. When `running` is
// stopped (Ctrl-C), the array is cancelled (scancel) and what finished is kept. Errors: sbatch
// that cannot be run or refuses the job.
[[nodiscard]] Status run_on_slurm(const Plan& plan, const SlurmOptions& options, Db& home,
                                  Running& running,
                                  const std::function<void(eval::RunRecord)>& finished);

} // namespace sion::route_cmd
