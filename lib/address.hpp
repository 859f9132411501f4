// SPDX-License-Identifier: MIT
// Where a request would go: IP addresses classified (this machine, a private network, the
// internet), a URL's host resolved once, and the answer in the form curl is pinned to, so that the
// addresses a caller checked are the only ones curl connects to (no second lookup for a DNS
// answer to change in between).
//
// Classes: loopback 127/8 and ::1; private 10/8, 172.16/12, 192.168/16, 169.254/16 (link-local),
// 100.64/10 (CGNAT), fc00::/7 (unique-local), fe80::/10 (link-local), and the blocks that are on
// no one's internet (0/8, 192.0.0/24, 198.18/15 for benchmarks, 224/4 multicast, 240/4 reserved,
// ff00::/8 multicast); unspecified 0.0.0.0 and ::, which are no server's address and which every
// caller refuses; public all else. An IPv4-mapped IPv6 address (::ffff:a.b.c.d) and one in the
// NAT64 prefix 64:ff9b::/96 are judged as their IPv4 address. A zone ("fe80::1%eth0") is dropped
// (curl is pinned to addresses without one).
//
// Resolving: `localhost` and names under `.localhost` are 127.0.0.1 and ::1 without asking DNS;
// an address written as one is itself; any other name goes to getaddrinfo on a thread of its own,
// which the caller's thread waits for at most the limit given: resolving blocks the caller (the
// loop's thread, for a UvHttp request). A lookup still running at the limit is left to end on its
// own thread and its answer dropped. Errors: Exit::unavailable for a name that does not resolve
// or not in time ("cannot reach 'https://x.test/v1': cannot resolve 'x.test': Name or service
// not known"), Exit::data for a URL that is not http or https with a host.
//
// Threads: everything here may be called from any thread. split_url() and resolve_url() load
// libcurl (lib/curl_api) to read a URL as curl will; its absence is their Exit::unavailable.
#pragma once

#include "lib/result.hpp"

#include <chrono>
#include <functional>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

struct sockaddr;

namespace sion {

enum class AddressKind { unspecified, loopback, private_network, public_network };

struct Address {
    std::string text; // as inet_ntop writes it: "10.0.0.5", "fd00::1", "::ffff:172.16.0.1"
    bool v6 = false;
    AddressKind kind = AddressKind::public_network;
};

// Whether `host` is localhost or a name under .localhost: this machine, whatever DNS says.
[[nodiscard]] bool is_localhost(std::string_view host);

// The address written in `text` ("10.0.0.5", "fd00::1", "fe80::1%eth0"; no brackets), or none
// when it is not one.
[[nodiscard]] std::optional<Address> parse_address(std::string_view text);
// The address of an AF_INET or AF_INET6 socket address; none for any other family.
[[nodiscard]] std::optional<Address> address_of(const sockaddr* sa);

// Looks up a name other than localhost's: its addresses as text. A test's stand-in for DNS.
using Resolver = std::function<Result<std::vector<std::string>>(const std::string& name)>;

// The addresses of `host` (see above), each once, in the order found. `resolver` replaces
// getaddrinfo when set; its error is passed on as it is.
[[nodiscard]] Result<std::vector<Address>> resolve_host(const std::string& host,
                                                        std::chrono::milliseconds limit,
                                                        const Resolver& resolver = {});

// A URL's host and the addresses it was found at.
struct Destination {
    std::string url;    // without user info, query or fragment (redact_url), for messages
    std::string scheme; // "http" or "https", or one of the schemes split_url() was given
    std::string host;   // as curl reads it, an IPv6 address without brackets
    int port = 0;       // the one written, else the scheme's
    bool named = false; // `host` is a name, not an address
    std::vector<Address> addresses;

    // The entry that pins a named host to `addresses` (curl's CURLOPT_RESOLVE:
    // "x.test:443:10.0.0.5,[fd00::1]"); "" for a host written as an address, which curl does
    // not look up.
    [[nodiscard]] std::string pin() const;
};

// The schemes of the web, which split_url() takes unless told others.
inline constexpr std::string_view k_web_schemes[] = {"http", "https"};

// The scheme, host and port of `url` as curl reads them (the port the scheme's own when none is
// written); Exit::data when it is not a URL of one of `schemes` with a host ("bad URL 'ftp://x/':
// not an http or https URL with a host").
[[nodiscard]] Result<Destination> split_url(std::string_view url,
                                            std::span<const std::string_view> schemes =
                                                k_web_schemes);

// split_url(), then the host resolved (resolve_host()).
[[nodiscard]] Result<Destination> resolve_url(std::string_view url,
                                              std::chrono::milliseconds limit,
                                              const Resolver& resolver = {});

} // namespace sion
