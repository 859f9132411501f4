// SPDX-License-Identifier: MIT
// sion-hooks: the user's commands around agents' calls and runs (sion-hooks(1)). add, list and
// remove keep them in $SION_HOME/agents/hooks.json; fire runs those an event matches; check says
// whether the file may be used.
#include "cmd/sion-hooks/commands.hpp"
#include "lib/cli.hpp"
#include "lib/log.hpp"

#include <string>
#include <string_view>

namespace {

sion::CommandSpec main_spec() {
    return {
        "sion-hooks",
        "sion-hooks add --event EVENT [--tool PATTERN]... [--timeout S] [--] COMMAND [ARGS...]\n"
        "sion-hooks list\n"
        "sion-hooks remove N\n"
        "sion-hooks fire EVENT < EVENT.json\n"
        "sion-hooks check",
        "Keep commands of your own that run around your agents' tool calls and runs, in\n"
        "$SION_HOME/agents/hooks.json: add one, list them, remove one by its number. fire runs\n"
        "the hooks an event matches and prints the verdict as one JSON line (sion-run calls it);\n"
        "check says whether the hooks file may be used. EVENT is before-tool, after-tool,\n"
        "run-start or run-end. The options follow the command.",
        {},
        true,
    };
}

} // namespace

int main(int argc, char** argv) {
    sion::guard_standard_fds();
    sion::set_program_name("sion-hooks");
    sion::Args args = sion::parse_args_or_exit(main_spec(), argc, argv);
    if (args.operands().empty())
        sion::die(sion::usage_error(
            "a command is needed: add, list, remove, fire or check (see --help)"));
    int at = argc - static_cast<int>(args.operands().size());
    std::string_view command = argv[at];
    int status = 0;
    if (command == "add")
        status = sion::hooks_cmd::add_command(argc - at, argv + at);
    else if (command == "list")
        status = sion::hooks_cmd::list_command(argc - at, argv + at);
    else if (command == "remove")
        status = sion::hooks_cmd::remove_command(argc - at, argv + at);
    else if (command == "fire")
        status = sion::hooks_cmd::fire_command(argc - at, argv + at);
    else if (command == "check")
        status = sion::hooks_cmd::check_command(argc - at, argv + at);
    else
        sion::die(sion::usage_error("unknown command '" + std::string(command)
                                    + "': give add, list, remove, fire or check (see --help)"));
    return sion::finish_stdout(status);
}
