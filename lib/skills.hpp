// SPDX-License-Identifier: MIT
// Skills (seed 000, "Skills' scripts"): a folder holding SKILL.md — front matter (name,
// description, and metadata naming the hosts its scripts may reach, sion-network, and the
// operator's secrets they get, sion-secrets), then the instructions — and its files (scripts/…).
//
// A profile's skills are kept in sion.db (table skills) with where their folder is:
// - installed: from a released bundle (.tar.gz or .zip), checked whole before anything is written,
//   into $SION_HOME/skills/<profile>/<name>/; each file's SHA-256 is kept, so a script changed
//   afterwards is known;
// - added: the operator's own folder, wherever it is, used in place;
// - written: a skill an agent wrote with skill_write, which holds instructions only, in
//   $SION_HOME/skills/<profile>/<name>/.
//
// A bundle holds the skill's files at its top, or in one folder there, with SHA256SUMS beside
// SKILL.md: "<64 hex digits>  <path>" for every other file (sha256sum's own format), and nothing it
// does not list. Refused, with one line and nothing written: an entry that is not a file or a
// folder (a link, a device, a FIFO), an absolute path or one with "..", a file it does not list or
// that does not match its sum, a listed file that is missing, more than 1,000 entries, a file over
// 16 MiB, 64 MiB in all once unpacked (a bomb stops being read there), a malformed SKILL.md, or a
// name the profile already has.
#pragma once

#include "lib/db.hpp"
#include "lib/json.hpp"
#include "lib/result.hpp"

#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

namespace sion::skills {

inline constexpr size_t k_max_entries = 1000;
inline constexpr uint64_t k_max_file = uint64_t{16} << 20;
inline constexpr uint64_t k_max_total = uint64_t{64} << 20;

// SKILL.md, read.
struct SkillText {
    std::string name;
    std::string description;
    std::vector<std::string> hosts;   // metadata's sion-network
    std::vector<std::string> secrets; // metadata's sion-secrets
    std::string front;                // the front matter as written, "---" lines included
    std::string instructions;         // what follows it
};

// Reads SKILL.md's text. The front matter is YAML's simple form: "key: value" lines, a value plain
// or quoted, "metadata:" followed by indented "key: value" lines; a metadata list is words apart by
// spaces or commas, or "[a, b]". Keys it does not know are kept but not read. Exit::data, one line:
// "SKILL.md has no front matter: begin it with a line '---'", "SKILL.md's front matter has no
// name", "SKILL.md's name 'Word Count' is not 1 to 64 of a-z, 0-9 and '-'", "… has no description",
// "SKILL.md's description is longer than 1024 characters", "… names the secret 'x y', which is not
// a variable's name".
[[nodiscard]] Result<SkillText> parse_skill_md(std::string_view text);

// Whether `name` is a skill's name: 1 to 64 of a-z, 0-9 and '-', not starting or ending with '-'.
[[nodiscard]] bool skill_name_ok(std::string_view name);

enum class Origin { installed, added, written };
[[nodiscard]] std::string_view origin_name(Origin origin);

struct Skill {
    std::string profile;
    std::string name;
    std::string description;
    std::string dir; // absolute
    Origin origin = Origin::added;
    std::map<std::string, std::string> files; // installed: path -> SHA-256 (hex), SKILL.md too
    std::string source;                       // installed: the bundle as given
    int64_t created = 0;
};

[[nodiscard]] Result<std::vector<Skill>> list_skills(Db& db, std::string_view profile);
// Exit::no_input "profile coder has no skill 'x' (sion agent skills list coder)".
[[nodiscard]] Result<Skill> find_skill(Db& db, std::string_view profile, std::string_view name);

// The skill's files, relative to its folder and sorted: regular files only, no folder passed over,
// links neither followed nor listed, at most k_max_entries.
[[nodiscard]] Result<std::vector<std::string>> skill_files(const std::string& dir);

// Installs the bundle at `bundle` (a .tar.gz, .tgz or .zip; libarchive tells them by their bytes)
// for `profile` (which must exist): checked whole as the header says, then written to a new folder
// and renamed into place, and recorded. Errors name the bundle: "cannot install skills/wc.tar.gz:
// it holds a link 'scripts/x' (a bundle holds files and folders only)". Nothing is left behind on
// any refusal or failure.
[[nodiscard]] Result<Skill> install_bundle(Db& db, const std::string& home,
                                           std::string_view profile, const std::string& bundle);

// Records the operator's folder `dir` (its SKILL.md read) as a skill of `profile`, used in place.
[[nodiscard]] Result<Skill> add_folder(Db& db, std::string_view profile, const std::string& dir);

// Writes a skill's instructions (skill_write): for a skill that exists, SKILL.md's front matter is
// kept as it is (its description replaced when `description` is not empty) and what follows it
// replaced; for a new one, `description` is needed, and $SION_HOME/skills/<profile>/<name>/SKILL.md
// is made holding its name and description. An installed skill's kept sum of SKILL.md follows the
// new text; its scripts are not touched. Exit::data for instructions over 256 KiB, a new skill
// without a description, and a description of more than one line or 1024 characters.
[[nodiscard]] Result<Skill> write_instructions(Db& db, const std::string& home,
                                               std::string_view profile, std::string_view name,
                                               std::string_view description,
                                               std::string_view instructions);

// Removes the record, and the folder of an installed or written skill (an added one's is the
// operator's, and stays). Whether there was one.
[[nodiscard]] Result<bool> remove_skill(Db& db, std::string_view profile, std::string_view name);

// For skill_run: `script` (relative to the skill's folder, as the model gave it) checked: beneath
// the folder, a regular file reached through no link, and for an installed skill one of the
// bundle's files whose SHA-256 is still the one installed. Its text's start is returned for the
// interpreter's choice. Exit::no_perm "the script scripts/x.py of word-count changed since it was
// installed: reinstall the skill (sion agent skills install)", Exit::no_input "word-count has no
// script 'scripts/y.py'".
struct Script {
    std::string path;                     // relative, normalised
    std::vector<std::string> interpreter; // from its "#!" line, else its extension
};

[[nodiscard]] Result<Script> check_script(const Skill& skill, std::string_view script);

// The skill as `skills show --json` prints it, and `skills list --json` each.
[[nodiscard]] Json skill_json(const Skill& skill, const SkillText* text);

} // namespace sion::skills
