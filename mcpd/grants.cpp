// SPDX-License-Identifier: MIT
#include "mcpd/grants.hpp"

#include "mcpd/oauth_url.hpp"

#include "lib/http.hpp"
#include "lib/json.hpp"
#include "lib/secret_bytes.hpp"
#include "lib/secrets.hpp"
#include "lib/text.hpp"

namespace sion::mcpd {

namespace {

std::string port_of(const oauth::Url& u) {
    return !u.port.empty() ? u.port : u.scheme == "https" ? "443" : "80";
}

} // namespace

Result<GrantConfig> make_grant(std::string_view name, const ServerConfig& c, std::string_view url,
                               std::string credential, std::string header, std::string scheme) {
    std::string n(name);
    auto parsed = oauth::parse_url(url);
    if (!parsed)
        return Error(Exit::usage, parsed.error().message());
    if (!parsed->query.empty() || url.find('?') != std::string_view::npos)
        return make_error(Exit::usage, "a grant's URL has no query: give its path alone, as %s",
                          redact_url(url).c_str());
    if (parsed->path.find_first_of(" \t\r\n") != std::string::npos)
        return make_error(Exit::usage, "a grant's path has no blanks: percent-encode them, as "
                                       "%%20, in '%s'",
                          one_line(parsed->path).c_str());
    if (!on_grant_path(parsed->path, "/"))
        return make_error(Exit::usage,
                          "a grant's path has no '.' or '..' segment and nothing encoded that "
                          "could make one: '%s'",
                          one_line(parsed->path).c_str());
    if (parsed->scheme == "http" && oauth::reach_of(parsed->host) != oauth::Reach::loopback)
        return make_error(Exit::usage,
                          "a credential goes over https only, not to '%s': plain http is for this "
                          "machine's loopback",
                          parsed->without_query().c_str());
    if (!secrets::valid_name(credential))
        return make_error(Exit::usage,
                          "--credential takes a variable's name (uppercase letters, digits and _), "
                          "not '%s'",
                          one_line(credential).c_str());
    if (!is_http_token(header) || header.starts_with("Mcp-") || header.starts_with("mcp-"))
        return make_error(Exit::usage, "--header takes a header's name, not '%s'",
                          one_line(header).c_str());
    std::string lower = ascii_lower(header);
    for (std::string_view own : {"accept", "content-type", "content-length", "host",
                                 "transfer-encoding", "connection", "proxy-authorization"})
        if (lower == own)
            return make_error(Exit::usage, "--header cannot be %s: the client sets it",
                              header.c_str());
    if (!scheme.empty() && !is_http_token(scheme))
        return make_error(Exit::usage, "--scheme takes a word such as Bearer, not '%s'",
                          one_line(scheme).c_str());
    GrantConfig g{parsed->without_query(), std::move(credential), std::move(header),
                  std::move(scheme)};
    if (!c.url.empty()) {
        if (!grant_covers(g, c.url))
            return make_error(Exit::config,
                              "MCP server %s is at %s: its grant is for its own host and path, "
                              "not %s",
                              n.c_str(), redact_url(c.url).c_str(), g.url.c_str());
        return g;
    }
    if (c.sandbox.empty())
        return make_error(Exit::config,
                          "MCP server %s runs outside any sandbox, where nothing writes a grant "
                          "for it: add it again with --sandbox bwrap",
                          n.c_str());
    if (c.sandbox != "bwrap")
        return make_error(Exit::config,
                          "MCP server %s runs in Docker, whose network has no proxy of sion's to "
                          "write a grant: add it again with --sandbox bwrap",
                          n.c_str());
    if (c.network == "host")
        return make_error(Exit::config,
                          "MCP server %s has the host's network, which no proxy stands in: add it "
                          "again with --sandbox-network none",
                          n.c_str());
    return g;
}

Result<std::string> grant_value(const GrantConfig& g) {
    SION_TRY(std::optional<std::string> value, secrets::lookup(g.credential));
    if (!value)
        return make_error(Exit::config,
                          "the grant for %s needs the credential %s: keep it with `sion agent "
                          "credential add %s`",
                          g.url.c_str(), g.credential.c_str(), g.credential.c_str());
    if (g.scheme.empty())
        return std::move(*value);
    std::string out = g.scheme + " " + *value;
    wipe(*value);
    return out;
}

Result<std::string> grant_line(const GrantConfig& g) {
    auto u = oauth::parse_url(g.url);
    if (!u)
        return Error(Exit::data, "the grant " + g.url + " is damaged: " + u.error().message());
    SION_TRY(std::string value, grant_value(g));
    Json j = Json::object();
    j.set("scheme", std::string_view(u->scheme));
    j.set("host", std::string_view(u->host));
    j.set("port", static_cast<int64_t>(std::stoi(port_of(*u))));
    j.set("path", std::string_view(u->path));
    j.set("header", std::string_view(g.header));
    j.set("value", std::string_view(value));
    wipe(value);
    std::string line = j.dump();
    return line;
}

std::string grant_host(const GrantConfig& g) {
    auto u = oauth::parse_url(g.url);
    if (!u)
        return g.url;
    std::string host = u->host.find(':') != std::string::npos ? "[" + u->host + "]" : u->host;
    return host + ":" + port_of(*u);
}

bool grant_covers(const GrantConfig& g, std::string_view url) {
    auto grant = oauth::parse_url(g.url);
    auto asked = oauth::parse_url(url);
    return grant && asked && grant->scheme == asked->scheme && grant->host == asked->host
           && port_of(*grant) == port_of(*asked) && on_grant_path(asked->path, grant->path);
}

std::string describe_grant(const GrantConfig& g) {
    return g.url + " gets " + g.header + ": " + (g.scheme.empty() ? "" : g.scheme + " ") + "${"
           + g.credential + "}";
}

} // namespace sion::mcpd
