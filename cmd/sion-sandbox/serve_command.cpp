// SPDX-License-Identifier: MIT
// sion-sandbox serve: the warm sandbox, answering sandbox/exec and sandbox/describe on the pipes.
#include "cmd/sion-sandbox/commands.hpp"
#include "lib/log.hpp"
#include "sandboxd/config.hpp"
#include "sandboxd/preflight.hpp"
#include "sandboxd/server.hpp"

#include <sys/prctl.h>
#include <unistd.h>

#include <cerrno>
#include <csignal>

namespace sion::sandbox_cmd {

int serve_command(int argc, const char* const* argv) {
    const CommandSpec spec{
        "sion-sandbox serve",
        "sion-sandbox serve [options]",
        "Answer sandbox/exec, sandbox/describe and sandbox/close on stdin and stdout, one\n"
        "JSON-RPC 2.0 message a line, running each command in one warm sandbox made for the\n"
        "session.",
        sandbox_options(false),
    };
    Args args = parse_args_or_exit(spec, argc, argv);
    check_operands(args, 0, 0);
    // The session that started it may be killed at any point: its sandbox ends with it (bwrap dies
    // with this process). One gone before this was asked ends it now.
    pid_t parent = ::getppid();
    if (::prctl(PR_SET_PDEATHSIG, SIGTERM) != 0)
        die(sys_error(Exit::os, errno, "cannot ask to be told of the parent's death"));
    if (::getppid() != parent)
        return 128 + SIGTERM;
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
