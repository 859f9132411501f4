// SPDX-License-Identifier: MIT
// sion-calendar's tools: their definitions, their arguments, and their answers.
#include "cmd/sion-calendar/server.hpp"

#include "lib/text.hpp"

#include <algorithm>
#include <ctime>

namespace sion::calendar_cmd {

namespace {

constexpr int64_t k_events_default = 100; // occurrences list_events shows
constexpr int64_t k_events_max = 1000;
constexpr size_t k_gathered_max = 100000;   // occurrences gathered before sorting, at most
constexpr Seconds k_range_default = 7 * 86400;
constexpr Seconds k_range_max = Seconds{5} * 366 * 86400; // a range of five years, at most
constexpr size_t k_text_max = 64 << 10;                   // bytes of one text argument

using mcp_serve::boolean_property;
using mcp_serve::fail;
using mcp_serve::Hints;
using mcp_serve::integer_property;
using mcp_serve::string_property;

Hints reads() {
    Hints h;
    h.read_only = true;
    h.open_world = false;
    return h;
}

Hints creates() {
    Hints h;
    h.read_only = false;
    h.destructive = false;
    h.idempotent = false;
    return h;
}

Hints deletes() {
    Hints h;
    h.read_only = false;
    h.destructive = true;
    h.idempotent = false;
    return h;
}

Result<std::string> text_argument(JsonView arguments, std::string_view key, bool required) {
    if (!arguments.exists() || !arguments.get(key).exists() || arguments.get(key).is_null()) {
        if (required)
            return make_error(Exit::data, "member '%.*s' is missing", static_cast<int>(key.size()),
                              key.data());
        return std::string();
    }
    auto v = arguments.string(key);
    if (!v)
        return v.error();
    if (v->size() > k_text_max)
        return make_error(Exit::data, "member '%.*s' is longer than %zu bytes",
                          static_cast<int>(key.size()), key.data(), k_text_max);
    if (required && v->empty())
        return make_error(Exit::data, "member '%.*s' is empty", static_cast<int>(key.size()),
                          key.data());
    return std::string(*v);
}

std::string names_of(const std::vector<CalendarInfo>& all) {
    std::string out;
    for (const CalendarInfo& c : all)
        out += (out.empty() ? "" : ", ") + c.path;
    return out.empty() ? "none" : out;
}

std::string without_slash(std::string s) {
    while (s.size() > 1 && s.back() == '/')
        s.pop_back();
    return s;
}

// "2026-10-22 10:00 to 11:00", the end's day left out when it is the start's.
std::string span(const std::string& start, const std::string& end) {
    if (start.size() > 10 && end.size() > 10 && start.compare(0, 10, end, 0, 10) == 0)
        return start + " to " + end.substr(11);
    return start + " to " + end;
}

} // namespace

Result<std::vector<CalendarInfo>> pick_calendars(const std::vector<CalendarInfo>& all,
                                                 std::string_view wanted, bool one) {
    std::vector<CalendarInfo> events;
    for (const CalendarInfo& c : all)
        if (c.has_events())
            events.push_back(c);
    if (wanted.empty()) {
        if (events.empty())
            return make_error(Exit::data, "the calendar server has no calendar of events for this "
                                          "user");
        if (one && events.size() > 1)
            return make_error(Exit::data, "give calendar: there are %zu (%s)", events.size(),
                              names_of(events).c_str());
        return events;
    }
    std::string w = without_slash(std::string(wanted));
    for (const CalendarInfo& c : all)
        if (without_slash(c.path) == w || without_slash(c.href) == w)
            return std::vector<CalendarInfo>{c};
    std::vector<CalendarInfo> named;
    for (const CalendarInfo& c : all)
        if (ascii_lower(c.name) == ascii_lower(w))
            named.push_back(c);
    if (named.size() == 1)
        return named;
    if (named.size() > 1)
        return make_error(Exit::data, "calendar '%s' names %zu calendars: give its path (%s)",
                          one_line(w).c_str(), named.size(), names_of(named).c_str());
    return make_error(Exit::data, "no calendar '%s': there are %s", one_line(w.substr(0, 200)).c_str(),
                      names_of(all).c_str());
}

std::string occurrence_line(const Occurrence& o, std::string_view calendar) {
    std::string when;
    if (o.all_day) {
        when = o.local_start == o.local_end ? o.local_start + " all day"
                                            : o.local_start + " to " + o.local_end + " all day";
    } else if (o.floating) {
        when = span(o.local_start, o.local_end) + " (floating time)";
    } else if (o.zone.empty()) {
        when = span(o.utc_start, o.utc_end) + " UTC";
    } else {
        bool same_days = o.local_start.compare(0, 10, o.utc_start, 0, 10) == 0
                         && o.local_end.compare(0, 10, o.utc_end, 0, 10) == 0
                         && o.local_start.compare(0, 10, o.local_end, 0, 10) == 0;
        std::string utc = same_days ? o.utc_start.substr(11) + " to " + o.utc_end.substr(11)
                                    : span(o.utc_start, o.utc_end);
        when = span(o.local_start, o.local_end) + " " + o.zone + " (" + utc + " UTC)";
    }
    std::string line = when + ": " + (o.summary.empty() ? "(no title)" : one_line(o.summary));
    if (!o.location.empty())
        line += "; at " + one_line(o.location);
    if (o.recurring)
        line += "; recurring";
    line += "; uid " + one_line(o.uid);
    line += "; calendar " + std::string(calendar);
    return line;
}

CalendarTools::CalendarTools(Lookup lookup, std::function<Seconds()> now)
    : m_lookup(std::move(lookup)), m_now(std::move(now)) {
    if (!m_now)
        m_now = [] { return static_cast<Seconds>(std::time(nullptr)); };
}

Json CalendarTools::tools() {
    Json none = Json::object();
    Json list_props = Json::object();
    list_props.set("calendar", string_property("the calendar's path or name, as list_calendars "
                                               "gives it (every calendar when absent)"));
    list_props.set("start", string_property("where the range begins: an RFC 3339 date "
                                            "(2026-10-22) or date-time (2026-10-22T09:00:00+02:00); "
                                            "today when absent"));
    list_props.set("end", string_property("where the range ends (not included), as start; 7 days "
                                          "after start when absent"));
    list_props.set("time_zone", string_property("the IANA time zone (Europe/Berlin) of dates and "
                                                "of date-times without an offset; UTC when absent"));
    list_props.set("limit", integer_property("how many occurrences to show, earliest first (100)", 1,
                                             k_events_max));
    Json create_props = Json::object();
    create_props.set("calendar", string_property("the calendar's path or name (may be left out "
                                                 "when there is only one)"));
    create_props.set("summary", string_property("the event's title"));
    create_props.set("start", string_property("when it begins: an RFC 3339 date-time "
                                              "(2026-10-22T10:00:00, in time_zone, or with an "
                                              "offset), or a date for an all-day event"));
    create_props.set("end", string_property("when it ends, as start; for an all-day event the "
                                            "day after its last (the same day: one day)"));
    create_props.set("duration", string_property("how long it lasts instead of end, as RFC 5545 "
                                                 "writes it (PT1H30M, P2D); one hour, or one day, "
                                                 "when neither is given"));
    create_props.set("time_zone", string_property("the IANA time zone it is in (Europe/Berlin); "
                                                  "its times stay at the same hour there across "
                                                  "daylight saving changes"));
    create_props.set("all_day", boolean_property("an all-day event: start and end are days"));
    create_props.set("location", string_property("where it takes place"));
    create_props.set("description", string_property("what it is about"));
    create_props.set("rrule", string_property("how it repeats, an RFC 5545 RRULE "
                                              "(FREQ=WEEKLY;BYDAY=TH;COUNT=10)"));
    Json delete_props = Json::object();
    delete_props.set("calendar", string_property("the calendar's path or name (every calendar "
                                                 "when absent)"));
    delete_props.set("uid", string_property("the event's uid, as list_events gives it"));
    Json tools = Json::array();
    tools.push(mcp_serve::tool("list_calendars", "List calendars",
                               "List the calendars of the CalDAV account: each one's name, path, "
                               "what it holds (VEVENT, VTODO) and its color.",
                               std::move(none), {}, reads()));
    tools.push(mcp_serve::tool(
        "list_events", "List events",
        "List the events of a calendar, or of all, that take place within a range (today and the "
        "next 7 days when none is given), repeating events once for each time they occur, earliest "
        "first. Each is shown in its own time zone and in UTC (or as all day), with its title, "
        "place, whether it repeats, and its uid.",
        std::move(list_props), {}, reads()));
    tools.push(mcp_serve::tool(
        "create_event", "Create an event",
        "Create an event in a calendar: a title, a start, an end or a duration, optionally a time "
        "zone, a place, a description and a repetition rule. Answers the new event's uid.",
        std::move(create_props), {"summary", "start"}, creates()));
    tools.push(mcp_serve::tool("delete_event", "Delete an event",
                               "Delete an event by its uid; a repeating event is deleted with "
                               "every time it occurs. Nothing is deleted if the event changed on "
                               "the server since it was found.",
                               std::move(delete_props), {"uid"}, deletes()));
    return tools;
}

bool CalendarTools::has_tool(std::string_view name) {
    return name == "list_calendars" || name == "list_events" || name == "create_event"
           || name == "delete_event";
}

Answer CalendarTools::call(std::string_view name, JsonView arguments) {
    if (arguments.exists() && !arguments.is_null() && !arguments.is_object())
        return fail(std::string(name) + " takes its arguments as an object");
    if (name == "list_calendars")
        return list_calendars(arguments);
    if (name == "list_events")
        return list_events(arguments);
    if (name == "create_event")
        return create_event(arguments);
    return delete_event(arguments);
}

Result<Dav*> CalendarTools::dav() {
    SION_TRY(Settings settings, read_settings(m_lookup));
    if (!m_dav || !(m_dav->settings() == settings)) {
        m_dav = std::make_unique<Dav>(std::move(settings));
        m_cache = EventCache{};
    }
    return m_dav.get();
}

Answer CalendarTools::list_calendars(JsonView) {
    auto d = dav();
    if (!d)
        return fail(d.error().message());
    auto all = (*d)->calendars();
    if (!all)
        return fail(all.error().message());
    if (all->empty())
        return {"no calendars"};
    std::string text;
    for (const CalendarInfo& c : *all) {
        text += one_line(c.name) + " (path " + c.path;
        std::string comps;
        for (const std::string& comp : c.components)
            comps += (comps.empty() ? "" : ", ") + comp;
        if (!comps.empty())
            text += "; holds " + comps;
        if (!c.color.empty())
            text += "; color " + c.color;
        text += ")\n";
    }
    text.pop_back();
    return {text};
}

Answer CalendarTools::list_events(JsonView arguments) {
    auto wanted = text_argument(arguments, "calendar", false);
    auto start_text = text_argument(arguments, "start", false);
    auto end_text = text_argument(arguments, "end", false);
    auto zone = text_argument(arguments, "time_zone", false);
    for (auto* r : {&wanted, &start_text, &end_text, &zone})
        if (!*r)
            return fail("list_events: " + r->error().message());
    auto limit = arguments.exists() ? arguments.integer_or("limit", k_events_default)
                                    : Result<int64_t>(k_events_default);
    if (!limit)
        return fail("list_events: " + limit.error().message());
    if (*limit < 1 || *limit > k_events_max)
        return fail("list_events: member 'limit' must be from 1 to " + std::to_string(k_events_max));
    if (!zone->empty() && !known_zone(*zone))
        return fail("list_events: time_zone '" + one_line(zone->substr(0, 64))
                    + "' is not a time zone (an IANA name such as Europe/Berlin)");
    Range range;
    if (start_text->empty()) {
        std::string today = show_time(m_now(), *zone, false);
        auto s = parse_time(today, *zone, "start");
        if (!s)
            return fail("list_events: " + s.error().message());
        range.start = *s;
    } else {
        auto s = parse_time(*start_text, *zone, "start");
        if (!s)
            return fail("list_events: " + s.error().message());
        range.start = *s;
    }
    if (end_text->empty()) {
        range.end = range.start + k_range_default;
    } else {
        auto e = parse_time(*end_text, *zone, "end");
        if (!e)
            return fail("list_events: " + e.error().message());
        range.end = *e;
    }
    if (range.end <= range.start)
        return fail("list_events: end is not after start");
    if (range.end - range.start > k_range_max)
        return fail("list_events: the range is longer than five years: narrow it");
    auto d = dav();
    if (!d)
        return fail(d.error().message());
    auto all = (*d)->calendars();
    if (!all)
        return fail(all.error().message());
    auto picked = pick_calendars(*all, *wanted, false);
    if (!picked)
        return fail(picked.error().message());
    struct Found {
        Occurrence o;
        const CalendarInfo* calendar;
    };
    std::vector<Found> found;
    bool cut = false;
    size_t unreadable = 0;
    for (const CalendarInfo& c : *picked) {
        auto objects = m_cache.events_in(**d, c, range);
        if (!objects)
            return fail(objects.error().message());
        for (const Resource& r : *objects) {
            std::vector<Occurrence> occurrences;
            auto expanded = expand(r.data, range, occurrences);
            if (!expanded) {
                ++unreadable;
                continue;
            }
            cut = *expanded || cut;
            for (Occurrence& o : occurrences) {
                if (found.size() >= k_gathered_max) {
                    cut = true;
                    break;
                }
                found.push_back({std::move(o), &c});
            }
        }
    }
    std::sort(found.begin(), found.end(), [](const Found& a, const Found& b) {
        if (a.o.start != b.o.start)
            return a.o.start < b.o.start;
        if (a.o.end != b.o.end)
            return a.o.end < b.o.end;
        return a.o.summary < b.o.summary;
    });
    std::string from = show_time(range.start, *zone, true);
    std::string to = show_time(range.end, *zone, true);
    std::string where = zone->empty() ? "UTC" : *zone;
    std::string text;
    if (found.empty())
        text = "no events from " + from + " to " + to + " " + where;
    else
        text = std::to_string(found.size()) + (found.size() == 1 ? " event" : " events") + " from "
               + from + " to " + to + " " + where + ":";
    size_t shown = std::min(found.size(), static_cast<size_t>(*limit));
    for (size_t i = 0; i < shown; ++i)
        text += "\n" + occurrence_line(found[i].o, found[i].calendar->name);
    if (found.size() > shown)
        text += "\n… and " + std::to_string(found.size() - shown)
                + " more: narrow the range, or raise limit";
    if (cut)
        text += "\n(an event repeats more often than is expanded: some of its times are left out)";
    if (unreadable > 0)
        text += "\n(" + std::to_string(unreadable)
                + (unreadable == 1 ? " object the server gave is" : " objects the server gave are")
                + " not iCalendar and left out)";
    return {text};
}

Answer CalendarTools::create_event(JsonView arguments) {
    NewEvent e;
    auto wanted = text_argument(arguments, "calendar", false);
    if (!wanted)
        return fail("create_event: " + wanted.error().message());
    struct Field {
        const char* key;
        std::string* into;
        bool required;
    } fields[] = {{"summary", &e.summary, true},     {"start", &e.start, true},
                  {"end", &e.end, false},            {"duration", &e.duration, false},
                  {"time_zone", &e.time_zone, false}, {"location", &e.location, false},
                  {"description", &e.description, false}, {"rrule", &e.rrule, false}};
    for (const Field& f : fields) {
        auto v = text_argument(arguments, f.key, f.required);
        if (!v)
            return fail("create_event: " + v.error().message());
        *f.into = std::move(*v);
    }
    auto all_day = arguments.exists() ? arguments.boolean_or("all_day", false) : Result<bool>(false);
    if (!all_day)
        return fail("create_event: " + all_day.error().message());
    e.all_day = *all_day;
    auto made = make_event(e);
    if (!made)
        return fail("create_event: " + made.error().message());
    auto d = dav();
    if (!d)
        return fail(d.error().message());
    auto all = (*d)->calendars();
    if (!all)
        return fail(all.error().message());
    auto picked = pick_calendars(*all, *wanted, true);
    if (!picked)
        return fail(picked.error().message());
    const CalendarInfo& c = picked->front();
    auto href = (*d)->create(c, made->uid, made->ics);
    if (!href)
        return fail(href.error().message());
    return {"created event '" + one_line(e.summary) + "' in " + one_line(c.name) + ": uid "
            + made->uid + ", href " + *href};
}

Answer CalendarTools::delete_event(JsonView arguments) {
    auto wanted = text_argument(arguments, "calendar", false);
    if (!wanted)
        return fail("delete_event: " + wanted.error().message());
    auto uid = text_argument(arguments, "uid", true);
    if (!uid)
        return fail("delete_event: " + uid.error().message());
    if (uid->find_first_of("\r\n") != std::string::npos)
        return fail("delete_event: member 'uid' holds a line break");
    auto d = dav();
    if (!d)
        return fail(d.error().message());
    auto all = (*d)->calendars();
    if (!all)
        return fail(all.error().message());
    auto picked = pick_calendars(*all, *wanted, false);
    if (!picked)
        return fail(picked.error().message());
    for (const CalendarInfo& c : *picked) {
        auto found = (*d)->find_uid(c, *uid);
        if (!found)
            return fail(found.error().message());
        if (!*found)
            continue;
        const Resource& r = **found;
        if (r.etag.empty())
            return fail("the calendar server gave no ETag for event '" + one_line(*uid)
                        + "': it is not deleted blindly");
        auto title = event_summary(r.data, *uid);
        std::string summary = title && !title->empty() ? " '" + one_line(*title) + "'" : "";
        auto removed = (*d)->remove(r.href, r.etag);
        if (!removed)
            return fail(removed.error().message());
        return {"deleted event" + summary + " (uid " + one_line(*uid) + ") from " + one_line(c.name)};
    }
    return fail("no event of uid '" + one_line(uid->substr(0, 200)) + "' in "
                + (wanted->empty() ? std::string("any calendar") : one_line(*wanted)));
}

} // namespace sion::calendar_cmd
