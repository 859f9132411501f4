// SPDX-License-Identifier: MIT
// sion-calendar's tools (cmd/sion-calendar/server.cpp): their definitions and effects, arguments
// refused before anything is sent, settings looked up at each call (missing ones named, the next
// call taking what was kept since), a failing token command, calendars picked by path or name,
// and how an occurrence is shown; what list_events keeps (cache.cpp) against a server that syncs
// in rounds, changes, forgets its tokens, or holds more than is kept; and lib/proxy's
// loopback_exempt, which sion-calendar's requests ask for.
#include "cmd/sion-calendar/server.hpp"
#include "lib/proxy.hpp"
#include "tests/unit/http_test_server.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <map>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

namespace sion::calendar_cmd {
namespace {

struct Kept {
    std::map<std::string, std::string> values;

    Lookup lookup() {
        return [this](std::string_view name) -> Result<std::optional<std::string>> {
            auto it = values.find(std::string(name));
            if (it == values.end())
                return std::optional<std::string>();
            return std::optional<std::string>(it->second);
        };
    }
};

Json args(const char* text) {
    auto j = Json::parse(text);
    EXPECT_TRUE(j) << text;
    return std::move(*j);
}

TEST(CalendarServer, FourToolsWithTheirEffects) {
    Json tools = CalendarTools::tools();
    ASSERT_EQ(tools.view().size(), 4U);
    const char* names[] = {"list_calendars", "list_events", "create_event", "delete_event"};
    for (size_t i = 0; i < 4; ++i) {
        JsonView t = tools.view().at(i);
        EXPECT_EQ(*t.string("name"), names[i]);
        EXPECT_TRUE(CalendarTools::has_tool(names[i]));
        JsonView a = t.get("annotations");
        EXPECT_EQ(*a.boolean("readOnlyHint"), i < 2) << names[i];
        EXPECT_FALSE(*a.boolean("openWorldHint")) << names[i];
        if (i >= 2) {
            EXPECT_FALSE(*a.boolean("idempotentHint")) << names[i];
            EXPECT_EQ(*a.boolean("destructiveHint"), i == 3) << names[i];
        }
        EXPECT_FALSE(*t.get("inputSchema").boolean("additionalProperties"));
    }
    EXPECT_FALSE(CalendarTools::has_tool("list_documents"));
}

TEST(CalendarServer, ArgumentsAreCheckedBeforeTheSettings) {
    Kept kept; // nothing set: an argument's error comes first, and nothing is sent
    CalendarTools tools(kept.lookup());
    struct Case {
        const char* tool;
        const char* arguments;
        const char* said;
    } cases[] = {
        {"list_events", R"({"start":"yesterday"})",
         "list_events: start 'yesterday' is not an RFC 3339 date or date-time (2026-10-22, "
         "2026-10-22T10:00:00+02:00)"},
        {"list_events", R"({"start":"2026-10-02","end":"2026-10-01"})",
         "list_events: end is not after start"},
        {"list_events", R"({"start":"2020-01-01","end":"2030-01-01"})",
         "list_events: the range is longer than five years: narrow it"},
        {"list_events", R"({"limit":5000})", "list_events: member 'limit' must be from 1 to 1000"},
        {"list_events", R"({"time_zone":"Berlin"})",
         "list_events: time_zone 'Berlin' is not a time zone (an IANA name such as Europe/Berlin)"},
        {"list_events", R"({"calendar":7})", nullptr},
        {"create_event", R"({"start":"2026-10-02T10:00:00Z"})",
         "create_event: member 'summary' is missing"},
        {"create_event", R"({"summary":"","start":"2026-10-02T10:00:00Z"})",
         "create_event: member 'summary' is empty"},
        {"create_event", R"({"summary":"x","start":"2026-10-02T10:00:00Z","all_day":"yes"})",
         nullptr},
        {"delete_event", R"({})", "delete_event: member 'uid' is missing"},
        {"delete_event", R"({"uid":"a\nb"})", "delete_event: member 'uid' holds a line break"},
    };
    for (const Case& c : cases) {
        Json a = args(c.arguments);
        Answer answer = tools.call(c.tool, a.view());
        EXPECT_TRUE(answer.is_error) << c.tool << " " << c.arguments;
        if (c.said != nullptr)
            EXPECT_EQ(answer.text, c.said) << c.arguments;
        else
            EXPECT_EQ(answer.text.find('\n'), std::string::npos) << answer.text;
    }
    Json not_object = args("[1]");
    EXPECT_EQ(tools.call("list_events", not_object.view()).text,
              "list_events takes its arguments as an object");
}

TEST(CalendarServer, MissingSettingsAreNamedAndTheNextCallTakesWhatWasKept) {
    Kept kept;
    CalendarTools tools(kept.lookup());
    Json none = args("{}");
    EXPECT_EQ(tools.call("list_calendars", none.view()).text,
              "the calendar is not set up: CALDAV_URL is not set; keep it with sion agent "
              "credential add CALDAV_URL");
    kept.values["CALDAV_URL"] = "ftp://127.0.0.3/";
    EXPECT_EQ(tools.call("list_calendars", none.view()).text,
              "the calendar is not set up: CALDAV_URL 'ftp://127.0.0.3/' is not an http or https "
              "URL");
    kept.values["CALDAV_URL"] = "http://127.0.0.3:1/";
    EXPECT_EQ(tools.call("list_events", none.view()).text,
              "the calendar is not set up: CALDAV_PASSWORD or CALDAV_TOKEN_COMMAND is not set; "
              "keep one with sion agent credential add");
    kept.values["CALDAV_PASSWORD"] = "pw-Zebra-42";
    EXPECT_EQ(tools.call("list_events", none.view()).text,
              "the calendar is not set up: CALDAV_USERNAME is not set; keep it with sion agent "
              "credential add CALDAV_USERNAME");
    kept.values["CALDAV_USERNAME"] = "alice";
    // Port 1 of 127.0.0.3: nothing listens.
    Answer down = tools.call("list_calendars", none.view());
    EXPECT_TRUE(down.is_error);
    EXPECT_EQ(down.text.rfind("the calendar server is out of reach: cannot reach "
                              "'http://127.0.0.3:1/.well-known/caldav': ",
                              0),
              0U)
        << down.text;
    EXPECT_EQ(down.text.find("pw-Zebra-42"), std::string::npos);
    EXPECT_EQ(down.text.find('\n'), std::string::npos);
}

TEST(CalendarServer, ATokenCommandThatFailsIsOneLine) {
    Kept kept;
    kept.values = {{"CALDAV_URL", "http://127.0.0.3:1/"},
                   {"CALDAV_TOKEN_COMMAND", "echo 'the vault is locked' >&2; echo more >&2; exit 4"}};
    CalendarTools tools(kept.lookup());
    Json none = args("{}");
    EXPECT_EQ(tools.call("list_calendars", none.view()).text,
              "CALDAV_TOKEN_COMMAND failed: it exited 4: the vault is locked");
    kept.values["CALDAV_TOKEN_COMMAND"] = "true";
    EXPECT_EQ(tools.call("list_calendars", none.view()).text, "CALDAV_TOKEN_COMMAND printed no token");
    kept.values["CALDAV_TOKEN_COMMAND"] = "echo two words";
    EXPECT_EQ(tools.call("list_calendars", none.view()).text,
              "CALDAV_TOKEN_COMMAND printed more than one token (a line holding no blank is one)");
}

std::vector<CalendarInfo> account() {
    CalendarInfo work{"/dav/alice/work/", "/dav/alice/work/", "Work", {"VEVENT"}, ""};
    CalendarInfo todo{"/dav/alice/todo/", "/dav/alice/todo/", "Tasks", {"VTODO"}, ""};
    CalendarInfo home{"/dav/alice/h%C3%BCtte/", "/dav/alice/hütte/", "Hütte", {}, ""};
    return {work, todo, home};
}

TEST(CalendarServer, CalendarsPickedByPathOrName) {
    auto all = account();
    auto events = pick_calendars(all, "", false);
    ASSERT_TRUE(events);
    EXPECT_EQ(events->size(), 2U); // the one of tasks alone is not one of events
    auto one = pick_calendars(all, "", true);
    ASSERT_FALSE(one);
    EXPECT_EQ(one.error().message(), "give calendar: there are 2 (/dav/alice/work/, /dav/alice/hütte/)");
    for (const char* name : {"/dav/alice/work", "/dav/alice/work/", "work", "WORK"}) {
        auto w = pick_calendars(all, name, true);
        ASSERT_TRUE(w) << name;
        EXPECT_EQ(w->front().name, "Work");
    }
    auto hut = pick_calendars(all, "/dav/alice/h%C3%BCtte/", true);
    ASSERT_TRUE(hut);
    EXPECT_EQ(hut->front().name, "Hütte");
    auto none = pick_calendars(all, "play", false);
    ASSERT_FALSE(none);
    EXPECT_EQ(none.error().message(),
              "no calendar 'play': there are /dav/alice/work/, /dav/alice/todo/, /dav/alice/hütte/");
}

TEST(CalendarServer, OccurrenceLines) {
    Occurrence o;
    o.uid = "u1";
    o.summary = "Sync\nnow";
    o.location = "Room 1";
    o.recurring = true;
    o.zone = "Europe/Berlin";
    o.local_start = "2026-10-29 10:00";
    o.local_end = "2026-10-29 11:00";
    o.utc_start = "2026-10-29 09:00";
    o.utc_end = "2026-10-29 10:00";
    EXPECT_EQ(occurrence_line(o, "Work"), "2026-10-29 10:00 to 11:00 Europe/Berlin (09:00 to 10:00 "
                                          "UTC): Sync now; at Room 1; recurring; uid u1; calendar Work");
    o.local_start = "2026-10-29 00:30";
    o.utc_start = "2026-10-28 23:30";
    EXPECT_EQ(occurrence_line(o, "Work").substr(0, 80),
              "2026-10-29 00:30 to 11:00 Europe/Berlin (2026-10-28 23:30 to 2026-10-29 10:00 UT");
    Occurrence day;
    day.uid = "d";
    day.all_day = true;
    day.local_start = "2026-12-24";
    day.local_end = "2026-12-26";
    EXPECT_EQ(occurrence_line(day, "Home"), "2026-12-24 to 2026-12-26 all day: (no title); uid d; "
                                            "calendar Home");
}

// A CalDAV server of one calendar, /cal/, whose sync-collection REPORT answers what `syncs` holds
// for the token sent (403 DAV:valid-sync-token for a token it does not hold), and whose
// calendar-query REPORT answers `query`. `asked` lists the REPORTs: "sync TOKEN" or "query".
struct SyncingDav {
    std::mutex lock;
    std::map<std::string, std::string> syncs;
    std::string query;
    std::vector<std::string> asked;

    std::vector<std::string> take_asked() {
        std::lock_guard<std::mutex> hold(lock);
        return std::exchange(asked, {});
    }

    void answer(const test::Received& r, int fd) {
        auto reply = [fd](int status, const std::string& body) {
            test::TestServer::send_text(fd, "HTTP/1.1 " + std::to_string(status)
                                                + " X\r\nContent-Type: application/xml\r\n"
                                                  "Connection: close\r\nContent-Length: "
                                                + std::to_string(body.size()) + "\r\n\r\n" + body);
        };
        if (r.head.rfind("PROPFIND ", 0) == 0) {
            reply(207, ms("<d:response><d:href>/cal/</d:href><d:propstat><d:prop><d:resourcetype>"
                          "<d:collection/><c:calendar/></d:resourcetype><d:displayname>Cal"
                          "</d:displayname></d:prop><d:status>HTTP/1.1 200 OK</d:status>"
                          "</d:propstat></d:response>"));
            return;
        }
        std::lock_guard<std::mutex> hold(lock);
        size_t open = r.body.find("<d:sync-token>");
        if (open == std::string::npos) {
            asked.push_back("query");
            reply(207, query);
            return;
        }
        open += 14;
        std::string token = r.body.substr(open, r.body.find("</d:sync-token>") - open);
        asked.push_back("sync " + token);
        auto found = syncs.find(token);
        if (found == syncs.end())
            reply(403, R"(<?xml version="1.0"?><d:error xmlns:d="DAV:"><d:valid-sync-token/></d:error>)");
        else
            reply(207, found->second);
    }

    static std::string ms(const std::string& inside) {
        return R"(<?xml version="1.0"?><d:multistatus xmlns:d="DAV:" xmlns:c="urn:ietf:params:xml:ns:caldav">)"
               + inside + "</d:multistatus>";
    }
    static std::string object(const std::string& name, const std::string& start,
                              const std::string& summary) {
        return "<d:response><d:href>/cal/" + name + ".ics</d:href><d:propstat><d:prop><d:getetag>\""
               + summary + "\"</d:getetag><c:calendar-data>BEGIN:VCALENDAR\r\nVERSION:2.0\r\n"
                           "BEGIN:VEVENT\r\nUID:" + name + "\r\nDTSTART:" + start
               + "\r\nSUMMARY:" + summary
               + "\r\nEND:VEVENT\r\nEND:VCALENDAR\r\n</c:calendar-data></d:prop>"
                 "<d:status>HTTP/1.1 200 OK</d:status></d:propstat></d:response>";
    }
    static std::string gone(const std::string& name) {
        return "<d:response><d:href>/cal/" + name + ".ics</d:href><d:status>HTTP/1.1 404 Not Found"
               "</d:status></d:response>";
    }
};

// The summaries of the events `objects` hold within `range`, sorted.
std::vector<std::string> summaries(const std::vector<Resource>& objects, Range range) {
    std::vector<std::string> out;
    for (const Resource& r : objects) {
        std::vector<Occurrence> o;
        EXPECT_TRUE(expand(r.data, range, o));
        for (const Occurrence& x : o)
            out.push_back(x.summary);
    }
    std::sort(out.begin(), out.end());
    return out;
}

class CalendarCache : public ::testing::Test {
protected:
    void SetUp() override {
        for (const char* name : {"http_proxy", "https_proxy", "HTTPS_PROXY", "all_proxy", "ALL_PROXY"})
            ::unsetenv(name); // the fake server is on this host's loopback
    }
    SyncingDav fake;
    test::TestServer server{[this](const test::Received& r, int fd, const test::TestServer&) {
        fake.answer(r, fd);
    }};
    Dav dav{Settings{server.url("/cal/"), "u", "p", ""}};
    const Range july{1782864000, 1785542400}; // 2026-07
};

TEST_F(CalendarCache, RoundsChangesAndAForgottenToken) {
    using V = std::vector<std::string>;
    fake.syncs[""] = SyncingDav::ms(SyncingDav::object("a", "20260710T100000Z", "A")
                                    + "<d:response><d:href>/cal/</d:href><d:status>HTTP/1.1 507 "
                                      "Insufficient Storage</d:status></d:response>"
                                      "<d:sync-token>p1</d:sync-token>");
    fake.syncs["p1"] = SyncingDav::ms(SyncingDav::object("b", "20260711T100000Z", "B")
                                      + "<d:sync-token>t2</d:sync-token>");
    fake.syncs["t2"] = SyncingDav::ms(SyncingDav::gone("a")
                                      + SyncingDav::object("b", "20260712T100000Z", "B2")
                                      + "<d:sync-token>t3</d:sync-token>");
    fake.syncs["t3"] = SyncingDav::ms("<d:sync-token>t3</d:sync-token>");
    auto calendars = dav.calendars();
    ASSERT_TRUE(calendars) << calendars.error().message();
    const CalendarInfo& cal = calendars->front();
    EventCache cache;
    auto first = cache.events_in(dav, cal, july);
    ASSERT_TRUE(first) << first.error().message();
    EXPECT_EQ(summaries(*first, july), (V{"A", "B"}));
    EXPECT_EQ(fake.take_asked(), (V{"sync ", "sync p1"})); // cut short: asked on at once
    EXPECT_TRUE(cache.keeps(cal));
    auto second = cache.events_in(dav, cal, july);
    ASSERT_TRUE(second);
    EXPECT_EQ(summaries(*second, july), (V{"B2"})); // A removed, B changed
    EXPECT_EQ(fake.take_asked(), (V{"sync t2"}));
    // A range none of the kept objects can reach: none is given to be expanded.
    auto later = cache.events_in(dav, cal, Range{1893456000, 1894060800}); // 2030-01
    ASSERT_TRUE(later);
    EXPECT_TRUE(later->empty());
    EXPECT_EQ(fake.take_asked(), (V{"sync t3"}));
    // The server forgets t3: what was kept is dropped and fetched whole again.
    fake.syncs.erase("t3");
    auto again = cache.events_in(dav, cal, july);
    ASSERT_TRUE(again);
    EXPECT_EQ(summaries(*again, july), (V{"A", "B"}));
    EXPECT_EQ(fake.take_asked(), (V{"sync t3", "sync ", "sync p1"}));
}

TEST_F(CalendarCache, TooLargeToKeepOrNoSyncIsTheQueryOfTheRange) {
    using V = std::vector<std::string>;
    fake.syncs[""] = SyncingDav::ms(SyncingDav::object("a", "20260710T100000Z", "A")
                                    + SyncingDav::object("b", "20260711T100000Z", "B")
                                    + "<d:sync-token>t1</d:sync-token>");
    fake.query = SyncingDav::ms(SyncingDav::object("q", "20260712T100000Z", "Q"));
    auto calendars = dav.calendars();
    ASSERT_TRUE(calendars) << calendars.error().message();
    const CalendarInfo& cal = calendars->front();
    EventCache small(CacheLimits{1, size_t{1} << 20});
    for (int call = 0; call < 2; ++call) {
        auto got = small.events_in(dav, cal, july);
        ASSERT_TRUE(got) << got.error().message();
        EXPECT_EQ(summaries(*got, july), (V{"Q"}));
        EXPECT_FALSE(small.keeps(cal));
    }
    EXPECT_EQ(fake.take_asked(), (V{"sync ", "query", "query"})); // asked once whether it syncs
    // By bytes too; and a server whose sync answer has no token is one without sync.
    EventCache few_bytes(CacheLimits{100, 10});
    auto got = few_bytes.events_in(dav, cal, july);
    ASSERT_TRUE(got);
    EXPECT_EQ(summaries(*got, july), (V{"Q"}));
    fake.take_asked();
    fake.syncs[""] = SyncingDav::ms(SyncingDav::object("a", "20260710T100000Z", "A"));
    EventCache cache;
    got = cache.events_in(dav, cal, july);
    ASSERT_TRUE(got);
    EXPECT_EQ(summaries(*got, july), (V{"Q"}));
    EXPECT_FALSE(cache.keeps(cal));
    EXPECT_EQ(fake.take_asked(), (V{"sync ", "query"}));
}

TEST(CalendarServer, LoopbackGoesThroughTheProxyUnlessNoProxyNamesIt) {
    auto env = [](std::map<std::string, std::string> vars) {
        return Environment([vars](const char* name) -> std::optional<std::string> {
            auto it = vars.find(name);
            return it == vars.end() ? std::nullopt : std::optional<std::string>(it->second);
        });
    };
    auto sandbox = env({{"http_proxy", "http://127.0.0.1:3128"},
                        {"NO_PROXY", "localhost,127.0.0.1,::1"}});
    EXPECT_EQ(*environment_proxy("http://127.0.0.3:5232/", sandbox, false), "http://127.0.0.1:3128");
    EXPECT_EQ(*environment_proxy("http://127.0.0.3:5232/", sandbox, true), "");
    EXPECT_EQ(*environment_proxy("http://127.0.0.1:5232/", sandbox, false), "");
    EXPECT_EQ(*environment_proxy("http://localhost:5232/", sandbox, false), "");
    EXPECT_EQ(*environment_proxy("http://dav.example.org/", sandbox, false), "http://127.0.0.1:3128");
}

} // namespace
} // namespace sion::calendar_cmd
