// SPDX-License-Identifier: MIT
// apply_patch's patches: a unified diff (diff -u, git diff) or a patch in the "*** Begin Patch"
// form (Codex's), parsed into one structure, then planned against the files as they are: every
// file's new text worked out in memory, or the first hunk that does not fit, before anything is
// written.
//
// A hunk is found by its lines, whatever line numbers the patch gives: the kept and removed lines
// are looked for exactly, then ignoring whitespace at the ends of lines. With a stated line (a
// unified diff's "@@ -12,5 +12,6 @@"), a match there, or the nearest one within a few lines of it
// (the drift of earlier hunks counted), is taken; otherwise the match must be the only one in the
// file after the hunk before it, or the only one in the whole file. A Codex hunk's "@@ text"
// anchors (one or more) are lines found in turn, and its lines are the first match after the
// last one. A match in two places with nothing to choose between them is refused as ambiguous.
//
// Line endings are the file's: kept lines keep theirs, added lines get what most of the file's
// lines end with (CRLF or LF), whatever the patch's are. A file without a final newline keeps
// having none unless a unified diff's "\ No newline at end of file" says it changes.
//
// Errors are Exit::data, for the model: parse_patch() names the patch's line; plan_patch() names
// the file and the hunk ("a.py, hunk 2 of 3 (patch line 14)"), says why, and quotes the nearest
// lines of the file. Messages start "cannot apply the patch, so no file was changed: ".
#pragma once

#include "lib/result.hpp"

#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace sion::code {

// Larger patches are refused before they are read.
inline constexpr size_t k_max_patch = size_t{8} << 20;

enum class PatchFormat { unified, codex };

struct HunkLine {
    char kind = ' ';  // ' ' kept, '-' removed, '+' added
    std::string text; // without its prefix and line ending
};

struct Hunk {
    std::vector<HunkLine> lines;
    std::vector<std::string>
        anchors;           // Codex "@@ text" lines before it, in order ("@@" alone: none)
    bool stated = false;   // a unified diff's numbers were given
    int64_t old_start = 0; // stated: its first old line (for an insertion: the line after which)
    int64_t old_count = 0; // stated: how many old lines it says it has
    bool at_end = false;   // must end at the file's end (*** End of File, or the marker below)
    bool old_no_newline = false; // "\ No newline at end of file" after its last old line
    bool new_no_newline = false; // … after its last new line
    size_t patch_line = 0;       // where it starts in the patch, from 1
};

enum class FileAction { add, update, remove };

struct FilePatch {
    FileAction action = FileAction::update;
    std::string path;    // as the patch names it, git's a/ and b/ taken off
    std::string move_to; // update: the name it is moved to, "" when it keeps its own
    // update, in a diff without git's headers whose "---" and "+++" name different files
    // ("--- a.py.orig", "+++ a.py"): the other name, used when `path` is not there (as patch(1)
    // does). Only git's headers move a file.
    std::string other_path;
    std::vector<Hunk> hunks;
    bool mode_only = false; // a git section that changes only modes: nothing to do
    size_t patch_line = 0;
};

struct Patch {
    PatchFormat format = PatchFormat::unified;
    std::vector<FilePatch> files;
};

// Parses either form (told apart by a "*** Begin Patch" line). Tolerated: a ``` fence around the
// patch; CRLF line endings; text before a unified diff's first file (a commit message, "Index:"
// lines); git's extended headers (index, modes, similarity, rename from/to); "@@" hunk lines with
// no numbers; an empty line inside a hunk as an empty kept line; wrong line counts in "@@" lines.
// Refused (Exit::data): more than k_max_patch bytes, binary patches, copies, a patch that stops
// inside a hunk or before "*** End Patch", headers without their pair, lines that fit no form.
[[nodiscard]] Result<Patch> parse_patch(std::string_view text);

// What a file holds now: its text, std::nullopt when there is no such file, or an Error (its
// message is passed on to the model) when it cannot be read or is not a file a patch may change.
using ReadText = std::function<Result<std::optional<std::string>>(const std::string& path)>;

struct FileChange {
    std::string path;
    std::optional<std::string> text; // the new text; std::nullopt: the file is removed
};

struct PatchPlan {
    // One per file whose text changes, in the order the patch first names them: what to write
    // (stage beside each file, then rename all) and what to remove (last).
    std::vector<FileChange> changes;
    // What was done, a line per file section: "updated a.py (2 hunks)", "added b.py",
    // "deleted c.py", "moved d.py to e.py (1 hunk)".
    std::vector<std::string> done;
};

// The patch applied in memory, each file read once through `read` (several sections on one file
// apply in turn). Paths are used as they are: make them the workspace's first.
[[nodiscard]] Result<PatchPlan> plan_patch(const Patch& patch, const ReadText& read);

} // namespace sion::code
