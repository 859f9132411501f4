// SPDX-License-Identifier: MIT
// Project instructions: the AGENTS.md files a session reads when it begins, the convention the
// agents people use share ("a README for agents"). The operator's own ($SION_HOME/AGENTS.md) comes
// first, then the workspace's from its root down to the directory sion-run started in, the nearer
// after, which take precedence where they disagree. They are read once, when a session begins, and
// kept with it (a message of role "instructions"), so that the system prompt's start stays the same
// for every run of the session: a change to a file counts from the next session.
#pragma once

#include "lib/confined.hpp"
#include "lib/json.hpp"
#include "lib/result.hpp"

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace sion::session {

// What all the files together may hold, in bytes.
constexpr size_t k_instructions_bound = size_t{32} << 10;

struct InstructionFile {
    std::string path; // "$SION_HOME/AGENTS.md", or relative to the workspace: "src/AGENTS.md"
    bool operator_own = false; // $SION_HOME's: the operator's words, not the project's
    uint64_t bytes = 0;        // the file's size (0 when it was not read)
    std::string text;          // what is kept of it: all, its start, or nothing
    std::string
        left_out; // "" when kept whole; else why not: "cut at N of M bytes: …", "left out: …"
};

// The files, in the order the prompt gives them. The bound is shared out from the highest
// precedence down: the operator's file, then the nearest of the workspace's to its root, each cut
// at a character's end when it does not fit and the farther ones left out. A file that is not
// UTF-8 text, larger than 1 MiB, or, in the workspace, reached through a link that leads out of it
// is left out, saying why (the operator's may be a link anywhere); a missing one is passed over.
// `home` is $SION_HOME; `workspace` is nullptr without one (then only the operator's is read), and
// `start` is where sion-run started,
// relative to the workspace's root ("" for the root itself, or when it started outside).
// `project` false leaves the workspace's out (--no-project-instructions).
[[nodiscard]] std::vector<InstructionFile> read_instructions(const std::string& home,
                                                             const Confined* workspace,
                                                             const std::string& start,
                                                             bool project);

// Where sion-run started, as read_instructions() takes it: `cwd` (absolute, links resolved)
// relative to `root`, or "" when it is not beneath it.
[[nodiscard]] std::string start_within(const std::string& root, const std::string& cwd);

// The message that keeps them with the session, {"role":"instructions","files":[{"path",
// "operator","bytes","text","left_out"}]}, and the files read back from it.
[[nodiscard]] Json instructions_message(const std::vector<InstructionFile>& files);
[[nodiscard]] std::vector<InstructionFile> instructions_of(JsonView message);

// What the system prompt says of them: "" when none was kept.
[[nodiscard]] std::string instructions_prompt(const std::vector<InstructionFile>& files);

// The transcript's line naming the files read: "instructions: $SION_HOME/AGENTS.md, AGENTS.md,
// src/AGENTS.md (cut at 2048 of 40960 bytes: ...)"; "" when there were none.
[[nodiscard]] std::string instructions_line(const std::vector<InstructionFile>& files);

} // namespace sion::session
