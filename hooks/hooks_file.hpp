// SPDX-License-Identifier: MIT
// The hooks file, $SION_HOME/agents/hooks.json (sion-hooks(5), schemas/hooks.schema.json):
//   {"hooks": [{"event": "before-tool", "tools": ["shell"], "timeout": 30,
//               "command": ["/home/me/guard.sh"]}, ...]}
// Hooks are numbered from 1 in file order; the number is what `list` shows and `remove` takes.
//
// Its contents decide what runs as the user around every call, so it is trusted only when nobody
// but the user (or root) can change it or its directory (lib/home.hpp, check_private), and read
// strictly: a member this version does not know, or a value out of range, makes the whole file
// invalid rather than a hook that fires on the wrong calls. Nothing here prints or exits.
#pragma once

#include "hooks/event.hpp"
#include "lib/result.hpp"

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

namespace sion::hooks {

inline constexpr int k_default_timeout_s = 30;
inline constexpr int k_max_timeout_s = 3600;
// A hooks file larger than this is refused (Exit::data).
inline constexpr size_t k_max_hooks_file = size_t{1} << 20;

struct Hook {
    Event event = Event::before_tool;
    std::vector<std::string> tools; // --tool patterns; none: every tool (tool events only)
    int timeout_s = k_default_timeout_s;
    std::vector<std::string> command; // argv; argv[0] is an absolute path or a bare name
};

// Whether `hook` may be kept: tool patterns only for tool events and each valid (pattern.hpp), a
// timeout of 1 to 3600 seconds, a command whose first word is an absolute path or a bare name
// (looked up on PATH when the hook runs). Errors (Exit::data) say what is wrong without naming the
// hook: "run-start hooks are not for tools: give no --tool".
[[nodiscard]] Status check_hook(const Hook& hook);

// The hooks in the JSON text of a hooks file. Errors (Exit::data) name the hook by its number:
// "hook 2: member 'event': unknown event 'before-tol' (give before-tool, after-tool, run-start or
// run-end)", "invalid JSON at byte 12", "hook 1: unknown member 'tool' (a hook has event, tools,
// timeout and command)", "invalid JSON: member 'hooks[1].tools' is given twice".
[[nodiscard]] Result<std::vector<Hook>> parse_hooks(std::string_view text);

// The text of a hooks file that holds `hooks`: one hook a line, members in a fixed order, so that
// the file reads well and parse_hooks(render_hooks(h)) == h.
[[nodiscard]] std::string render_hooks(const std::vector<Hook>& hooks);

// $SION_HOME/agents/hooks.json, for the home `home`.
[[nodiscard]] std::string hooks_path(const std::string& home);

// Refuses (Exit::no_perm) a hooks file that others may change, as check_private words it: the file
// if it exists (it, and the directory that holds it), then that directory if it exists (it, and the
// directory above, $SION_HOME): whoever may write either may replace or delete the file. A missing
// file in a safe directory is fine.
[[nodiscard]] Status check_hooks_safe(const std::string& path);

// check_hooks_safe(), then the hooks of the file at `path`; none when it does not exist. Errors:
// those of check_hooks_safe; Exit::data "invalid hooks file 'P': <why>" for a file parse_hooks
// refuses or that is larger than k_max_hooks_file; Exit::io when it cannot be read.
[[nodiscard]] Result<std::vector<Hook>> load_hooks(const std::string& path);

// Replaces the file at `path` with render_hooks(hooks): written beside it with mode 0600, synced
// and renamed over it, so that a reader sees the old file or the new one, never a part. The
// directory must exist. Callers that read, change and write hold lock_directory() around it.
[[nodiscard]] Status save_hooks(const std::string& path, const std::vector<Hook>& hooks);

} // namespace sion::hooks
