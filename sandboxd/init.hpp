// SPDX-License-Identifier: MIT
// The init inside the sandbox (`sion-sandbox init`, hidden): it sets the limits on itself, so that
// what it starts inherits them, and runs commands. It is the sandbox's pid 1 (bwrap --as-pid-1),
// and not dumpable (PR_SET_DUMPABLE 0, set first thing by the command layer and kept across a
// fork): though commands run as the same user, none has CAP_SYS_PTRACE in the sandbox's user
// namespace, so none can ptrace it or open its /proc/PID/mem, environ or fd entries, whatever Yama
// says. (bwrap's own pid 1 would be such a process the commands could ptrace.)
//
// init --serve, for a whole session, forks (split_reaper()): pid 1 reaps every orphan, and its
// child, the loop, answers init/exec on its stdin and stdout (bwrap's pipes to sion-sandbox serve)
// with lib/uv_child, each command its own process group with its own time limit and output cap,
// several at once. The params are sandbox/exec's (exec.hpp), with "output" (the cap in bytes)
// added; the answer is the result object. A command that cannot be found or run is an answer
// (exit 127 or 126, the reason in its stderr), not an error. It sends init/ready once it listens,
// and at the end of its input kills what still runs and exits.
//
// init --exec runs one command as its own process group, reaps every orphan the command leaves,
// and reports how the command ended on a status pipe; when it exits, the kernel kills whatever is
// left in the sandbox. The command's extra environment (a request's env, run's --env) reaches it
// on a descriptor (--env-fd, env_block()), never on bwrap's command line, where every user of the
// machine could read it in /proc/PID/cmdline; the warm init gets each command's in its init/exec
// request, on its stdin.
#pragma once

#include "sandboxd/config.hpp"

#include "lib/child.hpp"
#include "lib/fd.hpp"
#include "lib/json.hpp"
#include "lib/result.hpp"

#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace sion::sandboxd {

// Closes every descriptor from 3 up but `keep` (-1: none): what bwrap or anyone passed by mistake
// must not reach a command.
void close_stray_fds(int keep);

// Forks the warm init's loop. In the child returns nullopt: it goes on to init_serve(). In the
// parent, pid 1, reaps every process that ends until the child has, and returns the child's status
// as the shell's $? (the code, or 128 + the signal). Call it before any thread runs.
// Errors: Exit::os when fork or waiting fails.
[[nodiscard]] Result<std::optional<int>> split_reaper();

// Runs `argv` with this process's environment and working directory and the limits set on this
// process, waits for it while reaping every other child that ends, and returns how it ended and
// what it used (the CPU time and peak memory of it and the descendants it waited for).
// Errors: the command cannot be found (Exit::not_found) or run (Exit::cannot_exec), as
// "cannot run 'x': No such file or directory"; limits that cannot be set (Exit::os).
[[nodiscard]] Result<ExitStatus> init_exec(const Limits& limits, const std::vector<std::string>& argv);

// The warm init, on fds 0 and 1, until its input ends. The limits are set on init itself, and
// every command inherits them (RLIMIT_CPU counts init's own time too, a few milliseconds a
// hundred commands). With `proxy_socket` (the declared network's, bound into the sandbox), a
// forwarder listens on 127.0.0.1 and every command's environment points HTTP_PROXY and the others
// at it. Errors: limits that cannot be set, the forwarder, the loop, the pipes.
[[nodiscard]] Status init_serve(const Limits& limits, const std::string& proxy_socket);

// init/exec's answer for a command that ran (or could not start: `run` holds the Error), its
// output cut at `cap`.
[[nodiscard]] Json init_result(const Result<RunResult>& run, uint64_t cap);

// The extra environment on its way to init --exec: "NAME=value" entries, each ended by a NUL, as
// /proc/PID/environ holds them. A value stops at a NUL of its own, as execve(2) would stop it.
[[nodiscard]] std::string
env_block(const std::vector<std::pair<std::string, std::string>>& vars);

// env_block()'s text read back. Exit::data for an entry with no name, or a last one with no NUL:
//   "the environment given to init holds 'X', not NAME=value"
[[nodiscard]] Result<std::vector<std::pair<std::string, std::string>>>
parse_env_block(std::string_view block);

// Reads an env_block() from `fd` to its end (k_env_block_max bytes at most), closes it, and sets
// each variable in this process's environment, replacing one of the same name, for the command to
// inherit. Call it before any thread runs. Errors: read_all()'s, parse_env_block()'s.
inline constexpr size_t k_env_block_max = size_t{16} << 20;
[[nodiscard]] Status take_env(Fd fd);

// The status line: {"exit":N,"signal":S|null,"cpu_ms":N,"max_rss_kib":N} and a newline.
[[nodiscard]] std::string report_line(const ExitStatus& status);

} // namespace sion::sandboxd
