// SPDX-License-Identifier: MIT
// `sion completion bash|zsh|fish`: the shells' completion scripts. Each is the same few lines for
// every program: it runs `PROGRAM __complete WORD...` (lib/cli.hpp's print_completions()) and
// hands what that prints to the shell, so that what is offered comes from the tables --help is
// made of.
#pragma once

#include "lib/cli.hpp"
#include "lib/result.hpp"

#include <string>
#include <string_view>
#include <vector>

namespace sion::front_door {

// `sion completion SHELL`'s command line; its operand offers the shells.
[[nodiscard]] CommandSpec completion_spec();

// The script for `shell` that completes each of `programs`. Exit::usage for another shell:
// "unknown shell 'tcsh': give bash, zsh or fish".
[[nodiscard]] Result<std::string> completion_script(std::string_view shell,
                                                    const std::vector<std::string>& programs);

} // namespace sion::front_door
