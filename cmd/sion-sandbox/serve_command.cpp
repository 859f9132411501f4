// SPDX-License-Identifier: MIT
// sion-sandbox serve: the warm sandbox, answering sandbox/exec on the pipes.
#include "cmd/sion-sandbox/commands.hpp"

#include "sandboxd/config.hpp"
#include "sandboxd/preflight.hpp"
#include "sandboxd/server.hpp"

#include "lib/log.hpp"

namespace sion::sandbox_cmd {

int serve_command(int argc, const char* const* argv) {
    const CommandSpec spec{
        "sion-sandbox serve",
        "sion-sandbox serve [options]",
        "Answer sandbox/exec and sandbox/close on stdin and stdout, one JSON-RPC 2.0 message a\n"
        "line, running each command in one warm sandbox made for the session.",
        sandbox_options(false),
    };
    Args args = parse_args_or_exit(spec, argc, argv);
    check_operands(args, 0, 0);
    auto config = sandboxd::config_from_args(args);
    if (!config)
        die(config.error());
    if (Status ok = sandboxd::preflight(*config); !ok)
        die(ok.error());
    auto status = sandboxd::serve(*config);
    if (!status)
        die(status.error());
    return *status;
}

} // namespace sion::sandbox_cmd
