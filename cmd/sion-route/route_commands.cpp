// SPDX-License-Identifier: MIT
// sion-route set, sorter, list and remove: a profile's routes and its sorter, kept in sion.db.
#include "cmd/sion-route/commands.hpp"
#include "lib/cli.hpp"
#include "lib/db_schema.hpp"
#include "lib/home.hpp"
#include "lib/listing.hpp"
#include "lib/log.hpp"
#include "lib/text.hpp"

#include <cstdio>

namespace sion::route_cmd {

namespace {

using routes::Route;
using routes::When;

// The most characters a route's --longer-than may say.
constexpr int64_t k_most_characters = 1000000000;

std::string joined(const std::vector<std::string>& words) {
    std::string out;
    for (const std::string& w : words)
        out += (out.empty() ? "" : " ") + w;
    return out;
}

// How a route is sent tasks, as `set` is told it: --about "…", --when pictures, --when long
// --longer-than N (when N is not the default).
std::string how_sent(const Route& r) {
    if (r.when == When::about)
        return "--about " + canonical_json(Json::string(one_line(r.about)));
    std::string out = "--when " + std::string(routes::when_name(r.when));
    if (r.when == When::long_task && r.longer_than != routes::k_long_task)
        out += format(" --longer-than %lld", static_cast<long long>(r.longer_than));
    return out;
}

Json route_entry(const Route& r, size_t place) {
    Json entry = Json::object();
    entry.set("profile", std::string_view(r.profile));
    entry.set("route", std::string_view(r.name));
    entry.set("place", static_cast<int64_t>(place));
    entry.set("models", Json::strings(r.models));
    if (r.when == When::about) {
        entry.set("about", std::string_view(r.about));
    } else {
        entry.set("when", routes::when_name(r.when));
        if (r.when == When::long_task)
            entry.set("longer_than", r.longer_than);
    }
    return entry;
}

// The lines list prints, the columns padded to the longest of each.
std::vector<std::string> route_lines(const std::vector<Route>& rs) {
    size_t name_width = 0;
    size_t models_width = 0;
    for (const Route& r : rs) {
        name_width = std::max(name_width, routes::characters(r.name));
        models_width = std::max(models_width, routes::characters(joined(r.models)));
    }
    std::vector<std::string> out;
    for (const Route& r : rs) {
        std::string models = joined(r.models);
        out.push_back(r.name + std::string(name_width - routes::characters(r.name) + 2, ' ')
                      + models + std::string(models_width - routes::characters(models) + 2, ' ')
                      + how_sent(r));
    }
    return out;
}

// The sorter: the model set, else the profile's first model, else none.
struct Sorter {
    std::optional<std::string> model;
    bool set = false;
};

Sorter sorter_of(State& state) {
    std::optional<std::string> set = or_die(routes::sorter(state.db, state.profile.name));
    if (set)
        return {set, true};
    if (state.profile.models.empty())
        return {};
    return {state.profile.models[0], false};
}

std::string sorter_line(const Sorter& sorter, const std::string& profile) {
    if (sorter.set)
        return "sorter: " + *sorter.model;
    if (!sorter.model)
        return "sorter: none (the profile has no models: set one with sion-route sorter " + profile
               + " MODEL)";
    return "sorter: " + *sorter.model + " (the profile's first model)";
}

Json sorter_entry(const Sorter& sorter, const std::string& profile) {
    Json entry = Json::object();
    entry.set("profile", std::string_view(profile));
    entry.set("sorter", sorter.model ? Json::string(*sorter.model) : Json::null());
    entry.set("set", sorter.set);
    return entry;
}

std::string checked_model(const std::string& spec) {
    return or_die(models::kept_model_spec(spec));
}

} // namespace

State open_profile(const std::string& name) {
    or_die(check_profile_name(name));
    std::string home = or_die(prepare_home());
    Db db = or_die(open_state(home));
    std::optional<Profile> profile = or_die(find_profile(db, name));
    if (!profile)
        die(make_error(Exit::no_input, "no profile '%s': make it with sion agent create %s",
                       name.c_str(), name.c_str()));
    return State{std::move(db), std::move(*profile), std::move(home)};
}

int set_command(int argc, const char* const* argv) {
    const CommandSpec spec{
        "sion-route set",
        "sion-route set PROFILE ROUTE --model M [--model M]... (--about TEXT | --when "
        "pictures|long [--longer-than N]) [--json]",
        "Set the route ROUTE of PROFILE: its models, first first, and what sends a task to it:\n"
        "the sorter's choice by the words of --about, or --when the task has pictures or is\n"
        "long (past 40000 characters, or --longer-than N). A route set again keeps its place.",
        {
            {"model", 0, "M", "provider:model[#effort] the route's tasks go to (repeatable)",
             nullptr, ":provider"},
            {"about", 0, "TEXT", "what tasks the route is for, in words for the sorter"},
            {"when", 0, "WHAT", "pictures or long: what sends a task here without asking", nullptr,
             "pictures long"},
            {"longer-than", 0, "N", "with --when long: past how many characters (40000)"},
            {"json", 0, nullptr, "print the route as list --json does"},
        },
        false,
        {":profile", ":route"},
    };
    Args args = parse_args_or_exit(spec, argc, argv);
    check_operands(args, 2, 2,
                   "give a profile and a route: sion-route set PROFILE ROUTE --model M");
    Route route;
    route.profile = args.operands()[0];
    route.name = args.operands()[1];
    or_die(check_profile_name(route.profile));
    or_die(routes::check_route_name(route.name));
    for (const std::string& m : args.values("model"))
        route.models.push_back(checked_model(m));
    if (route.models.empty())
        die(usage_error("give the route's models: --model M"));
    auto about = args.value("about");
    auto when = args.value("when");
    if (about && when)
        die(usage_error("give --about or --when, not both"));
    if (!about && !when)
        die(usage_error("give what the route is for: --about TEXT, or --when pictures|long"));
    auto longer = args.value("longer-than");
    if (about) {
        if (about->find_first_not_of(" \t\n") == std::string::npos)
            die(usage_error("--about needs words: what tasks the route is for"));
        route.about = *about;
    } else if (*when == "pictures") {
        route.when = When::pictures;
    } else if (*when == "long") {
        route.when = When::long_task;
    } else {
        die(usage_error("unknown --when '" + *when + "': give pictures or long"));
    }
    if (longer) {
        if (route.when != When::long_task)
            die(usage_error("--longer-than goes with --when long"));
        auto n = parse_number(*longer, 1, k_most_characters);
        if (!n)
            die(usage_error("invalid --longer-than '" + *longer
                            + "': give a number of characters, 1 or more"));
        route.longer_than = *n;
    }
    State state = open_profile(route.profile);
    or_die(routes::set_route(state.db, route));
    std::vector<Route> all = or_die(routes::list_routes(state.db, route.profile));
    std::vector<std::string> lines = route_lines(all);
    const Listing listing(args.has("json"));
    for (size_t i = 0; i < all.size(); ++i)
        if (all[i].name == route.name)
            listing.print(
                route_entry(all[i], i + 1),
                "route " + route.name + " of " + route.profile + ": "
                    + lines[i].substr(lines[i].find_first_not_of(' ', route.name.size())));
    return 0;
}

int sorter_command(int argc, const char* const* argv) {
    const CommandSpec spec{
        "sion-route sorter",
        "sion-route sorter PROFILE [MODEL | --unset] [--json]",
        "Set the model that chooses a route by the routes' --about, or with --unset go back to\n"
        "the profile's first model; with no MODEL, say which model it is. With --json one JSON\n"
        "object (schemas/route.sorter.json).",
        {{"unset", 0, nullptr, "let the profile's first model sort again"},
         {"json", 0, nullptr, "print the sorter as one JSON object"}},
        false,
        {":profile", ":provider"},
    };
    Args args = parse_args_or_exit(spec, argc, argv);
    check_operands(args, 1, 2, "give a profile: sion-route sorter PROFILE [MODEL]");
    bool unset = args.has("unset");
    if (unset && args.operands().size() == 2)
        die(usage_error("give a MODEL or --unset, not both"));
    std::string model;
    if (args.operands().size() == 2)
        model = checked_model(args.operands()[1]);
    State state = open_profile(args.operands()[0]);
    if (!model.empty() || unset)
        or_die(routes::set_sorter(state.db, state.profile.name, model));
    Sorter sorter = sorter_of(state);
    Listing(args.has("json"))
        .print(sorter_entry(sorter, state.profile.name), sorter_line(sorter, state.profile.name));
    return 0;
}

int list_command(int argc, const char* const* argv) {
    const CommandSpec spec{
        "sion-route list",
        "sion-route list PROFILE [--json]",
        "List PROFILE's routes in the order --when is tried: the name, the models, and what\n"
        "sends a task there; then the sorter. With --json one JSON object a route\n"
        "(schemas/route.list.json).",
        {json_lines_option()},
        false,
        {":profile"},
    };
    Args args = parse_args_or_exit(spec, argc, argv);
    check_operands(args, 1, 1, "give a profile: sion-route list PROFILE");
    State state = open_profile(args.operands()[0]);
    std::vector<Route> all = or_die(routes::list_routes(state.db, state.profile.name));
    const Listing listing(args.has("json"));
    std::vector<std::string> lines = route_lines(all);
    for (size_t i = 0; i < all.size(); ++i)
        listing.print(route_entry(all[i], i + 1), lines[i]);
    if (!listing.json()) {
        if (all.empty())
            std::printf("no routes: every task runs on the profile's models\n");
        std::printf("%s\n", sorter_line(sorter_of(state), state.profile.name).c_str());
    }
    return 0;
}

int remove_command(int argc, const char* const* argv) {
    const CommandSpec spec{
        "sion-route remove",
        "sion-route remove PROFILE ROUTE [--json]",
        "Remove the route ROUTE of PROFILE; the log of the sessions it took stays. With --json,\n"
        "print the route removed as list --json did.",
        {{"json", 0, nullptr, "print the route removed as one JSON object"}},
        false,
        {":profile", ":route"},
    };
    Args args = parse_args_or_exit(spec, argc, argv);
    check_operands(args, 2, 2, "give a profile and a route: sion-route remove PROFILE ROUTE");
    or_die(routes::check_route_name(args.operands()[1]));
    State state = open_profile(args.operands()[0]);
    std::vector<Route> all = or_die(routes::list_routes(state.db, state.profile.name));
    size_t place = 0;
    while (place < all.size() && all[place].name != args.operands()[1])
        ++place;
    if (place == all.size()
        || !or_die(routes::remove_route(state.db, state.profile.name, args.operands()[1])))
        die(make_error(Exit::no, "no route '%s' in profile '%s' (sion-route list %s)",
                       args.operands()[1].c_str(), state.profile.name.c_str(),
                       state.profile.name.c_str()));
    Listing(args.has("json"))
        .print(route_entry(all[place], place + 1),
               "removed route " + args.operands()[1] + " of " + state.profile.name);
    return 0;
}

} // namespace sion::route_cmd
