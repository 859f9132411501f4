// SPDX-License-Identifier: MIT
// sion: the front door. `sion agent run …` execs sion-run, and so on (sion(1)).
#include "cmd/sion/front_door.hpp"
#include "lib/cli.hpp"
#include "lib/log.hpp"

namespace {

const sion::CommandSpec k_spec{
    "sion",
    "sion [--help] [--version] <command> [<args>...]\n"
    "sion help <program>",
    "Run one of sion's programs: agent run (sion-run), agent mcp (sion-mcp), agent hooks (sion-hooks),\n"
    "agent routes (sion-route), sandbox (sion-sandbox), setup (sion-run setup).\n"
    "'sion help PROGRAM' opens the program's manual page.",
    {},
    true,
};

} // namespace

int main(int argc, char** argv) {
    sion::guard_standard_fds();
    sion::set_program_name("sion");
    sion::Args args = sion::parse_args_or_exit(k_spec, argc, argv);
    auto dispatch = sion::front_door::route(args.operands());
    if (!dispatch)
        sion::die(dispatch.error());
    auto path = sion::front_door::locate(*dispatch);
    if (!path)
        sion::die(path.error());
    sion::die(sion::front_door::exec(*path, *dispatch));
}
