// SPDX-License-Identifier: MIT
// sion-route pick as the router of a session's task.
#include "session/routing.hpp"

#include "lib/child.hpp"
#include "lib/programs.hpp"
#include "lib/routes.hpp"

namespace sion::session {

namespace {

// What sion-route may print: the choice, a line.
constexpr size_t k_answer_max = size_t{1} << 20;

// The choice sion-route printed, or why there is none.
Result<Json> ask_sion_route(std::string_view profile, std::string_view task, size_t pictures) {
    SION_TRY(std::string program, find_program("sion-route"));
    Json request = Json::object();
    request.set("profile", profile);
    request.set("task", task);
    request.set("pictures", static_cast<int64_t>(pictures));
    ChildSpec spec;
    spec.argv = {program, "pick"};
    spec.env = own_environment();
    SION_TRY(RunResult r, run(std::move(spec), request.dump() + "\n", k_answer_max));
    if (r.status != 0)
        return Error(Exit::unavailable, first_said(r, "sion-route"));
    SION_TRY(Json answer, Json::parse(r.out));
    JsonView v = answer.view();
    if (!v.is_object() || !(v.get("route").is_null() || v.get("route").is_string())
        || !v.string("why") || !v.strings("models"))
        return make_error(Exit::data, "sion-route answered what is not a choice: %s",
                          r.out.substr(0, r.out.find('\n')).c_str());
    return answer;
}

} // namespace

Result<std::optional<Routed>> route_task(Db& db, const Profile& profile, std::string_view task,
                                         size_t pictures) {
    SION_TRY(std::vector<routes::Route> rs, routes::list_routes(db, profile.name));
    if (rs.empty())
        return std::optional<Routed>();
    Routed routed;
    routed.record = Json::object();
    routed.record.set("role", "route");
    // Decided here when no sorter need be asked, as sion-route would: no process to start.
    std::optional<routes::Choice> decided =
        routes::choose_without_sorter(rs, routes::Task{task, pictures});
    auto answer = decided ? Result<Json>(Error(Exit::software, ""))
                          : ask_sion_route(profile.name, task, pictures);
    if (!decided && !answer)
        decided = routes::Choice{std::nullopt,
                                 "sion-route could not be asked: " + answer.error().message()};
    if (decided) {
        routed.models = routes::models_for(rs, *decided, profile.models);
        routed.record.set("route", decided->route ? Json::string(*decided->route) : Json::null());
        routed.record.set("why", std::string_view(decided->why));
        routed.record.set("models", Json::strings(routed.models));
        return std::optional<Routed>(std::move(routed));
    }
    JsonView v = answer->view();
    for (const char* member : {"route", "why", "models", "sorter", "usage"})
        if (v.get(member).exists())
            routed.record.set(member, Json::copy_of(v.get(member)));
    routed.models = v.strings("models").value_or(std::vector<std::string>{});
    JsonView usage = v.get("usage");
    routed.usage.input_tokens = usage.integer_or("input_tokens", 0).value_or(0);
    routed.usage.output_tokens = usage.integer_or("output_tokens", 0).value_or(0);
    return std::optional<Routed>(std::move(routed));
}

std::string routed_line(JsonView record) {
    routes::Choice choice;
    if (auto route = record.string("route"))
        choice.route = std::string(*route);
    choice.why = std::string(record.string_or("why", "").value_or(""));
    return routes::choice_line(choice);
}

} // namespace sion::session
