// SPDX-License-Identifier: MIT
// The proxy the environment names for a URL, read as curl reads it, for requests that ask for it
// (HttpRequest::environment_proxy).
//
// Variables: for an https URL `https_proxy`, else `HTTPS_PROXY`; for an http URL `http_proxy`
// only (an `HTTP_PROXY` may come from a CGI request's Proxy header: httpoxy); then `all_proxy`,
// else `ALL_PROXY`. The first of them that is set decides, and an empty one means no proxy. A
// proxy written without a scheme is http://, one without a port is on curl's default (1080 for
// http://, 443 for https://); any scheme but those two is refused (Exit::config: "https_proxy
// 'socks5://x' is not an http or https proxy"; the value is shown without its user info).
//
// Exemptions: a host of this machine (localhost, names under .localhost, loopback addresses) never
// goes through a proxy; nor does one that `no_proxy` (else `NO_PROXY`) names: `*` alone for every
// host, or a list separated by commas or blanks of host names (a leading dot ignored; an entry is
// the host itself and its subdomains, case ignored), addresses (IPv6 with or without brackets)
// and CIDR ranges ("10.0.0.0/8", "fd00::/8"), which match hosts written as addresses only.
#pragma once

#include "lib/result.hpp"

#include <functional>
#include <optional>
#include <string>
#include <string_view>

namespace sion {

// An environment variable's value, or none when it is unset (tests stand in for the process's).
using Environment = std::function<std::optional<std::string>(const char* name)>;

// The process's environment (getenv).
[[nodiscard]] std::optional<std::string> process_environment(const char* name);

// The proxy `env` names for `url` (see above), with its scheme and port written out
// ("http://proxy.example:1080"); "" for none. Exit::data for a URL that is not http or https.
// With `loopback_exempt` false, a loopback address (127.0.0.3) is exempt only as no_proxy says,
// as curl takes it: a program in a sandbox, whose loopback is its own, reaches the host's
// through the proxy (names of this machine, localhost, stay exempt).
[[nodiscard]] Result<std::string> environment_proxy(std::string_view url,
                                                    const Environment& env = process_environment,
                                                    bool loopback_exempt = true);

// Whether the value of no_proxy, `list`, exempts `host` (as split_url() gives it: an IPv6 address
// without brackets).
[[nodiscard]] bool no_proxy_exempts(std::string_view list, std::string_view host);

// The user info of `url` ("user:secret" of "http://user:secret@proxy:3128"); "" for none.
[[nodiscard]] std::string user_info(std::string_view url);

} // namespace sion
