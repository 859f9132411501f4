// SPDX-License-Identifier: MIT
// The grants sion-sandbox run is given (seed 002): the credentials the declared network's proxy
// writes into a sandboxed program's requests, so that the program never holds them. They come on a
// descriptor (--grants-fd), never on a command line or in an environment, as JSON lines:
//
//   {"scheme":"https","host":"api.example.org","port":443,"path":"/v1",
//    "header":"Authorization","value":"Bearer …"}
//
// scheme "https" (the default) or "http"; host a name or an address as canonical_host() takes it;
// port 1-65535, by default the scheme's; path starting with '/' (default "/"); header an HTTP
// token (default Authorization); value one line of visible text, 1 byte to 16 KiB. At most 64
// grants, and one for each scheme, host and port. Each one's host and port must be declared
// (--allow-host) with the declared network.
//
// With grants the proxy ends the TLS of the granted hosts' tunnels with certificates from sion's
// own authority (egress_ca.hpp), which the sandbox trusts: a bundle of the roots the proxy
// itself trusts (trusted_roots()) and the authority's certificate, bound at k_ca_bundle_inside,
// the authority's alone at k_egress_ca_inside, and named by the variables programs read
// (egress_trust_environment()).
#pragma once

#include "lib/result.hpp"
#include "sandboxd/config.hpp"
#include "sandboxd/netproxy_request.hpp"

#include <functional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace sion::sandboxd {

inline constexpr size_t k_max_grants = 64;
inline constexpr const char* k_ca_bundle_inside = "/run/sion/ca-bundle.pem";
inline constexpr const char* k_egress_ca_inside = "/run/sion/egress-ca.pem";

// A sandbox's grants, and what is to be done with a failure of the TLS the proxy ends for them
// (the host's certificate, either side's TLS), with why: the program logs it.
struct Egress {
    std::vector<Grant> grants;
    std::function<void(const std::string& why)> on_failed;
};

// The grants in `text`, one JSON object a line (blank lines skipped). Errors (Exit::data) name the
// line and never hold a value: "grant 2: 'port' is 0: give 1-65535".
[[nodiscard]] Result<std::vector<Grant>> parse_grants(std::string_view text);

// parse_grants() of what `fd` holds, read to its end (at most 1 MiB), the descriptor closed.
// Errors: Exit::usage for a descriptor that is not open, Exit::data, Exit::io.
[[nodiscard]] Result<std::vector<Grant>> read_grants(int fd);

// Whether each grant's host and port are declared in `config` (the declared network, --allow-host).
// Exit::config: "the grant for https://api.example.org/v1 needs its host declared: add
// --network declared --allow-host api.example.org".
[[nodiscard]] Status check_grants_declared(const std::vector<Grant>& grants, const Config& config);

// The roots of trust the proxy verifies granted hosts against, PEM: the file $SSL_CERT_FILE names,
// else the system's (/etc/ssl/certs/ca-certificates.crt). Exit::config when neither can be read:
// "cannot read the trusted certificates '…': …: install ca-certificates, or set SSL_CERT_FILE".
[[nodiscard]] Result<std::string> trusted_roots();

// What a sandbox with grants is told to trust: SSL_CERT_FILE, REQUESTS_CA_BUNDLE and
// CURL_CA_BUNDLE name the bundle, NODE_EXTRA_CA_CERTS the authority's certificate (Node adds it
// to its own roots).
[[nodiscard]] std::vector<std::pair<std::string, std::string>> egress_trust_environment();

// "https://api.example.org/v1": a grant as messages name it.
[[nodiscard]] std::string grant_url(const Grant& grant);

} // namespace sion::sandboxd
