// SPDX-License-Identifier: MIT
// Event names, and the checks of the event JSON that fire reads: what a hook reads must be what the
// schema (schemas/hooks-event.schema.json) says, so a caller's mistake is bad input, not a hook
// that runs on half an event.
#include "hooks/event.hpp"

#include <array>

namespace sion::hooks {

namespace {

constexpr std::array<const char*, 4> k_names = {"before-tool", "after-tool", "run-start",
                                                "run-end"};

// What a call or a run came to, as sion-run's events say (schemas/run.event.json).
constexpr std::array<std::string_view, 5> k_call_states = {"ok", "error", "refused", "uncertain",
                                                           "interrupted"};
constexpr std::array<std::string_view, 4> k_run_states = {"done", "stopped", "failed",
                                                          "interrupted"};
constexpr std::array<std::string_view, 4> k_effects = {"read", "write", "external", "spend"};

Error invalid(const std::string& why) {
    return {Exit::data, "invalid event: " + why};
}

template <size_t N>
bool one_of(std::string_view s, const std::array<std::string_view, N>& set) {
    for (auto w : set)
        if (s == w)
            return true;
    return false;
}

bool has_control(std::string_view s) {
    for (char c : s)
        if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f)
            return true;
    return false;
}

Error wrong_type(const std::string& name, JsonView v, const char* want) {
    return invalid("member '" + name + "' is " + v.type_name() + ", not " + want);
}

// The string at `v` (named `name` in messages), which must be non-empty with `non_empty`.
Result<std::string> string_at(JsonView v, const std::string& name, bool non_empty) {
    if (!v.is_string())
        return wrong_type(name, v, "a string");
    std::string s(*v.as_string());
    if (non_empty && s.empty())
        return invalid("member '" + name + "' is empty");
    return s;
}

template <size_t N>
Status state_at(JsonView object, const std::string& name,
                const std::array<std::string_view, N>& states, const char* listed) {
    if (!object.is_object())
        return wrong_type(name, object, "an object");
    JsonView state = object.get("state");
    if (!state.exists())
        return invalid("member '" + name + ".state' is missing");
    SION_TRY(std::string s, string_at(state, name + ".state", false));
    if (!one_of(s, states))
        return invalid("member '" + name + ".state' is '" + s + "', not " + listed);
    return {};
}

// The members the schema names, wherever they appear; which must appear is the event's.
Status check_known_members(JsonView e) {
    if (JsonView v = e.get("call"); v.exists())
        SION_CHECK(string_at(v, "call", false));
    if (JsonView v = e.get("tool"); v.exists())
        SION_CHECK(string_at(v, "tool", true));
    if (JsonView v = e.get("effect"); v.exists()) {
        SION_TRY(std::string effect, string_at(v, "effect", false));
        if (!one_of(effect, k_effects))
            return invalid("member 'effect' is '" + effect
                           + "', not read, write, external or spend");
    }
    if (JsonView v = e.get("outcome"); v.exists()) {
        SION_CHECK(
            state_at(v, "outcome", k_call_states, "ok, error, refused, uncertain or interrupted"));
        if (!v.get("text").exists())
            return invalid("member 'outcome.text' is missing");
        SION_CHECK(string_at(v.get("text"), "outcome.text", false));
    }
    if (JsonView v = e.get("said"); v.exists())
        SION_CHECK(string_at(v, "said", false));
    if (JsonView v = e.get("ended"); v.exists()) {
        SION_CHECK(state_at(v, "ended", k_run_states, "done, stopped, failed or interrupted"));
        if (v.get("why").exists())
            SION_CHECK(string_at(v.get("why"), "ended.why", false));
    }
    return {};
}

Status require(JsonView e, const char* key) {
    if (!e.get(key).exists())
        return invalid(std::string("member '") + key + "' is missing");
    return {};
}

} // namespace

const char* event_name(Event event) {
    return k_names.at(static_cast<size_t>(event));
}

Result<Event> parse_event_name(std::string_view name) {
    for (size_t i = 0; i < k_names.size(); ++i)
        if (name == k_names.at(i))
            return static_cast<Event>(i);
    return make_error(Exit::data,
                      "unknown event '%.*s' (give before-tool, after-tool, run-start or run-end)",
                      static_cast<int>(name.size()), name.data());
}

bool is_tool_event(Event event) {
    return event == Event::before_tool || event == Event::after_tool;
}

Result<EventInput> parse_event_input(std::string_view text, Event expected) {
    auto parsed = Json::parse(text);
    if (!parsed)
        return invalid(parsed.error().message());
    EventInput in;
    in.json = std::move(*parsed);
    JsonView e = in.json.view();
    if (!e.is_object())
        return invalid(std::string("it is ") + e.type_name() + ", not an object");
    SION_CHECK(require(e, "event"));
    SION_TRY(std::string name, string_at(e.get("event"), "event", false));
    if (name != event_name(expected))
        return invalid("member 'event' is '" + name + "', but fire was given '"
                       + event_name(expected) + "'");
    in.event = expected;
    SION_CHECK(require(e, "session"));
    SION_TRY(in.session, string_at(e.get("session"), "session", true));
    if (has_control(in.session))
        return invalid("member 'session' has a control character");
    if (JsonView w = e.get("workspace"); w.exists()) {
        SION_TRY(in.workspace, string_at(w, "workspace", false));
        if (in.workspace.empty() || in.workspace.front() != '/')
            return invalid("member 'workspace' is '" + in.workspace + "', not an absolute path");
    }
    SION_CHECK(check_known_members(e));
    if (is_tool_event(expected)) {
        SION_CHECK(require(e, "tool"));
        SION_CHECK(require(e, "input"));
        in.tool = *e.get("tool").as_string();
    }
    if (expected == Event::after_tool)
        SION_CHECK(require(e, "outcome"));
    if (expected == Event::run_start)
        SION_CHECK(require(e, "said"));
    if (expected == Event::run_end)
        SION_CHECK(require(e, "ended"));
    return in;
}

} // namespace sion::hooks
