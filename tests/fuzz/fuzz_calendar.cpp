// SPDX-License-Identifier: MIT
// Fuzzes what sion-calendar reads from a CalDAV server (cmd/sion-calendar): byte 0 chooses how the
// rest is read — even: as a WebDAV multistatus (lib/xml_tree, read_multistatus, read_sync), each
// response's calendar-data then expanded; odd: as an iCalendar object expanded over a year, within small
// bounds. Nothing may crash, hang or grow past the bounds: an object gives at most as many
// occurrences as the bounds allow, each within the object's span.
#include "cmd/sion-calendar/dav.hpp"
#include "cmd/sion-calendar/ical.hpp"

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>
#include <vector>

namespace {

void check(bool ok, const char* what) {
    if (ok)
        return;
    (void)std::fprintf(stderr, "fuzz_calendar: %s\n", what);
    std::abort();
}

constexpr sion::calendar_cmd::Range k_year{1767225600, 1798761600}; // 2026 in UTC

void expand(std::string_view ics) {
    sion::calendar_cmd::ExpandLimits limits;
    limits.max_steps = 2000;
    limits.max_occurrences = 200;
    std::vector<sion::calendar_cmd::Occurrence> out;
    auto cut = sion::calendar_cmd::expand(ics, k_year, out, limits);
    if (!cut)
        return;
    // Every event of the object may give max_occurrences, and its overrides one each: bounded
    // by the size of the input.
    check(out.size() <= limits.max_occurrences * (ics.size() / 20 + 1), "too many occurrences");
    for (const auto& o : out)
        check(o.end >= o.start, "an occurrence ends before it starts");
    // What a kept object is checked against before it is expanded never leaves one out.
    auto span = sion::calendar_cmd::span(ics, limits);
    check(static_cast<bool>(span), "expand read what span refused");
    for (const auto& o : out)
        check(span->start <= o.start && o.end < span->end, "an occurrence outside the span");
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    if (size == 0)
        return 0;
    std::string_view rest(reinterpret_cast<const char*>(data) + 1, size - 1);
    if (data[0] % 2 == 1) {
        expand(rest);
        return 0;
    }
    if (auto sync = sion::calendar_cmd::read_sync(rest, "/a/"))
        check(!sync->token.empty(), "a sync-collection answer read without its token");
    auto responses = sion::calendar_cmd::read_multistatus(rest);
    if (!responses)
        return 0;
    for (const auto& r : *responses)
        if (const auto* d = r.prop(sion::calendar_cmd::k_caldav, "calendar-data"))
            expand(d->text);
    return 0;
}
