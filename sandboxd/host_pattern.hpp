// SPDX-License-Identifier: MIT
// The hosts a sandbox with the declared network may reach: patterns as --allow-host and a skill's
// sion-network give them, and the check the network proxy makes for every connection.
#pragma once

#include "lib/result.hpp"

#include <string>
#include <string_view>
#include <vector>

namespace sion::sandboxd {

// One declared host. Patterns: "api.github.com", "api.github.com:8443", "*.example.org" (any name
// under example.org, not example.org itself), "127.0.0.1:8080", "[::1]:8080" or "::1". Without a
// port, 80 and 443.
struct HostRule {
    std::string host;        // canonical: see canonical_host
    bool subdomains = false; // "*.host": the names under host, not host itself
    int port = 0;            // 1-65535; 0 for 80 and 443
};

// Parses one pattern. Errors (Exit::usage) name it: "invalid host pattern 'a..b': empty label".
[[nodiscard]] Result<HostRule> parse_host_rule(std::string_view pattern);
// Parses each of Config::allow_hosts; the first error is the answer.
[[nodiscard]] Result<std::vector<HostRule>>
parse_host_rules(const std::vector<std::string>& patterns);

// A host as a proxy request names it, in the one form rules are compared in: a name in lower case
// without its trailing dot, or an IP address as inet_ntop writes it (IPv6 without brackets).
// Anything else is an error (Exit::data): a name with an empty or over-long label, a byte other
// than letters, digits, '-' and '_', or a last label that does not start with a letter. That last
// keeps out numbers that are not dotted quads ("127.1", "2130706433", "0x7f000001"), which
// resolvers would read as addresses no rule names.
[[nodiscard]] Result<std::string> canonical_host(std::string_view host);

// Whether `host` is an IP address literal (in canonical form).
[[nodiscard]] bool is_ip_literal(std::string_view host);

// Whether a connection to host:port is declared. `host` is compared in canonical form; a host that
// has none is not allowed. An IP address is allowed only by a rule naming that address, never by a
// rule naming a host that resolves to it.
[[nodiscard]] bool host_allowed(const std::vector<HostRule>& rules, std::string_view host,
                                int port);

// "host:port" as a message shows it, brackets around IPv6: "[::1]:443".
[[nodiscard]] std::string host_port(std::string_view host, int port);

} // namespace sion::sandboxd
