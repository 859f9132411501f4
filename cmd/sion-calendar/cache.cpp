// SPDX-License-Identifier: MIT
// The calendars kept between calls of list_events, and their WebDAV sync.
#include "cmd/sion-calendar/cache.hpp"

namespace sion::calendar_cmd {

namespace {

constexpr int k_rounds_max = 50; // sync-collection REPORTs of one call, when the server cuts short

} // namespace

bool EventCache::keeps(const CalendarInfo& calendar) const {
    return m_kept.count(calendar.href) > 0;
}

bool EventCache::apply(Kept& kept, SyncChanges& changes) const {
    for (const std::string& href : changes.gone) {
        auto found = kept.objects.find(href_path(href));
        if (found == kept.objects.end())
            continue;
        kept.bytes -= found->second.data.size();
        kept.objects.erase(found);
    }
    for (Resource& r : changes.changed) {
        std::string key = href_path(r.href);
        if (auto found = kept.objects.find(key); found != kept.objects.end()) {
            kept.bytes -= found->second.data.size();
            kept.objects.erase(found);
        }
        Object o;
        o.etag = std::move(r.etag);
        auto s = span(r.data);
        o.readable = s.has_value();
        if (s)
            o.span = *s;
        o.data = std::move(r.data);
        kept.bytes += o.data.size();
        kept.objects.emplace(std::move(key), std::move(o));
        if (kept.objects.size() > m_limits.objects || kept.bytes > m_limits.bytes)
            return false;
    }
    kept.token = std::move(changes.token);
    return true;
}

// Syncs `kept` from its token ("" at first); false when the calendar cannot be kept.
Result<bool> EventCache::bring_up_to_date(Dav& dav, const CalendarInfo& calendar, Kept& kept) {
    for (int round = 0; round < k_rounds_max; ++round) {
        SION_TRY(auto changes, dav.sync(calendar, kept.token));
        if (!changes && !kept.token.empty()) {
            // A token the server no longer knows, or no answer to it: everything again.
            kept = Kept{};
            SION_TRY(changes, dav.sync(calendar, kept.token));
        }
        if (!changes)
            return false;
        bool truncated = changes->truncated;
        if (!apply(kept, *changes))
            return false;
        if (!truncated)
            return true;
    }
    return false;
}

Result<std::vector<Resource>> EventCache::events_in(Dav& dav, const CalendarInfo& calendar,
                                                    Range range) {
    if (m_not_kept.count(calendar.href) == 0) {
        Kept& kept = m_kept[calendar.href];
        auto synced = bring_up_to_date(dav, calendar, kept);
        if (!synced) {
            m_kept.erase(calendar.href); // an answer half applied is never used
            return synced.error();
        }
        if (*synced) {
            std::vector<Resource> out;
            for (const auto& [path, o] : kept.objects)
                if (!o.readable || (o.span.start < range.end && o.span.end > range.start))
                    out.push_back(Resource{path, o.etag, o.data});
            return out;
        }
        m_kept.erase(calendar.href);
        m_not_kept.insert(calendar.href);
    }
    return dav.events_in(calendar, range);
}

} // namespace sion::calendar_cmd
