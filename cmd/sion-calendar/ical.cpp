// SPDX-License-Identifier: MIT
// Events' occurrences and new events, through libical.
#include "cmd/sion-calendar/ical.hpp"

#include <libical/ical.h>
#include <sys/random.h>

#include <algorithm>
#include <cstdio>
#include <map>
#include <memory>
#include <set>

namespace sion::calendar_cmd {

namespace {

constexpr Seconds k_day = 86400;

struct ComponentFree {
    void operator()(icalcomponent* c) const { icalcomponent_free(c); }
};
using Component = std::unique_ptr<icalcomponent, ComponentFree>;

icaltimezone* utc() {
    return icaltimezone_get_utc_timezone();
}

// libical's zone of an IANA name, or null. Names are checked first: libical reads a file of the
// system's zone data by the name it is given.
icaltimezone* builtin_zone(std::string_view name) {
    if (name.empty() || name.size() > 64 || name.front() == '/' || name.find("..") != name.npos)
        return nullptr;
    for (char c : name)
        if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '/' || c == '_' || c == '-'
              || c == '+'))
            return nullptr;
    return icaltimezone_get_builtin_timezone(std::string(name).c_str());
}

// The IANA name in a TZID: "Europe/Berlin" of "/freeassociation.sourceforge.net/Europe/Berlin".
std::string zone_name(std::string_view tzid) {
    if (!tzid.empty() && tzid.front() == '/') {
        size_t second = tzid.find('/', 1);
        if (second != std::string_view::npos)
            return std::string(tzid.substr(second + 1));
    }
    return std::string(tzid);
}

std::string format(const icaltimetype& t, bool with_time) {
    char buf[64];
    if (with_time)
        std::snprintf(buf, sizeof buf, "%04d-%02d-%02d %02d:%02d", t.year, t.month, t.day, t.hour,
                      t.minute);
    else
        std::snprintf(buf, sizeof buf, "%04d-%02d-%02d", t.year, t.month, t.day);
    return buf;
}

// The zones of one object's VTIMEZONEs by TZID. Zones are kept for the process by the text of
// their VTIMEZONE: libical works out a zone's changes of offset once for each zone object it has,
// and every object a server gives carries its own copy of the same few zones.
using Zones = std::map<std::string, icaltimezone*, std::less<>>;

constexpr size_t k_zones_kept = 256;

struct ZoneFree {
    void operator()(icaltimezone* z) const { icaltimezone_free(z, 1); }
};

std::map<std::string, std::unique_ptr<icaltimezone, ZoneFree>>& kept_zones() {
    static std::map<std::string, std::unique_ptr<icaltimezone, ZoneFree>> zones;
    return zones;
}

Zones zones_of(icalcomponent* calendar) {
    Zones zones;
    for (icalcomponent* vtz = icalcomponent_get_first_component(calendar, ICAL_VTIMEZONE_COMPONENT);
         vtz != nullptr; vtz = icalcomponent_get_next_component(calendar, ICAL_VTIMEZONE_COMPONENT)) {
        icalproperty* tzid = icalcomponent_get_first_property(vtz, ICAL_TZID_PROPERTY);
        const char* id = tzid != nullptr ? icalproperty_get_tzid(tzid) : nullptr;
        if (id == nullptr || zones.contains(std::string_view(id)))
            continue;
        char* text = icalcomponent_as_ical_string_r(vtz);
        std::string key = text != nullptr ? text : "";
        icalmemory_free_buffer(text);
        auto& kept = kept_zones();
        auto it = kept.find(key);
        if (it == kept.end()) {
            if (kept.size() >= k_zones_kept) {
                zones.emplace(id, icalcomponent_get_timezone(calendar, id)); // the object's own
                continue;
            }
            std::unique_ptr<icaltimezone, ZoneFree> zone(icaltimezone_new());
            if (!zone || icaltimezone_set_component(zone.get(), icalcomponent_new_clone(vtz)) == 0)
                continue;
            it = kept.emplace(std::move(key), std::move(zone)).first;
        }
        zones.emplace(id, it->second.get());
    }
    return zones;
}

// A time property's value and the zone it is in (null: a date, or floating).
struct When {
    icaltimetype t = icaltime_null_time();
    icaltimezone* zone = nullptr;
    bool floating = false;
    std::string zone_shown; // IANA name, "" for UTC, dates and floating
};

When when_of(icalproperty* p, icaltimetype t, const Zones& zones) {
    When w;
    w.t = t;
    if (icaltime_is_null_time(t) || t.is_date)
        return w;
    if (icaltime_is_utc(t)) {
        w.zone = utc();
        return w;
    }
    icalparameter* param = icalproperty_get_first_parameter(p, ICAL_TZID_PARAMETER);
    const char* tzid = param != nullptr ? icalparameter_get_tzid(param) : nullptr;
    if (tzid != nullptr) {
        auto found = zones.find(std::string_view(tzid));
        icaltimezone* zone = found != zones.end() ? found->second : nullptr;
        if (zone == nullptr)
            zone = builtin_zone(zone_name(tzid));
        if (zone != nullptr) {
            w.zone = zone;
            w.zone_shown = zone_name(tzid);
            if (w.zone_shown == "UTC" || w.zone_shown == "Etc/UTC")
                w.zone_shown.clear();
            return w;
        }
    }
    w.floating = true; // no zone, or one nobody knows: shown as written
    return w;
}

Seconds seconds_of(const icaltimetype& t, icaltimezone* zone) {
    if (t.is_date)
        return static_cast<Seconds>(icaltime_as_timet_with_zone(t, utc()));
    return static_cast<Seconds>(icaltime_as_timet_with_zone(t, zone != nullptr ? zone : utc()));
}

// One VEVENT as read: its times, how long it lasts, and what is shown of it.
struct Event {
    icalcomponent* component = nullptr;
    When start;
    Seconds length = 0; // seconds; for an all-day event, whole days of them
    std::string uid, summary, location;
    bool cancelled = false;
};

Event event_of(icalcomponent* ev, const Zones& calendar) {
    Event e;
    e.component = ev;
    icalproperty* dtstart = icalcomponent_get_first_property(ev, ICAL_DTSTART_PROPERTY);
    if (dtstart != nullptr)
        e.start = when_of(dtstart, icalproperty_get_dtstart(dtstart), calendar);
    icalproperty* dtend = icalcomponent_get_first_property(ev, ICAL_DTEND_PROPERTY);
    icalproperty* duration = icalcomponent_get_first_property(ev, ICAL_DURATION_PROPERTY);
    Seconds begin = seconds_of(e.start.t, e.start.zone);
    if (dtend != nullptr) {
        When end = when_of(dtend, icalproperty_get_dtend(dtend), calendar);
        e.length = seconds_of(end.t, end.zone) - begin;
    } else if (duration != nullptr) {
        e.length = icaldurationtype_as_int(icalproperty_get_duration(duration));
    } else {
        e.length = e.start.t.is_date ? k_day : 0;
    }
    if (e.length < 0)
        e.length = 0;
    if (e.start.t.is_date && e.length < k_day)
        e.length = k_day;
    const char* s = icalcomponent_get_uid(ev);
    e.uid = s != nullptr ? s : "";
    s = icalcomponent_get_summary(ev);
    e.summary = s != nullptr ? s : "";
    s = icalcomponent_get_location(ev);
    e.location = s != nullptr ? s : "";
    icalproperty* status = icalcomponent_get_first_property(ev, ICAL_STATUS_PROPERTY);
    e.cancelled = status != nullptr && icalproperty_get_status(status) == ICAL_STATUS_CANCELLED;
    return e;
}

bool overlaps(Seconds start, Seconds end, const Range& range) {
    if (start == end)
        return start >= range.start && start < range.end;
    return start < range.end && end > range.start;
}

Occurrence occurrence(const Event& e, Seconds start, bool recurring) {
    Occurrence o;
    o.uid = e.uid;
    o.summary = e.summary;
    o.location = e.location;
    o.start = start;
    o.end = start + e.length;
    o.recurring = recurring;
    o.all_day = e.start.t.is_date;
    o.floating = e.start.floating;
    o.zone = e.start.zone_shown;
    if (o.all_day) {
        o.local_start = format(icaltime_from_timet_with_zone(start, 1, utc()), false);
        o.local_end = format(icaltime_from_timet_with_zone(o.end - k_day, 1, utc()), false);
        return o;
    }
    icaltimezone* shown = e.start.zone != nullptr ? e.start.zone : utc();
    o.local_start = format(icaltime_from_timet_with_zone(start, 0, shown), true);
    o.local_end = format(icaltime_from_timet_with_zone(o.end, 0, shown), true);
    o.utc_start = format(icaltime_from_timet_with_zone(start, 0, utc()), true);
    o.utc_end = format(icaltime_from_timet_with_zone(o.end, 0, utc()), true);
    return o;
}

// The starts of the master's instances before range.end: DTSTART, the RRULEs' and the RDATEs'.
// Returns whether the steps ran out.
bool instance_starts(const Event& master, const Zones& calendar, const Range& range,
                     const ExpandLimits& limits, std::set<Seconds>& starts) {
    icalcomponent* ev = master.component;
    icaltimetype dtstart = master.start.t;
    if (master.start.zone != nullptr && !dtstart.is_date && !icaltime_is_utc(dtstart))
        dtstart = icaltime_set_timezone(&dtstart, master.start.zone);
    starts.insert(seconds_of(master.start.t, master.start.zone));
    bool cut = false;
    size_t steps = 0;
    for (icalproperty* p = icalcomponent_get_first_property(ev, ICAL_RRULE_PROPERTY); p != nullptr;
         p = icalcomponent_get_next_property(ev, ICAL_RRULE_PROPERTY)) {
        icalrecurrencetype rule = icalproperty_get_rrule(p);
        std::unique_ptr<icalrecur_iterator, void (*)(icalrecur_iterator*)> it(
            icalrecur_iterator_new(rule, dtstart), icalrecur_iterator_free);
        if (!it)
            continue;
        for (;;) {
            icaltimetype t = icalrecur_iterator_next(it.get());
            if (icaltime_is_null_time(t))
                break;
            if (++steps > limits.max_steps) {
                cut = true;
                break;
            }
            Seconds s = seconds_of(t, master.start.zone);
            if (s >= range.end)
                break;
            if (s + master.length >= range.start)
                starts.insert(s);
        }
    }
    for (icalproperty* p = icalcomponent_get_first_property(ev, ICAL_RDATE_PROPERTY); p != nullptr;
         p = icalcomponent_get_next_property(ev, ICAL_RDATE_PROPERTY)) {
        icaldatetimeperiodtype rdate = icalproperty_get_rdate(p);
        icaltimetype t = icaltime_is_null_time(rdate.time) ? rdate.period.start : rdate.time;
        if (icaltime_is_null_time(t))
            continue;
        When w = when_of(p, t, calendar);
        starts.insert(seconds_of(w.t, w.zone != nullptr ? w.zone : master.start.zone));
    }
    for (icalproperty* p = icalcomponent_get_first_property(ev, ICAL_EXDATE_PROPERTY); p != nullptr;
         p = icalcomponent_get_next_property(ev, ICAL_EXDATE_PROPERTY)) {
        When w = when_of(p, icalproperty_get_exdate(p), calendar);
        if (w.t.is_date && !master.start.t.is_date) {
            // A day excluded from a timed event: every instance starting that day, in its zone.
            std::string day = format(w.t, false);
            icaltimezone* zone = master.start.zone != nullptr ? master.start.zone : utc();
            std::erase_if(starts, [&](Seconds s) {
                return format(icaltime_from_timet_with_zone(s, 0, zone), false) == day;
            });
        } else {
            starts.erase(seconds_of(w.t, w.zone != nullptr ? w.zone : master.start.zone));
        }
    }
    return cut;
}

bool has_repeats(icalcomponent* ev) {
    return icalcomponent_get_first_property(ev, ICAL_RRULE_PROPERTY) != nullptr
           || icalcomponent_get_first_property(ev, ICAL_RDATE_PROPERTY) != nullptr;
}

// The occurrences of the events of one UID: `master` (may be null) and its overrides.
bool expand_uid(const Event* master, const std::vector<Event>& overrides,
                const std::map<const Event*, Seconds>& ids, const Zones& calendar,
                const Range& range, const ExpandLimits& limits, std::vector<Occurrence>& out) {
    bool recurring = master != nullptr && has_repeats(master->component);
    bool cut = false;
    size_t given = 0;
    if (master != nullptr) {
        std::set<Seconds> starts;
        if (recurring)
            cut = instance_starts(*master, calendar, range, limits, starts);
        else
            starts.insert(seconds_of(master->start.t, master->start.zone));
        for (const Event& o : overrides)
            starts.erase(ids.at(&o));
        if (!master->cancelled)
            for (Seconds s : starts) {
                if (!overlaps(s, s + master->length, range))
                    continue;
                if (++given > limits.max_occurrences) {
                    cut = true;
                    break;
                }
                out.push_back(occurrence(*master, s, recurring));
            }
    }
    for (const Event& o : overrides) {
        Seconds s = seconds_of(o.start.t, o.start.zone);
        if (o.cancelled || !overlaps(s, s + o.length, range))
            continue;
        out.push_back(occurrence(o, s, true));
    }
    return cut;
}

} // namespace

Result<bool> expand(std::string_view ics, Range range, std::vector<Occurrence>& out,
                    const ExpandLimits& limits) {
    std::string text(ics);
    Component calendar(icalparser_parse_string(text.c_str()));
    if (!calendar || icalcomponent_isa(calendar.get()) != ICAL_VCALENDAR_COMPONENT)
        return make_error(Exit::data, "it is not an iCalendar object (VCALENDAR)");
    icalcomponent* cal = calendar.get();
    Zones zones = zones_of(cal);
    // Events by UID: the master (no RECURRENCE-ID) and the instances it overrides.
    std::map<std::string, std::vector<Event>> by_uid;
    for (icalcomponent* ev = icalcomponent_get_first_component(cal, ICAL_VEVENT_COMPONENT);
         ev != nullptr; ev = icalcomponent_get_next_component(cal, ICAL_VEVENT_COMPONENT)) {
        Event e = event_of(ev, zones);
        if (icaltime_is_null_time(e.start.t))
            continue; // an event with no start is in no range
        by_uid[e.uid].push_back(std::move(e));
    }
    // libical reads on past what it cannot, leaving X-LIC-ERROR behind: an object whose events
    // all went that way is not one.
    if (by_uid.empty() && icalcomponent_count_errors(cal) > 0)
        return make_error(Exit::data, "it is not an iCalendar object libical can read");
    bool cut = false;
    for (auto& [uid, events] : by_uid) {
        const Event* master = nullptr;
        std::vector<Event> overrides;
        for (const Event& e : events) {
            if (icalcomponent_get_first_property(e.component, ICAL_RECURRENCEID_PROPERTY) != nullptr)
                overrides.push_back(e);
            else if (master == nullptr)
                master = &e;
        }
        std::map<const Event*, Seconds> ids;
        for (const Event& o : overrides) {
            icalproperty* p = icalcomponent_get_first_property(o.component, ICAL_RECURRENCEID_PROPERTY);
            When w = when_of(p, icalproperty_get_recurrenceid(p), zones);
            icaltimezone* zone = w.zone != nullptr ? w.zone : (master ? master->start.zone : nullptr);
            ids[&o] = seconds_of(w.t, zone);
        }
        cut = expand_uid(master, overrides, ids, zones, range, limits, out) || cut;
    }
    return cut;
}

Result<Range> span(std::string_view ics, const ExpandLimits& limits) {
    std::string text(ics);
    Component calendar(icalparser_parse_string(text.c_str()));
    if (!calendar || icalcomponent_isa(calendar.get()) != ICAL_VCALENDAR_COMPONENT)
        return make_error(Exit::data, "it is not an iCalendar object (VCALENDAR)");
    icalcomponent* cal = calendar.get();
    Zones zones = zones_of(cal);
    bool any = false;
    bool endless = false;
    Seconds first = k_forever;
    Seconds last = -k_forever;
    // Every VEVENT, masters and overrides alike, and every instance of each one's rules: wider
    // than what expand gives (it keeps one master per UID, and removes what EXDATE names).
    for (icalcomponent* ev = icalcomponent_get_first_component(cal, ICAL_VEVENT_COMPONENT);
         ev != nullptr; ev = icalcomponent_get_next_component(cal, ICAL_VEVENT_COMPONENT)) {
        Event e = event_of(ev, zones);
        if (icaltime_is_null_time(e.start.t))
            continue;
        any = true;
        Seconds begin = seconds_of(e.start.t, e.start.zone);
        std::set<Seconds> starts{begin};
        if (has_repeats(ev)) {
            bool forever = false;
            for (icalproperty* p = icalcomponent_get_first_property(ev, ICAL_RRULE_PROPERTY);
                 p != nullptr; p = icalcomponent_get_next_property(ev, ICAL_RRULE_PROPERTY)) {
                icalrecurrencetype rule = icalproperty_get_rrule(p);
                if (rule.count == 0 && icaltime_is_null_time(rule.until))
                    forever = true;
            }
            // A rule without end is stepped up to DTSTART only: the RDATEs, which may come
            // before it, are taken all the same.
            Range through{-k_forever, forever ? begin + 1 : k_forever};
            if (instance_starts(e, zones, through, limits, starts) || forever)
                endless = true;
        }
        // DTSTART bounds it even when an EXDATE takes it out: a rule's instances never come
        // before it, and a rule cut short leaves the later ones unknown.
        first = std::min(first, begin);
        last = std::max(last, begin + e.length);
        for (Seconds s : starts) {
            first = std::min(first, s);
            last = std::max(last, s + e.length);
        }
    }
    if (!any && icalcomponent_count_errors(cal) > 0)
        return make_error(Exit::data, "it is not an iCalendar object libical can read");
    if (!any)
        return Range{0, 0};
    Range r{first - 2 * k_day, last + 2 * k_day};
    if (endless)
        r.end = k_forever;
    return r;
}

std::optional<std::string> event_summary(std::string_view ics, std::string_view uid) {
    std::string text(ics);
    Component calendar(icalparser_parse_string(text.c_str()));
    if (!calendar)
        return std::nullopt;
    std::optional<std::string> found;
    for (icalcomponent* ev = icalcomponent_get_first_component(calendar.get(), ICAL_VEVENT_COMPONENT);
         ev != nullptr; ev = icalcomponent_get_next_component(calendar.get(), ICAL_VEVENT_COMPONENT)) {
        const char* id = icalcomponent_get_uid(ev);
        if (id == nullptr || uid != id)
            continue;
        const char* summary = icalcomponent_get_summary(ev);
        bool master = icalcomponent_get_first_property(ev, ICAL_RECURRENCEID_PROPERTY) == nullptr;
        if (master || !found)
            found = summary != nullptr ? summary : "";
        if (master)
            break;
    }
    return found;
}

std::string show_time(Seconds t, const std::string& zone, bool with_time) {
    icaltimezone* z = zone.empty() ? utc() : builtin_zone(zone);
    return format(icaltime_from_timet_with_zone(t, 0, z != nullptr ? z : utc()), with_time);
}

bool known_zone(std::string_view name) {
    return name == "UTC" || builtin_zone(name) != nullptr;
}

namespace {

// Digits of `s` from `at`, `n` of them, or -1.
int digits(std::string_view s, size_t at, size_t n) {
    if (at + n > s.size())
        return -1;
    int v = 0;
    for (size_t i = at; i < at + n; ++i) {
        if (s[i] < '0' || s[i] > '9')
            return -1;
        v = v * 10 + (s[i] - '0');
    }
    return v;
}

struct Parsed {
    icaltimetype t = icaltime_null_time(); // as written, no zone
    bool date = false;
    bool has_offset = false;
    int offset = 0; // seconds east of UTC
};

std::optional<Parsed> parse_rfc3339(std::string_view s) {
    Parsed p;
    int year = digits(s, 0, 4), month = digits(s, 5, 2), day = digits(s, 8, 2);
    if (s.size() < 10 || year < 1 || s[4] != '-' || s[7] != '-' || month < 1 || month > 12
        || day < 1 || day > icaltime_days_in_month(month, year))
        return std::nullopt;
    p.t.year = year;
    p.t.month = month;
    p.t.day = day;
    if (s.size() == 10) {
        p.date = true;
        p.t.is_date = 1;
        return p;
    }
    if (s[10] != 'T' && s[10] != 't' && s[10] != ' ')
        return std::nullopt;
    int hour = digits(s, 11, 2), minute = digits(s, 14, 2);
    if (hour < 0 || hour > 23 || s.size() < 16 || s[13] != ':' || minute < 0 || minute > 59)
        return std::nullopt;
    p.t.hour = hour;
    p.t.minute = minute;
    size_t at = 16;
    if (at < s.size() && s[at] == ':') {
        int second = digits(s, at + 1, 2);
        if (second < 0 || second > 60)
            return std::nullopt;
        p.t.second = std::min(second, 59);
        at += 3;
        if (at < s.size() && s[at] == '.') {
            ++at;
            size_t from = at;
            while (at < s.size() && s[at] >= '0' && s[at] <= '9')
                ++at;
            if (at == from)
                return std::nullopt;
        }
    }
    if (at == s.size())
        return p;
    if ((s[at] == 'Z' || s[at] == 'z') && at + 1 == s.size()) {
        p.has_offset = true;
        return p;
    }
    if ((s[at] == '+' || s[at] == '-') && at + 6 == s.size() && s[at + 3] == ':') {
        int oh = digits(s, at + 1, 2), om = digits(s, at + 4, 2);
        if (oh < 0 || oh > 23 || om < 0 || om > 59)
            return std::nullopt;
        p.has_offset = true;
        p.offset = (s[at] == '+' ? 1 : -1) * (oh * 3600 + om * 60);
        return p;
    }
    return std::nullopt;
}

Result<Parsed> parse_argument(std::string_view text, std::string_view what) {
    auto p = parse_rfc3339(text);
    if (!p)
        return make_error(Exit::data,
                          "%.*s '%.*s' is not an RFC 3339 date or date-time (2026-10-22, "
                          "2026-10-22T10:00:00+02:00)",
                          static_cast<int>(what.size()), what.data(),
                          static_cast<int>(std::min<size_t>(text.size(), 64)), text.data());
    return *p;
}

Error no_zone(std::string_view zone) {
    return make_error(Exit::data, "time_zone '%.*s' is not a time zone (an IANA name such as "
                                  "Europe/Berlin)",
                      static_cast<int>(std::min<size_t>(zone.size(), 64)), zone.data());
}

} // namespace

bool is_date(std::string_view text) {
    auto p = parse_rfc3339(text);
    return p && p->date;
}

Result<Seconds> parse_time(std::string_view text, const std::string& zone, std::string_view what) {
    SION_TRY(Parsed p, parse_argument(text, what));
    if (p.has_offset)
        return static_cast<Seconds>(icaltime_as_timet_with_zone(p.t, utc())) - p.offset;
    icaltimezone* z = utc();
    if (!zone.empty() && zone != "UTC") {
        z = builtin_zone(zone);
        if (z == nullptr)
            return no_zone(zone);
    }
    icaltimetype t = p.t;
    t.is_date = 0;
    return static_cast<Seconds>(icaltime_as_timet_with_zone(t, z));
}

namespace {

std::string new_uid() {
    unsigned char bytes[16];
    size_t got = 0;
    while (got < sizeof bytes) {
        ssize_t n = getrandom(bytes + got, sizeof bytes - got, 0);
        if (n > 0)
            got += static_cast<size_t>(n);
    }
    static const char hex[] = "0123456789abcdef";
    std::string uid;
    for (unsigned char b : bytes) {
        uid += hex[b >> 4];
        uid += hex[b & 15];
    }
    return uid + "@sion";
}

// The zone's VTIMEZONE as libical has it, cut to the rules in force from a year before `from`,
// and named by `name`: the whole history since the 1880s is not every event's to carry.
icalcomponent* vtimezone(icaltimezone* zone, const std::string& name, int from_year) {
    icalcomponent* vtz = icalcomponent_new_clone(icaltimezone_get_component(zone));
    icalproperty* tzid = icalcomponent_get_first_property(vtz, ICAL_TZID_PROPERTY);
    if (tzid != nullptr)
        icalproperty_set_tzid(tzid, name.c_str());
    std::vector<icalcomponent*> parts, drop;
    for (icalcomponent* c = icalcomponent_get_first_component(vtz, ICAL_ANY_COMPONENT); c != nullptr;
         c = icalcomponent_get_next_component(vtz, ICAL_ANY_COMPONENT))
        parts.push_back(c);
    icalcomponent* latest_before = nullptr;
    int latest_year = 0;
    for (icalcomponent* c : parts) {
        icalproperty* start = icalcomponent_get_first_property(c, ICAL_DTSTART_PROPERTY);
        icalproperty* rrule = icalcomponent_get_first_property(c, ICAL_RRULE_PROPERTY);
        int year = start != nullptr ? icalproperty_get_dtstart(start).year : 0;
        int last = year;
        if (rrule != nullptr) {
            icalrecurrencetype r = icalproperty_get_rrule(rrule);
            last = icaltime_is_null_time(r.until) ? 9999 : r.until.year;
        }
        if (last >= from_year - 1)
            continue;
        drop.push_back(c);
        if (year >= latest_year) {
            latest_year = year;
            latest_before = c;
        }
    }
    for (icalcomponent* c : drop) {
        if (c == latest_before && drop.size() == parts.size())
            continue; // a zone with no rule left in force keeps its last one
        icalcomponent_remove_component(vtz, c);
        icalcomponent_free(c);
    }
    return vtz;
}

bool has_control(std::string_view s, bool newlines_allowed) {
    for (char c : s) {
        auto u = static_cast<unsigned char>(c);
        if ((u < 0x20 && !(newlines_allowed && (c == '\n' || c == '\t'))) || u == 0x7f)
            return true;
    }
    return false;
}

} // namespace

Result<MadeEvent> make_event(const NewEvent& event) {
    if (event.summary.empty())
        return make_error(Exit::data, "member 'summary' is empty: give the event a title");
    if (has_control(event.summary, false) || has_control(event.location, false)
        || has_control(event.description, true) || has_control(event.rrule, false))
        return make_error(Exit::data, "the event's text holds control characters");
    icaltimezone* zone = nullptr;
    std::string zone_id = event.time_zone;
    if (!zone_id.empty() && zone_id != "UTC") {
        zone = builtin_zone(zone_id);
        if (zone == nullptr)
            return no_zone(zone_id);
    }
    SION_TRY(Parsed start, parse_argument(event.start, "start"));
    bool all_day = event.all_day || start.date;
    if (!event.end.empty() && !event.duration.empty())
        return make_error(Exit::data, "give end or duration, not both");
    std::optional<Parsed> end;
    if (!event.end.empty()) {
        SION_TRY(Parsed e, parse_argument(event.end, "end"));
        end = e;
    }
    std::optional<icaldurationtype> duration;
    if (!event.duration.empty()) {
        icaldurationtype d = icaldurationtype_from_string(event.duration.c_str());
        if (icaldurationtype_is_bad_duration(d) || icaldurationtype_as_int(d) <= 0)
            return make_error(Exit::data, "duration '%.*s' is not an RFC 5545 duration (PT1H30M, P1D)",
                              static_cast<int>(std::min<size_t>(event.duration.size(), 64)),
                              event.duration.c_str());
        duration = d;
    }
    icaltimetype dtstart, dtend;
    if (all_day) {
        dtstart = start.t;
        dtstart.is_date = 1;
        dtstart.hour = dtstart.minute = dtstart.second = 0;
        if (end) {
            dtend = end->t;
            dtend.is_date = 1;
            dtend.hour = dtend.minute = dtend.second = 0;
            int c = icaltime_compare_date_only(dtend, dtstart);
            if (c < 0)
                return make_error(Exit::data, "end is before start");
            if (c == 0) // the last day, given as the first: a day's event
                icaltime_adjust(&dtend, 1, 0, 0, 0);
        } else {
            int days = duration ? std::max(1, icaldurationtype_as_int(*duration) / 86400) : 1;
            dtend = dtstart;
            icaltime_adjust(&dtend, days, 0, 0, 0);
        }
    } else {
        auto local = [&](const Parsed& p, std::string_view what) -> Result<icaltimetype> {
            if (p.date)
                return make_error(Exit::data, "%.*s is a date: give a date-time, or all_day",
                                  static_cast<int>(what.size()), what.data());
            if (!p.has_offset && zone == nullptr && zone_id != "UTC")
                return make_error(Exit::data,
                                  "%.*s has no offset: give time_zone (an IANA name such as "
                                  "Europe/Berlin) or an offset (Z, +02:00)",
                                  static_cast<int>(what.size()), what.data());
            if (!p.has_offset)
                return p.t;
            Seconds s = static_cast<Seconds>(icaltime_as_timet_with_zone(p.t, utc())) - p.offset;
            icaltimetype t = icaltime_from_timet_with_zone(s, 0, zone != nullptr ? zone : utc());
            t.zone = nullptr;
            t.is_date = 0;
            return t;
        };
        SION_TRY(dtstart, local(start, "start"));
        if (end) {
            SION_TRY(dtend, local(*end, "end"));
            icaltimezone* z = zone != nullptr ? zone : utc();
            if (icaltime_as_timet_with_zone(dtend, z) <= icaltime_as_timet_with_zone(dtstart, z))
                return make_error(Exit::data, "end is not after start");
        } else {
            dtend = icaltime_add(dtstart, duration ? *duration : icaldurationtype_from_int(3600));
        }
        if (zone == nullptr) {
            dtstart.zone = utc();
            dtend.zone = utc();
        }
    }
    icalrecurrencetype rule;
    icalrecurrencetype_clear(&rule);
    if (!event.rrule.empty()) {
        std::string r = event.rrule;
        if (r.rfind("RRULE:", 0) == 0)
            r = r.substr(6);
        rule = icalrecurrencetype_from_string(r.c_str());
        if (rule.freq == ICAL_NO_RECURRENCE)
            return make_error(Exit::data, "rrule '%.*s' is not an RFC 5545 recurrence rule "
                                          "(FREQ=WEEKLY;COUNT=10)",
                              static_cast<int>(std::min<size_t>(event.rrule.size(), 64)),
                              event.rrule.c_str());
    }
    MadeEvent made;
    made.uid = new_uid();
    Component cal(icalcomponent_new_vcalendar());
    icalcomponent_add_property(cal.get(), icalproperty_new_version("2.0"));
    icalcomponent_add_property(cal.get(), icalproperty_new_prodid("-//sion//sion-calendar//EN"));
    if (zone != nullptr)
        icalcomponent_add_component(cal.get(), vtimezone(zone, zone_id, dtstart.year));
    icalcomponent* ev = icalcomponent_new_vevent();
    icalcomponent_add_property(ev, icalproperty_new_uid(made.uid.c_str()));
    icalcomponent_add_property(ev, icalproperty_new_dtstamp(icaltime_current_time_with_zone(utc())));
    auto timed = [&](icalproperty* p) {
        if (zone != nullptr && !all_day)
            icalproperty_add_parameter(p, icalparameter_new_tzid(zone_id.c_str()));
        return p;
    };
    icalcomponent_add_property(ev, timed(icalproperty_new_dtstart(dtstart)));
    icalcomponent_add_property(ev, timed(icalproperty_new_dtend(dtend)));
    icalcomponent_add_property(ev, icalproperty_new_summary(event.summary.c_str()));
    if (!event.location.empty())
        icalcomponent_add_property(ev, icalproperty_new_location(event.location.c_str()));
    if (!event.description.empty())
        icalcomponent_add_property(ev, icalproperty_new_description(event.description.c_str()));
    if (!event.rrule.empty())
        icalcomponent_add_property(ev, icalproperty_new_rrule(rule));
    icalcomponent_add_component(cal.get(), ev);
    char* text = icalcomponent_as_ical_string_r(cal.get());
    made.ics = text != nullptr ? text : "";
    icalmemory_free_buffer(text);
    return made;
}

} // namespace sion::calendar_cmd
