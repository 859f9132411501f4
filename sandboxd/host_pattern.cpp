// SPDX-License-Identifier: MIT
// Host patterns and the check against them. Names and addresses are compared in one canonical
// form, so "API.GitHub.com." is api.github.com and "127.1" is refused rather than read as
// 127.0.0.1.
#include "sandboxd/host_pattern.hpp"

#include "lib/text.hpp"

#include <arpa/inet.h>

#include <cctype>

namespace sion::sandboxd {

namespace {

bool is_name_byte(char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '_';
}

// An IPv4 or IPv6 literal in inet_ntop's form, or nothing.
std::string canonical_address(const std::string& text) {
    unsigned char bytes[16];
    char out[INET6_ADDRSTRLEN];
    if (::inet_pton(AF_INET, text.c_str(), bytes) == 1)
        return ::inet_ntop(AF_INET, bytes, out, sizeof out);
    if (::inet_pton(AF_INET6, text.c_str(), bytes) == 1)
        return ::inet_ntop(AF_INET6, bytes, out, sizeof out);
    return {};
}

Status check_name(const std::string& name) {
    if (name.size() > 253)
        return make_error(Exit::data, "name longer than 253 bytes");
    size_t from = 0;
    while (true) {
        size_t dot = name.find('.', from);
        size_t end = dot == std::string::npos ? name.size() : dot;
        if (end == from)
            return make_error(Exit::data, "empty label");
        if (end - from > 63)
            return make_error(Exit::data, "label longer than 63 bytes");
        for (size_t i = from; i < end; ++i) {
            unsigned char c = static_cast<unsigned char>(name[i]);
            if (!is_name_byte(name[i]))
                return std::isprint(c)
                           ? make_error(Exit::data, "'%c' is not allowed in a host name", c)
                           : make_error(Exit::data, "byte 0x%02x is not allowed in a host name", c);
        }
        if (dot == std::string::npos)
            break;
        from = dot + 1;
    }
    // Top-level labels start with a letter. A name whose last label does not is a number to a
    // resolver ("127.1", "2130706433", "0x7f000001"): an address in disguise.
    size_t last = name.rfind('.');
    last = last == std::string::npos ? 0 : last + 1;
    if (!std::isalpha(static_cast<unsigned char>(name[last])))
        return make_error(Exit::data, "the last label does not start with a letter");
    return {};
}

Result<int> parse_port(std::string_view text) {
    if (text.empty() || text.size() > 5)
        return make_error(Exit::data, "a port is a number from 1 to 65535");
    int port = 0;
    for (char c : text) {
        if (c < '0' || c > '9')
            return make_error(Exit::data, "a port is a number from 1 to 65535");
        port = port * 10 + (c - '0');
    }
    if (port < 1 || port > 65535)
        return make_error(Exit::data, "a port is a number from 1 to 65535");
    return port;
}

// Splits "host", "host:port", "[v6]", "[v6]:port" or a bare IPv6 address ("::1", no port).
Status split_host_port(std::string_view text, std::string_view& host, int& port) {
    port = 0;
    if (!text.empty() && text.front() == '[') {
        size_t close = text.find(']');
        if (close == std::string_view::npos)
            return make_error(Exit::data, "'[' without ']'");
        host = text.substr(1, close - 1);
        std::string_view rest = text.substr(close + 1);
        if (rest.empty())
            return {};
        if (rest.front() != ':')
            return make_error(Exit::data, "only ':PORT' may follow ']'");
        SION_TRY(port, parse_port(rest.substr(1)));
        return {};
    }
    size_t colon = text.find(':');
    if (colon == std::string_view::npos || text.find(':', colon + 1) != std::string_view::npos) {
        host = text; // a name, or an IPv6 address without brackets and so without a port
        return {};
    }
    host = text.substr(0, colon);
    SION_TRY(port, parse_port(text.substr(colon + 1)));
    return {};
}

Result<HostRule> parse_rule(std::string_view pattern) {
    HostRule rule;
    std::string_view text = pattern;
    if (text.substr(0, 2) == "*.") {
        rule.subdomains = true;
        text.remove_prefix(2);
    }
    std::string_view host;
    SION_CHECK(split_host_port(text, host, rule.port));
    SION_TRY(rule.host, canonical_host(host));
    if (rule.subdomains && is_ip_literal(rule.host))
        return make_error(Exit::data, "'*.' goes before a name, not an address");
    return rule;
}

bool port_matches(const HostRule& rule, int port) {
    return rule.port == 0 ? port == 80 || port == 443 : rule.port == port;
}

bool host_matches(const HostRule& rule, const std::string& host) {
    if (!rule.subdomains)
        return host == rule.host;
    if (is_ip_literal(host) || host.size() <= rule.host.size() + 1)
        return false;
    size_t at = host.size() - rule.host.size();
    return host[at - 1] == '.' && host.compare(at, std::string::npos, rule.host) == 0;
}

} // namespace

Result<std::string> canonical_host(std::string_view host) {
    std::string text(host);
    if (!text.empty() && text.back() == '.')
        text.pop_back();
    if (text.empty())
        return make_error(Exit::data, "empty host");
    if (text.find('\0') != std::string::npos)
        return make_error(Exit::data, "byte 0x00 is not allowed in a host name");
    if (std::string address = canonical_address(text); !address.empty())
        return address;
    if (text.find(':') != std::string::npos)
        return make_error(Exit::data, "not an IPv6 address");
    text = ascii_lower(text);
    SION_CHECK(check_name(text));
    return text;
}

bool is_ip_literal(std::string_view host) {
    unsigned char bytes[16];
    std::string text(host);
    return ::inet_pton(AF_INET, text.c_str(), bytes) == 1
           || ::inet_pton(AF_INET6, text.c_str(), bytes) == 1;
}

Result<HostRule> parse_host_rule(std::string_view pattern) {
    auto rule = parse_rule(pattern);
    if (!rule)
        return make_error(Exit::usage, "invalid host pattern '%.*s': %s",
                          static_cast<int>(pattern.size()), pattern.data(),
                          rule.error().message().c_str());
    return rule;
}

Result<std::vector<HostRule>> parse_host_rules(const std::vector<std::string>& patterns) {
    std::vector<HostRule> rules;
    rules.reserve(patterns.size());
    for (const std::string& p : patterns) {
        SION_TRY(HostRule rule, parse_host_rule(p));
        rules.push_back(std::move(rule));
    }
    return rules;
}

bool host_allowed(const std::vector<HostRule>& rules, std::string_view host, int port) {
    auto canonical = canonical_host(host);
    if (!canonical)
        return false;
    for (const HostRule& rule : rules)
        if (port_matches(rule, port) && host_matches(rule, *canonical))
            return true;
    return false;
}

std::string host_port(std::string_view host, int port) {
    if (host.find(':') != std::string_view::npos)
        return format("[%.*s]:%d", static_cast<int>(host.size()), host.data(), port);
    return format("%.*s:%d", static_cast<int>(host.size()), host.data(), port);
}

} // namespace sion::sandboxd
