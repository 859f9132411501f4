// SPDX-License-Identifier: MIT
// sion: the front door. `sion agent run …` execs sion-run, and so on (sion(1)).
#include "cmd/sion/completion.hpp"
#include "cmd/sion/front_door.hpp"
#include "lib/cli.hpp"
#include "lib/log.hpp"

#include <cstdio>

namespace {

const sion::CommandSpec k_spec{
    "sion",
    "sion [--help] [--version] <command> [<args>...]\n"
    "sion help <program>\n"
    "sion completion bash|zsh|fish",
    "Run one of sion's programs: agent run (sion-run), agent mcp (sion-mcp), agent hooks (sion-hooks),\n"
    "agent routes (sion-route), sandbox (sion-sandbox), setup (sion-run setup).\n"
    "'sion help PROGRAM' opens the program's manual page; 'sion completion SHELL' prints the\n"
    "shell's completion script for sion and its programs.",
    {},
    true,
};

// `sion completion SHELL`: the script, on standard output.
int completion(int argc, const char* const* argv) {
    sion::Args args = sion::parse_args_or_exit(sion::front_door::completion_spec(), argc, argv);
    sion::check_operands(args, 1, 1, "give a shell: sion completion bash|zsh|fish");
    std::string script = sion::or_die(
        sion::front_door::completion_script(args.operands()[0], sion::front_door::programs()));
    std::fputs(script.c_str(), stdout);
    return sion::finish_stdout(0);
}

} // namespace

int main(int argc, char** argv) {
    sion::guard_standard_fds();
    sion::set_program_name("sion");
    if (argc >= 2 && std::string_view(argv[1]) == "__complete") {
        auto program = sion::front_door::complete({argv + 2, argv + argc});
        if (!program)
            return sion::finish_stdout(0);
        // A program that is not installed completes nothing, quietly: this runs under a shell.
        auto path = sion::front_door::locate(*program);
        if (!path)
            return 0;
        (void)sion::front_door::exec(*path, *program);
        return 0;
    }
    sion::Args args = sion::parse_args_or_exit(k_spec, argc, argv);
    if (!args.operands().empty() && args.operands()[0] == "completion") {
        int at = argc - static_cast<int>(args.operands().size());
        return completion(argc - at, argv + at);
    }
    auto dispatch = sion::front_door::route(args.operands());
    if (!dispatch)
        sion::die(dispatch.error());
    auto path = sion::front_door::locate(*dispatch);
    if (!path)
        sion::die(path.error());
    sion::die(sion::front_door::exec(*path, *dispatch));
}
