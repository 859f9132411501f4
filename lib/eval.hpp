// SPDX-License-Identifier: MIT
// An evaluation of a route's models (seed 001, "A model for each task"; sion-route(1), eval): the
// set of cases it runs (schemas/eval-set.schema.json), what each run came to, the pass rates with
// their Wilson intervals and the differences from the route's first model with Newcombe's, which
// model earns first place, and the report as text with bars and as an SVG chart. The runs
// themselves are sion-route's; everything here is pure, so that it is tested without one.
#pragma once

#include "lib/interval.hpp"
#include "lib/json.hpp"
#include "lib/result.hpp"

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace sion::eval {

// The most a set's file may be, and a check's time limit when its case gives none.
inline constexpr size_t k_set_max = size_t{64} << 20;
inline constexpr int64_t k_check_timeout = 120;

// A case: a task, the files of its workspace, and a check, a command run by `sh -c` in the
// sandbox in that workspace after the session; exit 0 passes.
struct Case {
    std::string name;
    std::string task;
    std::map<std::string, std::string> files; // path relative to the workspace -> its text
    std::string check;
    int64_t timeout = k_check_timeout; // the check's seconds
};

// Parses a set: {"cases": [{"name", "task", "files", "check", "timeout"}, …]}. `where` names it in
// messages. Exit::data, with where and which case: "set 'fixes.json': case 2: member 'check' is
// missing", "… case 'parser': file '../x' is not a path within the workspace", "… two cases are
// named 'parser'", "set 'fixes.json' has no cases".
[[nodiscard]] Result<std::vector<Case>> parse_set(std::string_view text, std::string_view where);
// A set's file as text, at most k_set_max bytes: Exit::no_input when it is not there
// ("cannot read set 'fixes.json': No such file or directory"). read_set() parses it as well.
[[nodiscard]] Result<std::string> read_set_text(const std::string& path);
[[nodiscard]] Result<std::vector<Case>> read_set(const std::string& path);

// What a run came to: it passed or failed its check, or it could not be made (a provider down, a
// check that could not start), which counts in no rate.
enum class Outcome { pass, fail, not_made };

[[nodiscard]] std::string_view outcome_name(Outcome outcome); // "pass", "fail", "not made"

struct RunRecord {
    size_t model = 0; // the model's index in the route, from 0
    std::string case_name;
    int64_t number = 1; // the run of the case, from 1
    Outcome outcome = Outcome::not_made;
    std::string why;     // for a fail or a run not made: what happened, one line
    std::string session; // the session's id, when one was made
    int64_t input_tokens = 0;
    int64_t output_tokens = 0;
    int64_t wall_ms = 0;
};

// A run as its result file and the --json event keep it (schemas/route.event.json, "run"), and
// back; `models` names them.
[[nodiscard]] Json run_json(const RunRecord& run, const std::vector<std::string>& models);
[[nodiscard]] Result<RunRecord> run_from_json(JsonView v, const std::vector<std::string>& models);

// A model's runs added up, with its rate and its difference from the first model.
struct Tally {
    std::string model;
    int64_t passes = 0;
    int64_t runs = 0;     // made: passes and fails
    int64_t not_made = 0; // not counted in the rate
    std::optional<Rate> rate;
    std::optional<Difference> difference; // from the first model; none for the first
};

[[nodiscard]] std::vector<Tally> tally(const std::vector<std::string>& models,
                                       const std::vector<RunRecord>& runs);

// The model that earns first place: among those whose difference from the first has its lower end
// above zero, the one whose lower end is highest (the first of them on a tie); nullopt when none.
[[nodiscard]] std::optional<size_t> earns_first_place(const std::vector<Tally>& tallies);

// The route's models with the one at `index` moved first, the others in their order.
[[nodiscard]] std::vector<std::string> moved_first(const std::vector<std::string>& models,
                                                   size_t index);

// An interval drawn on a line `width` characters wide for the scale [low, high]: '[' and ']' at its
// ends, '*' at the value, '-' between, '|' at zero when the scale holds it, spaces elsewhere.
[[nodiscard]] std::string bar(double value, Interval interval, double low, double high,
                              size_t width);

// The report as people read it: each model's passes, rate and Wilson interval with a bar on the
// scale 0 to 100%; each other model's difference from the first with Newcombe's interval and a bar
// on the scale -100% to 100%; the runs not made, counted by model. No trailing newline.
[[nodiscard]] std::string report_text(const std::vector<Tally>& tallies);

// The same as an SVG chart: a row a model, its interval as a line and its rate as a dot on a
// 0-100% axis; beside, the differences on a -100% to 100% axis with zero marked.
[[nodiscard]] std::string report_svg(const std::vector<Tally>& tallies, std::string_view title);

// 0.6833 as "68.3%", -0.004 as "-0.4%"; with `sign`, a plus before a positive value.
[[nodiscard]] std::string percent(double value, bool sign = false);

} // namespace sion::eval
