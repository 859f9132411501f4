// SPDX-License-Identifier: MIT
// sion-run skills install|add|list|show|remove: a profile's skills (lib/skills.hpp).
#include "cmd/sion-run/commands.hpp"
#include "lib/confined.hpp"
#include "lib/db_schema.hpp"
#include "lib/hash.hpp"
#include "lib/home.hpp"
#include "lib/listing.hpp"
#include "lib/log.hpp"
#include "lib/skills.hpp"
#include "lib/text.hpp"

#include <cstdio>

namespace sion::run_cmd {

namespace {

// "word-count (installed): Count the words …"
std::string skill_line(const skills::Skill& s) {
    return s.name + " (" + std::string(skills::origin_name(s.origin))
           + "): " + one_line(s.description);
}

int show(const skills::Skill& skill, bool json) {
    std::optional<skills::SkillText> text;
    if (auto folder = Confined::open(skill.dir, skill.dir))
        if (auto md = folder->read("SKILL.md", size_t{256} << 10))
            if (auto parsed = skills::parse_skill_md(*md))
                text = std::move(*parsed);
    std::vector<std::string> files = or_die(skills::skill_files(skill.dir));
    // A file of an installed skill is "changed" when its bytes are no longer the release's.
    auto state = [&](const std::string& path) -> std::string {
        if (skill.origin != skills::Origin::installed)
            return "";
        auto kept = skill.files.find(path);
        if (kept == skill.files.end())
            return "not in its release";
        auto folder = Confined::open(skill.dir, skill.dir);
        auto bytes =
            folder ? folder->read(path, skills::k_max_file) : Result<std::string>(folder.error());
        return bytes && sha256_hex(*bytes) == kept->second ? "" : "changed since it was installed";
    };
    if (json) {
        Json j = skills::skill_json(skill, text ? &*text : nullptr);
        Json list = Json::array();
        for (const auto& f : files) {
            Json entry = Json::object();
            entry.set("path", std::string_view(f));
            std::string s = state(f);
            if (!s.empty())
                entry.set("state", std::string_view(s));
            list.push(std::move(entry));
        }
        j.set("files", std::move(list));
        std::printf("%s\n", j.view().dump().c_str());
        return 0;
    }
    std::printf("%s\n", skill_line(skill).c_str());
    std::printf("folder: %s\n", skill.dir.c_str());
    if (!skill.source.empty())
        std::printf("installed from: %s\n", skill.source.c_str());
    if (text) {
        std::string hosts, secrets;
        for (const auto& h : text->hosts)
            hosts += (hosts.empty() ? "" : " ") + h;
        for (const auto& s : text->secrets)
            secrets += (secrets.empty() ? "" : " ") + s;
        std::printf("network: %s\n", hosts.empty() ? "none" : hosts.c_str());
        std::printf("secrets: %s\n", secrets.empty() ? "none" : secrets.c_str());
    } else {
        std::printf("SKILL.md: cannot be read\n");
    }
    for (const auto& f : files) {
        std::string s = state(f);
        std::printf("  %s%s\n", f.c_str(), s.empty() ? "" : (" (" + s + ")").c_str());
    }
    return 0;
}

} // namespace

int skills_command(int argc, const char* const* argv) {
    const CommandSpec spec{
        "sion-run skills",
        "sion-run skills install PROFILE BUNDLE\n"
        "sion-run skills add PROFILE FOLDER\n"
        "sion-run skills list PROFILE [--json]\n"
        "sion-run skills show PROFILE NAME [--json]\n"
        "sion-run skills remove PROFILE NAME",
        "A profile's skills: install one from a released bundle (a .tar.gz or .zip whose files\n"
        "are checked against its SHA256SUMS before anything is written), add the operator's own\n"
        "folder (used in place), list them, show one (where it is, the hosts and secrets its\n"
        "scripts get, its files, and which changed since they were installed), and remove one.\n"
        "With --json, list prints one JSON object a line and show one object.",
        {json_lines_option()},
        false,
        {"install add list show remove", ":profile", ":file"},
    };
    Args args = parse_args_or_exit(spec, argc, argv);
    const auto& ops = args.operands();
    std::string what(pick_command(args, spec));
    bool json = args.has("json");
    if (json && what != "list" && what != "show")
        die(usage_error("--json goes with list and show: sion-run skills list PROFILE --json"));
    if (what == "list") {
        check_operands(args, 2, 2, "give the profile: sion-run skills list PROFILE");
    } else {
        const char* operand = what == "install" ? "BUNDLE" : what == "add" ? "FOLDER" : "NAME";
        check_operands(args, 3, 3,
                       format("give the profile and the %s: sion-run skills %s PROFILE %s",
                              what == "install" ? "bundle"
                              : what == "add"   ? "folder"
                                                : "skill's name",
                              what.c_str(), operand));
    }
    std::string home = or_die(prepare_home());
    Db db = or_die(open_state(home));
    const std::string& profile = ops[1];
    if (what == "install") {
        skills::Skill s = or_die(skills::install_bundle(db, home, profile, ops[2]));
        std::printf("installed %s for %s: %zu files checked against its SHA256SUMS\n",
                    s.name.c_str(), profile.c_str(), s.files.size() - 1);
        return 0;
    }
    if (what == "add") {
        skills::Skill s = or_die(skills::add_folder(db, profile, ops[2]));
        std::printf("added %s for %s, from %s\n", s.name.c_str(), profile.c_str(), s.dir.c_str());
        return 0;
    }
    if (what == "list") {
        const Listing listing(json);
        for (const auto& s : or_die(skills::list_skills(db, profile)))
            listing.print(skills::skill_json(s, nullptr), skill_line(s));
        return 0;
    }
    if (what == "show")
        return show(or_die(skills::find_skill(db, profile, ops[2])), json);
    if (!or_die(skills::remove_skill(db, profile, ops[2])))
        die(make_error(Exit::no_input, "profile %s has no skill '%s' (sion agent skills list %s)",
                       profile.c_str(), ops[2].c_str(), profile.c_str()));
    return 0;
}

} // namespace sion::run_cmd
