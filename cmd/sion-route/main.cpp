// SPDX-License-Identifier: MIT
// sion-route: which models a task goes to (sion-route(1)). set, sorter, list and remove keep a
// profile's routes in sion.db; test says where a task would go; pick routes a session's task for
// sion-run; show sums the routed sessions.
#include "cmd/sion-route/commands.hpp"
#include "lib/cli.hpp"
#include "lib/known.hpp"

int main(int argc, char** argv) {
    using namespace sion::route_cmd;
    const sion::Program program{
        "sion-route",
        "Send each task of a profile's sessions to the models that suit it. A route names its\n"
        "models and either says in words what tasks it is for (--about), for the sorter to\n"
        "choose, or what sends a task to it without asking (--when). set, sorter, list and\n"
        "remove keep a profile's routes; test says which route a task would take and why; show\n"
        "adds up the routed sessions; eval measures the route's models on a set of cases and\n"
        "puts the one that earns it first; pick routes a session's task (sion-run calls it).\n"
        "The options follow the command.",
        {
            {"set", set_command,
             "set PROFILE ROUTE --model M [--model M]... (--about TEXT | --when pictures|long "
             "[--longer-than N]) [--json]"},
            {"sorter", sorter_command, "sorter PROFILE [MODEL | --unset] [--json]"},
            {"list", list_command, "list PROFILE [--json]"},
            {"remove", remove_command, "remove PROFILE ROUTE [--json]"},
            {"test", test_command, "test PROFILE TASK [--picture FILE]... [--json]"},
            {"show", show_command, "show PROFILE [--json]"},
            {"eval", eval_command,
             "eval PROFILE ROUTE --set CASES.json [--runs N] [--budget-tokens T] [-j N] [options]"},
            {"pick", pick_command, "pick < REQUEST.json"},
            {"eval-task", eval_task_command, nullptr},
        },
        {},
        true,
        sion::known_names,
    };
    return sion::run_program(program, argc, argv);
}
