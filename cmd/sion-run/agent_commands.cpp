// SPDX-License-Identifier: MIT
// sion-run create and list: agents, and the profiles that hold their defaults.
#include "cmd/sion-run/commands.hpp"
#include "lib/agents.hpp"
#include "lib/home.hpp"
#include "lib/log.hpp"
#include "lib/models/model.hpp"
#include "lib/policy.hpp"
#include "lib/state.hpp"

#include <cstdio>

namespace sion::run_cmd {

namespace {

Db open_or_die() {
    auto home = prepare_home();
    if (!home)
        die(home.error());
    auto db = open_state(*home);
    if (!db)
        die(db.error());
    return std::move(*db);
}

} // namespace

int create_command(int argc, const char* const* argv) {
    const CommandSpec spec{
        "sion-run create",
        "sion-run create PROFILE [--model M]... [--autonomy LEVEL]",
        "Make an agent of PROFILE and print its id. The profile is made on first use with the\n"
        "models and autonomy level given; given again, they replace the profile's.",
        {
            {"model", 0, "M", "provider:model its sessions think with, first first (repeatable)"},
            {"autonomy", 0, "LEVEL", "L0 to L6: what runs without asking (L2)"},
        },
    };
    Args args = parse_args_or_exit(spec, argc, argv);
    if (args.operands().size() != 1)
        die(usage_error(args.operands().empty()
                            ? "give a profile: sion-run create PROFILE"
                            : "unexpected operand '" + args.operands()[1] + "'"));
    const std::string& name = args.operands()[0];
    if (Status ok = check_profile_name(name); !ok)
        die(ok.error());
    std::optional<int> autonomy;
    if (auto level = args.value("autonomy")) {
        auto n = parse_autonomy(*level);
        if (!n)
            die(n.error());
        autonomy = *n;
    }
    std::vector<std::string> models;
    for (const auto& m : args.values("model")) {
        if (auto opened = models::open_model(m); !opened)
            die(opened.error());
        auto kept = models::kept_model_spec(m);
        if (!kept)
            die(kept.error());
        models.push_back(std::move(*kept));
    }
    Db db = open_or_die();
    auto profile = ensure_profile(db, name, models, autonomy);
    if (!profile)
        die(profile.error());
    auto agent = create_agent(db, name);
    if (!agent)
        die(agent.error());
    std::printf("%s\n", agent->id.c_str());
    return 0;
}

int list_command(int argc, const char* const* argv) {
    const CommandSpec spec{
        "sion-run list",
        "sion-run list [PROFILE]",
        "List the agents, of PROFILE or of every profile, oldest first: the short id, the\n"
        "profile, and the profile's autonomy level and models.",
        {},
    };
    Args args = parse_args_or_exit(spec, argc, argv);
    if (args.operands().size() > 1)
        die(usage_error("unexpected operand '" + args.operands()[1] + "'"));
    std::optional<std::string_view> profile;
    if (!args.operands().empty()) {
        if (Status ok = check_profile_name(args.operands()[0]); !ok)
            die(ok.error());
        profile = args.operands()[0];
    }
    Db db = open_or_die();
    if (profile) {
        auto found = find_profile(db, *profile);
        if (!found)
            die(found.error());
        if (!*found)
            die(make_error(Exit::no_input, "no profile '%s'", args.operands()[0].c_str()));
    }
    auto agents = list_agents(db, profile);
    if (!agents)
        die(agents.error());
    for (const auto& a : *agents) {
        auto p = find_profile(db, a.profile);
        if (!p)
            die(p.error());
        std::string models;
        for (const auto& m : (*p)->models)
            models += " " + m;
        std::printf("%s %s %s%s\n", short_agent_id(a.id).c_str(), a.profile.c_str(),
                    autonomy_name((*p)->autonomy).c_str(), models.c_str());
    }
    return 0;
}

} // namespace sion::run_cmd
