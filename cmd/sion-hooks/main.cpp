// SPDX-License-Identifier: MIT
// sion-hooks: the user's commands around agents' calls and runs (sion-hooks(1)). add, list and
// remove keep them in $SION_HOME/agents/hooks.json; fire runs those an event matches; check says
// whether the file may be used.
#include "cmd/sion-hooks/commands.hpp"
#include "lib/cli.hpp"

int main(int argc, char** argv) {
    using namespace sion::hooks_cmd;
    const sion::Program program{
        "sion-hooks",
        "Keep commands of your own that run around your agents' tool calls and runs, in\n"
        "$SION_HOME/agents/hooks.json: add one, list them, remove one by its number. fire runs\n"
        "the hooks an event matches and prints the verdict as one JSON line (sion-run calls it);\n"
        "check says whether the hooks file may be used. EVENT is before-tool, after-tool,\n"
        "run-start or run-end. The options follow the command.",
        {
            {"add", add_command,
             "add --event EVENT [--tool PATTERN]... [--timeout S] [--] COMMAND [ARGS...]"},
            {"list", list_command, "list [--json]"},
            {"remove", remove_command, "remove N"},
            {"fire", fire_command, "fire EVENT < EVENT.json"},
            {"check", check_command, "check"},
        },
        {},
        true,
        known_hooks,
    };
    return sion::run_program(program, argc, argv);
}
