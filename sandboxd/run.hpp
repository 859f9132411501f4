// SPDX-License-Identifier: MIT
// sion-sandbox run: one long-lived command in a sandbox, attached. Its stdin, stdout and stderr are
// this process's own, passed straight through: nothing is captured or cut, so a program that
// speaks a protocol on its stdio (an MCP server) can run sandboxed.
//
// Contract:
// - The layout and limits are exec's (prepare_launch() with init --exec as the sandbox's pid 1, or
//   docker_run_argv()), but for the wall clock: none unless the request has a timeout.
// - With the declared network and hosts, the proxy (start_sandbox_proxy()) runs on this process's
//   loop for the command's lifetime, writing the credentials of `egress`'s grants (grants.hpp),
//   and init runs the forwarder beside the command (init_exec_forwarding()).
// - The run ends when the command does, when its time runs out, or when this process gets SIGTERM,
//   SIGINT or SIGHUP; its parent's death is a SIGTERM (PR_SET_PDEATHSIG). The last two kill the
//   sandbox: with bubblewrap its pid 1 (bwrap ends only once every process of the sandbox has),
//   then bwrap itself every k_remove_again while it has not ended (or at once when the pid 1
//   cannot be found); with Docker its container, docker rm --force, again every k_remove_again
//   until docker run has ended.
// - Nothing here prints or exits; what bwrap, docker and init say goes to stderr as they say it.
//   One thread; the signals are watched only while run_attached() runs.
#pragma once

#include "lib/child.hpp"
#include "lib/cli.hpp"
#include "lib/proto/sandbox_exec.hpp"
#include "lib/result.hpp"
#include "sandboxd/config.hpp"
#include "sandboxd/grants.hpp"

#include <chrono>
#include <string>
#include <utility>
#include <vector>

namespace sion::sandboxd {

inline constexpr std::chrono::milliseconds k_remove_again{200};

struct RunOutcome {
    proto::ExecResult ended; // exit (as the shell's $?: 124 out of time, 128+n), signal, timed_out
    int received = 0;        // SIGTERM, SIGINT or SIGHUP that ended the run, else 0
};

// Runs request.argv (request.env added to the sandbox's environment; request.input and
// request.command unused) in the sandbox `config` describes, until it ends. Errors: the sandbox
// cannot be made (Exit::unavailable: bwrap ended without running init, docker or the image
// missing), prepare_launch()'s, spawning's, Exit::os. A command that cannot be found or run is an
// outcome (127, 126), not an error; so is docker's own failure (125, its message on stderr).
[[nodiscard]] Result<RunOutcome> run_attached(const Config& config,
                                              const proto::ExecRequest& request,
                                              Egress egress = {});

// How docker run's status reads: the container's status, 128+n as killed by signal n.
[[nodiscard]] proto::ExecResult docker_run_outcome(int status);

// (NAME, value) for each of `names` set in this process's environment; unset ones are left out.
// Exit::usage for a name that is empty or holds '=':
//   "option '--env' takes a variable's name, not 'A=B'"
[[nodiscard]] Result<std::vector<std::pair<std::string, std::string>>>
named_env(const std::vector<std::string>& names);

// run's options: exec's but --output and --json, and --env NAME (repeatable).
[[nodiscard]] std::vector<OptionSpec> run_options();

// An empty directory of its own, mode 0700, under $TMPDIR (else /tmp), for a command given no
// workspace; removed with everything in it when this goes.
class ScratchWorkspace {
public:
    // Exit::os when it cannot be made.
    [[nodiscard]] static Result<ScratchWorkspace> make();

    ScratchWorkspace(const ScratchWorkspace&) = delete;
    ScratchWorkspace& operator=(const ScratchWorkspace&) = delete;

    ScratchWorkspace(ScratchWorkspace&& other) noexcept : m_path(std::move(other.m_path)) {
        other.m_path.clear();
    }

    ScratchWorkspace& operator=(ScratchWorkspace&&) = delete;
    ~ScratchWorkspace();

    [[nodiscard]] const std::string& path() const { return m_path; }

private:
    explicit ScratchWorkspace(std::string path) : m_path(std::move(path)) {}

    std::string m_path;
};

// Inside the sandbox, init --exec --proxy-socket: a forwarder on 127.0.0.1 to `proxy_socket` on a
// thread of its own, the proxy's variables (proxy_environment()) in the command's environment,
// and the command run as init_exec() runs it. Errors: the forwarder's, the thread's (Exit::os),
// init_exec()'s.
[[nodiscard]] Result<ExitStatus> init_exec_forwarding(const Limits& limits,
                                                      const std::vector<std::string>& argv,
                                                      const std::string& proxy_socket);

} // namespace sion::sandboxd
