// SPDX-License-Identifier: MIT
// sion-route's commands; each takes the argv that follows the program's name (argv[0] is the
// command's word) and returns the exit status.
#pragma once

#include "lib/agents.hpp"
#include "lib/db.hpp"
#include "lib/models/model.hpp"
#include "lib/routes.hpp"

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace sion::route_cmd {

[[nodiscard]] int set_command(int argc, const char* const* argv);
[[nodiscard]] int sorter_command(int argc, const char* const* argv);
[[nodiscard]] int list_command(int argc, const char* const* argv);
[[nodiscard]] int remove_command(int argc, const char* const* argv);
[[nodiscard]] int test_command(int argc, const char* const* argv);
[[nodiscard]] int pick_command(int argc, const char* const* argv);
[[nodiscard]] int show_command(int argc, const char* const* argv);
[[nodiscard]] int eval_command(int argc, const char* const* argv);
[[nodiscard]] int eval_task_command(int argc, const char* const* argv);

// sion.db of $SION_HOME, and the profile `name` in it, or die: a bad name exits 64, a profile
// that does not exist 66 ("no profile 'lead'").
struct State {
    Db db;
    Profile profile;
    std::string home;
};

[[nodiscard]] State open_profile(const std::string& name);

// Where a task goes: the choice, the session's models in order, and the sorter when it was asked.
struct Picked {
    routes::Choice choice;
    std::vector<std::string> models;
    std::optional<std::string> sorter; // the sorter's spec, when it was asked
    models::Usage usage;               // what the sorter used
};

// Routes `task` for the profile: the first route whose --when holds, else the sorter's choice.
// The sorter failing, or answering no one route, sends the task to no route; nothing here fails
// but reading sion.db.
[[nodiscard]] Result<Picked> choose(State& state, const routes::Task& task);

// The choice as `test --json` and `pick` print it.
[[nodiscard]] Json picked_json(const Picked& picked);

} // namespace sion::route_cmd
