// SPDX-License-Identifier: MIT
// sion-run: agent sessions (sion-run(1)). `run` runs one, `chat` is a console of one; create,
// list, sessions and show keep the agents and what their sessions did; credential keeps the sealed
// credentials, which setup asks for.
#include "cmd/sion-run/commands.hpp"

#include "lib/cli.hpp"
#include "lib/known.hpp"

namespace sion::run_cmd {
// credential_commands.cpp
[[nodiscard]] int credential_command(int argc, const char* const* argv);
// skill_commands.cpp
[[nodiscard]] int skills_command(int argc, const char* const* argv);
[[nodiscard]] int setup_command(int argc, const char* const* argv);
// chatgpt_commands.cpp
[[nodiscard]] int chatgpt_command(int argc, const char* const* argv);
} // namespace sion::run_cmd

int main(int argc, char** argv) {
    using namespace sion::run_cmd;
    const sion::Program program{
        "sion-run",
        "Run an agent's session: it thinks with a model and acts through tools, every call\n"
        "passing through one policy; chat is a console, each message a run of one session.\n"
        "create makes an agent, list shows them, sessions lists their sessions and show\n"
        "prints one's transcript; credential keeps credentials sealed, and setup asks for\n"
        "the common ones; chatgpt signs in with a ChatGPT account.\n"
        "The options follow the command.",
        {
            {"run", run_command, "run PROFILE AGENT --task TEXT [options]"},
            {"chat", chat_command, "chat PROFILE AGENT [options]"},
            {"create", create_command, "create PROFILE [--model M]... [--autonomy LEVEL]"},
            {"list", list_command, "list [PROFILE] [--json]"},
            {"sessions", sessions_command, "sessions [AGENT] [--json]"},
            {"show", show_command, "show SESSION [--color WHEN] [--json]"},
            {"credential", credential_command,
             "credential add|remove NAME\n"
             "credential list [--json]"},
            {"skills", skills_command,
             "skills install PROFILE BUNDLE\n"
             "skills add PROFILE FOLDER\n"
             "skills list|show|remove PROFILE [NAME] [--json]"},
            {"setup", setup_command, "setup"},
            {"chatgpt", chatgpt_command,
             "chatgpt login|status|logout\n"
             "chatgpt models [--json]"},
        },
        run_options(),
        true,
        sion::known_names,
    };
    return sion::run_program(program, argc, argv);
}
