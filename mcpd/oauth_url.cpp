// SPDX-License-Identifier: MIT
// URLs as authorization needs them, and the rule of where discovery, registration and tokens may go.
#include "mcpd/oauth_wire.hpp"

#include "lib/http.hpp"

#include <arpa/inet.h>

#include <cstring>

namespace sion::mcpd::oauth {

namespace {

bool in_v4(const unsigned char* a, unsigned net, unsigned bits) {
    uint32_t addr = (uint32_t{a[0]} << 24) | (uint32_t{a[1]} << 16) | (uint32_t{a[2]} << 8) | a[3];
    uint32_t mask = bits == 0 ? 0 : ~uint32_t{0} << (32 - bits);
    return (addr & mask) == (net & mask);
}

Reach reach_v4(const unsigned char* a) {
    if (in_v4(a, 0x7f000000, 8))
        return Reach::loopback;
    if (in_v4(a, 0x0a000000, 8) || in_v4(a, 0xac100000, 12) || in_v4(a, 0xc0a80000, 16)
        || in_v4(a, 0xa9fe0000, 16) || in_v4(a, 0x64400000, 10) || in_v4(a, 0, 8))
        return Reach::private_network;
    return Reach::public_network;
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
    url.scheme = lowercase(text.substr(0, colon));
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
        url.host = lowercase(authority.substr(1, close - 1));
        authority.remove_prefix(close + 1);
        if (!authority.empty() && authority[0] != ':')
            return bad("junk after its IPv6 address");
    } else {
        size_t port = authority.rfind(':');
        url.host = lowercase(authority.substr(0, port));
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
    std::string h(host);
    if (h == "localhost" || h.ends_with(".localhost"))
        return Reach::loopback;
    unsigned char a[16];
    if (::inet_pton(AF_INET, h.c_str(), a) == 1)
        return reach_v4(a);
    if (::inet_pton(AF_INET6, h.c_str(), a) != 1)
        return Reach::public_network;
    static const unsigned char k_loopback[16] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1};
    static const unsigned char k_mapped[12] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff};
    if (std::memcmp(a, k_loopback, 16) == 0)
        return Reach::loopback;
    if (std::memcmp(a, k_mapped, 12) == 0)
        return reach_v4(a + 12);
    if ((a[0] & 0xfe) == 0xfc || (a[0] == 0xfe && (a[1] & 0xc0) == 0x80))
        return Reach::private_network;
    return Reach::public_network;
}

Status check_reach(const Url& server, const Url& target, const char* what) {
    Reach here = reach_of(server.host);
    Reach there = reach_of(target.host);
    std::string shown = redact_url(target.without_query());
    if (target.scheme == "http" && (there != Reach::loopback || here != Reach::loopback))
        return make_error(Exit::no_perm,
                          "refusing %s at '%s': plain HTTP is used only when the MCP server and it "
                          "are both on this machine",
                          what, shown.c_str());
    if (there == Reach::loopback && here != Reach::loopback)
        return make_error(Exit::no_perm,
                          "refusing %s at '%s': it is on this machine and the MCP server is not",
                          what, shown.c_str());
    if (there == Reach::private_network && here == Reach::public_network)
        return make_error(Exit::no_perm,
                          "refusing %s at '%s': it is at a private address and the MCP server is not",
                          what, shown.c_str());
    return {};
}

} // namespace sion::mcpd::oauth
