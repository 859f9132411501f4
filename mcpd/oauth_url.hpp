// SPDX-License-Identifier: MIT
// URLs as authorization needs them, and the rule of where discovery, registration and tokens may
// go. Errors, secrets and threads: as oauth_types.hpp says.
#pragma once

#include "lib/address.hpp"
#include "lib/result.hpp"

#include <functional>
#include <string>
#include <string_view>

namespace sion::mcpd::oauth {

// An absolute http(s) URL, split. `host` is lowercased, without brackets for IPv6; `port` is the
// one written ("" when none); `path` starts with '/' ("/" when none was written).
struct Url {
    std::string scheme; // "http" or "https"
    std::string host;
    std::string port;
    std::string path;
    std::string query; // without '?'

    // "https://host[:port]", the port only when written and not the scheme's default.
    [[nodiscard]] std::string origin() const;
    // origin() + path, without a trailing slash unless the path is "/" alone ("https://a/").
    [[nodiscard]] std::string without_query() const;
};

// Exit::data for anything but an absolute http or https URL with a host, or one with user info
// or a fragment.
[[nodiscard]] Result<Url> parse_url(std::string_view text);

enum class Reach { loopback, private_network, public_network };

// Where a host is as written: loopback (localhost, 127/8, ::1), a private network (10/8,
// 172.16/12, 192.168/16, 169.254/16, 100.64/10, fc00::/7, fe80::/10, and the rest of
// lib/address.hpp's) or public. Names other than localhost are judged public here: the rules
// below then ask for HTTPS, and reach_rule() judges the addresses they resolve to.
[[nodiscard]] Reach reach_of(std::string_view host);

// Whether `target` may be used for discovery, registration or tokens of the MCP server at
// `server`: HTTPS at a public address; plain HTTP only when both are on this machine; a private
// or loopback address only when the server is at one itself. Exit::no_perm otherwise, naming
// `what` ("protected resource metadata") and the URL. 0.0.0.0 and :: are refused wherever the
// server is. Hosts are judged as written (reach_of()): for URLs named in metadata.
[[nodiscard]] Status check_reach(const Url& server, const Url& target, const char* what);

// check_reach()'s rule for a request to `target` (HttpRequest::reach): each address its name
// resolves to judged, with the MCP server where its own name resolves (public when it does not).
[[nodiscard]] std::function<Status(const Destination&)>
reach_rule(const Url& server, const Url& target, const char* what);

} // namespace sion::mcpd::oauth
