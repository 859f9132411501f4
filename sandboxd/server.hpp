// SPDX-License-Identifier: MIT
// sion-sandbox serve: the pipes protocol on stdin and stdout, every command run in one warm sandbox
// made for the session (bwrap started once, `init --serve` inside).
//
// Methods: sandbox/exec (params and result in lib/proto/sandbox_exec.hpp; its timeout is cut to the
// session's), sandbox/describe (the sandbox as `sion-sandbox describe` prints it:
// proto::config_to_json) and sandbox/close (the commands already asked for end first, each within
// its time limit, and are answered; then close answers {} and the session ends; a request after it
// is refused, -32600).
// Several requests may be in flight; answers come as commands end. At the end of input the
// session ends likewise, once every request is answered. SIGTERM ends it sooner: with bubblewrap,
// what still runs gets SIGTERM, and SIGKILL half a second later, each answered as it ends, and
// the session ends with 143 (Docker's commands run to their end). The command layer asks for
// SIGTERM when its parent dies, so a session killed at any point takes its sandbox along.
//
// Exit statuses serve() returns: 0 at the end; 69 when the sandbox cannot be made; 70 when it
// ended on its own; 74 when stdout failed; 143 after SIGTERM.
#pragma once

#include "lib/proto/sandbox_exec.hpp"
#include "lib/result.hpp"
#include "sandboxd/config.hpp"

#include <optional>
#include <string>

namespace sion::sandboxd {

[[nodiscard]] Result<int> serve(const Config& config);

// One command, as `sion-sandbox exec` runs it: in a fresh bubblewrap sandbox (exec_once), in the
// warm sandbox made for it alone when the declared network has hosts (its proxy needs a loop on
// both sides), or in a container (docker_exec). `input` is the command's stdin; nullopt passes
// this process's with bubblewrap, and gives /dev/null otherwise.
[[nodiscard]] Result<proto::ExecResult> exec_one(const Config& config,
                                                 const proto::ExecRequest& request,
                                                 const std::optional<std::string>& input);

} // namespace sion::sandboxd
