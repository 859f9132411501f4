// SPDX-License-Identifier: MIT
// sion-sandbox exec: one command in a fresh sandbox; its output, cut at the cap, and its status.
#include "cmd/sion-sandbox/commands.hpp"
#include "lib/fd.hpp"
#include "lib/json.hpp"
#include "lib/log.hpp"
#include "lib/proto/sandbox_exec.hpp"
#include "lib/text.hpp"
#include "sandboxd/config.hpp"
#include "sandboxd/preflight.hpp"
#include "sandboxd/server.hpp"

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>

namespace sion::sandbox_cmd {

namespace {

using namespace sion::sandboxd;

constexpr size_t k_request_max = size_t{16} << 20;

CommandSpec exec_spec() {
    return {
        "sion-sandbox exec",
        "sion-sandbox exec [options] -- COMMAND [ARGS...]\n"
        "sion-sandbox exec [options] < REQUEST.json",
        "Run COMMAND in a fresh sandbox and exit with its status: 124 when it ran out of time,\n"
        "126 or 127 when it cannot be run or found. Its stdout and stderr are its own, each cut\n"
        "at --output bytes with a line saying how much was cut. Without COMMAND, read one\n"
        "sandbox/exec params object (command or argv, stdin, env, timeout) from stdin.",
        sandbox_options(true),
        true, // COMMAND's own options are its own: `exec ls -l` needs no "--"
        {":command", ":file..."},
    };
}

// The request: the operands as an argv (stdin passed through), or a params object read from stdin.
struct Request {
    proto::ExecRequest request;
    std::optional<std::string> input;
};

// Whether the command can read this process's stdin as it goes: a fresh bubblewrap sandbox
// inherits it; a container, or the warm sandbox of the declared network, gets bytes read first.
bool streams_stdin(const Config& config) {
    return config.backend == BackendKind::bwrap
           && !(config.network == Network::declared && !config.allow_hosts.empty());
}

Result<Request> read_request(const Args& args, const Config& config) {
    Request r;
    if (!args.operands().empty()) {
        r.request.argv = args.operands();
        if (!streams_stdin(config) && ::isatty(STDIN_FILENO) != 1) {
            SION_TRY(std::string input, read_all(STDIN_FILENO, k_request_max));
            r.input = std::move(input);
        }
        return r;
    }
    if (::isatty(STDIN_FILENO) == 1)
        return usage_error("a command is needed: sion-sandbox exec [options] -- COMMAND [ARGS...]");
    SION_TRY(std::string text, read_all(STDIN_FILENO, k_request_max));
    SION_TRY(Json json, Json::parse(text));
    SION_TRY(r.request, proto::exec_request_from_json(json));
    r.input = r.request.input;
    return r;
}

int print_text(const proto::ExecResult& result, std::chrono::milliseconds limit, uint64_t memory) {
    int out = write_stdout(result.stdout_text);
    Status err = write_all(STDERR_FILENO, result.stderr_text);
    // How it ended is said on a line of its own, even after a process killed mid-line.
    const std::string& text = result.stderr_text;
    if ((result.timed_out || result.signal) && !text.empty() && text.back() != '\n')
        err = write_all(STDERR_FILENO, "\n");
    (void)err; // stderr failing is nothing we can report anywhere
    if (out != 0)
        die_of_stdout_error(out);
    say_how_it_ended(result, limit, memory);
    return result.exit;
}

} // namespace

void say_how_it_ended(const proto::ExecResult& result, std::chrono::milliseconds limit,
                      uint64_t memory) {
    if (result.timed_out) {
        log_error("the command ran out of time (%s s) and was killed",
                  format("%g", static_cast<double>(limit.count()) / 1000).c_str());
    } else if (result.out_of_memory) {
        log_error("out of memory (%s for the sandbox): a process of the command was killed",
                  size_text(memory).c_str());
    } else if (result.signal) {
        const char* abbrev = sigabbrev_np(*result.signal);
        log_error("the command was killed by SIG%s (%s)", abbrev != nullptr ? abbrev : "?",
                  strsignal(*result.signal)); // NOLINT(concurrency-mt-unsafe): one thread
    }
}

int exec_command(int argc, const char* const* argv) {
    const CommandSpec spec = exec_spec();
    Args args = parse_args_or_exit(spec, argc, argv);
    auto config = config_from_args(args);
    if (!config)
        die(config.error());
    if (Status ok = preflight(*config); !ok)
        die(ok.error());
    auto request = read_request(args, *config);
    if (!request)
        die(request.error());
    auto result = exec_one(*config, request->request, request->input);
    if (!result)
        die(result.error());
    if (!args.has("json")) {
        auto limit = std::chrono::duration_cast<std::chrono::milliseconds>(config->limits.timeout);
        return print_text(*result, std::min(request->request.timeout.value_or(limit), limit),
                          config->limits.memory);
    }
    std::string line = proto::exec_result_to_json(*result).dump() + "\n";
    if (int err = write_stdout(line); err != 0)
        die_of_stdout_error(err);
    return result->exit;
}

} // namespace sion::sandbox_cmd
