// SPDX-License-Identifier: MIT
// The Docker backend: each command in a `docker run --rm` of its own, as the seed's table says.
//
// Contract:
// - What a command gets (seed "A shell in a sandbox", the Docker column): the image's programs,
//   read-only (`--read-only`); the workspace at /workspace, its working directory; a private /tmp
//   of 256 MiB; HOME=/workspace; the workspace's owner as its user (uid and gid of the workspace
//   directory outside; never root: docker_workspace.hpp), no capabilities, no new privileges, a
//   small init as pid 1 (`--init`, which
//   reaps and lets signals work), and the seccomp filter (seccomp.hpp) in place of the engine's
//   default profile; the network Config says, `none` or a network the user set up by
//   name (parse_network refuses Docker's own `bridge` and `host`); Limits::memory of memory and no
//   swap, 256 processes, 2 CPUs, Limits::cpu CPU seconds and Limits::file_size bytes a file a
//   process; Limits::timeout of wall-clock time (less if the request asks), and Limits::output
//   bytes of stdout and of stderr.
// - The image is named by digest (parse_backend checks that) and must already be on the machine:
//   every run is `--pull never`, and nothing here ever pulls.
// - Every container carries the label `sion-sandbox=<the runtime's pid>`, and its name is unique,
//   so the containers a killed runtime left running are found with
//   `docker ps --filter label=sion-sandbox`.
// - The engine is whichever the `docker` command on PATH reaches: DOCKER_HOST, DOCKER_CONTEXT,
//   DOCKER_CONFIG and the other DOCKER_* settings, PATH and HOME are passed to it from the
//   environment (docker_cli_env()).
// - A request's variables are named on docker's command line (`--env NAME`) and their values put
//   in the docker command's own environment, where docker reads them: /proc/PID/cmdline, which
//   every user of the machine may read, shows no value. The exceptions are the names the docker
//   command (or the dynamic loader that starts it) reads for itself (docker_reads_itself()): given
//   to docker they would change which engine it reaches or what it loads, so they travel as
//   `--env NAME=value`, as configuration rather than secrets.
// - Nothing here prints, exits or throws. All functions may be called from several threads at
//   once; each runs the `docker` command and waits for it.
#pragma once

#include "lib/child.hpp"
#include "lib/fd.hpp"
#include "lib/proto/sandbox_exec.hpp"
#include "lib/result.hpp"
#include "sandboxd/config.hpp"
#include "sandboxd/docker_workspace.hpp"

#include <sys/types.h>

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace sion::sandboxd {

// The label every container carries; its value is the pid of the process that started it.
inline constexpr std::string_view k_docker_label = "sion-sandbox";
// What every container gets besides Limits.
inline constexpr int k_docker_pids = 256;
inline constexpr std::string_view k_docker_cpus = "2";
inline constexpr std::string_view k_docker_tmpfs = "/tmp:rw,exec,nosuid,nodev,size=256m,mode=1777";

// Who a container runs as, what it binds at /workspace, its name, and where docker reads the
// seccomp profile (a path; none when empty).
struct DockerRun {
    uid_t uid = 0;
    gid_t gid = 0;
    std::string workspace;
    std::string name;
    std::string seccomp;
};

// The `docker run` command line that runs `request` as the seed says, as `run` says: `docker run
// --rm -i --init --pull never ... --entrypoint '' -- IMAGE /bin/sh -c COMMAND` (or `-- IMAGE
// ARGV...`). Everything after `--` is the command's, so a command or an image that starts with "-"
// is never taken for an option. The request's env entries follow HOME=/workspace as `--env NAME`,
// their values in docker_run_env(), but for the names docker_reads_itself(), given as `--env
// NAME=value`. Checks nothing: docker_exec() does.
[[nodiscard]] std::vector<std::string>
docker_run_argv(const Config& config, const proto::ExecRequest& request, const DockerRun& run);

// A `docker run` of `request` in a container named `name`, prepared: its command and environment,
// and what must live while it runs (the workspace, the seccomp profile given to docker as
// k_docker_profile_fd). Errors: DockerWorkspace::open()'s, Exit::os.
struct DockerLaunch {
    ChildSpec spec;
    std::optional<DockerWorkspace> workspace;
    Fd profile;
};

inline constexpr int k_docker_profile_fd = 3;
[[nodiscard]] Result<DockerLaunch>
prepare_docker(const Config& config, const proto::ExecRequest& request, const std::string& name);

// A container name no other call returns, in this process or another: "sion-<pid>-<n>-<8 hex>".
[[nodiscard]] std::string docker_container_name();

// Runs `request` in a container of `config.image` and waits for it, collecting stdout and stderr
// (each cut at Limits::output with a line "[... N more bytes cut]"); request.input is its stdin.
// - The container's exit status is passed through in proto::ExecResult::exit, 126 and 127 too (the
//   program could not be run, or was not found: the init's message in stderr says which); a status
//   above 128 is taken as a signal (128 + n, as docker reports a container killed by signal n, the
//   memory limit's SIGKILL among them) and also set in proto::ExecResult::signal.
// - When the time limit (Limits::timeout, or the request's if shorter) runs out, the container is
//   removed by name (`docker rm --force`; killing `docker run` would leave it running), again
//   until `docker run` has ended, so that one still being created is caught too; the result has
//   timed_out, exit 124 and signal 9 (as bubblewrap's), and what the command printed until then.
//   A thread watches the time while the call waits.
// - cpu_ms and max_rss_kib are 0: the command runs under the engine, not as our child.
// Errors (docker's own failure is an Error, never a command's status):
// - Exit::data: nothing to run, both a command and an argv, or an env name that is not one.
// - Exit::no_input: the workspace cannot be used ("cannot use the workspace '/w': ...").
// - Exit::unavailable: docker is not installed, the engine does not answer, the image is not on
//   the machine (docker_image_present()'s message), or docker could not start the container
//   ("docker cannot run the command: Error response from daemon: ..."); or the time ran out and
//   the container could not be removed (it may still run).
// - Exit::no_perm: the engine's socket refuses this user.
// - As capture() says: spawning and reading fail.
[[nodiscard]] Result<proto::ExecResult> docker_exec(const Config& config,
                                                    const proto::ExecRequest& request);

// The same with `input` as the command's stdin instead of request.input, or std::nullopt to give it
// this process's own stdin (`docker run -i` reads it): exec_once()'s convention, for
// `sion-sandbox exec -- COMMAND`. Never nullopt where stdin is a pipe protocol (serve).
[[nodiscard]] Result<proto::ExecResult> docker_exec(const Config& config,
                                                    const proto::ExecRequest& request,
                                                    const std::optional<std::string>& input);

// The docker command's environment: what tells it which engine (PATH, HOME, DOCKER_HOST and the
// other DOCKER_* settings, XDG_RUNTIME_DIR), and nothing of a request's.
[[nodiscard]] std::vector<std::string> docker_cli_env();

// Whether the docker command, or the loader that starts it, reads `name` for itself: PATH, HOME,
// XDG_RUNTIME_DIR, DOCKER_*, LD_*, GCONV_PATH, the Go runtime's GODEBUG, GOGC, GOMAXPROCS,
// GOMEMLIMIT and GOTRACEBACK, and the proxies (HTTP_PROXY, HTTPS_PROXY, ALL_PROXY, NO_PROXY, in
// either case).
[[nodiscard]] bool docker_reads_itself(std::string_view name);

// The environment of `docker run` for `request`: docker_cli_env(), then the request's variables
// that docker_run_argv() names without a value.
[[nodiscard]] std::vector<std::string> docker_run_env(const proto::ExecRequest& request);

// `docker rm --force NAME`: kills the container if it runs and removes it; one gone already is
// fine. Errors: Exit::unavailable (docker missing, or its message), docker_engine_ready()'s.
[[nodiscard]] Status docker_remove_container(const std::string& name);

// docker run's own failure, read from its stderr, as docker's message without "docker: ": the last
// line but the usage trailer and docker's own log lines, when it says "docker: ...", or else the
// first line when the usage trailer ends `stderr_text` (docker's usage errors); std::nullopt when
// docker said nothing of its own. docker_exec() reads a status of 125 with this: a command that
// exits 125 itself is not docker failing. A command's stderr ends like docker's only on purpose.
[[nodiscard]] std::optional<std::string> docker_run_failure(const std::string& stderr_text);

// The engine answers (`docker version`, within 15 s). Errors, each one line naming the fix:
//   Exit::unavailable "docker is not installed: install Debian's docker.io"
//   Exit::unavailable "no Docker engine answers at 'unix:///var/run/docker.sock': start it
//                      (systemctl start docker), or install Debian's docker.io"
//   Exit::no_perm     "the Docker engine at '...' refuses this user: permission denied: ..."
//   Exit::unavailable the engine did not answer in time, or docker's own message
[[nodiscard]] Status docker_engine_ready();

// The image is on the machine (`docker image inspect`; never a pull). Errors:
//   Exit::unavailable "image 'NAME@sha256:...' is not on this machine: load it first (docker pull
//                      or docker load), sion never pulls"
//   and docker_engine_ready()'s when the engine does not answer.
[[nodiscard]] Status docker_image_present(const std::string& image);

} // namespace sion::sandboxd
