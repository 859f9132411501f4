// SPDX-License-Identifier: MIT
// The session's sandbox: `sion-sandbox serve`, started once per session, asked over its pipes to
// run each command (sandbox/exec) and closed at the end (sandbox/close). Its commands may be asked
// for from several threads at once (rpc::Caller): serve runs them side by side.
#pragma once

#include "lib/child.hpp"
#include "lib/fd.hpp"
#include "lib/proto/sandbox_exec.hpp"
#include "lib/proto/sandbox_options.hpp"
#include "lib/result.hpp"
#include "lib/rpc/caller.hpp"
#include "lib/rpc/connection.hpp"
#include "session/sandbox_lock.hpp"

#include <atomic>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace sion::session {

// What of this process's environment sion-sandbox is started with: where programs and the runtime's
// home are, the locale, and what docker needs to find its engine.
[[nodiscard]] std::vector<std::string> sandbox_environment();

// Asks `sion-sandbox describe OPTIONS…` what sandbox the options describe (a session with a shell
// asks its serve instead: SandboxClient::describe()): sion-sandbox alone judges them and runs
// pre-flight, so its refusal is returned as it said it, with its status
// (Exit::usage for a malformed number, Exit::config for the seeds' refusals). Anything else that
// goes wrong is Exit::unavailable "cannot ask sion-sandbox about the sandbox: …". Within 30 s.
[[nodiscard]] Result<proto::Config> describe_sandbox(const std::vector<std::string>& options);

class SandboxClient {
public:
    // Starts `sion-sandbox serve OPTIONS…` (found as find_program() finds programs) and runs a
    // trivial command in it, so a sandbox that does not work is known before the session starts.
    // serve judges the options, pre-flight included, as describe does: its refusal is returned as
    // it said it, with its status (Exit::usage or Exit::config). Given the session's SandboxLock,
    // serve holds it too (fd 3) and is named in it. Other errors (Exit::unavailable) carry what
    // sion-sandbox said: "the sandbox does not work: <its message>".
    [[nodiscard]] static Result<std::unique_ptr<SandboxClient>>
    start(const std::vector<std::string>& options, SandboxLock* lock = nullptr);

    SandboxClient(const SandboxClient&) = delete;
    SandboxClient& operator=(const SandboxClient&) = delete;
    // Closes the sandbox: asks sion-sandbox to end and waits for it (briefly; then kills it).
    ~SandboxClient();

    // The sandbox serve runs commands in, as it judged its options (sandbox/describe): what
    // describe_sandbox() gives for the same options. Exit::unavailable when the sandbox is gone.
    [[nodiscard]] Result<proto::Config> describe();

    // Runs `command` with /bin/sh -c in /workspace, `env` added to the sandbox's environment.
    // Exit::unavailable when the sandbox is gone.
    [[nodiscard]] Result<proto::ExecResult>
    exec(const std::string& command, std::optional<double> timeout_seconds,
         const std::vector<std::pair<std::string, std::string>>& env = {});
    // Any request sandbox/exec takes: an argv, a skill's script (ExecRequest::skill).
    [[nodiscard]] Result<proto::ExecResult> exec(const proto::ExecRequest& request);

private:
    SandboxClient(Child child, Fd errors)
        : m_child(std::move(child)), m_errors(std::move(errors)) {}

    // What sion-sandbox wrote to its stderr, its last line, for messages.
    [[nodiscard]] std::string last_error();
    [[nodiscard]] Error gone(const Error& why);
    // After serve ended at the start: its refusal of the options, if that is why.
    [[nodiscard]] std::optional<Error> refusal();

    Child m_child;
    Fd m_errors; // a temporary file holding sion-sandbox's stderr
    std::unique_ptr<rpc::Connection> m_rpc;
    std::unique_ptr<rpc::Caller> m_caller; // calls from several threads (read calls side by side)
    std::atomic<bool> m_dead = false;
    std::mutex m_gone; // one gone() at a time
};

} // namespace sion::session
