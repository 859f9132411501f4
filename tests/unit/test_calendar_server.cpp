// SPDX-License-Identifier: MIT
// sion-calendar's tools (cmd/sion-calendar/server.cpp): their definitions and effects, arguments
// refused before anything is sent, settings looked up at each call (missing ones named, the next
// call taking what was kept since), a failing token command, calendars picked by path or name,
// and how an occurrence is shown; and lib/proxy's loopback_exempt, which sion-calendar's requests
// ask for.
#include "cmd/sion-calendar/server.hpp"
#include "lib/proxy.hpp"

#include <gtest/gtest.h>

#include <map>
#include <string>

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
