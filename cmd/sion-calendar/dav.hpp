// SPDX-License-Identifier: MIT
// sion-calendar's CalDAV client (RFC 4791, RFC 6764, over lib/http): the settings, discovery
// (/.well-known/caldav for a bare host, current-user-principal, calendar-home-set, the calendars),
// a calendar-query REPORT of a time range, WebDAV sync (RFC 6578: a sync-collection REPORT), PUT of a new object with If-None-Match: *, and DELETE
// with If-Match. WebDAV's multistatus is read by libxml2 (lib/xml_tree.hpp).
//
// Errors are one line for the model, never holding the password or the token: Exit::config for
// settings that are missing or wrong (the line names what to set), Exit::no_perm for a server that
// refuses the credentials, Exit::unavailable for one that cannot be reached or is no CalDAV server,
// Exit::data for an answer that cannot be read, Exit::timeout when a time limit runs out.
//
// Threads: one thread at a time.
#pragma once

#include "cmd/sion-calendar/ical.hpp"
#include "lib/http.hpp"
#include "lib/xml_tree.hpp"

#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace sion::calendar_cmd {

inline constexpr std::string_view k_dav = "DAV:";
inline constexpr std::string_view k_caldav = "urn:ietf:params:xml:ns:caldav";
inline constexpr std::string_view k_apple = "http://apple.com/ns/ical/";

struct Settings {
    std::string url;
    std::string username;
    std::string password;      // or
    std::string token_command; // run with /bin/sh -c when a token is needed

    bool operator==(const Settings&) const = default;
};

// A value of a setting: the environment's, else the credential kept (secrets::lookup).
using Lookup = std::function<Result<std::optional<std::string>>(std::string_view name)>;

// CALDAV_URL, CALDAV_USERNAME and CALDAV_PASSWORD or CALDAV_TOKEN_COMMAND; when one is missing,
// the line saying what to set (Exit::config).
[[nodiscard]] Result<Settings> read_settings(const Lookup& lookup);

// One response of a multistatus: its href as sent, its status when it has one of its own (0 when
// not), and the properties its propstats found (2xx).
struct DavResponse {
    std::string href;
    int status = 0;
    std::vector<XmlElement> props;

    [[nodiscard]] const XmlElement* prop(std::string_view ns, std::string_view name) const;
};

// The responses of a WebDAV multistatus (RFC 4918 13).
[[nodiscard]] Result<std::vector<DavResponse>> read_multistatus(std::string_view body);

struct CalendarInfo {
    std::string href; // as the server names it ("/alice/work/")
    std::string path; // its path, decoded, shown and given back by the model
    std::string name; // displayname, else the last segment of its path
    std::vector<std::string> components; // "VEVENT", "VTODO"; empty when the server says none
    std::string color;

    [[nodiscard]] bool has_events() const;
};

// What a calendar-query REPORT found: an object's href, ETag and iCalendar text.
struct Resource {
    std::string href;
    std::string etag;
    std::string data;
};

// What a sync-collection REPORT (RFC 6578) told: the collection's new sync-token, the objects
// added or changed since the token sent (with their data), those removed (their hrefs), and
// whether the server cut the answer short (507 on the collection: ask again with the new token).
struct SyncChanges {
    std::string token;
    std::vector<Resource> changed;
    std::vector<std::string> gone;
    bool truncated = false;
};

// The sync-collection answer `body` for the collection `collection_href`. Exit::data when it is no
// multistatus, names no sync-token, tells of a member twice, or of one neither removed (404) nor
// given with its calendar-data: an answer that cannot be applied whole is not applied at all.
[[nodiscard]] Result<SyncChanges> read_sync(std::string_view body, std::string_view collection_href);

// An href as a key: its path, percent-decoded, without scheme and host.
[[nodiscard]] std::string href_path(std::string_view href);

class Dav {
public:
    explicit Dav(Settings settings) : m_settings(std::move(settings)) {}

    [[nodiscard]] const Settings& settings() const { return m_settings; }

    // The calendars of the user's calendar home (found once, then kept), sorted by path.
    [[nodiscard]] Result<std::vector<CalendarInfo>> calendars();
    // The objects of `calendar` holding events within `range` (the server's filter).
    [[nodiscard]] Result<std::vector<Resource>> events_in(const CalendarInfo& calendar, Range range);
    // What changed in `calendar` since `token` ("" for everything: every object is then
    // "changed"). Nothing when the server does not answer it (no WebDAV sync, a token it no longer
    // knows: 403 or 409 with DAV:valid-sync-token, any other status, an answer read_sync refuses);
    // an error when the server is out of reach, the time ran out, or it refuses the credentials
    // (401).
    [[nodiscard]] Result<std::optional<SyncChanges>> sync(const CalendarInfo& calendar,
                                                          const std::string& token);
    // The object of `calendar` whose event has that UID, if any.
    [[nodiscard]] Result<std::optional<Resource>> find_uid(const CalendarInfo& calendar,
                                                           std::string_view uid);
    // PUTs a new object named after `uid` with If-None-Match: *; its href.
    [[nodiscard]] Result<std::string> create(const CalendarInfo& calendar, std::string_view uid,
                                             const std::string& ics);
    // DELETEs `href` if its ETag is still `etag`.
    [[nodiscard]] Status remove(const std::string& href, const std::string& etag);

private:
    struct Sent {
        HttpResponse response;
        std::string url; // where it went, for messages (no user info)
    };
    [[nodiscard]] Result<Sent> send(const std::string& method, const std::string& url,
                                    const std::string& depth, const std::string& body,
                                    HttpHeaders headers = {});
    [[nodiscard]] Result<std::vector<DavResponse>> propfind(std::string url, const std::string& depth,
                                                            const std::string& body);
    // A calendar-query REPORT of `body` on `calendar` (Depth 1): the responses of its
    // multistatus, or why there are none.
    [[nodiscard]] Result<std::vector<DavResponse>> query(const CalendarInfo& calendar,
                                                         const std::string& body);
    [[nodiscard]] Result<std::string> home();
    [[nodiscard]] Result<std::string> authorization(bool fresh);
    [[nodiscard]] Result<std::string> absolute(std::string_view href) const;
    [[nodiscard]] Error refused(const HttpResponse& r, const std::string& method,
                                const std::string& url) const;
    [[nodiscard]] Result<std::string> origin() const;

    Settings m_settings;
    std::optional<HttpClient> m_http;
    std::string m_home;  // the calendar home's URL, once found
    std::string m_token; // the token last printed by the token command
    std::optional<CalendarInfo> m_only; // the URL named one calendar, not a home
};

} // namespace sion::calendar_cmd
