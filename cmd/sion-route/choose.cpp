// SPDX-License-Identifier: MIT
// sion-route test and pick: where a task goes, asking the sorter when no --when holds.
#include "cmd/sion-route/commands.hpp"
#include "lib/cli.hpp"
#include "lib/fd.hpp"
#include "lib/hash.hpp"
#include "lib/log.hpp"
#include "lib/secret_bytes.hpp"
#include "lib/text.hpp"

#include <unistd.h>

#include <cstdio>

namespace sion::route_cmd {

namespace {

// What the sorter may write: a route's name, with room for a model that says more.
constexpr int64_t k_sorter_tokens = 256;
// The most a pick request may be: a task of some 4 million characters.
constexpr size_t k_request_max = size_t{16} << 20;

// Asks the sorter which route's --about fits; any failure is a choice of none, with why.
routes::Choice ask_sorter(const std::vector<routes::Route>& rs, const routes::Task& task,
                          const std::string& spec, models::Usage& usage) {
    std::string said = "the sorter (" + spec + ") ";
    auto model = models::open_model(spec);
    if (!model)
        return {std::nullopt, said + "could not be asked: " + model.error().message()};
    auto random = random_bytes(8);
    if (!random)
        return {std::nullopt, said + "could not be asked: " + random.error().message()};
    std::string mark = "TASK-" + to_hex(*random);
    std::string system = routes::sorter_system(rs, mark);
    Json message = Json::object();
    message.set("role", "user");
    message.set("text", routes::sorter_message(task, mark));
    std::vector<Json> conversation;
    conversation.push_back(std::move(message));
    models::Request request{system, {}, conversation, k_sorter_tokens, models::Purpose::sort};
    auto answer = (*model)->answer(request);
    if (!answer)
        return {std::nullopt, said + "failed: " + answer.error().message()};
    usage = answer->usage;
    return routes::read_answer(rs, answer->text, spec);
}

routes::Task task_of(JsonView request, std::string& text) {
    if (!request.is_object())
        die(make_error(Exit::data, "invalid request: %s, not an object", request.type_name()));
    routes::Task task;
    auto given = request.string("task");
    if (!given)
        die(given.error().context("invalid request"));
    text = std::string(*given);
    task.text = text;
    auto count = request.integer_or("pictures", 0);
    if (!count)
        die(count.error().context("invalid request"));
    int64_t pictures = *count;
    if (pictures < 0)
        die(make_error(Exit::data, "invalid request: member 'pictures' is %lld, not 0 or more",
                       static_cast<long long>(pictures)));
    task.pictures = static_cast<size_t>(pictures);
    return task;
}

} // namespace

Result<Picked> choose(State& state, const routes::Task& task) {
    Picked picked;
    SION_TRY(std::vector<routes::Route> rs, routes::list_routes(state.db, state.profile.name));
    if (auto decided = routes::choose_without_sorter(rs, task)) {
        picked.choice = std::move(*decided);
    } else {
        SION_TRY(std::optional<std::string> sorter, routes::sorter(state.db, state.profile.name));
        if (!sorter && !state.profile.models.empty())
            sorter = state.profile.models[0];
        if (!sorter) {
            picked.choice = {std::nullopt, "no route's --when holds, and there is no sorter to "
                                           "ask: the profile has no models"};
        } else {
            picked.sorter = *sorter;
            picked.choice = ask_sorter(rs, task, *sorter, picked.usage);
        }
    }
    picked.models = routes::models_for(rs, picked.choice, state.profile.models);
    return picked;
}

Json picked_json(const Picked& picked) {
    Json out = Json::object();
    out.set("route", picked.choice.route ? Json::string(*picked.choice.route) : Json::null());
    out.set("why", std::string_view(picked.choice.why));
    out.set("models", Json::strings(picked.models));
    if (picked.sorter) {
        out.set("sorter", std::string_view(*picked.sorter));
        Json usage = Json::object();
        usage.set("input_tokens", picked.usage.input_tokens);
        usage.set("output_tokens", picked.usage.output_tokens);
        out.set("usage", std::move(usage));
    }
    return out;
}

int test_command(int argc, const char* const* argv) {
    const CommandSpec spec{
        "sion-route test",
        "sion-route test PROFILE TASK [--picture FILE]... [--json]",
        "Say which route TASK would take in a session of PROFILE, and why, and the models it\n"
        "would run on, first first. It runs nothing, but when no --when holds it asks the\n"
        "sorter, a model call that costs tokens, and says so. With --json one JSON object\n"
        "(schemas/route-choice.schema.json).",
        {
            {"picture", 0, "FILE", "a picture given with the task (repeatable)", nullptr, ":file"},
            {"json", 0, nullptr, "print the choice as one JSON object"},
        },
        false,
        {":profile"},
    };
    Args args = parse_args_or_exit(spec, argc, argv);
    check_operands(args, 2, 2, "give a profile and a task: sion-route test PROFILE TASK");
    const std::string& text = args.operands()[1];
    if (text.empty())
        die(usage_error("give the task: sion-route test PROFILE TASK"));
    std::vector<std::string> pictures = args.values("picture");
    for (const std::string& p : pictures)
        if (::access(p.c_str(), R_OK) != 0)
            die(sys_error(Exit::no_input, errno, "cannot read picture '%s'", p.c_str()));
    State state = open_profile(args.operands()[0]);
    Picked picked = or_die(choose(state, routes::Task{text, pictures.size()}));
    if (args.has("json")) {
        std::printf("%s\n", picked_json(picked).dump().c_str());
        return 0;
    }
    std::printf("%s\n", routes::choice_line(picked.choice).c_str());
    std::string models;
    for (const std::string& m : picked.models)
        models += (models.empty() ? "" : ", ") + m;
    std::printf("models: %s\n", models.empty() ? "none (the profile has none)" : models.c_str());
    if (picked.sorter)
        std::printf("the sorter was asked: %lld tokens in, %lld out\n",
                    static_cast<long long>(picked.usage.input_tokens),
                    static_cast<long long>(picked.usage.output_tokens));
    return 0;
}

int pick_command(int argc, const char* const* argv) {
    const CommandSpec spec{
        "sion-route pick",
        "sion-route pick < REQUEST.json",
        "Route a session's task: read one JSON object on stdin ({\"profile\", \"task\",\n"
        "\"pictures\"}, schemas/route-request.schema.json) and print the choice as one JSON line\n"
        "(schemas/route-choice.schema.json). sion-run calls it when a session of a profile with\n"
        "routes starts.",
        {},
    };
    Args args = parse_args_or_exit(spec, argc, argv);
    check_operands(args, 0, 0);
    auto input = read_all(STDIN_FILENO, k_request_max);
    if (!input)
        die(input.error().exit() == Exit::data
                ? make_error(Exit::data, "invalid request: larger than %zu bytes", k_request_max)
                : input.error().context("cannot read the request"));
    auto request = Json::parse(*input);
    if (!request)
        die(request.error().context("invalid request"));
    std::string text;
    routes::Task task = task_of(request->view(), text);
    auto profile = request->view().string("profile");
    if (!profile)
        die(profile.error().context("invalid request"));
    State state = open_profile(std::string(*profile));
    Picked picked = or_die(choose(state, task));
    std::printf("%s\n", picked_json(picked).dump().c_str());
    return 0;
}

} // namespace sion::route_cmd
