// SPDX-License-Identifier: MIT
// sion-sandbox run: one long-lived command in a fresh sandbox, its stdin, stdout and stderr this
// program's own, until it ends; its status, or the signal that ended this program.
#include "cmd/sion-sandbox/commands.hpp"
#include "lib/log.hpp"
#include "lib/text.hpp"
#include "sandboxd/config.hpp"
#include "sandboxd/grants.hpp"
#include "sandboxd/preflight.hpp"
#include "sandboxd/run.hpp"

#include <csignal>
#include <optional>

namespace sion::sandbox_cmd {

namespace {

using namespace sion::sandboxd;

CommandSpec run_spec() {
    return {
        "sion-sandbox run",
        "sion-sandbox run [options] [--] COMMAND [ARGS...]",
        "Run COMMAND in a fresh sandbox with this program's stdin, stdout and stderr as its own,\n"
        "nothing captured or cut, until it ends, and exit with its status: 126 or 127 when it\n"
        "cannot be run or found, 124 when --timeout ran out. SIGTERM, SIGINT or SIGHUP, or the\n"
        "death of this program's parent, kill the sandbox. Without --workspace, the workspace is\n"
        "an empty directory, removed at the end.",
        run_options(),
        true, // COMMAND's own options are its own
        {":command", ":file..."},
    };
}

// The grants --grants-fd gives, each one's host declared; a failure of the TLS the proxy ends for
// them is logged.
Result<Egress> egress_of(const Args& args, const Config& config) {
    Egress egress;
    if (!args.has("grants-fd"))
        return egress;
    std::string given = args.value("grants-fd").value_or("");
    std::optional<int64_t> fd = parse_number(given, 3, 1 << 20);
    if (!fd)
        return make_error(Exit::usage, "--grants-fd takes a descriptor's number from 3 up, not '%s'",
                          one_line(given).c_str());
    SION_TRY(egress.grants, read_grants(static_cast<int>(*fd)));
    if (!egress.grants.empty() && config.backend != BackendKind::bwrap)
        return make_error(Exit::config, "grants need the bubblewrap sandbox: a Docker network has "
                                        "no proxy of sion's to write them");
    SION_CHECK(check_grants_declared(egress.grants, config));
    egress.on_failed = [](const std::string& why) {
        log_error("the proxy refused a granted host: %s", why.c_str());
    };
    return egress;
}

// The run of `config`, in the workspace given or in an empty one made for it and removed when this
// returns; `request` gets the timeout given, if any.
Result<RunOutcome> run_in_sandbox(const Args& args, Config config, proto::ExecRequest& request) {
    SION_TRY(Egress egress, egress_of(args, config));
    if (args.has("timeout"))
        request.timeout = config.limits.timeout;
    std::optional<ScratchWorkspace> scratch;
    if (!args.has("workspace")) {
        SION_TRY(ScratchWorkspace made, ScratchWorkspace::make());
        scratch.emplace(std::move(made));
        config.workspace = scratch->path();
        config.workspace_as_given = display_path(scratch->path());
    }
    SION_CHECK(preflight(config));
    return run_attached(config, request, std::move(egress));
}

// Dies of `signal`, as a program that does not catch it would: its parent sees why.
int die_of(int signal) {
    struct sigaction dfl {};

    dfl.sa_handler = SIG_DFL;
    ::sigaction(signal, &dfl, nullptr);
    ::raise(signal);
    return to_int(Exit::signal_base) + signal; // only if it was blocked
}

} // namespace

int run_command(int argc, const char* const* argv) {
    const CommandSpec spec = run_spec();
    Args args = parse_args_or_exit(spec, argc, argv);
    if (args.operands().empty())
        die(usage_error("a command is needed: sion-sandbox run [options] -- COMMAND [ARGS...]"));
    proto::ExecRequest request;
    request.argv = args.operands();
    request.env = or_die(named_env(args.values("env")));
    Config config = or_die(config_from_args(args));
    uint64_t memory = config.limits.memory;
    RunOutcome outcome = or_die(run_in_sandbox(args, std::move(config), request));
    if (outcome.received != 0)
        return die_of(outcome.received);
    say_how_it_ended(outcome.ended, request.timeout.value_or(std::chrono::milliseconds(0)), memory);
    return outcome.ended.exit;
}

} // namespace sion::sandbox_cmd
