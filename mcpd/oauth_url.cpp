// SPDX-License-Identifier: MIT
// URLs as authorization needs them, and the rule of where discovery, registration and tokens may go.
#include "mcpd/oauth_url.hpp"

#include "mcpd/oauth_wire.hpp"

#include "lib/http.hpp"
#include "lib/text.hpp"

#include <algorithm>

namespace sion::mcpd::oauth {

namespace {

// Resolving the MCP server's name, to know where it is.
constexpr std::chrono::milliseconds k_resolve_limit{10000};

Reach reach_of_kind(AddressKind kind) {
    switch (kind) {
    case AddressKind::loopback:
        return Reach::loopback;
    case AddressKind::public_network:
        return Reach::public_network;
    case AddressKind::unspecified:
    case AddressKind::private_network:
        break;
    }
    return Reach::private_network;
}

// Where the MCP server is: its least inside address (a name that does not resolve is public).
Reach server_reach(const Url& server) {
    auto found = resolve_host(server.host, k_resolve_limit);
    if (!found)
        return Reach::public_network;
    Reach out = Reach::loopback;
    for (const Address& a : *found)
        out = std::max(out, reach_of_kind(a.kind));
    return out;
}

// The rule of oauth_url.hpp's check_reach for a target at `there`.
Status judge(Reach here, const Address& there, const Url& target, const char* what) {
    std::string shown = redact_url(target.without_query());
    Reach at = reach_of_kind(there.kind);
    if (there.kind == AddressKind::unspecified)
        return make_error(Exit::no_perm, "refusing %s at '%s': %s is no server's address", what,
                          shown.c_str(), there.text.c_str());
    if (target.scheme == "http" && (at != Reach::loopback || here != Reach::loopback))
        return make_error(Exit::no_perm,
                          "refusing %s at '%s': plain HTTP is used only when the MCP server and it "
                          "are both on this machine",
                          what, shown.c_str());
    if (at == Reach::loopback && here != Reach::loopback)
        return make_error(Exit::no_perm,
                          "refusing %s at '%s': it is on this machine and the MCP server is not",
                          what, shown.c_str());
    if (at == Reach::private_network && here == Reach::public_network)
        return make_error(Exit::no_perm,
                          "refusing %s at '%s': it is at a private address and the MCP server is not",
                          what, shown.c_str());
    return {};
}

// A host as written: localhost, an address, or a name (taken for a public address).
Address literal(const std::string& host) {
    if (is_localhost(host))
        return Address{host, false, AddressKind::loopback};
    return parse_address(host).value_or(Address{host, false, AddressKind::public_network});
}

} // namespace

std::string Url::origin() const {
    std::string out = scheme + "://";
    out += host.find(':') != std::string::npos ? "[" + host + "]" : host;
    bool default_port = port.empty() || (scheme == "http" && port == "80")
                        || (scheme == "https" && port == "443");
    if (!default_port)
        out += ":" + port;
    return out;
}

std::string Url::without_query() const {
    if (path == "/")
        return origin() + "/";
    std::string p = path;
    while (p.size() > 1 && p.back() == '/')
        p.pop_back();
    return origin() + p;
}

Result<Url> parse_url(std::string_view text) {
    std::string shown = redact_url(text);
    auto bad = [&](const char* why) {
        return make_error(Exit::data, "bad URL '%s': %s", shown.c_str(), why);
    };
    size_t colon = text.find("://");
    if (colon == std::string_view::npos)
        return bad("it is not absolute");
    Url url;
    url.scheme = ascii_lower(text.substr(0, colon));
    if (url.scheme != "http" && url.scheme != "https")
        return bad("only http and https are used");
    std::string_view rest = text.substr(colon + 3);
    if (rest.find('#') != std::string_view::npos)
        return bad("it has a fragment");
    size_t end = rest.find_first_of("/?");
    std::string_view authority = rest.substr(0, end);
    rest = end == std::string_view::npos ? std::string_view() : rest.substr(end);
    if (authority.find('@') != std::string_view::npos)
        return bad("it has user info");
    if (authority.starts_with('[')) {
        size_t close = authority.find(']');
        if (close == std::string_view::npos)
            return bad("its IPv6 address is not closed");
        url.host = ascii_lower(authority.substr(1, close - 1));
        authority.remove_prefix(close + 1);
        if (!authority.empty() && authority[0] != ':')
            return bad("junk after its IPv6 address");
    } else {
        size_t port = authority.rfind(':');
        url.host = ascii_lower(authority.substr(0, port));
        authority = port == std::string_view::npos ? std::string_view() : authority.substr(port);
    }
    if (!authority.empty()) {
        url.port = std::string(authority.substr(1));
        if (url.port.empty() || url.port.size() > 5
            || url.port.find_first_not_of("0123456789") != std::string::npos)
            return bad("its port is not a number");
    }
    if (url.host.empty() || url.host.find_first_of(" \t\r\n\\") != std::string::npos)
        return bad("it has no host");
    size_t query = rest.find('?');
    url.path = std::string(rest.substr(0, query));
    if (query != std::string_view::npos)
        url.query = std::string(rest.substr(query + 1));
    if (url.path.empty())
        url.path.push_back('/'); // (g++ 12 warns, wrongly, of assigning "/")
    return url;
}

Reach reach_of(std::string_view host) {
    return reach_of_kind(literal(std::string(host)).kind);
}

Status check_reach(const Url& server, const Url& target, const char* what) {
    return judge(reach_of(server.host), literal(target.host), target, what);
}

std::function<Status(const Destination&)> reach_rule(const Url& server, const Url& target,
                                                     const char* what) {
    return [server, target, what](const Destination& where) -> Status {
        Reach here = server_reach(server);
        for (const Address& a : where.addresses)
            SION_CHECK(judge(here, a, target, what));
        return {};
    };
}

} // namespace sion::mcpd::oauth
