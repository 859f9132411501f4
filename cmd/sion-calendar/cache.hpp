// SPDX-License-Identifier: MIT
// What sion-calendar keeps of each calendar between calls of list_events, as CalDAV clients do:
// every object of the calendar (its href, ETag, iCalendar text and the span of its occurrences,
// ical.hpp) and the collection's sync-token, brought up to date at every call with a WebDAV sync
// (RFC 6578, Dav::sync), so that a call asks the server only what changed since the last one.
//
// Nothing is ever answered from what is kept without that sync first: an object another client
// added, changed or removed is seen at the next call. A calendar is not kept (its events are
// asked for with a calendar-query REPORT of the range at each call, as when nothing is kept) when
// its server has no WebDAV sync, or it holds more objects or bytes than CacheLimits allows;
// a token the server no longer knows drops what was kept and fetches it all again.
//
// Errors: those of Dav (dav.hpp). Threads: one thread at a time.
#pragma once

#include "cmd/sion-calendar/dav.hpp"

#include <map>
#include <set>
#include <string>
#include <vector>

namespace sion::calendar_cmd {

struct CacheLimits {
    size_t objects = 20000;          // objects kept of one calendar, at most
    size_t bytes = size_t{64} << 20; // bytes of iCalendar kept of one calendar, at most
};

class EventCache {
public:
    explicit EventCache(CacheLimits limits = {}) : m_limits(limits) {}

    // The objects of `calendar` that may hold events within `range`.
    [[nodiscard]] Result<std::vector<Resource>> events_in(Dav& dav, const CalendarInfo& calendar,
                                                          Range range);
    // Whether `calendar` is kept now (for tests).
    [[nodiscard]] bool keeps(const CalendarInfo& calendar) const;

private:
    struct Object {
        std::string etag;
        std::string data;
        bool readable = false;
        Range span;
    };

    struct Kept {
        std::string token;
        std::map<std::string, Object> objects; // by href_path
        size_t bytes = 0;
    };

    // Applies `changes`; false when the calendar grew beyond what is kept.
    [[nodiscard]] bool apply(Kept& kept, SyncChanges& changes) const;
    [[nodiscard]] Result<bool> bring_up_to_date(Dav& dav, const CalendarInfo& calendar, Kept& kept);

    CacheLimits m_limits;
    std::map<std::string, Kept> m_kept; // by the calendar's href
    std::set<std::string> m_not_kept;   // calendars asked for with a query at every call
};

} // namespace sion::calendar_cmd
