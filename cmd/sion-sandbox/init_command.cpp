// SPDX-License-Identifier: MIT
// sion-sandbox init (hidden): what runs inside the sandbox. --exec runs one command as pid 1 and
// reports how it ended on the status pipe; --serve, pid 1 too, answers init/exec on stdin and
// stdout from a child of its own.
#include "cmd/sion-sandbox/commands.hpp"

#include "sandboxd/bwrap.hpp"
#include "sandboxd/cgroup.hpp"
#include "sandboxd/init.hpp"
#include "sandboxd/limits.hpp"
#include "sandboxd/run.hpp"
#include "sandboxd/stage.hpp"

#include "lib/fd.hpp"
#include "lib/log.hpp"

#include <sys/prctl.h>

#include <cerrno>
#include <cstdlib>
#include <optional>

namespace sion::sandbox_cmd {

namespace {

using namespace sion::sandboxd;

CommandSpec init_spec() {
    std::vector<OptionSpec> options = limit_options();
    options.push_back({"exec", 0, nullptr, "run COMMAND as pid 1 and report on --status-fd"});
    options.push_back({"status-fd", 0, "FD", "where --exec reports how the command ended"});
    options.push_back({"env-fd", 0, "FD", "where --exec reads the command's extra environment"});
    options.push_back({"serve", 0, nullptr, "answer init/exec on stdin and stdout"});
    options.push_back({"proxy-socket", 0, "PATH", "forward 127.0.0.1 to this proxy"});
    return {
        "sion-sandbox init",
        "sion-sandbox init --exec --status-fd FD [--env-fd FD] [--proxy-socket PATH] [limits]\n"
        "                  -- COMMAND...\n"
        "sion-sandbox init --serve [--proxy-socket PATH] [limits]",
        "Runs inside the sandbox, started by sion-sandbox exec and serve; not for people.",
        std::move(options),
    };
}

// The descriptor option `name` gives, 3 or more; -1 when it is not given and not `required`.
int fd_option(const Args& args, const char* name, bool required) {
    auto v = args.value(name);
    if (!v && !required)
        return -1;
    int fd = v ? std::atoi(v->c_str()) : -1;
    if (fd < 3)
        die(usage_error(std::string("option '--") + name + "' needs a descriptor of 3 or more"));
    return fd;
}

int exec_mode(const Args& args, const Limits& limits) {
    int fd = fd_option(args, "status-fd", true);
    int env_fd = fd_option(args, "env-fd", false);
    // Before the forwarder's thread, and before the descriptor is closed with the strays.
    Status env = env_fd >= 0 ? take_env(Fd(env_fd)) : Status();
    close_stray_fds(fd);
    Fd status(fd);
    if (args.operands().empty())
        die(usage_error("a command is needed after --"));
    ExitStatus ended;
    auto proxy = args.value("proxy-socket"); // run's declared network: a forwarder beside it
    auto ran = !env    ? Result<ExitStatus>(env.error())
               : proxy ? init_exec_forwarding(limits, args.operands(), *proxy)
                       : init_exec(limits, args.operands());
    if (ran) {
        ended = *ran;
    } else {
        // The command's stderr is ours: the message lands where its own would have.
        report(ran.error());
        ended.status = to_int(ran.error().exit());
        ended.exit_code = ended.status;
    }
    (void)write_all(status.get(), report_line(ended)); // a reader gone is not ours to report
    return ended.status;
}

} // namespace

int init_command(int argc, const char* const* argv) {
    // Commands run as the same uid as the init: not dumpable, it cannot be ptraced or have its
    // memory read through /proc by them, so no command can change how it reports or limits others.
    if (::prctl(PR_SET_DUMPABLE, 0, 0, 0, 0) != 0)
        die(sys_error(Exit::os, errno, "cannot make the init undumpable"));
    const CommandSpec spec = init_spec();
    Args args = parse_args_or_exit(spec, argc, argv);
    auto limits = limits_from_args(args);
    if (!limits)
        die(limits.error());
    if (args.has("exec"))
        return exec_mode(args, *limits);
    if (args.has("serve")) {
        close_stray_fds(-1);
        // pid 1 reaps and ends as the loop did; the loop goes on in its child.
        if (std::optional<int> ended = or_die(split_reaper()))
            return *ended;
        if (Status ok = init_serve(*limits, args.value("proxy-socket").value_or("")); !ok)
            die(ok.error());
        return 0;
    }
    die(usage_error("give --exec or --serve"));
}

int become_command(int argc, const char* const* argv) {
    const CommandSpec spec{
        "sion-sandbox become",
        "sion-sandbox become [--cgroup DIR]... [--workspace DIR [--stage PATH]...] UID GID --\n"
        "                    PROGRAM [ARGS...]",
        "Run PROGRAM in each cgroup DIR, with the workspace idmapped to UID and GID and each PATH\n"
        "staged where they reach it (as root), as UID:GID with no supplementary groups unless\n"
        "those are who runs it already; started by exec and serve to start bwrap.",
        {{"cgroup", 0, "DIR", "join this cgroup first (repeatable)"},
         {"workspace", 0, "DIR", "stage the workspace, idmapped"},
         {"stage", 0, "PATH", "stage PATH as it is (repeatable)"}},
    };
    Args args = parse_args_or_exit(spec, argc, argv);
    const auto& ops = args.operands();
    if (ops.size() < 3)
        die(usage_error("give UID GID -- PROGRAM [ARGS...]"));
    char* end = nullptr;
    unsigned long uid = std::strtoul(ops[0].c_str(), &end, 10);
    bool bad = *end != '\0';
    unsigned long gid = std::strtoul(ops[1].c_str(), &end, 10);
    if (bad || *end != '\0' || ops[0].empty() || ops[1].empty())
        die(usage_error("UID and GID must be numbers"));
    std::vector<std::string> program(ops.begin() + 2, ops.end());
    for (const std::string& cgroup : args.values("cgroup"))
        or_die(join_cgroup(cgroup));
    if (auto workspace = args.value("workspace"))
        or_die(stage(*workspace, args.values("stage")));
    die(become(static_cast<uid_t>(uid), static_cast<gid_t>(gid), program));
}

} // namespace sion::sandbox_cmd
