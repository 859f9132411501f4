// SPDX-License-Identifier: MIT
// Where sion's programs are found, for the front door and for programs that start one another
// (sion-run starts sion-sandbox serve): git's exec path.
#pragma once

#include "lib/result.hpp"

#include <string>
#include <string_view>

namespace sion {

// The path of the executable `program` ("sion-sandbox"), looked for in order in $SION_EXEC_PATH,
// <the running program's directory>/../libexec/sion, and each directory of $PATH. Exit::not_found,
// "sion-sandbox not found", when none has it.
[[nodiscard]] Result<std::string> find_program(std::string_view program);

} // namespace sion
