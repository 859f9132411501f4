// SPDX-License-Identifier: MIT
// The front door: which program a command line of `sion` names, and where that program is.
#pragma once

#include "lib/result.hpp"

#include <optional>
#include <string>
#include <vector>

namespace sion::front_door {

// What `sion WORDS…` runs: the program and the arguments it gets.
struct Dispatch {
    std::string word;                 // the word that named it, for messages: "routes"
    std::string program;              // "sion-route"
    std::vector<std::string> args;    // what follows the program's name in its argv
};

// Maps sion's operands (after its own options) to a program: `agent run …` to sion-run, `help X`
// to `man sion-X`. An unknown or missing word is a usage error whose message carries the usage
// line.
[[nodiscard]] Result<Dispatch> route(const std::vector<std::string>& operands);

// `sion __complete WORD... CURRENT`, which the completion scripts run: what CURRENT may become
// among sion's own words is printed (print_completions()), and nothing is returned; once the words
// name a program, what to run instead: that program's `__complete` with its words.
[[nodiscard]] std::optional<Dispatch> complete(const std::vector<std::string>& words);

// sion and the programs its words name, each once: what the completion scripts complete.
[[nodiscard]] std::vector<std::string> programs();

// Where `program` is: $SION_EXEC_PATH, then <dir of this executable>/../libexec/sion, then $PATH.
// Exit::not_found with "'WORD' is not installed: PROGRAM not found" when it is nowhere.
[[nodiscard]] Result<std::string> locate(const Dispatch& dispatch);

// Replaces this process with the program. Returns only on failure.
[[nodiscard]] Error exec(const std::string& path, const Dispatch& dispatch);

} // namespace sion::front_door
