// SPDX-License-Identifier: MIT
// sion-sandbox: runs commands in a bubblewrap sandbox with limits and a network mode
// (sion-sandbox(1)). `exec` runs one, `run` one attached to its stdio, `serve` answers
// sandbox/exec on the pipes.
#include "cmd/sion-sandbox/commands.hpp"
#include "sandboxd/run.hpp"

#include "lib/cli.hpp"
#include "lib/log.hpp"

#include <string>
#include <string_view>
#include <vector>

namespace {

// The options are the commands' (listed here so that --help shows them all); before the command
// they are refused.
std::vector<sion::OptionSpec> main_options() {
    std::vector<sion::OptionSpec> options = sion::sandbox_cmd::sandbox_options(true);
    for (const sion::OptionSpec& option : sion::sandboxd::run_options())
        if (std::string_view(option.name) == "env")
            options.push_back(option);
    return options;
}

sion::CommandSpec main_spec() {
    return {
        "sion-sandbox",
        "sion-sandbox exec [options] [--] COMMAND [ARGS...]\n"
        "sion-sandbox run [options] [--] COMMAND [ARGS...]\n"
        "sion-sandbox serve [options]\n"
        "sion-sandbox check [options]",
        "Run commands in a sandbox that can write only the workspace: exec runs one and exits with\n"
        "its status; run runs one with this program's stdin, stdout and stderr as its own, until\n"
        "it ends; serve answers sandbox/exec requests on stdin and stdout, one JSON-RPC message a\n"
        "line; check says what of the sandbox works and what does not, with the fix. The options\n"
        "follow the command (--json is exec's, --env run's).",
        main_options(),
        true,
    };
}

} // namespace

int main(int argc, char** argv) {
    sion::guard_standard_fds();
    sion::set_program_name("sion-sandbox");
    sion::Args args = sion::parse_args_or_exit(main_spec(), argc, argv);
    int at = argc - static_cast<int>(args.operands().size());
    for (int i = 1; i < at; ++i)
        if (std::string_view(argv[i]).substr(0, 1) == "-")
            sion::die(sion::usage_error(std::string("option '") + argv[i] +
                                        "' goes after the command: "
                                        "sion-sandbox exec|run|serve [options]"));
    if (args.operands().empty())
        sion::die(sion::usage_error("a command is needed: exec, run, serve or check (see --help)"));
    std::string_view command = argv[at];
    if (command == "exec")
        return sion::sandbox_cmd::exec_command(argc - at, argv + at);
    if (command == "run")
        return sion::sandbox_cmd::run_command(argc - at, argv + at);
    if (command == "serve")
        return sion::sandbox_cmd::serve_command(argc - at, argv + at);
    if (command == "check")
        return sion::sandbox_cmd::check_command(argc - at, argv + at);
    if (command == "init")
        return sion::sandbox_cmd::init_command(argc - at, argv + at);
    if (command == "become")
        return sion::sandbox_cmd::become_command(argc - at, argv + at);
    sion::die(sion::usage_error("unknown command '" + std::string(command) +
                                "': give exec, run, serve or check (see --help)"));
}
