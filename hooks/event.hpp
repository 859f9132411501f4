// SPDX-License-Identifier: MIT
// The four events hooks run around, and the event JSON that `sion-hooks fire` reads and passes on
// to each hook (schemas/hooks-event.schema.json, sion-hooks(5)).
//
// Nothing here prints or exits; errors are Exit::data, one line without the program's prefix.
#pragma once

#include "lib/json.hpp"
#include "lib/result.hpp"

#include <string>
#include <string_view>

namespace sion::hooks {

enum class Event { before_tool, after_tool, run_start, run_end };

// "before-tool", "after-tool", "run-start", "run-end".
[[nodiscard]] const char* event_name(Event event);

// The event a name names. Errors (Exit::data): "unknown event 'x' (give before-tool, after-tool,
// run-start or run-end)".
[[nodiscard]] Result<Event> parse_event_name(std::string_view name);

// before-tool and after-tool: their hooks are chosen by --tool patterns.
[[nodiscard]] bool is_tool_event(Event event);

// The event JSON as `fire` was given it: checked, with what choosing and running hooks needs.
struct EventInput {
    Event event = Event::before_tool;
    std::string session;   // SION_SESSION for each hook
    std::string tool;      // tool events only
    std::string workspace; // an absolute path, or "" when the session has none
    Json json;             // the whole event, what each hook reads on its standard input
};

// Parses the event JSON `text` for `expected` (the EVENT operand of fire). It must be one object
// whose `event` is `expected`, with `session` (a non-empty string without control characters), and
// as the event has them `tool` (a non-empty string) and `input` (any JSON), `outcome` (an object
// with a `state` and a `text`), `said` (a string) or `ended` (an object with a `state`);
// `workspace`, when present, is an absolute path. Other members are kept and passed on; a member
// given twice in any object is refused (lib/json refuses it). Errors are Exit::data: "invalid
// event: member 'tool' is missing", "invalid event: member 'event' is 'after-tool', but fire was
// given 'before-tool'", "invalid event: invalid JSON: member 'input.command' is given twice".
[[nodiscard]] Result<EventInput> parse_event_input(std::string_view text, Event expected);

} // namespace sion::hooks
