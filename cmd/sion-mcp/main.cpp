// SPDX-License-Identifier: MIT
// sion-mcp: the shelf of MCP servers (sion-mcp(1)). add finds a server once and pins its tools;
// list, review, remove, give, drop, resources, prompts and sampling keep and look at the shelf;
// serve bridges a session to its servers.
#include "cmd/sion-mcp/commands.hpp"

#include "lib/log.hpp"

#include <string>
#include <string_view>

namespace {

constexpr const char* k_commands =
    "add, list, review, login, logout, remove, give, drop, resources, prompts, sampling or serve";

sion::CommandSpec main_spec() {
    return {
        "sion-mcp",
        "sion-mcp add NAME [options] -- COMMAND [ARGS...]\n"
        "sion-mcp add NAME --url URL [--header 'NAME: VALUE']... [options]\n"
        "sion-mcp list\n"
        "sion-mcp review NAME [--accept]\n"
        "sion-mcp login NAME [--no-browser] [--scope S]\n"
        "sion-mcp logout NAME\n"
        "sion-mcp remove NAME\n"
        "sion-mcp give PROFILE NAME\n"
        "sion-mcp drop PROFILE NAME\n"
        "sion-mcp resources NAME [--read URI]\n"
        "sion-mcp prompts NAME\n"
        "sion-mcp sampling NAME [--max-tokens N] [--per-run N] [--model M] | --off\n"
        "sion-mcp serve [--ask] [--sampling-model M] NAME...",
        "Keep the MCP servers your agents use: add one once, review and pin its tools, give it\n"
        "to a profile or to one run with --mcp NAME. serve bridges a session to its servers\n"
        "(sion-run starts it). The options follow the command.",
        {},
        true,
    };
}

} // namespace

int main(int argc, char** argv) {
    sion::guard_standard_fds();
    sion::set_program_name("sion-mcp");
    if (sion::Status utf8 = sion::check_utf8_arguments(argc, argv); !utf8)
        sion::die(utf8.error());
    sion::Args args = sion::parse_args_or_exit(main_spec(), argc, argv);
    if (args.operands().empty())
        sion::die(sion::usage_error(std::string("a command is needed: ") + k_commands
                                    + " (see --help)"));
    int at = argc - static_cast<int>(args.operands().size());
    std::string_view command = argv[at];
    int n = argc - at;
    char** rest = argv + at;
    int status = 0;
    if (command == "add")
        status = sion::mcp_cmd::add_command(n, rest);
    else if (command == "list")
        status = sion::mcp_cmd::list_command(n, rest);
    else if (command == "review")
        status = sion::mcp_cmd::review_command(n, rest);
    else if (command == "login")
        status = sion::mcp_cmd::login_command(n, rest);
    else if (command == "logout")
        status = sion::mcp_cmd::logout_command(n, rest);
    else if (command == "remove")
        status = sion::mcp_cmd::remove_command(n, rest);
    else if (command == "give" || command == "drop")
        status = sion::mcp_cmd::give_command(n, rest, command == "give");
    else if (command == "resources")
        status = sion::mcp_cmd::resources_command(n, rest);
    else if (command == "prompts")
        status = sion::mcp_cmd::prompts_command(n, rest);
    else if (command == "sampling")
        status = sion::mcp_cmd::sampling_command(n, rest);
    else if (command == "serve")
        status = sion::mcp_cmd::serve_command(n, rest);
    else
        sion::die(sion::usage_error("unknown command '" + std::string(command) + "': give "
                                    + k_commands + " (see --help)"));
    return sion::finish_stdout(status);
}
