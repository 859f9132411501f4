// SPDX-License-Identifier: MIT
// sion-calendar's iCalendar (RFC 5545) through libical: the occurrences of the events of one
// calendar object within a range, recurrences expanded (RRULE, RDATE, EXDATE, and the instances a
// RECURRENCE-ID overrides), times read in their zone (the object's VTIMEZONE, else libical's zone
// of that name) and shown there and in UTC, all-day events (DATE values) as days; and a new event
// made into a calendar object, its zone's VTIMEZONE included.
//
// Errors: Exit::data for an object libical cannot read, an argument that is not what it must be
// (the message names it: "start '2026-13-01' is not an RFC 3339 date or date-time").
//
// Threads: libical keeps its zones in process-wide state: one thread at a time.
#pragma once

#include "lib/result.hpp"

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace sion::calendar_cmd {

// A time as the Unix epoch's seconds, UTC; all-day events' days at their UTC midnight.
using Seconds = int64_t;

struct Range {
    Seconds start = 0;
    Seconds end = 0; // exclusive
};

struct Occurrence {
    std::string uid;
    std::string summary;
    std::string location;
    Seconds start = 0;
    Seconds end = 0;
    bool all_day = false;
    bool recurring = false;
    bool floating = false; // a date-time of no zone: shown as it is written
    std::string zone;      // the zone it is written in ("Europe/Berlin"), "" for UTC and floating
    // Shown: "2026-10-22 10:00" in its zone (a day "2026-10-22" for an all-day event), and in UTC.
    std::string local_start, local_end, utc_start, utc_end;
};

struct ExpandLimits {
    size_t max_steps = 100000;     // repetitions one event's rules are stepped through, at most
    size_t max_occurrences = 5000; // occurrences one event gives in the range, at most
};

// Appends to `out` the occurrences within `range` of the events of `ics` (a VCALENDAR). Returns
// whether an event's repetitions were cut short by `limits`.
[[nodiscard]] Result<bool> expand(std::string_view ics, Range range, std::vector<Occurrence>& out,
                                  const ExpandLimits& limits = {});

// The times within which every occurrence of `ics` falls, whatever range expand is asked for:
// from its earliest start to its latest end, two days wider each way (zones, floating times, an
// UNTIL that is a day), to k_forever when a rule repeats without end or beyond `limits`; an empty
// range (0, 0) when it has no event with a start. The error of expand for what expand refuses.
// What a kept object is checked against before it is expanded (cache.hpp).
inline constexpr Seconds k_forever = Seconds{1} << 62;
[[nodiscard]] Result<Range> span(std::string_view ics, const ExpandLimits& limits = {});

// The summary ("" for none) of the event of `ics` whose UID is `uid` (its master, else an instance
// it overrides); nothing when no event of `ics` has that UID or `ics` cannot be read.
[[nodiscard]] std::optional<std::string> event_summary(std::string_view ics, std::string_view uid);

// "2026-10-22", or "2026-10-22 10:00" when `with_time`, of the UTC time `t`, shown in `zone`
// (an IANA name; "" for UTC).
[[nodiscard]] std::string show_time(Seconds t, const std::string& zone, bool with_time);

// Whether `name` is an IANA time zone libical knows.
[[nodiscard]] bool known_zone(std::string_view name);

// An RFC 3339 date ("2026-10-22") or date-time ("2026-10-22T10:00:00+02:00", "…Z", or with no
// offset: in `zone`, an IANA name or "" for UTC) as a UTC time; a date is its midnight in `zone`.
// `what` names the argument in messages.
[[nodiscard]] Result<Seconds> parse_time(std::string_view text, const std::string& zone,
                                         std::string_view what);
// Whether `text` is a date alone ("2026-10-22").
[[nodiscard]] bool is_date(std::string_view text);

struct NewEvent {
    std::string summary;
    std::string start;     // RFC 3339 date or date-time
    std::string end;       // "" for none
    std::string duration;  // RFC 5545 duration ("PT1H"), "" for none
    std::string time_zone; // IANA name, "" for none
    bool all_day = false;
    std::string location;
    std::string description;
    std::string rrule; // "FREQ=WEEKLY;COUNT=10", "" for none
};

struct MadeEvent {
    std::string uid;
    std::string ics;
};

// The calendar object of a new event, a UID of its own made for it.
[[nodiscard]] Result<MadeEvent> make_event(const NewEvent& event);

} // namespace sion::calendar_cmd
