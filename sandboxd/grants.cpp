// SPDX-License-Identifier: MIT
// Grants as sion-sandbox run reads them, checked against the sandbox's declared hosts, and what a
// sandbox with grants trusts.
#include "sandboxd/grants.hpp"

#include "lib/fd.hpp"
#include "lib/http.hpp"
#include "lib/json.hpp"
#include "lib/text.hpp"
#include "sandboxd/host_pattern.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <set>
#include <tuple>

namespace sion::sandboxd {

namespace {

constexpr size_t k_max_text = size_t{1} << 20;
constexpr size_t k_max_value = size_t{16} << 10;
constexpr const char* k_system_roots = "/etc/ssl/certs/ca-certificates.crt";

// A header's value as HTTP allows it on one line: visible bytes, spaces and tabs inside, and
// anything from 0x80 up (UTF-8).
bool header_value(std::string_view v) {
    if (v.empty() || v.front() == ' ' || v.back() == ' ' || v.front() == '\t' || v.back() == '\t')
        return false;
    for (unsigned char c : v)
        if ((c < 0x20 && c != '\t') || c == 0x7f)
            return false;
    return true;
}

Result<Grant> parse_grant(JsonView j, size_t n) {
    auto bad = [n](const std::string& why) {
        return Error(Exit::data, format("grant %zu: ", n) + why);
    };
    if (!j.is_object())
        return bad("not a JSON object");
    for (JsonView member : j) {
        std::string_view key = member.key();
        if (key != "scheme" && key != "host" && key != "port" && key != "path" && key != "header"
            && key != "value")
            return bad("a member other than scheme, host, port, path, header and value");
    }
    Grant g;
    auto scheme = j.string_or("scheme", "https");
    if (!scheme)
        return bad(scheme.error().message());
    if (*scheme != "https" && *scheme != "http")
        return bad("'scheme' is https or http, not '" + one_line(*scheme) + "'");
    g.tls = *scheme == "https";
    auto host = j.string("host");
    if (!host)
        return bad(host.error().message());
    auto canonical = canonical_host(*host);
    if (!canonical)
        return bad("'host' " + canonical.error().message());
    g.host = std::move(*canonical);
    auto port = j.integer_or("port", g.tls ? 443 : 80);
    if (!port)
        return bad(port.error().message());
    if (*port < 1 || *port > 65535)
        return bad(format("'port' is %lld: give 1-65535", static_cast<long long>(*port)));
    g.port = static_cast<int>(*port);
    auto path = j.string_or("path", "/");
    if (!path)
        return bad(path.error().message());
    if (path->empty() || path->front() != '/' || path->find_first_of("?# \t\r\n") != std::string_view::npos
        || !on_grant_path(*path, *path))
        return bad("'path' is a path starting with '/' with no '.' or '..' segment, query or "
                   "space, not '" + one_line(*path) + "'");
    g.path = std::string(*path);
    auto header = j.string_or("header", "Authorization");
    if (!header)
        return bad(header.error().message());
    if (!is_http_token(*header))
        return bad("'header' is a header's name, not '" + one_line(*header) + "'");
    g.header = std::string(*header);
    auto value = j.string("value");
    if (!value)
        return bad(value.error().message());
    if (value->size() > k_max_value)
        return bad(format("'value' is longer than %zu bytes", k_max_value));
    if (!header_value(*value))
        return bad("'value' is not one line of visible text");
    g.value = std::string(*value);
    return g;
}

// A host as a URL or --allow-host writes it: an IPv6 address in brackets.
std::string bracketed(const std::string& host) {
    return host.find(':') != std::string::npos ? "[" + host + "]" : host;
}

} // namespace

Result<std::vector<Grant>> parse_grants(std::string_view text) {
    std::vector<Grant> grants;
    std::set<std::tuple<bool, std::string, int>> seen;
    size_t n = 0;
    while (!text.empty()) {
        size_t end = text.find('\n');
        std::string_view line = text.substr(0, end);
        text.remove_prefix(end == std::string_view::npos ? text.size() : end + 1);
        if (line.find_first_not_of(" \t\r") == std::string_view::npos)
            continue;
        ++n;
        if (n > k_max_grants)
            return make_error(Exit::data, "more than %zu grants", k_max_grants);
        auto json = Json::parse(line);
        if (!json)
            return Error(Exit::data, format("grant %zu: ", n) + json.error().message());
        SION_TRY(Grant g, parse_grant(json->view(), n));
        if (!seen.emplace(g.tls, g.host, g.port).second)
            return Error(Exit::data, format("grant %zu: a second grant for ", n) + grant_url(g)
                                         + "'s host: give one for each scheme, host and port");
        grants.push_back(std::move(g));
    }
    return grants;
}

Result<std::vector<Grant>> read_grants(int fd) {
    Fd owned(fd);
    if (::fcntl(fd, F_GETFD) < 0)
        return make_error(Exit::usage, "--grants-fd %d is not an open descriptor", fd);
    auto text = read_all(fd, k_max_text);
    if (!text)
        return Error(text.error().exit(), "cannot read the grants: " + text.error().message());
    return parse_grants(*text);
}

Status check_grants_declared(const std::vector<Grant>& grants, const Config& config) {
    SION_TRY(std::vector<HostRule> rules, parse_host_rules(config.allow_hosts));
    for (const Grant& g : grants) {
        if (config.network == Network::declared && host_allowed(rules, g.host, g.port))
            continue;
        // A host declared without a port is declared for 80 and 443.
        std::string pattern =
            g.port == 80 || g.port == 443 ? bracketed(g.host) : host_port(g.host, g.port);
        return make_error(Exit::config,
                          "the grant for %s needs its host declared: add --network declared "
                          "--allow-host %s",
                          grant_url(g).c_str(), pattern.c_str());
    }
    return {};
}

Result<std::string> trusted_roots() {
    // NOLINTNEXTLINE(concurrency-mt-unsafe): read before any thread runs
    const char* given = std::getenv("SSL_CERT_FILE");
    std::string path = given != nullptr && *given != '\0' ? given : k_system_roots;
    Fd fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK));
    if (!fd)
        return sys_error(Exit::config, errno,
                         "cannot read the trusted certificates '%s': install ca-certificates, or "
                         "set SSL_CERT_FILE", path.c_str());
    auto pem = read_all(fd.get(), size_t{16} << 20);
    if (!pem || pem->find("-----BEGIN CERTIFICATE-----") == std::string::npos)
        return make_error(Exit::config,
                          "cannot read the trusted certificates '%s': %s", path.c_str(),
                          pem ? "it holds no PEM certificate" : pem.error().message().c_str());
    return std::move(*pem);
}

std::vector<std::pair<std::string, std::string>> egress_trust_environment() {
    return {{"SSL_CERT_FILE", k_ca_bundle_inside},
            {"REQUESTS_CA_BUNDLE", k_ca_bundle_inside},
            {"CURL_CA_BUNDLE", k_ca_bundle_inside},
            {"NODE_EXTRA_CA_CERTS", k_egress_ca_inside}};
}

std::string grant_url(const Grant& g) {
    std::string where = g.port == (g.tls ? 443 : 80) ? bracketed(g.host) : host_port(g.host, g.port);
    return std::string(g.tls ? "https://" : "http://") + where + g.path;
}

} // namespace sion::sandboxd
