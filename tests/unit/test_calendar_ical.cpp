// SPDX-License-Identifier: MIT
// sion-calendar's iCalendar (cmd/sion-calendar/ical.cpp, libical): recurrences expanded within a
// range (RRULE, RDATE, EXDATE, RECURRENCE-ID, a cancelled instance), times in their zone across
// daylight saving changes (the object's VTIMEZONE, or libical's zone of the name), all-day and
// floating events, the bounds on expansion, RFC 3339 arguments, and new events read back.
#include "cmd/sion-calendar/ical.hpp"

#include <gtest/gtest.h>

#include <algorithm>

#include <string>
#include <vector>

namespace sion::calendar_cmd {
namespace {

Seconds at(const char* rfc3339) {
    auto t = parse_time(rfc3339, "", "t");
    EXPECT_TRUE(t) << rfc3339;
    return t ? *t : 0;
}

Range range(const char* from, const char* to) {
    return {at(from), at(to)};
}

std::string calendar(const std::string& body) {
    return "BEGIN:VCALENDAR\r\nVERSION:2.0\r\nPRODID:-//t//EN\r\n" + body + "END:VCALENDAR\r\n";
}

const std::string k_berlin = "BEGIN:VTIMEZONE\r\nTZID:Europe/Berlin\r\n"
                             "BEGIN:DAYLIGHT\r\nTZOFFSETFROM:+0100\r\nTZOFFSETTO:+0200\r\nTZNAME:CEST\r\n"
                             "DTSTART:19810329T020000\r\nRRULE:FREQ=YEARLY;BYMONTH=3;BYDAY=-1SU\r\n"
                             "END:DAYLIGHT\r\n"
                             "BEGIN:STANDARD\r\nTZOFFSETFROM:+0200\r\nTZOFFSETTO:+0100\r\nTZNAME:CET\r\n"
                             "DTSTART:19961027T030000\r\nRRULE:FREQ=YEARLY;BYMONTH=10;BYDAY=-1SU\r\n"
                             "END:STANDARD\r\nEND:VTIMEZONE\r\n";

std::vector<Occurrence> expanded(const std::string& ics, Range r, ExpandLimits limits = {}) {
    std::vector<Occurrence> out;
    auto cut = expand(ics, r, out, limits);
    EXPECT_TRUE(cut) << (cut ? "" : cut.error().message());
    return out;
}

std::vector<std::string> starts(const std::vector<Occurrence>& o, bool utc = false) {
    std::vector<std::string> s;
    for (const Occurrence& x : o)
        s.push_back(utc ? x.utc_start : x.local_start);
    std::sort(s.begin(), s.end());
    return s;
}

TEST(CalendarIcal, WeeklyInBerlinKeepsItsHourAcrossTheOctoberChange) {
    std::string ics = calendar(k_berlin + "BEGIN:VEVENT\r\nUID:w\r\nDTSTAMP:20260101T000000Z\r\n"
                                          "DTSTART;TZID=Europe/Berlin:20261015T100000\r\n"
                                          "DTEND;TZID=Europe/Berlin:20261015T110000\r\n"
                                          "RRULE:FREQ=WEEKLY\r\nSUMMARY:Sync\r\nEND:VEVENT\r\n");
    auto o = expanded(ics, range("2026-10-20", "2026-11-01"));
    ASSERT_EQ(o.size(), 2U);
    EXPECT_EQ(starts(o), (std::vector<std::string>{"2026-10-22 10:00", "2026-10-29 10:00"}));
    EXPECT_EQ(starts(o, true), (std::vector<std::string>{"2026-10-22 08:00", "2026-10-29 09:00"}));
    EXPECT_EQ(o[0].zone, "Europe/Berlin");
    EXPECT_TRUE(o[0].recurring);
    EXPECT_EQ(o[0].end - o[0].start, 3600);
    // And in March, the other way.
    auto spring = expanded(ics, range("2027-03-20", "2027-04-03"));
    EXPECT_EQ(starts(spring, true), (std::vector<std::string>{"2027-03-25 09:00", "2027-04-01 08:00"}));
}

TEST(CalendarIcal, ZoneByNameWithoutItsVtimezone) {
    std::string ics = calendar("BEGIN:VEVENT\r\nUID:n\r\nDTSTAMP:20260101T000000Z\r\n"
                               "DTSTART;TZID=America/New_York:20261030T091500\r\nDURATION:PT15M\r\n"
                               "RRULE:FREQ=DAILY;COUNT=4\r\nSUMMARY:Stand-up\r\nEND:VEVENT\r\n");
    auto o = expanded(ics, range("2026-10-01", "2026-12-01"));
    EXPECT_EQ(starts(o, true), (std::vector<std::string>{"2026-10-30 13:15", "2026-10-31 13:15",
                                                         "2026-11-01 14:15", "2026-11-02 14:15"}));
    EXPECT_EQ(o[0].zone, "America/New_York");
}

TEST(CalendarIcal, ExdateRdateAndAnOverride) {
    std::string ics = calendar(
        k_berlin
        + "BEGIN:VEVENT\r\nUID:d\r\nDTSTAMP:20260101T000000Z\r\n"
          "DTSTART;TZID=Europe/Berlin:20260601T090000\r\nDURATION:PT30M\r\nRRULE:FREQ=DAILY;COUNT=5\r\n"
          "EXDATE;TZID=Europe/Berlin:20260602T090000\r\nEXDATE:20260603T070000Z\r\n"
          "RDATE;TZID=Europe/Berlin:20260620T150000\r\nSUMMARY:Daily\r\nEND:VEVENT\r\n"
          "BEGIN:VEVENT\r\nUID:d\r\nDTSTAMP:20260101T000000Z\r\n"
          "RECURRENCE-ID;TZID=Europe/Berlin:20260604T090000\r\n"
          "DTSTART;TZID=Europe/Berlin:20260604T170000\r\nDURATION:PT1H\r\nSUMMARY:Daily, late\r\n"
          "END:VEVENT\r\n"
          "BEGIN:VEVENT\r\nUID:d\r\nDTSTAMP:20260101T000000Z\r\n"
          "RECURRENCE-ID;TZID=Europe/Berlin:20260605T090000\r\n"
          "DTSTART;TZID=Europe/Berlin:20260605T090000\r\nSTATUS:CANCELLED\r\nSUMMARY:Daily\r\n"
          "END:VEVENT\r\n");
    auto o = expanded(ics, range("2026-05-01", "2026-07-01"));
    EXPECT_EQ(starts(o), (std::vector<std::string>{"2026-06-01 09:00", "2026-06-04 17:00",
                                                   "2026-06-20 15:00"}));
    for (const Occurrence& x : o) {
        if (x.local_start == "2026-06-04 17:00") {
            EXPECT_EQ(x.summary, "Daily, late");
        }
    }
}

TEST(CalendarIcal, AllDayEventsAreDays) {
    std::string ics = calendar("BEGIN:VEVENT\r\nUID:a\r\nDTSTAMP:20260101T000000Z\r\n"
                               "DTSTART;VALUE=DATE:20261224\r\nDTEND;VALUE=DATE:20261227\r\n"
                               "SUMMARY:Holidays\r\nEND:VEVENT\r\n"
                               "BEGIN:VEVENT\r\nUID:b\r\nDTSTAMP:20260101T000000Z\r\n"
                               "DTSTART;VALUE=DATE:20260101\r\nRRULE:FREQ=YEARLY\r\n"
                               "SUMMARY:New year\r\nEND:VEVENT\r\n");
    auto o = expanded(ics, range("2026-12-25T12:00:00Z", "2027-01-02"));
    ASSERT_EQ(o.size(), 2U);
    const Occurrence& holidays = o[0].uid == "a" ? o[0] : o[1];
    const Occurrence& new_year = o[0].uid == "a" ? o[1] : o[0];
    EXPECT_TRUE(holidays.all_day);
    EXPECT_EQ(holidays.local_start, "2026-12-24");
    EXPECT_EQ(holidays.local_end, "2026-12-26"); // the last day, included
    EXPECT_EQ(new_year.local_start, "2027-01-01");
    EXPECT_EQ(new_year.local_end, "2027-01-01");
    EXPECT_TRUE(new_year.recurring);
}

TEST(CalendarIcal, FloatingAndUtcTimes) {
    std::string ics = calendar("BEGIN:VEVENT\r\nUID:f\r\nDTSTAMP:20260101T000000Z\r\n"
                               "DTSTART:20260710T080000\r\nSUMMARY:Floating\r\nEND:VEVENT\r\n"
                               "BEGIN:VEVENT\r\nUID:u\r\nDTSTAMP:20260101T000000Z\r\n"
                               "DTSTART:20260710T080000Z\r\nDTEND:20260710T090000Z\r\nSUMMARY:Utc\r\n"
                               "END:VEVENT\r\n"
                               "BEGIN:VEVENT\r\nUID:x\r\nDTSTAMP:20260101T000000Z\r\n"
                               "DTSTART;TZID=Nowhere/Else:20260710T080000\r\nSUMMARY:Unknown zone\r\n"
                               "END:VEVENT\r\n");
    auto o = expanded(ics, range("2026-07-10", "2026-07-11"));
    ASSERT_EQ(o.size(), 3U);
    for (const Occurrence& x : o) {
        EXPECT_EQ(x.local_start, "2026-07-10 08:00") << x.uid;
        EXPECT_EQ(x.floating, x.uid != "u") << x.uid;
        EXPECT_EQ(x.zone, "") << x.uid;
    }
}

TEST(CalendarIcal, OutsideTheRangeIsLeftOut) {
    std::string ics = calendar("BEGIN:VEVENT\r\nUID:o\r\nDTSTAMP:20260101T000000Z\r\n"
                               "DTSTART:20260710T080000Z\r\nDTEND:20260710T090000Z\r\n"
                               "RRULE:FREQ=DAILY;UNTIL=20260712T080000Z\r\nSUMMARY:o\r\nEND:VEVENT\r\n");
    EXPECT_TRUE(expanded(ics, range("2026-07-13", "2026-08-01")).empty());
    EXPECT_TRUE(expanded(ics, range("2026-07-01", "2026-07-10T08:00:00Z")).empty());
    // One that has begun and not ended is within.
    EXPECT_EQ(expanded(ics, range("2026-07-11T08:30:00Z", "2026-07-11T08:31:00Z")).size(), 1U);
    EXPECT_EQ(expanded(ics, range("2026-07-01", "2026-08-01")).size(), 3U);
}

TEST(CalendarIcal, ExpansionIsBounded) {
    std::string ics = calendar("BEGIN:VEVENT\r\nUID:m\r\nDTSTAMP:20260101T000000Z\r\n"
                               "DTSTART:20000101T000000Z\r\nRRULE:FREQ=MINUTELY\r\nSUMMARY:m\r\n"
                               "END:VEVENT\r\n");
    std::vector<Occurrence> out;
    auto cut = expand(ics, range("2026-07-01", "2026-07-02"), out, ExpandLimits{1000, 10});
    ASSERT_TRUE(cut);
    EXPECT_TRUE(*cut);
    out.clear();
    std::string soon = calendar("BEGIN:VEVENT\r\nUID:m\r\nDTSTAMP:20260101T000000Z\r\n"
                                "DTSTART:20260701T000000Z\r\nRRULE:FREQ=MINUTELY\r\nSUMMARY:m\r\n"
                                "END:VEVENT\r\n");
    cut = expand(soon, range("2026-07-01", "2026-07-02"), out, ExpandLimits{100000, 50});
    ASSERT_TRUE(cut);
    EXPECT_TRUE(*cut);
    EXPECT_EQ(out.size(), 50U);
}

// Every occurrence expand gives in any range is within span: what a kept object is checked
// against before it is expanded (cache.cpp) never leaves one out.
void expect_within_span(const std::string& ics) {
    auto s = span(ics);
    ASSERT_TRUE(s) << s.error().message();
    auto all = expanded(ics, range("1990-01-01", "2090-01-01"));
    ASSERT_FALSE(all.empty());
    for (const Occurrence& o : all) {
        EXPECT_LE(s->start, o.start) << o.utc_start << o.local_start;
        EXPECT_GT(s->end, o.end) << o.utc_end << o.local_end;
    }
}

TEST(CalendarIcal, SpanHoldsEveryOccurrence) {
    std::string single = calendar("BEGIN:VEVENT\r\nUID:s\r\nDTSTAMP:20260101T000000Z\r\n"
                                  "DTSTART:20260710T080000Z\r\nDTEND:20260710T090000Z\r\nEND:VEVENT\r\n");
    auto s = span(single);
    ASSERT_TRUE(s);
    EXPECT_EQ(s->start, at("2026-07-08T08:00:00Z"));
    EXPECT_EQ(s->end, at("2026-07-12T09:00:00Z"));
    expect_within_span(single);
    std::string until = calendar("BEGIN:VEVENT\r\nUID:o\r\nDTSTAMP:20260101T000000Z\r\n"
                                 "DTSTART:20260710T080000Z\r\nDTEND:20260710T090000Z\r\n"
                                 "RRULE:FREQ=DAILY;UNTIL=20260712T080000Z\r\nEND:VEVENT\r\n");
    s = span(until);
    ASSERT_TRUE(s);
    EXPECT_EQ(s->end, at("2026-07-14T09:00:00Z"));
    expect_within_span(until);
    // COUNT, EXDATE, an RDATE after the rule's end, an override moved later, one cancelled.
    expect_within_span(calendar(
        k_berlin
        + "BEGIN:VEVENT\r\nUID:d\r\nDTSTAMP:20260101T000000Z\r\n"
          "DTSTART;TZID=Europe/Berlin:20260601T090000\r\nDURATION:PT30M\r\nRRULE:FREQ=DAILY;COUNT=5\r\n"
          "EXDATE;TZID=Europe/Berlin:20260602T090000\r\n"
          "RDATE;TZID=Europe/Berlin:20260620T150000\r\nRDATE:20260501T150000Z\r\nEND:VEVENT\r\n"
          "BEGIN:VEVENT\r\nUID:d\r\nDTSTAMP:20260101T000000Z\r\n"
          "RECURRENCE-ID;TZID=Europe/Berlin:20260604T090000\r\n"
          "DTSTART;TZID=Europe/Berlin:20260904T170000\r\nDURATION:PT1H\r\nEND:VEVENT\r\n"));
    // All day, floating, a zone by name alone, an UNTIL that is a day.
    expect_within_span(calendar("BEGIN:VEVENT\r\nUID:a\r\nDTSTAMP:20260101T000000Z\r\n"
                                "DTSTART;VALUE=DATE:20261224\r\nDTEND;VALUE=DATE:20261227\r\n"
                                "RRULE:FREQ=YEARLY;COUNT=3\r\nEND:VEVENT\r\n"
                                "BEGIN:VEVENT\r\nUID:f\r\nDTSTAMP:20260101T000000Z\r\n"
                                "DTSTART:20260710T230000\r\nRRULE:FREQ=WEEKLY;UNTIL=20260807\r\nEND:VEVENT\r\n"
                                "BEGIN:VEVENT\r\nUID:t\r\nDTSTAMP:20260101T000000Z\r\n"
                                "DTSTART;TZID=Pacific/Kiritimati:20260710T230000\r\nDURATION:PT2H\r\n"
                                "RRULE:FREQ=MONTHLY;COUNT=4\r\nEND:VEVENT\r\n"));
}

TEST(CalendarIcal, SpanOfWhatRepeatsWithoutEndOrHasNoEvent) {
    std::string weekly = calendar("BEGIN:VEVENT\r\nUID:w\r\nDTSTAMP:20260101T000000Z\r\n"
                                  "DTSTART:20260710T080000Z\r\nRRULE:FREQ=WEEKLY\r\nEND:VEVENT\r\n");
    auto s = span(weekly);
    ASSERT_TRUE(s);
    EXPECT_EQ(s->start, at("2026-07-08T08:00:00Z"));
    EXPECT_EQ(s->end, k_forever);
    // An RDATE before DTSTART of a rule without end, and a DTSTART an EXDATE takes out of a rule
    // cut short (found by fuzz_calendar): the span still begins before them.
    auto early = span(calendar("BEGIN:VEVENT\r\nUID:e\r\nDTSTAMP:20260101T000000Z\r\n"
                               "DTSTART:20260710T080000Z\r\nRRULE:FREQ=WEEKLY\r\n"
                               "RDATE:20260601T080000Z\r\nEND:VEVENT\r\n"));
    ASSERT_TRUE(early);
    EXPECT_EQ(early->start, at("2026-05-30T08:00:00Z"));
    EXPECT_EQ(early->end, k_forever);
    std::string cut = calendar("BEGIN:VEVENT\r\nUID:c\r\nDTSTAMP:20260101T000000Z\r\n"
                               "DTSTART:20260710T080000Z\r\nDURATION:PT15M\r\n"
                               "RRULE:FREQ=DAILY;UNTIL=20990101T000000Z\r\n"
                               "EXDATE:20260710T080000Z\r\nEND:VEVENT\r\n");
    auto cut_span = span(cut, ExpandLimits{10, 10});
    ASSERT_TRUE(cut_span);
    EXPECT_EQ(cut_span->start, at("2026-07-08T08:00:00Z"));
    EXPECT_EQ(cut_span->end, k_forever);
    // An UNTIL beyond the steps expand takes is no end either.
    auto far = span(calendar("BEGIN:VEVENT\r\nUID:m\r\nDTSTAMP:20260101T000000Z\r\n"
                             "DTSTART:20260710T080000Z\r\nRRULE:FREQ=MINUTELY;UNTIL=20990101T000000Z\r\n"
                             "END:VEVENT\r\n"),
                    ExpandLimits{1000, 10});
    ASSERT_TRUE(far);
    EXPECT_EQ(far->end, k_forever);
    auto todo = span(calendar("BEGIN:VTODO\r\nUID:t\r\nDTSTAMP:20260101T000000Z\r\nEND:VTODO\r\n"));
    ASSERT_TRUE(todo);
    EXPECT_EQ(todo->start, 0);
    EXPECT_EQ(todo->end, 0);
    for (const char* bad : {"", "hello", "BEGIN:VCALENDAR\r\nthis is not\r\nEND:VEVENT"})
        EXPECT_FALSE(span(bad)) << bad;
}

TEST(CalendarIcal, WhatIsNotIcalendarIsRefused) {
    for (const char* bad : {"", "hello", "BEGIN:VEVENT\r\nUID:x\r\nEND:VEVENT\r\n",
                            "BEGIN:VCALENDAR\r\nthis is not\r\nEND:VEVENT"}) {
        std::vector<Occurrence> out;
        auto r = expand(bad, range("2026-01-01", "2027-01-01"), out);
        EXPECT_FALSE(r) << bad;
    }
}

TEST(CalendarIcal, AnEventFoundByItsWholeUid) {
    std::string uid(90, 'u'); // folded where it is written: longer than a line of 75 bytes
    std::string ics = calendar("BEGIN:VEVENT\r\nUID:" + uid.substr(0, 70) + "\r\n " + uid.substr(70)
                               + "\r\nDTSTAMP:20260101T000000Z\r\nDTSTART:20260710T080000Z\r\n"
                                 "SUMMARY:Long\r\nEND:VEVENT\r\n");
    EXPECT_EQ(event_summary(ics, uid), std::optional<std::string>("Long"));
    EXPECT_EQ(event_summary(ics, uid.substr(1)), std::nullopt);
    EXPECT_EQ(event_summary(ics, uid + "x"), std::nullopt);
    EXPECT_EQ(event_summary("not iCalendar", uid), std::nullopt);
}

TEST(CalendarIcal, Rfc3339Arguments) {
    EXPECT_EQ(at("1970-01-01T00:00:00Z"), 0);
    EXPECT_EQ(at("1970-01-01T01:00:00+01:00"), 0);
    EXPECT_EQ(at("1970-01-01T00:00:00.250-00:30"), 1800);
    EXPECT_EQ(at("1970-01-02"), 86400);
    auto berlin = parse_time("2026-10-22T10:00", "Europe/Berlin", "start");
    ASSERT_TRUE(berlin);
    EXPECT_EQ(*berlin, at("2026-10-22T08:00:00Z"));
    auto day = parse_time("2026-12-24", "Europe/Berlin", "start");
    ASSERT_TRUE(day);
    EXPECT_EQ(*day, at("2026-12-23T23:00:00Z"));
    for (const char* bad : {"2026-13-01", "2026-02-30", "2026-1-1", "26-01-01", "2026-01-01T25:00",
                            "2026-01-01T10:00+1", "2026-01-01T10:00:00Zjunk", "tomorrow", ""}) {
        auto r = parse_time(bad, "", "start");
        ASSERT_FALSE(r) << bad;
        EXPECT_EQ(r.error().message().rfind("start '", 0), 0U) << r.error().message();
    }
    auto zone = parse_time("2026-01-01", "Mars/Olympus", "start");
    ASSERT_FALSE(zone);
    EXPECT_EQ(zone.error().message(),
              "time_zone 'Mars/Olympus' is not a time zone (an IANA name such as Europe/Berlin)");
    EXPECT_FALSE(known_zone("../../etc/passwd"));
    EXPECT_FALSE(known_zone("/etc/localtime"));
    EXPECT_TRUE(known_zone("Europe/Berlin"));
    EXPECT_TRUE(known_zone("UTC"));
}

TEST(CalendarIcal, NewEventsReadBack) {
    NewEvent e;
    e.summary = "Café ☕";
    e.start = "2026-10-15T10:00:00";
    e.duration = "PT90M";
    e.time_zone = "Europe/Berlin";
    e.rrule = "FREQ=WEEKLY;COUNT=3";
    e.location = "Straße 1";
    e.description = "two\nlines";
    auto made = make_event(e);
    ASSERT_TRUE(made) << made.error().message();
    EXPECT_EQ(made->uid.size(), 32U + 5U);
    EXPECT_NE(made->ics.find("TZID:Europe/Berlin"), std::string::npos);
    EXPECT_NE(made->ics.find("DTSTART;TZID=Europe/Berlin:20261015T100000"), std::string::npos);
    EXPECT_NE(made->ics.find("DESCRIPTION:two\\nlines"), std::string::npos);
    auto o = expanded(made->ics, range("2026-10-01", "2026-11-30"));
    EXPECT_EQ(starts(o, true), (std::vector<std::string>{"2026-10-15 08:00", "2026-10-22 08:00",
                                                         "2026-10-29 09:00"}));
    EXPECT_EQ(o[0].summary, "Café ☕");
    EXPECT_EQ(o[0].location, "Straße 1");
    EXPECT_EQ(o[0].end - o[0].start, 5400);

    NewEvent all;
    all.summary = "Day";
    all.start = "2026-12-24";
    all.end = "2026-12-24"; // the last day, given as the first
    auto day = make_event(all);
    ASSERT_TRUE(day);
    EXPECT_NE(day->ics.find("DTSTART;VALUE=DATE:20261224"), std::string::npos);
    EXPECT_NE(day->ics.find("DTEND;VALUE=DATE:20261225"), std::string::npos);

    NewEvent offset;
    offset.summary = "Offset";
    offset.start = "2026-07-01T10:00:00+02:00";
    auto utc = make_event(offset);
    ASSERT_TRUE(utc);
    EXPECT_NE(utc->ics.find("DTSTART:20260701T080000Z"), std::string::npos);
    EXPECT_NE(utc->ics.find("DTEND:20260701T090000Z"), std::string::npos);
    EXPECT_NE(make_event(offset)->uid, utc->uid);
}

TEST(CalendarIcal, NewEventsRefused) {
    auto refused = [](NewEvent e) {
        auto r = make_event(e);
        EXPECT_FALSE(r);
        return r ? std::string() : r.error().message();
    };
    NewEvent e;
    e.summary = "x";
    e.start = "2026-07-01T10:00:00";
    EXPECT_EQ(refused(e), "start has no offset: give time_zone (an IANA name such as "
                          "Europe/Berlin) or an offset (Z, +02:00)");
    e.time_zone = "Europe/Berlin";
    e.end = "2026-07-01T09:00:00";
    EXPECT_EQ(refused(e), "end is not after start");
    e.end.clear();
    e.duration = "an hour";
    EXPECT_EQ(refused(e), "duration 'an hour' is not an RFC 5545 duration (PT1H30M, P1D)");
    e.duration = "PT1H";
    e.end = "2026-07-01T11:00:00";
    EXPECT_EQ(refused(e), "give end or duration, not both");
    e.end.clear();
    e.rrule = "FREQ=SOMETIMES";
    EXPECT_EQ(refused(e), "rrule 'FREQ=SOMETIMES' is not an RFC 5545 recurrence rule "
                          "(FREQ=WEEKLY;COUNT=10)");
    e.rrule = "FREQ=DAILY\r\nATTENDEE:mailto:x@example.org";
    EXPECT_EQ(refused(e), "the event's text holds control characters");
    e.rrule.clear();
    e.summary = "x\r\nATTENDEE:mailto:x@example.org";
    EXPECT_EQ(refused(e), "the event's text holds control characters");
    e.summary.clear();
    EXPECT_EQ(refused(e), "member 'summary' is empty: give the event a title");
    NewEvent day;
    day.summary = "d";
    day.start = "2026-07-02";
    day.end = "2026-07-01";
    EXPECT_EQ(refused(day), "end is before start");
}

} // namespace
} // namespace sion::calendar_cmd
