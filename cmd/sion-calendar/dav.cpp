// SPDX-License-Identifier: MIT
// CalDAV over lib/http: settings, discovery, REPORT, PUT and DELETE, and the multistatus read.
#include "cmd/sion-calendar/dav.hpp"

#include "lib/base64.hpp"
#include "lib/child.hpp"
#include "lib/text.hpp"
#include "lib/utf8.hpp"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <ctime>
#include <set>

namespace sion::calendar_cmd {

namespace {

constexpr size_t k_redirects_max = 5;
constexpr size_t k_report_bytes = size_t{32} << 20; // a REPORT's answer, at most
constexpr size_t k_token_bytes = size_t{64} << 10;
constexpr std::chrono::milliseconds k_token_time{30000};

std::string trim(std::string_view s) {
    return std::string(trim_space(s));
}

Error not_set(const char* what) {
    return make_error(Exit::config,
                      "the calendar is not set up: %s is not set; keep it with sion agent "
                      "credential add %s",
                      what, what);
}

// "HTTP/1.1 200 OK" → 200; 0 when it is not a status line.
int status_code(std::string_view line) {
    std::string s = trim(line);
    size_t space = s.find(' ');
    if (space == std::string::npos || s.size() < space + 4)
        return 0;
    int code = 0;
    for (size_t i = space + 1; i < space + 4; ++i) {
        if (s[i] < '0' || s[i] > '9')
            return 0;
        code = code * 10 + (s[i] - '0');
    }
    return code;
}

std::string xml_escape(std::string_view s) {
    std::string out;
    for (char c : s) {
        switch (c) {
        case '&': out += "&amp;"; break;
        case '<': out += "&lt;"; break;
        case '>': out += "&gt;"; break;
        case '"': out += "&quot;"; break;
        default: out += c;
        }
    }
    return out;
}

std::string utc_stamp(Seconds t) {
    std::time_t tt = static_cast<std::time_t>(t);
    std::tm tm{};
    gmtime_r(&tt, &tm);
    char buf[32];
    std::strftime(buf, sizeof buf, "%Y%m%dT%H%M%SZ", &tm);
    return buf;
}

bool is_2xx(int status) {
    return status >= 200 && status < 300;
}

const char* reason(int status) {
    switch (status) {
    case 401: return " Unauthorized";
    case 403: return " Forbidden";
    case 404: return " Not Found";
    case 405: return " Method Not Allowed";
    case 409: return " Conflict";
    case 412: return " Precondition Failed";
    case 500: return " Internal Server Error";
    case 502: return " Bad Gateway";
    case 503: return " Service Unavailable";
    default: return "";
    }
}

const char* k_propfind_home =
    "<?xml version=\"1.0\" encoding=\"utf-8\"?>\n"
    "<d:propfind xmlns:d=\"DAV:\" xmlns:c=\"urn:ietf:params:xml:ns:caldav\"><d:prop>"
    "<d:resourcetype/><d:current-user-principal/><c:calendar-home-set/>"
    "<d:displayname/><c:supported-calendar-component-set/>"
    "</d:prop></d:propfind>\n";

// No getctag or sync-token: the list is not kept between calls, and a server may have to go
// through every object of a calendar to tell them (Radicale takes 0.3 s for 5,000 events); the
// sync-collection REPORT (Dav::sync) gives the token with what changed.
const char* k_propfind_calendars =
    "<?xml version=\"1.0\" encoding=\"utf-8\"?>\n"
    "<d:propfind xmlns:d=\"DAV:\" xmlns:c=\"urn:ietf:params:xml:ns:caldav\" "
    "xmlns:a=\"http://apple.com/ns/ical/\"><d:prop>"
    "<d:resourcetype/><d:displayname/><c:supported-calendar-component-set/>"
    "<a:calendar-color/>"
    "</d:prop></d:propfind>\n";

std::string href_of(const XmlElement* prop) {
    if (prop == nullptr)
        return {};
    const XmlElement* href = prop->child(k_dav, "href");
    return href != nullptr ? trim(href->text) : std::string();
}

CalendarInfo calendar_of(const DavResponse& r) {
    CalendarInfo c;
    c.href = r.href;
    c.path = percent_decode(r.href);
    if (size_t scheme = c.path.find("://"); scheme != std::string::npos) {
        size_t slash = c.path.find('/', scheme + 3);
        c.path = slash == std::string::npos ? "/" : c.path.substr(slash);
    }
    if (const XmlElement* name = r.prop(k_dav, "displayname"))
        c.name = one_line(trim(name->text));
    if (c.name.empty()) {
        std::string p = c.path;
        while (!p.empty() && p.back() == '/')
            p.pop_back();
        c.name = p.substr(p.rfind('/') + 1);
    }
    if (const XmlElement* set = r.prop(k_caldav, "supported-calendar-component-set"))
        for (const XmlElement& comp : set->children)
            if (comp.is(k_caldav, "comp")) {
                std::string name = one_line(comp.attribute("name").substr(0, 32));
                if (!name.empty())
                    c.components.push_back(name);
            }
    if (const XmlElement* color = r.prop(k_apple, "calendar-color"))
        c.color = one_line(trim(color->text));
    return c;
}

bool is_calendar(const DavResponse& r) {
    const XmlElement* type = r.prop(k_dav, "resourcetype");
    return type != nullptr && type->child(k_caldav, "calendar") != nullptr;
}

} // namespace

Result<Settings> read_settings(const Lookup& lookup) {
    Settings s;
    auto get = [&](const char* name, std::string& into) -> Status {
        auto v = lookup(name);
        if (!v)
            return v.error();
        if (*v)
            into = **v;
        return {};
    };
    SION_CHECK(get("CALDAV_URL", s.url));
    SION_CHECK(get("CALDAV_USERNAME", s.username));
    SION_CHECK(get("CALDAV_PASSWORD", s.password));
    SION_CHECK(get("CALDAV_TOKEN_COMMAND", s.token_command));
    if (s.url.empty())
        return not_set("CALDAV_URL");
    if (s.url.rfind("http://", 0) != 0 && s.url.rfind("https://", 0) != 0)
        return make_error(Exit::config, "the calendar is not set up: CALDAV_URL '%s' is not an "
                                        "http or https URL",
                          redact_url(s.url).c_str());
    if (s.password.empty() && s.token_command.empty())
        return make_error(Exit::config,
                          "the calendar is not set up: CALDAV_PASSWORD or CALDAV_TOKEN_COMMAND is "
                          "not set; keep one with sion agent credential add");
    if (!s.password.empty() && s.username.empty())
        return not_set("CALDAV_USERNAME");
    return s;
}

const XmlElement* DavResponse::prop(std::string_view ns, std::string_view name) const {
    for (const XmlElement& p : props)
        if (p.is(ns, name))
            return &p;
    return nullptr;
}

namespace {

DavResponse response_of(XmlElement& response) {
    DavResponse r;
    for (XmlElement& part : response.children) {
        if (part.is(k_dav, "href") && r.href.empty()) {
            r.href = trim(part.text);
        } else if (part.is(k_dav, "status")) {
            r.status = status_code(part.text);
        } else if (part.is(k_dav, "propstat")) {
            const XmlElement* status = part.child(k_dav, "status");
            if (status == nullptr || !is_2xx(status_code(status->text)))
                continue;
            for (XmlElement& prop : part.children)
                if (prop.is(k_dav, "prop"))
                    for (XmlElement& p : prop.children)
                        r.props.push_back(std::move(p));
        }
    }
    return r;
}

} // namespace

Result<std::vector<DavResponse>> read_multistatus(std::string_view body) {
    auto tree = parse_xml_tree(body);
    if (!tree)
        return tree.error();
    XmlElement& root = *tree;
    if (!root.is(k_dav, "multistatus"))
        return make_error(Exit::data, "its answer is not a WebDAV multistatus");
    std::vector<DavResponse> out;
    for (XmlElement& response : root.children) {
        if (!response.is(k_dav, "response"))
            continue;
        DavResponse r = response_of(response);
        if (!r.href.empty())
            out.push_back(std::move(r));
    }
    return out;
}

std::string href_path(std::string_view href) {
    std::string path = percent_decode(href);
    if (size_t scheme = path.find("://"); scheme != std::string::npos) {
        size_t slash = path.find('/', scheme + 3);
        path = slash == std::string::npos ? "/" : path.substr(slash);
    }
    return path;
}

Result<SyncChanges> read_sync(std::string_view body, std::string_view collection_href) {
    auto tree = parse_xml_tree(body);
    if (!tree)
        return tree.error();
    XmlElement& root = *tree;
    if (!root.is(k_dav, "multistatus"))
        return make_error(Exit::data, "its answer is not a WebDAV multistatus");
    SyncChanges out;
    std::set<std::string> told;
    std::string collection = href_path(collection_href);
    while (collection.size() > 1 && collection.back() == '/')
        collection.pop_back();
    for (XmlElement& part : root.children) {
        if (part.is(k_dav, "sync-token")) {
            out.token = trim(part.text);
            continue;
        }
        if (!part.is(k_dav, "response"))
            continue;
        DavResponse r = response_of(part);
        std::string path = href_path(r.href);
        while (path.size() > 1 && path.back() == '/')
            path.pop_back();
        if (r.href.empty())
            return make_error(Exit::data, "a response of its sync-collection answer has no href");
        if (path == collection) {
            out.truncated = out.truncated || r.status == 507;
            continue;
        }
        // Removed and changed are applied apart: a member told of twice has no one meaning.
        if (!told.insert(path).second)
            return make_error(Exit::data, "its sync-collection answer tells of '%s' twice",
                              one_line(r.href.substr(0, 200)).c_str());
        if (r.status == 404) {
            out.gone.push_back(r.href);
            continue;
        }
        const XmlElement* data = r.prop(k_caldav, "calendar-data");
        if (data == nullptr || (r.status != 0 && !is_2xx(r.status)))
            return make_error(Exit::data, "its sync-collection answer gives '%s' without its "
                                          "calendar-data",
                              one_line(r.href.substr(0, 200)).c_str());
        Resource res;
        res.href = r.href;
        if (const XmlElement* etag = r.prop(k_dav, "getetag"))
            res.etag = trim(etag->text);
        res.data = data->text;
        out.changed.push_back(std::move(res));
    }
    if (out.token.empty())
        return make_error(Exit::data, "its sync-collection answer has no sync-token");
    return out;
}

bool CalendarInfo::has_events() const {
    return components.empty()
           || std::find(components.begin(), components.end(), "VEVENT") != components.end();
}

Result<std::string> Dav::origin() const {
    const std::string& url = m_settings.url;
    size_t scheme = url.find("://");
    size_t slash = url.find('/', scheme + 3);
    return slash == std::string::npos ? url : url.substr(0, slash);
}

Result<std::string> Dav::absolute(std::string_view href) const {
    SION_TRY(std::string base, origin());
    if (href.rfind("http://", 0) == 0 || href.rfind("https://", 0) == 0) {
        if (href.substr(0, base.size()) != base
            || (href.size() > base.size() && href[base.size()] != '/'))
            return make_error(Exit::data, "the calendar server named a place on another host: '%s'",
                              redact_url(href).c_str());
        return std::string(href);
    }
    if (!href.empty() && href.front() == '/')
        return base + std::string(href);
    return make_error(Exit::data, "the calendar server named '%s', which is no path",
                      one_line(href.substr(0, 200)).c_str());
}

Result<std::string> Dav::authorization(bool fresh) {
    if (!m_settings.password.empty())
        return "Basic " + base64_encode(m_settings.username + ":" + m_settings.password);
    if (!fresh && !m_token.empty())
        return "Bearer " + m_token;
    ChildSpec spec;
    spec.argv = {"/bin/sh", "-c", m_settings.token_command};
    spec.env = own_environment();
    spec.in = Stdio::null();
    spec.out = Stdio::pipe();
    spec.err = Stdio::pipe();
    spec.time_limit = k_token_time;
    auto ran = run(std::move(spec), "", k_token_bytes);
    if (!ran)
        return make_error(Exit::config, "CALDAV_TOKEN_COMMAND cannot be run: %s",
                          ran.error().message().c_str());
    if (ran->timed_out)
        return make_error(Exit::timeout, "CALDAV_TOKEN_COMMAND did not finish in %lld seconds",
                          static_cast<long long>(k_token_time.count() / 1000));
    if (ran->status != 0) {
        std::string said = trim(ran->err.substr(0, ran->err.find('\n')));
        said = one_line(said.substr(0, utf8_boundary(said, 200)));
        return make_error(Exit::config, "CALDAV_TOKEN_COMMAND failed: it exited %d%s%s",
                          ran->status, said.empty() ? "" : ": ", said.c_str());
    }
    std::string token = trim(ran->out);
    if (token.empty())
        return make_error(Exit::config, "CALDAV_TOKEN_COMMAND printed no token");
    for (char c : token)
        if (static_cast<unsigned char>(c) < 0x21 || c == 0x7f)
            return make_error(Exit::config, "CALDAV_TOKEN_COMMAND printed more than one token "
                                            "(a line holding no blank is one)");
    m_token = token;
    return "Bearer " + m_token;
}

Error Dav::refused(const HttpResponse& r, const std::string& method, const std::string& url) const {
    if (r.status == 401) {
        if (!m_settings.password.empty())
            return make_error(Exit::no_perm,
                              "the calendar server refused CALDAV_USERNAME '%s' and "
                              "CALDAV_PASSWORD (401 Unauthorized)",
                              one_line(m_settings.username.substr(0, 100)).c_str());
        return make_error(Exit::no_perm, "the calendar server refused the token of "
                                         "CALDAV_TOKEN_COMMAND (401 Unauthorized)");
    }
    if (r.status == 403)
        return make_error(Exit::no_perm, "the calendar server forbids %s '%s' to %s (403 Forbidden)",
                          method.c_str(), redact_url(url).c_str(),
                          m_settings.username.empty() ? "this token"
                                                      : one_line(m_settings.username).c_str());
    return make_error(Exit::unavailable, "the calendar server answered %s '%s' with %d%s",
                      method.c_str(), redact_url(url).c_str(), r.status, reason(r.status));
}

Result<Dav::Sent> Dav::send(const std::string& method, const std::string& url,
                            const std::string& depth, const std::string& body, HttpHeaders headers) {
    if (!m_http) {
        SION_TRY(HttpClient client, HttpClient::make());
        m_http.emplace(std::move(client));
    }
    for (int attempt = 0; attempt < 2; ++attempt) {
        SION_TRY(std::string auth, authorization(attempt > 0));
        HttpRequest request;
        request.method = method;
        request.url = url;
        request.headers = headers;
        request.headers.add("Authorization", auth);
        if (!depth.empty())
            request.headers.add("Depth", depth);
        if (!body.empty() && !request.headers.has("Content-Type"))
            request.headers.add("Content-Type", "application/xml; charset=utf-8");
        request.body = body;
        request.environment_proxy = true;
        request.proxy_loopback = true; // in sion's sandbox, the host's 127.0.0.3 is the proxy's
        request.max_response_size = k_report_bytes;
        request.timeout = std::chrono::milliseconds(30000);
        request.connect_timeout = std::chrono::milliseconds(10000);
        auto response = m_http->send(request);
        if (!response) {
            const Error& e = response.error();
            if (e.exit() == Exit::unavailable || e.exit() == Exit::timeout)
                return Error(e.exit(), "the calendar server is out of reach: " + e.message());
            return e;
        }
        // A token that has run out: the command is asked once more for a fresh one.
        if (response->status == 401 && m_settings.password.empty() && attempt == 0)
            continue;
        return Sent{std::move(*response), url};
    }
    return make_error(Exit::software, "no answer"); // not reached
}

Result<std::vector<DavResponse>> Dav::propfind(std::string url, const std::string& depth,
                                               const std::string& body) {
    for (size_t hop = 0;; ++hop) {
        SION_TRY(Sent sent, send("PROPFIND", url, depth, body));
        const HttpResponse& r = sent.response;
        int s = r.status;
        if ((s == 301 || s == 302 || s == 303 || s == 307 || s == 308) && hop < k_redirects_max) {
            auto location = r.headers.get("Location");
            if (!location)
                return make_error(Exit::unavailable, "the calendar server redirected '%s' nowhere",
                                  redact_url(url).c_str());
            SION_TRY(url, absolute(trim(*location)));
            continue;
        }
        if (s == 401 || s == 403)
            return refused(r, "PROPFIND", url);
        if (s != 207)
            return make_error(Exit::unavailable, "'%s' is not a CalDAV server: PROPFIND answered %d%s",
                              redact_url(url).c_str(), s, reason(s));
        auto responses = read_multistatus(r.body);
        if (!responses)
            return make_error(Exit::data, "cannot read the answer to PROPFIND '%s': %s",
                              redact_url(url).c_str(), responses.error().message().c_str());
        return responses;
    }
}

Result<std::string> Dav::home() {
    if (!m_home.empty())
        return m_home;
    SION_TRY(std::string base, origin());
    std::string start = m_settings.url;
    bool bare = start.size() == base.size() || start == base + "/";
    std::vector<std::string> tries;
    if (bare)
        tries = {base + "/.well-known/caldav", base + "/"};
    else
        tries = {start};
    std::optional<Error> first_error;
    for (const std::string& url : tries) {
        auto found = propfind(url, "0", k_propfind_home);
        if (!found) {
            if (found.error().exit() == Exit::no_perm || found.error().exit() == Exit::timeout
                || found.error().message().rfind("the calendar server is out of reach", 0) == 0)
                return found.error();
            if (!first_error)
                first_error = found.error();
            continue;
        }
        for (const DavResponse& r : *found) {
            if (is_calendar(r)) { // the URL is one calendar
                CalendarInfo c = calendar_of(r);
                m_only = c;
                SION_TRY(m_home, absolute(r.href));
                return m_home;
            }
            if (std::string h = href_of(r.prop(k_caldav, "calendar-home-set")); !h.empty()) {
                SION_TRY(m_home, absolute(h));
                return m_home;
            }
            if (std::string p = href_of(r.prop(k_dav, "current-user-principal")); !p.empty()) {
                SION_TRY(std::string principal, absolute(p));
                SION_TRY(auto of_principal, propfind(principal, "0", k_propfind_home));
                for (const DavResponse& pr : of_principal)
                    if (std::string h = href_of(pr.prop(k_caldav, "calendar-home-set")); !h.empty()) {
                        SION_TRY(m_home, absolute(h));
                        return m_home;
                    }
                return make_error(Exit::unavailable,
                                  "'%s' is not a CalDAV server: the principal '%s' has no "
                                  "calendar-home-set",
                                  redact_url(m_settings.url).c_str(), one_line(p).c_str());
            }
        }
        if (!first_error)
            first_error = make_error(Exit::unavailable,
                                     "'%s' is not a CalDAV server: it names no "
                                     "current-user-principal or calendar-home-set",
                                     redact_url(url).c_str());
    }
    return *first_error;
}

Result<std::vector<CalendarInfo>> Dav::calendars() {
    SION_TRY(std::string home_url, home());
    if (m_only)
        return std::vector<CalendarInfo>{*m_only};
    SION_TRY(auto found, propfind(home_url, "1", k_propfind_calendars));
    std::vector<CalendarInfo> out;
    for (const DavResponse& r : found)
        if (is_calendar(r))
            out.push_back(calendar_of(r));
    std::sort(out.begin(), out.end(),
              [](const CalendarInfo& a, const CalendarInfo& b) { return a.path < b.path; });
    return out;
}

Result<std::vector<DavResponse>> Dav::query(const CalendarInfo& calendar,
                                             const std::string& body) {
    SION_TRY(std::string url, absolute(calendar.href));
    SION_TRY(Sent sent, send("REPORT", url, "1", body));
    const HttpResponse& r = sent.response;
    if (r.status != 207)
        return refused(r, "REPORT", url);
    auto responses = read_multistatus(r.body);
    if (!responses)
        return make_error(Exit::data, "cannot read the answer to REPORT '%s': %s",
                          redact_url(url).c_str(), responses.error().message().c_str());
    return responses;
}

Result<std::vector<Resource>> Dav::events_in(const CalendarInfo& calendar, Range range) {
    std::string body =
        "<?xml version=\"1.0\" encoding=\"utf-8\"?>\n"
        "<c:calendar-query xmlns:d=\"DAV:\" xmlns:c=\"urn:ietf:params:xml:ns:caldav\">"
        "<d:prop><d:getetag/><c:calendar-data/></d:prop>"
        "<c:filter><c:comp-filter name=\"VCALENDAR\"><c:comp-filter name=\"VEVENT\">"
        "<c:time-range start=\""
        + utc_stamp(range.start) + "\" end=\"" + utc_stamp(range.end)
        + "\"/></c:comp-filter></c:comp-filter></c:filter></c:calendar-query>\n";
    SION_TRY(std::vector<DavResponse> responses, query(calendar, body));
    std::vector<Resource> out;
    for (DavResponse& d : responses) {
        const XmlElement* data = d.prop(k_caldav, "calendar-data");
        if (data == nullptr)
            continue;
        Resource res;
        res.href = d.href;
        if (const XmlElement* etag = d.prop(k_dav, "getetag"))
            res.etag = trim(etag->text);
        res.data = data->text;
        out.push_back(std::move(res));
    }
    return out;
}

Result<std::optional<SyncChanges>> Dav::sync(const CalendarInfo& calendar,
                                             const std::string& token) {
    std::string body = "<?xml version=\"1.0\" encoding=\"utf-8\"?>\n"
                       "<d:sync-collection xmlns:d=\"DAV:\" xmlns:c=\"urn:ietf:params:xml:ns:caldav\">"
                       "<d:sync-token>"
                       + xml_escape(token)
                       + "</d:sync-token><d:sync-level>1</d:sync-level>"
                         "<d:prop><d:getetag/><c:calendar-data/></d:prop></d:sync-collection>\n";
    SION_TRY(std::string url, absolute(calendar.href));
    auto sent = send("REPORT", url, "", body);
    if (!sent) {
        if (sent.error().exit() == Exit::unavailable || sent.error().exit() == Exit::timeout)
            return sent.error();
        return std::optional<SyncChanges>(); // an answer too large to keep, among others
    }
    if (sent->response.status == 401) // credentials refused: no reason to ask otherwise
        return refused(sent->response, "REPORT", url);
    if (sent->response.status != 207)
        return std::optional<SyncChanges>();
    auto changes = read_sync(sent->response.body, calendar.href);
    if (!changes)
        return std::optional<SyncChanges>();
    return std::optional<SyncChanges>(std::move(*changes));
}

Result<std::optional<Resource>> Dav::find_uid(const CalendarInfo& calendar, std::string_view uid) {
    std::string body =
        "<?xml version=\"1.0\" encoding=\"utf-8\"?>\n"
        "<c:calendar-query xmlns:d=\"DAV:\" xmlns:c=\"urn:ietf:params:xml:ns:caldav\">"
        "<d:prop><d:getetag/><c:calendar-data/></d:prop>"
        "<c:filter><c:comp-filter name=\"VCALENDAR\"><c:comp-filter name=\"VEVENT\">"
        "<c:prop-filter name=\"UID\"><c:text-match collation=\"i;octet\">"
        + xml_escape(uid)
        + "</c:text-match></c:prop-filter></c:comp-filter></c:comp-filter></c:filter>"
          "</c:calendar-query>\n";
    SION_TRY(std::vector<DavResponse> responses, query(calendar, body));
    for (DavResponse& d : responses) {
        const XmlElement* data = d.prop(k_caldav, "calendar-data");
        const XmlElement* etag = d.prop(k_dav, "getetag");
        if (data == nullptr || etag == nullptr)
            continue;
        // text-match is a substring match: the object's own UID must be the one asked for.
        if (!event_summary(data->text, uid))
            continue;
        return std::optional<Resource>(Resource{d.href, trim(etag->text), data->text});
    }
    return std::optional<Resource>();
}

Result<std::string> Dav::create(const CalendarInfo& calendar, std::string_view uid,
                                const std::string& ics) {
    std::string href = calendar.href;
    if (href.empty() || href.back() != '/')
        href += '/';
    href += percent_encode(uid) + ".ics";
    SION_TRY(std::string url, absolute(href));
    HttpHeaders headers;
    headers.add("Content-Type", "text/calendar; charset=utf-8");
    headers.add("If-None-Match", "*");
    SION_TRY(Sent sent, send("PUT", url, "", ics, std::move(headers)));
    const HttpResponse& r = sent.response;
    if (r.status == 412)
        return make_error(Exit::data, "an event named '%s' is in the calendar already",
                          percent_decode(href).c_str());
    if (!is_2xx(r.status))
        return refused(r, "PUT", url);
    return href;
}

Status Dav::remove(const std::string& href, const std::string& etag) {
    SION_TRY(std::string url, absolute(href));
    HttpHeaders headers;
    headers.add("If-Match", etag);
    SION_TRY(Sent sent, send("DELETE", url, "", "", std::move(headers)));
    const HttpResponse& r = sent.response;
    if (r.status == 412)
        return make_error(Exit::temp_fail, "the event changed on the calendar server since it was "
                                           "read (its ETag is not %s): nothing was deleted",
                          etag.c_str());
    if (r.status == 404)
        return make_error(Exit::data, "the event is no longer on the calendar server");
    if (!is_2xx(r.status))
        return refused(r, "DELETE", url);
    return {};
}

} // namespace sion::calendar_cmd
