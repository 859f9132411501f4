// SPDX-License-Identifier: MIT
// sion-mcp: the shelf of MCP servers (sion-mcp(1)). add finds a server once and pins its tools;
// list, review, remove, give, drop, resources, prompts, sampling and grant keep and look at the
// shelf;
// serve bridges a session to its servers.
#include "cmd/sion-mcp/commands.hpp"

#include "lib/cli.hpp"
#include "lib/known.hpp"

namespace {

int give(int argc, const char* const* argv) {
    return sion::mcp_cmd::give_command(argc, argv, true);
}

int drop(int argc, const char* const* argv) {
    return sion::mcp_cmd::give_command(argc, argv, false);
}

} // namespace

int main(int argc, char** argv) {
    using namespace sion::mcp_cmd;
    const sion::Program program{
        "sion-mcp",
        "Keep the MCP servers your agents use: add one once, review and pin its tools, give it\n"
        "to a profile or to one run with --mcp NAME. serve bridges a session to its servers\n"
        "(sion-run starts it). The options follow the command.",
        {
            {"add", add_command,
             "add NAME [options] -- COMMAND [ARGS...]\n"
             "add NAME --url URL [--header 'NAME: VALUE']... [options]\n"
             "add NAME --first-party mail|calendar [options]\n"
             "add NAME --first-party documents --dir DIR [options]"},
            {"list", list_command, "list [--json]"},
            {"review", review_command, "review NAME [--accept]"},
            {"login", login_command, "login NAME [--no-browser] [--callback-port N] [--scope S]"},
            {"logout", logout_command, "logout NAME"},
            {"remove", remove_command, "remove NAME"},
            {"give", give, "give PROFILE NAME"},
            {"drop", drop, "drop PROFILE NAME"},
            {"resources", resources_command, "resources NAME [--read URI | --json]"},
            {"prompts", prompts_command, "prompts NAME [--json]"},
            {"sampling", sampling_command,
             "sampling NAME [--max-tokens N] [--per-run N] [--model M] | --off"},
            {"grant", grant_command,
             "grant NAME [URL] --credential VAR [--header NAME] [--scheme WORD] | --off"},
            {"serve", serve_command, "serve [--ask] [--sampling-model M] NAME..."},
        },
        {},
        true,
        sion::known_names,
    };
    return sion::run_program(program, argc, argv);
}
