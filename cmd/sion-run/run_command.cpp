// SPDX-License-Identifier: MIT
// sion-run run: one run of an agent's session, new or continued.
#include "cmd/sion-run/commands.hpp"
#include "cmd/sion-run/started.hpp"
#include "lib/log.hpp"
#include "lib/text.hpp"

#include <fcntl.h>
#include <signal.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <thread>

namespace sion::run_cmd {

using namespace sion::session; // the engine these commands drive

namespace {

// A subagent's session ends with its parent's (session/tool_spawn.cpp): the parent holds the
// other end of the pipe SION_PARENT_FD names, whose end of file comes however the parent ends.
void follow_parent() {
    const char* given = std::getenv("SION_PARENT_FD"); // NOLINT(concurrency-mt-unsafe)
    if (given == nullptr)
        return;
    auto fd = parse_number(given, 3, 1023);
    ::unsetenv("SION_PARENT_FD"); // NOLINT(concurrency-mt-unsafe): no thread runs yet
    if (!fd || ::fcntl(static_cast<int>(*fd), F_SETFD, FD_CLOEXEC) != 0)
        return;
    std::thread([fd = static_cast<int>(*fd)] {
        char c = 0;
        for (;;) {
            ssize_t n = ::read(fd, &c, 1);
            if (n == 0 || (n < 0 && errno != EINTR))
                break;
        }
        (void)::kill(::getpid(), SIGTERM);
    }).detach();
}

} // namespace

std::vector<OptionSpec> run_options() {
    std::vector<OptionSpec> options = {
        {"task", 0, "TEXT", "what the agent is to do"},
        {"picture", 0, "FILE", "a PNG, JPEG, GIF or WebP picture for the task (repeatable)",
         nullptr, ":file"},
    };
    for (OptionSpec& o : session_options())
        options.push_back(std::move(o));
    options.insert(
        options.end() - 4,
        OptionSpec{"prompt", 0, "SERVER:PROMPT",
                   "the task is the server's prompt, its arguments NAME=VALUE operands"});
    return options;
}

void refuse_session(const Error& error) {
    std::fflush(stdout);
    std::fprintf(stderr, "error: %s\n", error.message().c_str());
    std::exit(to_int(Exit::no));
}

int run_command(int argc, const char* const* argv) {
    const CommandSpec spec{
        "sion-run run",
        "sion-run run PROFILE AGENT --task TEXT [options]\n"
        "sion-run run PROFILE AGENT --prompt SERVER:PROMPT [NAME=VALUE...] [options]",
        "Run a session of AGENT, of PROFILE, on the task: a new one, or the one --session names.",
        run_options(),
        false,
        {":profile", ":agent"},
    };
    Args args = parse_args_or_exit(spec, argc, argv);
    follow_parent();
    auto given_prompt = args.value("prompt");
    check_operands(args, 2, given_prompt ? SIZE_MAX : 2,
                   "give a profile and an agent: sion-run run PROFILE AGENT --task TEXT");
    auto task = args.value("task");
    if (task && given_prompt)
        die(usage_error("give the task with --task or --prompt, not both"));
    if (!given_prompt && (!task || task->empty()))
        die(usage_error("give the task: --task TEXT"));
    bool colour = or_die(colour_wanted(args, STDOUT_FILENO));
    Starting starting;
    starting.task = task;
    starting.pictures = task_pictures(args.values("picture"));
    if (given_prompt)
        starting.prompt =
            or_die(prompt_task(*given_prompt, std::vector<std::string>(args.operands().begin() + 2,
                                                                       args.operands().end())));
    starting.json = args.has("json");
    starting.colour = colour;
    Json pictures = Json::copy_of(starting.pictures);
    std::unique_ptr<Started> s = start_session(args, std::move(starting));
    std::string said = task ? *task : s->parts.task; // a prompt's task is the server's words
    return exit_status(run_once(*s, std::move(said), std::move(pictures)));
}

} // namespace sion::run_cmd
