// SPDX-License-Identifier: MIT
// A profile's routes (seed 001, "A model for each task"), as sion.db keeps them, and how a task is
// sent to one: the first route whose --when holds, else the route the sorter names. The sorter's
// model call is the caller's (sion-route); what it is sent and how its answer is read are here, so
// that both are tested without one. And the log of routed sessions,
// $SION_HOME/agents/routes/<profile>.jsonl, which sion-run appends to and `routes show` sums.
#pragma once

#include "lib/db.hpp"
#include "lib/json.hpp"
#include "lib/result.hpp"

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace sion::routes {

// A task is long past this many characters unless the route says otherwise (--longer-than).
inline constexpr int64_t k_long_task = 40000;

// What sends a task to a route without asking the sorter.
enum class When { about, pictures, long_task };

struct Route {
    std::string profile;
    std::string name;
    std::vector<std::string> models; // "provider:model[#effort]", first first
    When when = When::about;
    std::string about;                 // When::about: what tasks it is for, in words
    int64_t longer_than = k_long_task; // When::long_task: past how many characters
};

// A route's name, as a profile's (lib/agents.hpp), and not "none", which is the sorter's answer
// for no route. Exit::usage: "invalid route name 'Code': use lowercase letters, digits, '-' and
// '_'", "invalid route name 'none': it is the sorter's answer for no route".
[[nodiscard]] Status check_route_name(std::string_view name);

// "pictures", "long", or "" for a route sent tasks by the sorter.
[[nodiscard]] std::string_view when_name(When when);

// The profile's routes in the order they were first set; a route set again keeps its place.
[[nodiscard]] Result<std::vector<Route>> list_routes(Db& db, std::string_view profile);
// Sets the route (its profile must exist), replacing one of that name. In one transaction.
[[nodiscard]] Status set_route(Db& db, const Route& route);
// Whether there was such a route to remove.
[[nodiscard]] Result<bool> remove_route(Db& db, std::string_view profile, std::string_view name);
// The profile's sorter, if one was set; set_sorter() sets it (its profile must exist), or with ""
// takes it away.
[[nodiscard]] Result<std::optional<std::string>> sorter(Db& db, std::string_view profile);
[[nodiscard]] Status set_sorter(Db& db, std::string_view profile, std::string_view model);

// A task as routing sees it.
struct Task {
    std::string_view text;
    size_t pictures = 0;
};

// Its characters: UTF-8 code points (a byte that starts none counts as one).
[[nodiscard]] size_t characters(std::string_view text);

// Where a task goes, and why, in words a transcript shows after "route NAME: " or "no route: ".
struct Choice {
    std::optional<std::string> route; // none: the profile's own models
    std::string why;
};

// "route code: the sorter (…) answered 'code'", "no route: the sorter (…) answered none": the
// line a transcript and `routes test` show.
[[nodiscard]] std::string choice_line(const Choice& choice);

// Where `task` goes when no sorter need be asked: the first route whose --when holds; else no
// route when the profile has none, or none with --about. nullopt when the sorter must choose.
// sion-route pick asks it then; sion-run decides the rest itself, so that a session whose task a
// --when sends starts no process for it.
[[nodiscard]] std::optional<Choice> choose_without_sorter(const std::vector<Route>& routes,
                                                          const Task& task);

// What the sorter is sent: a system prompt naming the routes that have --about, and one user
// message holding the task as a record between two lines with `mark` (a random word the caller
// makes, which the task cannot know), never as instructions.
[[nodiscard]] std::string sorter_system(const std::vector<Route>& routes, std::string_view mark);
[[nodiscard]] std::string sorter_message(const Task& task, std::string_view mark);

// The route the sorter's answer names: the routes with --about whose names are words of it
// (letters, digits, '-' and '_', any case); one, or else none, with why. `sorter` is its model
// spec, as the why names it.
[[nodiscard]] Choice read_answer(const std::vector<Route>& routes, std::string_view answer,
                                 std::string_view sorter);

// The models of a session a choice sends it to: the route's first, then the profile's, each once.
[[nodiscard]] std::vector<std::string> models_for(const std::vector<Route>& routes,
                                                  const Choice& choice,
                                                  const std::vector<std::string>& profile_models);

// One line of the log: a routed session's first run.
struct Noted {
    std::string session;
    std::optional<std::string> route;
    std::string why;
    std::string model; // the first in line
    std::string ended; // the first run's ending: done, failed, stopped, refused, interrupted
    int64_t input_tokens = 0;
    int64_t output_tokens = 0;
    int64_t time_ms = 0; // when it ended, ms since the epoch
};

// $SION_HOME/agents/routes/<profile>.jsonl.
[[nodiscard]] std::string log_path(std::string_view home, std::string_view profile);
// Appends the line (one write, O_APPEND, so sessions side by side do not mix lines), making the
// directory (0700) and the file (0600) when missing.
[[nodiscard]] Status append_noted(std::string_view home, std::string_view profile,
                                  const Noted& noted);
[[nodiscard]] Json noted_json(const Noted& noted);

// The log's lines. A line that is not one (cut short by a crash, edited) is passed over and
// counted in `damaged`, so one bad line does not hide the rest.
struct Log {
    std::vector<Noted> lines;
    size_t damaged = 0;
};

// The log of `profile`; empty when there is none.
[[nodiscard]] Result<Log> read_log(std::string_view home, std::string_view profile);

// The sums `routes show` prints: sessions, how many ended done, and tokens, by route (none as
// nullopt) and by model, each in the order first seen.
struct Sum {
    std::optional<std::string> key;
    int64_t sessions = 0;
    int64_t done = 0;
    int64_t input_tokens = 0;
    int64_t output_tokens = 0;
};

struct Sums {
    std::vector<Sum> by_route;
    std::vector<Sum> by_model;
};

[[nodiscard]] Sums sum_log(const std::vector<Noted>& lines);

} // namespace sion::routes
