// SPDX-License-Identifier: MIT
// sion-hooks's commands; each takes the argv that follows the program's name (argv[0] is the
// command's word) and returns the exit status.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace sion::hooks_cmd {

[[nodiscard]] int add_command(int argc, const char* const* argv);
[[nodiscard]] int list_command(int argc, const char* const* argv);
[[nodiscard]] int remove_command(int argc, const char* const* argv);
[[nodiscard]] int fire_command(int argc, const char* const* argv);
[[nodiscard]] int check_command(int argc, const char* const* argv);

// $SION_HOME/agents/hooks.json, or die (exit 78) when SION_HOME is not usable. With `prepare`,
// $SION_HOME and its agents directory are made if missing (as add does).
[[nodiscard]] std::string hooks_file_or_die(bool prepare);

// What completions offer for a "hook": each hook's number, its event and command's first word.
[[nodiscard]] std::vector<std::string> known_hooks(std::string_view kind,
                                                   const std::vector<std::string>& operands);

} // namespace sion::hooks_cmd
