// SPDX-License-Identifier: MIT
// The user's hooks around a session's calls and runs, fired through `sion-hooks fire EVENT`
// (sion-hooks(1)): one short process an event, the event JSON on its stdin, one verdict line back.
// While $SION_HOME has no hooks file, none is started; the file is looked for at each event, so a
// hook added during a session counts from the next one. The unit tests of the call pipeline stand in
// for sion-hooks by overriding fire().
#pragma once

#include "lib/json.hpp"
#include "lib/result.hpp"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace sion::session {

// A hook that ran, as sion-hooks tells of it: for the trace.
struct HookRun {
    int64_t hook = 0;    // its number in the hooks file
    std::string command; // its command, as the file gives it
    int64_t start_ns = 0;
    int64_t end_ns = 0;
    std::string failed; // how it failed, "" when it did not
};

struct HookVerdict {
    bool allow = true;
    std::string reason; // !allow: what the model is told
    std::string added;  // after-tool, run-start: what the hooks printed, each marked
    bool asked = false; // there are hooks, and sion-hooks was asked
    std::vector<HookRun> runs;
};

class Hooks {
public:
    // No hooks at all.
    Hooks() = default;
    Hooks(const Hooks&) = default;
    Hooks(Hooks&&) = default;
    Hooks& operator=(const Hooks&) = default;
    Hooks& operator=(Hooks&&) = default;
    virtual ~Hooks() = default;

    // The hooks of $SION_HOME (`home`), checked with `sion-hooks check` when the file exists: a
    // file that others may change, or that is malformed, keeps the session from running (its
    // message, Exit::no_perm or Exit::data; Exit::not_found when sion-hooks is not installed).
    [[nodiscard]] static Result<Hooks> open(const std::string& home);

    // Fires `event` ("before-tool", …) with `fields` (tool, input, outcome, said, ended, …), to
    // which the event, the session and the workspace are added. Without hooks, the verdict of none.
    // A sion-hooks that fails or answers no verdict blocks a before-tool call (a hook that cannot
    // be asked must not be skipped) and adds nothing to the others.
    [[nodiscard]] virtual HookVerdict fire(const char* event, Json fields);

    void set_session(std::string session, std::string workspace) {
        m_session = std::move(session);
        m_workspace = std::move(workspace);
    }

private:
    Hooks(std::string file, std::string program)
        : m_file(std::move(file)), m_program(std::move(program)) {}

    std::string m_file;    // $SION_HOME/agents/hooks.json; "" for no hooks at all
    std::string m_program; // sion-hooks, once found
    std::string m_session;
    std::string m_workspace;
};

} // namespace sion::session
