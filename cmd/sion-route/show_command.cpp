// SPDX-License-Identifier: MIT
// sion-route show: the routed sessions of a profile, added up by route and by model.
#include "cmd/sion-route/commands.hpp"
#include "lib/cli.hpp"
#include "lib/listing.hpp"
#include "lib/log.hpp"
#include "lib/text.hpp"

#include <algorithm>
#include <cstdio>

namespace sion::route_cmd {

namespace {

Json sum_entry(const char* by, const routes::Sum& sum) {
    Json entry = Json::object();
    entry.set("by", by);
    entry.set(by, sum.key ? Json::string(*sum.key) : Json::null());
    entry.set("sessions", sum.sessions);
    entry.set("done", sum.done);
    entry.set("input_tokens", sum.input_tokens);
    entry.set("output_tokens", sum.output_tokens);
    return entry;
}

// A table of sums under a heading: the key's column as wide as its longest, numbers at the right.
void print_table(const char* heading, const std::vector<routes::Sum>& sums) {
    std::vector<std::string> keys;
    size_t width = routes::characters(heading);
    for (const routes::Sum& s : sums) {
        keys.push_back(s.key ? *s.key : "(no route)");
        width = std::max(width, routes::characters(keys.back()));
    }
    auto pad = [&](const std::string& key) {
        return key + std::string(width - routes::characters(key), ' ');
    };
    std::printf("%s  %8s  %6s  %12s  %13s\n", pad(heading).c_str(), "sessions", "done",
                "input tokens", "output tokens");
    for (size_t i = 0; i < sums.size(); ++i)
        std::printf("%s  %8lld  %6lld  %12lld  %13lld\n", pad(keys[i]).c_str(),
                    static_cast<long long>(sums[i].sessions), static_cast<long long>(sums[i].done),
                    static_cast<long long>(sums[i].input_tokens),
                    static_cast<long long>(sums[i].output_tokens));
}

} // namespace

int show_command(int argc, const char* const* argv) {
    const CommandSpec spec{
        "sion-route show",
        "sion-route show PROFILE [--json]",
        "Add up PROFILE's routed sessions, as $SION_HOME/agents/routes/PROFILE.jsonl notes\n"
        "each one's first run: sessions, those that ended done, and the tokens they used, by\n"
        "route and by the model first in line. With --json one JSON object a sum\n"
        "(schemas/route.show.json).",
        {json_lines_option()},
        false,
        {":profile"},
    };
    Args args = parse_args_or_exit(spec, argc, argv);
    check_operands(args, 1, 1, "give a profile: sion-route show PROFILE");
    State state = open_profile(args.operands()[0]);
    routes::Log log = or_die(routes::read_log(state.home, state.profile.name));
    if (log.damaged > 0)
        log_error("%zu line%s of '%s' %s not a routed session's, and passed over", log.damaged,
                  log.damaged == 1 ? "" : "s",
                  routes::log_path(state.home, state.profile.name).c_str(),
                  log.damaged == 1 ? "is" : "are");
    routes::Sums sums = routes::sum_log(log.lines);
    if (args.has("json")) {
        const Listing listing(true);
        for (const routes::Sum& s : sums.by_route)
            listing.print(sum_entry("route", s), "");
        for (const routes::Sum& s : sums.by_model)
            listing.print(sum_entry("model", s), "");
        return 0;
    }
    if (log.lines.empty()) {
        std::printf("no routed sessions of %s yet\n", state.profile.name.c_str());
        return 0;
    }
    print_table("route", sums.by_route);
    std::printf("\n");
    print_table("model", sums.by_model);
    return 0;
}

} // namespace sion::route_cmd
