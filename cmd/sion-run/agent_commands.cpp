// SPDX-License-Identifier: MIT
// sion-run create and list: agents, and the profiles that hold their defaults.
#include "cmd/sion-run/commands.hpp"
#include "lib/agents.hpp"
#include "lib/db_schema.hpp"
#include "lib/home.hpp"
#include "lib/listing.hpp"
#include "lib/log.hpp"
#include "lib/models/model.hpp"
#include "lib/policy.hpp"
#include "lib/text.hpp"

#include <cstdio>

namespace sion::run_cmd {

namespace {

Db open_or_die() {
    return or_die(open_state(or_die(prepare_home())));
}

} // namespace

int create_command(int argc, const char* const* argv) {
    const CommandSpec spec{
        "sion-run create",
        "sion-run create PROFILE [--model M]... [--autonomy LEVEL]",
        "Make an agent of PROFILE and print its id. The profile is made on first use with the\n"
        "models and autonomy level given; given again, they replace the profile's.",
        {
            {"model", 0, "M", "provider:model its sessions think with, first first (repeatable)",
             nullptr, ":provider"},
            {"autonomy", 0, "LEVEL", "L0 to L6: what runs without asking (L2)", nullptr,
             "L0 L1 L2 L3 L4 L5 L6"},
        },
        false,
        {":profile"},
    };
    Args args = parse_args_or_exit(spec, argc, argv);
    check_operands(args, 1, 1, "give a profile: sion-run create PROFILE");
    const std::string& name = args.operands()[0];
    or_die(check_profile_name(name));
    std::optional<int> autonomy;
    if (auto level = args.value("autonomy"))
        autonomy = or_die(parse_autonomy(*level));
    std::vector<std::string> models;
    for (const auto& m : args.values("model")) {
        (void)or_die(models::open_model(m));
        models.push_back(or_die(models::kept_model_spec(m)));
    }
    Db db = open_or_die();
    (void)or_die(ensure_profile(db, name, models, autonomy));
    Agent agent = or_die(create_agent(db, name));
    std::printf("%s\n", agent.id.c_str());
    return 0;
}

int list_command(int argc, const char* const* argv) {
    const CommandSpec spec{
        "sion-run list",
        "sion-run list [PROFILE] [--json]",
        "List the agents, of PROFILE or of every profile, oldest first: the short id, the\n"
        "profile, and the profile's autonomy level and models; or with --json one JSON object\n"
        "a line (schemas/run.list.json).",
        {json_lines_option()},
        false,
        {":profile"},
    };
    Args args = parse_args_or_exit(spec, argc, argv);
    check_operands(args, 0, 1);
    std::optional<std::string_view> profile;
    if (!args.operands().empty()) {
        or_die(check_profile_name(args.operands()[0]));
        profile = args.operands()[0];
    }
    Db db = open_or_die();
    if (profile && !or_die(find_profile(db, *profile)))
        die(make_error(Exit::no_input, "no profile '%s'", args.operands()[0].c_str()));
    const Listing listing(args.has("json"));
    for (const auto& a : or_die(list_agents(db, profile))) {
        Profile p = *or_die(find_profile(db, a.profile));
        std::string models;
        Json entry = Json::object();
        entry.set("agent", a.id);
        entry.set("profile", a.profile);
        entry.set("autonomy", autonomy_name(p.autonomy));
        Json listed = Json::array();
        for (const auto& m : p.models) {
            models += " " + m;
            listed.push(Json::string(m));
        }
        entry.set("models", std::move(listed));
        listing.print(entry, format("%s %s %s%s", short_agent_id(a.id).c_str(), a.profile.c_str(),
                                    autonomy_name(p.autonomy).c_str(), models.c_str()));
    }
    return 0;
}

} // namespace sion::run_cmd
