// SPDX-License-Identifier: MIT
// WebDAV's XML as sion-calendar reads it (lib/xml_tree.cpp, cmd/sion-calendar/dav.cpp): a
// multistatus with its propstats, and hostile answers — entities and a DTD, a document too large,
// too deep or of too many elements, one cut short, namespaces that are not DAV's — each refused
// with one line, never a crash or an expansion; a sync-collection answer (RFC 6578) read whole or
// refused whole.
#include "cmd/sion-calendar/dav.hpp"
#include "lib/xml_tree.hpp"

#include <gtest/gtest.h>

#include <string>

namespace sion::calendar_cmd {
namespace {

const char* k_home = R"(<?xml version="1.0" encoding="utf-8"?>
<multistatus xmlns="DAV:" xmlns:C="urn:ietf:params:xml:ns:caldav" xmlns:CS="http://calendarserver.org/ns/" xmlns:A="http://apple.com/ns/ical/">
 <response>
  <href>/alice/</href>
  <propstat><prop><resourcetype><collection/></resourcetype></prop><status>HTTP/1.1 200 OK</status></propstat>
 </response>
 <response>
  <href>/alice/work%20stuff/</href>
  <propstat>
   <prop>
    <resourcetype><collection/><C:calendar/></resourcetype>
    <displayname>Work &amp; more</displayname>
    <C:supported-calendar-component-set><C:comp name="VEVENT"/><C:comp name="VTODO"/></C:supported-calendar-component-set>
    <CS:getctag>"ctag-1"</CS:getctag>
    <A:calendar-color>#ff0000ff</A:calendar-color>
   </prop>
   <status>HTTP/1.1 200 OK</status>
  </propstat>
  <propstat><prop><sync-token/><displayname>hidden</displayname></prop><status>HTTP/1.1 404 Not Found</status></propstat>
 </response>
 <response><href>/alice/gone/</href><status>HTTP/1.1 404 Not Found</status></response>
</multistatus>
)";

TEST(CalendarXml, MultistatusResponsesAndTheirFoundProperties) {
    auto responses = read_multistatus(k_home);
    ASSERT_TRUE(responses) << responses.error().message();
    ASSERT_EQ(responses->size(), 3U);
    const DavResponse& work = (*responses)[1];
    EXPECT_EQ(work.href, "/alice/work%20stuff/");
    ASSERT_NE(work.prop(k_dav, "displayname"), nullptr);
    EXPECT_EQ(work.prop(k_dav, "displayname")->text, "Work & more"); // only the 200 propstat's
    EXPECT_EQ(work.prop(k_dav, "sync-token"), nullptr);
    ASSERT_NE(work.prop(k_dav, "resourcetype"), nullptr);
    EXPECT_NE(work.prop(k_dav, "resourcetype")->child(k_caldav, "calendar"), nullptr);
    const XmlElement* set = work.prop(k_caldav, "supported-calendar-component-set");
    ASSERT_NE(set, nullptr);
    ASSERT_EQ(set->children.size(), 2U);
    EXPECT_EQ(set->children[1].attribute("name"), "VTODO");
    EXPECT_EQ((*responses)[2].status, 404);
    EXPECT_TRUE((*responses)[2].props.empty());
}

TEST(CalendarXml, PrefixesAreTheirNamespacesNotTheirSpelling) {
    // The same names under other prefixes, and a "calendar" of another namespace that is not one.
    auto responses = read_multistatus(
        R"(<x:multistatus xmlns:x="DAV:" xmlns:y="urn:ietf:params:xml:ns:caldav"><x:response>)"
        R"(<x:href>/c/</x:href><x:propstat><x:prop><x:resourcetype><y:calendar/>)"
        R"(<calendar xmlns="urn:other"/></x:resourcetype></x:prop>)"
        R"(<x:status>HTTP/1.1 200 OK</x:status></x:propstat></x:response></x:multistatus>)");
    ASSERT_TRUE(responses) << responses.error().message();
    ASSERT_EQ(responses->size(), 1U);
    const XmlElement* type = (*responses)[0].prop(k_dav, "resourcetype");
    ASSERT_NE(type, nullptr);
    EXPECT_NE(type->child(k_caldav, "calendar"), nullptr);
    EXPECT_EQ(type->child("urn:other", "calendar"), &type->children[1]);
}

TEST(CalendarXml, WrongNamespacesAreNoMultistatus) {
    for (const char* body :
         {R"(<multistatus><response><href>/a/</href></response></multistatus>)",
          R"(<d:multistatus xmlns:d="urn:not-dav"><d:response/></d:multistatus>)",
          R"(<html><body>It works!</body></html>)"}) {
        auto r = read_multistatus(body);
        ASSERT_FALSE(r) << body;
        EXPECT_EQ(r.error().message(), "its answer is not a WebDAV multistatus");
        EXPECT_EQ(r.error().exit(), Exit::data);
    }
    // A response of the wrong namespace is passed over, not taken.
    auto r = read_multistatus(R"(<d:multistatus xmlns:d="DAV:"><response><href>/a/</href></response></d:multistatus>)");
    ASSERT_TRUE(r);
    EXPECT_TRUE(r->empty());
}

TEST(CalendarXml, EntitiesAreNeverExpanded) {
    std::string laughs = R"(<?xml version="1.0"?><!DOCTYPE d:multistatus [<!ENTITY a "aaaaaaaaaa">)";
    std::string prev = "a";
    for (int i = 0; i < 10; ++i) {
        std::string name = "e" + std::to_string(i);
        laughs += "<!ENTITY " + name + " \"";
        for (int j = 0; j < 10; ++j)
            laughs += "&" + prev + ";";
        laughs += "\">";
        prev = name;
    }
    laughs += R"(]><d:multistatus xmlns:d="DAV:"><d:response><d:href>&)" + prev
              + R"(;</d:href></d:response></d:multistatus>)";
    auto r = read_multistatus(laughs);
    ASSERT_FALSE(r);
    EXPECT_EQ(r.error().message(), "its XML has a DTD (<!DOCTYPE>): entities are not expanded");
    // An external entity: refused the same way, nothing read.
    auto external = read_multistatus(
        R"(<?xml version="1.0"?><!DOCTYPE d [<!ENTITY x SYSTEM "file:///etc/passwd">]>)"
        R"(<d:multistatus xmlns:d="DAV:"><d:response><d:href>&x;</d:href></d:response></d:multistatus>)");
    ASSERT_FALSE(external);
    EXPECT_EQ(external.error().message(), "its XML has a DTD (<!DOCTYPE>): entities are not expanded");
    // An entity nobody declared is not well-formed; the predefined ones are read.
    auto undeclared = read_multistatus(R"(<d:multistatus xmlns:d="DAV:"><d:response><d:href>&x;</d:href></d:response></d:multistatus>)");
    ASSERT_FALSE(undeclared);
    EXPECT_EQ(undeclared.error().message(), "its XML is not well-formed");
    auto predefined = read_multistatus(R"(<d:multistatus xmlns:d="DAV:"><d:response><d:href>/a&lt;&#x42;/</d:href></d:response></d:multistatus>)");
    ASSERT_TRUE(predefined);
    EXPECT_EQ((*predefined)[0].href, "/a<B/");
}

TEST(CalendarXml, CutShortEmptyOrBinaryIsNotWellFormed) {
    std::string whole = k_home;
    for (size_t cut : {size_t{0}, size_t{1}, size_t{40}, whole.size() / 2, whole.size() - 20}) {
        auto r = read_multistatus(whole.substr(0, cut));
        ASSERT_FALSE(r) << cut;
        EXPECT_EQ(r.error().exit(), Exit::data);
    }
    auto binary = read_multistatus(std::string("<d:multistatus xmlns:d=\"DAV:\">\xff\xfe\0\x01", 34));
    ASSERT_FALSE(binary);
}

TEST(CalendarXml, SizeDepthAndElementsAreBounded) {
    XmlLimits limits;
    limits.max_bytes = 1000;
    auto large = parse_xml_tree("<a>" + std::string(2000, 'x') + "</a>", limits);
    ASSERT_FALSE(large);
    EXPECT_EQ(large.error().message(), "its XML is larger than 1000 bytes");
    std::string deep;
    for (int i = 0; i < 100; ++i)
        deep += "<a>";
    for (int i = 0; i < 100; ++i)
        deep += "</a>";
    auto d = parse_xml_tree(deep);
    ASSERT_FALSE(d);
    EXPECT_EQ(d.error().message(), "its XML is nested more than 64 deep");
    limits = XmlLimits{};
    limits.max_elements = 100;
    std::string many = "<a>";
    for (int i = 0; i < 200; ++i)
        many += "<b/>";
    many += "</a>";
    auto m = parse_xml_tree(many, limits);
    ASSERT_FALSE(m);
    EXPECT_EQ(m.error().message(), "its XML has more than 100 elements");
}

TEST(CalendarXml, CalendarDataKeepsItsTextWhole) {
    auto r = read_multistatus(
        "<d:multistatus xmlns:d=\"DAV:\" xmlns:c=\"urn:ietf:params:xml:ns:caldav\"><d:response>"
        "<d:href>/a/x.ics</d:href><d:propstat><d:prop><d:getetag>\"e1\"</d:getetag>"
        "<c:calendar-data><![CDATA[BEGIN:VCALENDAR\r\nSUMMARY:Caf\xc3\xa9 & <b>\r\n]]></c:calendar-data>"
        "</d:prop><d:status>HTTP/1.1 200 OK</d:status></d:propstat></d:response></d:multistatus>");
    ASSERT_TRUE(r) << r.error().message();
    const XmlElement* data = (*r)[0].prop(k_caldav, "calendar-data");
    ASSERT_NE(data, nullptr);
    EXPECT_EQ(data->text, "BEGIN:VCALENDAR\nSUMMARY:Caf\xc3\xa9 & <b>\n"); // XML makes CR LF one LF
}

const char* k_sync = R"(<?xml version="1.0" encoding="utf-8"?>
<multistatus xmlns="DAV:" xmlns:C="urn:ietf:params:xml:ns:caldav">
 <response>
  <href>/alice/work/new%20one.ics</href>
  <propstat><prop><getetag>"e2"</getetag><C:calendar-data>BEGIN:VCALENDAR
END:VCALENDAR
</C:calendar-data></prop><status>HTTP/1.1 200 OK</status></propstat>
 </response>
 <response><href>http://cal.example:5232/alice/work/gone.ics</href><status>HTTP/1.1 404 Not Found</status></response>
 <sync-token>http://radicale.org/ns/sync/f3a</sync-token>
</multistatus>
)";

TEST(CalendarXml, SyncCollectionChangedGoneAndToken) {
    auto r = read_sync(k_sync, "/alice/work/");
    ASSERT_TRUE(r) << r.error().message();
    EXPECT_EQ(r->token, "http://radicale.org/ns/sync/f3a");
    ASSERT_EQ(r->changed.size(), 1U);
    EXPECT_EQ(r->changed[0].href, "/alice/work/new%20one.ics");
    EXPECT_EQ(r->changed[0].etag, "\"e2\"");
    EXPECT_EQ(r->changed[0].data, "BEGIN:VCALENDAR\nEND:VCALENDAR\n");
    ASSERT_EQ(r->gone.size(), 1U);
    EXPECT_EQ(href_path(r->gone[0]), "/alice/work/gone.ics");
    EXPECT_EQ(href_path(r->changed[0].href), "/alice/work/new one.ics");
    EXPECT_FALSE(r->truncated);
}

TEST(CalendarXml, SyncCollectionNothingChangedAndCutShort) {
    auto none = read_sync(R"(<d:multistatus xmlns:d="DAV:"><d:sync-token>t2</d:sync-token></d:multistatus>)",
                          "/a/");
    ASSERT_TRUE(none) << none.error().message();
    EXPECT_EQ(none->token, "t2");
    EXPECT_TRUE(none->changed.empty() && none->gone.empty() && !none->truncated);
    // RFC 6578 3.6: 507 on the collection itself, with or without its slash, is a cut short answer.
    auto cut = read_sync(R"(<d:multistatus xmlns:d="DAV:"><d:response><d:href>/a</d:href>)"
                         R"(<d:status>HTTP/1.1 507 Insufficient Storage</d:status></d:response>)"
                         R"(<d:sync-token>t3</d:sync-token></d:multistatus>)",
                         "/a/");
    ASSERT_TRUE(cut) << cut.error().message();
    EXPECT_TRUE(cut->truncated);
    EXPECT_TRUE(cut->gone.empty());
}

TEST(CalendarXml, SyncCollectionThatCannotBeAppliedWholeIsRefused) {
    struct Case {
        const char* body;
        const char* message;
    } cases[] = {
        // No token: nothing to ask from next time.
        {R"(<d:multistatus xmlns:d="DAV:"><d:response><d:href>/a/x.ics</d:href><d:status>HTTP/1.1 404 Not Found</d:status></d:response></d:multistatus>)",
         "its sync-collection answer has no sync-token"},
        // A token of another namespace is no token.
        {R"(<d:multistatus xmlns:d="DAV:"><x:sync-token xmlns:x="urn:x">t</x:sync-token></d:multistatus>)",
         "its sync-collection answer has no sync-token"},
        // A member changed, its data not given (the propstat of calendar-data is a 404).
        {R"(<d:multistatus xmlns:d="DAV:" xmlns:c="urn:ietf:params:xml:ns:caldav"><d:response><d:href>/a/x.ics</d:href>)"
         R"(<d:propstat><d:prop><d:getetag>"1"</d:getetag></d:prop><d:status>HTTP/1.1 200 OK</d:status></d:propstat>)"
         R"(<d:propstat><d:prop><c:calendar-data/></d:prop><d:status>HTTP/1.1 404 Not Found</d:status></d:propstat>)"
         R"(</d:response><d:sync-token>t</d:sync-token></d:multistatus>)",
         "its sync-collection answer gives '/a/x.ics' without its calendar-data"},
        // A member of another status than 404, with data: not taken as it is.
        {R"(<d:multistatus xmlns:d="DAV:" xmlns:c="urn:ietf:params:xml:ns:caldav"><d:response><d:href>/a/x.ics</d:href>)"
         R"(<d:status>HTTP/1.1 403 Forbidden</d:status><d:propstat><d:prop><c:calendar-data>x</c:calendar-data></d:prop>)"
         R"(<d:status>HTTP/1.1 200 OK</d:status></d:propstat></d:response><d:sync-token>t</d:sync-token></d:multistatus>)",
         "its sync-collection answer gives '/a/x.ics' without its calendar-data"},
        {R"(<d:multistatus xmlns:d="DAV:"><d:response><d:status>HTTP/1.1 404 Not Found</d:status></d:response><d:sync-token>t</d:sync-token></d:multistatus>)",
         "a response of its sync-collection answer has no href"},
        // Changed, then removed (its href spelled otherwise): which holds is not known.
        {R"(<d:multistatus xmlns:d="DAV:" xmlns:c="urn:ietf:params:xml:ns:caldav"><d:response><d:href>/a/x%2Ey.ics</d:href>)"
         R"(<d:propstat><d:prop><c:calendar-data>x</c:calendar-data></d:prop><d:status>HTTP/1.1 200 OK</d:status></d:propstat>)"
         R"(</d:response><d:response><d:href>/a/x.y.ics</d:href><d:status>HTTP/1.1 404 Not Found</d:status></d:response>)"
         R"(<d:sync-token>t</d:sync-token></d:multistatus>)",
         "its sync-collection answer tells of '/a/x.y.ics' twice"},
        {R"(<html><body>It works!</body></html>)", "its answer is not a WebDAV multistatus"},
        {R"(<?xml version="1.0"?><!DOCTYPE d [<!ENTITY x SYSTEM "file:///etc/passwd">]><d:multistatus xmlns:d="DAV:"><d:sync-token>&x;</d:sync-token></d:multistatus>)",
         "its XML has a DTD (<!DOCTYPE>): entities are not expanded"},
        {R"(<d:multistatus xmlns:d="DAV:"><d:sync-token>t</d:sync)", "its XML is not well-formed"},
    };
    for (const Case& c : cases) {
        auto r = read_sync(c.body, "/a/");
        ASSERT_FALSE(r) << c.body;
        EXPECT_EQ(r.error().message(), c.message) << c.body;
        EXPECT_EQ(r.error().exit(), Exit::data);
    }
}

} // namespace
} // namespace sion::calendar_cmd
