// SPDX-License-Identifier: MIT
// sion-run: agent sessions (sion-run(1)). `run` runs one; create, list, sessions and show keep the
// agents and what their sessions did; credential keeps the sealed credentials, which setup asks for.
#include "cmd/sion-run/commands.hpp"
#include "lib/log.hpp"

#include <string>
#include <string_view>

namespace sion::run_cmd {
// credential_commands.cpp
[[nodiscard]] int credential_command(int argc, const char* const* argv);
[[nodiscard]] int setup_command(int argc, const char* const* argv);
// chatgpt_commands.cpp
[[nodiscard]] int chatgpt_command(int argc, const char* const* argv);
} // namespace sion::run_cmd

namespace {

sion::CommandSpec main_spec() {
    return {
        "sion-run",
        "sion-run run PROFILE AGENT --task TEXT [options]\n"
        "sion-run create PROFILE [--model M]... [--autonomy LEVEL]\n"
        "sion-run list [PROFILE]\n"
        "sion-run sessions [AGENT]\n"
        "sion-run show SESSION [--json]\n"
        "sion-run credential add|list|remove [NAME]\n"
        "sion-run setup\n"
        "sion-run chatgpt login|status|models|logout",
        "Run an agent's session: it thinks with a model and acts through tools, every call\n"
        "passing through one policy. create makes an agent, list shows them, sessions lists\n"
        "their sessions and show prints one's transcript; credential keeps credentials sealed,\n"
        "and setup asks for the common ones; chatgpt signs in with a ChatGPT account.\n"
        "The options follow the command.",
        sion::run_cmd::run_options(),
        true,
    };
}

} // namespace

int main(int argc, char** argv) {
    sion::guard_standard_fds();
    sion::set_program_name("sion-run");
    if (sion::Status utf8 = sion::check_utf8_arguments(argc, argv); !utf8)
        sion::die(utf8.error());
    sion::Args args = sion::parse_args_or_exit(main_spec(), argc, argv);
    int at = argc - static_cast<int>(args.operands().size());
    for (int i = 1; i < at; ++i)
        if (std::string_view(argv[i]).substr(0, 1) == "-")
            sion::die(
                sion::usage_error(std::string("option '") + argv[i]
                                  + "' goes after the command: "
                                    "sion-run run|create|list|sessions|show|credential|setup|chatgpt"));
    if (args.operands().empty())
        sion::die(sion::usage_error(
            "a command is needed: run, create, list, sessions, show, credential, setup or chatgpt "
            "(see --help)"));
    std::string_view command = argv[at];
    int status = 0;
    if (command == "run")
        status = sion::run_cmd::run_command(argc - at, argv + at);
    else if (command == "create")
        status = sion::run_cmd::create_command(argc - at, argv + at);
    else if (command == "list")
        status = sion::run_cmd::list_command(argc - at, argv + at);
    else if (command == "sessions")
        status = sion::run_cmd::sessions_command(argc - at, argv + at);
    else if (command == "show")
        status = sion::run_cmd::show_command(argc - at, argv + at);
    else if (command == "credential")
        status = sion::run_cmd::credential_command(argc - at, argv + at);
    else if (command == "setup")
        status = sion::run_cmd::setup_command(argc - at, argv + at);
    else if (command == "chatgpt")
        status = sion::run_cmd::chatgpt_command(argc - at, argv + at);
    else
        sion::die(sion::usage_error("unknown command '" + std::string(command)
                                    + "': give run, create, list, sessions, show, "
                                      "credential, setup or chatgpt (see --help)"));
    return sion::finish_stdout(status);
}
