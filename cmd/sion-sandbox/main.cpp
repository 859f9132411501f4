// SPDX-License-Identifier: MIT
// sion-sandbox: runs commands in a bubblewrap sandbox with limits and a network mode
// (sion-sandbox(1)). `exec` runs one, `run` one attached to its stdio, `serve` answers
// sandbox/exec on the pipes, `check` and `describe` judge the options.
#include "cmd/sion-sandbox/commands.hpp"
#include "sandboxd/run.hpp"

#include "lib/cli.hpp"

#include <string_view>
#include <vector>

namespace {

std::vector<sion::OptionSpec> main_options() {
    std::vector<sion::OptionSpec> options = sion::sandbox_cmd::sandbox_options(true);
    for (const sion::OptionSpec& option : sion::sandboxd::run_options())
        if (std::string_view(option.name) == "env")
            options.push_back(option);
    return options;
}

} // namespace

int main(int argc, char** argv) {
    using namespace sion::sandbox_cmd;
    sion::Program program{
        "sion-sandbox",
        "Run commands in a sandbox that can write only the workspace: exec runs one and exits with\n"
        "its status; run runs one with this program's stdin, stdout and stderr as its own, until\n"
        "it ends; serve answers sandbox/exec requests on stdin and stdout, one JSON-RPC message a\n"
        "line; check says what of the sandbox works and what does not, with the fix; describe\n"
        "prints the sandbox the options describe, as JSON, running nothing. The options\n"
        "follow the command (--json is exec's, --env run's).",
        {
            {"exec", exec_command, "exec [options] [--] COMMAND [ARGS...]"},
            {"run", run_command, "run [options] [--] COMMAND [ARGS...]"},
            {"serve", serve_command, "serve [options]"},
            {"check", check_command, "check [options]"},
            {"describe", describe_command, "describe [options]"},
            {"init", init_command, nullptr},
            {"become", become_command, nullptr},
        },
        main_options(),
    };
    program.utf8_arguments = false; // a command's arguments are bytes, passed on as they are
    return sion::run_program(program, argc, argv);
}
