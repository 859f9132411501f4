// SPDX-License-Identifier: MIT
// The four tools of sion-calendar (sion-calendar(1)): list_calendars, list_events, create_event
// and delete_event, their definitions as tools/list gives them, and what a call of each does over
// CalDAV (dav.hpp) with iCalendar read and made by libical (ical.hpp).
//
// The settings are looked up at every call (the environment, else the credentials kept with sion
// agent credential add), so that a missing one is not a failure to start: each call answers the
// line saying what to set. list_events keeps the calendars it read (cache.hpp), up to date by
// WebDAV sync at every call. A call never throws and never ends the program: what goes wrong is an
// answer with is_error set and one line, which never holds the password or the token.
//
// Threads: one thread at a time.
#pragma once

#include "cmd/sion-calendar/cache.hpp"
#include "cmd/sion-calendar/dav.hpp"
#include "lib/json.hpp"
#include "lib/mcp_serve.hpp"

#include <functional>
#include <memory>
#include <string>
#include <string_view>

namespace sion::calendar_cmd {

using mcp_serve::Answer;

class CalendarTools final : public mcp_serve::Tools {
public:
    // `lookup` finds the settings; `now` is the time the default range starts from.
    explicit CalendarTools(Lookup lookup, std::function<Seconds()> now = {});

    [[nodiscard]] std::string_view server_name() const override { return "sion-calendar"; }
    [[nodiscard]] Json list() const override { return tools(); }
    [[nodiscard]] static Json tools();
    [[nodiscard]] bool has(std::string_view name) const override { return has_tool(name); }
    [[nodiscard]] static bool has_tool(std::string_view name);
    [[nodiscard]] Answer call(std::string_view name, JsonView arguments) override;

private:
    [[nodiscard]] Result<Dav*> dav();
    [[nodiscard]] Answer list_calendars(JsonView arguments);
    [[nodiscard]] Answer list_events(JsonView arguments);
    [[nodiscard]] Answer create_event(JsonView arguments);
    [[nodiscard]] Answer delete_event(JsonView arguments);

    Lookup m_lookup;
    std::function<Seconds()> m_now;
    std::unique_ptr<Dav> m_dav;
    EventCache m_cache; // of m_dav's calendars: dropped with it
};

// The calendars `wanted` names (its path, href or name; all that hold events when empty), or the
// line saying it names none. With `one`, exactly one: an empty `wanted` is then the only calendar
// of events, when there is only one.
[[nodiscard]] Result<std::vector<CalendarInfo>> pick_calendars(const std::vector<CalendarInfo>& all,
                                                               std::string_view wanted, bool one);

// One occurrence as list_events shows it.
[[nodiscard]] std::string occurrence_line(const Occurrence& o, std::string_view calendar);

} // namespace sion::calendar_cmd
