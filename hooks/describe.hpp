// SPDX-License-Identifier: MIT
// Hooks in words, for `list`, the marks on what hooks add, reasons and the log.
#pragma once

#include "hooks/hooks_file.hpp"

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

namespace sion::hooks {

// `word` as a POSIX shell would read it back: as it is when it has only letters, digits and
// "%+,-./:=@_", else in single quotes ('it'\''s'); '' for an empty word. A word with control
// characters is quoted as bash's $'...' ($'two\nlines'), so that what is shown stays one line.
[[nodiscard]] std::string shell_quote(std::string_view word);

// A command's words, each shell_quote()d, joined by spaces: "/home/me/log-call.sh --to 'my log'".
[[nodiscard]] std::string command_text(const std::vector<std::string>& command);

// The line `list` prints for hook `number`: its number, its event, for a tool event its patterns
// ("*" when it has none: every tool), its timeout when it is not the default, a colon and its
// command:
//   1 before-tool shell: /home/me/guard.sh
//   2 after-tool github_* gitlab_* (timeout 5 s): /home/me/log-call.sh
//   3 run-end: /usr/bin/logger -t sion
[[nodiscard]] std::string hook_line(const Hook& hook, size_t number);

} // namespace sion::hooks
