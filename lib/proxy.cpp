// SPDX-License-Identifier: MIT
// The environment's proxy for a URL: curl's variables, its no_proxy rules, a proxy URL checked.
#include "lib/proxy.hpp"

#include "lib/address.hpp"
#include "lib/http.hpp"
#include "lib/text.hpp"

#include <arpa/inet.h>
#include <netinet/in.h>

#include <array>
#include <charconv>
#include <cstdlib>

namespace sion {

namespace {

// An address's bytes (4 or 16 of them, `size`), as inet_pton reads it.
struct Bytes {
    std::array<unsigned char, 16> data{};
    size_t size = 0;
};

std::optional<Bytes> bytes_of(std::string_view text) {
    if (text.size() >= 2 && text.front() == '[' && text.back() == ']')
        text = text.substr(1, text.size() - 2);
    std::string s(text);
    Bytes b;
    if (::inet_pton(AF_INET, s.c_str(), b.data.data()) == 1)
        b.size = 4;
    else if (::inet_pton(AF_INET6, s.c_str(), b.data.data()) == 1)
        b.size = 16;
    else
        return std::nullopt;
    return b;
}

// Whether the address `host` is in `entry`: an address, or one with a prefix length ("/8").
bool in_range(const Bytes& host, std::string_view entry) {
    size_t slash = entry.find('/');
    auto range = bytes_of(entry.substr(0, slash));
    if (!range || range->size != host.size)
        return false;
    size_t bits = host.size * 8;
    if (slash != std::string_view::npos) {
        std::string_view digits = entry.substr(slash + 1);
        auto [end, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), bits);
        if (ec != std::errc() || end != digits.data() + digits.size() || digits.empty()
            || bits > host.size * 8)
            return false;
    }
    for (size_t i = 0; i < bits; ++i) {
        unsigned mask = 0x80U >> (i % 8);
        if ((host.data[i / 8] & mask) != (range->data[i / 8] & mask))
            return false;
    }
    return true;
}

// Whether the name `host` is `entry` or under it.
bool under_name(std::string_view host, std::string_view entry) {
    if (entry.starts_with('.'))
        entry.remove_prefix(1);
    if (entry.ends_with('.'))
        entry.remove_suffix(1);
    if (entry.empty() || host.size() < entry.size())
        return false;
    std::string_view tail = host.substr(host.size() - entry.size());
    if (!ascii_iequals(tail, entry))
        return false;
    return host.size() == entry.size() || host[host.size() - entry.size() - 1] == '.';
}

bool is_blank(char c) {
    return c == ' ' || c == '\t' || c == '\n' || c == '\r';
}

// The first of `names` that `env` has set, and its value.
std::optional<std::pair<const char*, std::string>>
first_set(std::initializer_list<const char*> names, const Environment& env) {
    for (const char* name : names)
        if (auto value = env(name))
            return std::make_pair(name, std::move(*value));
    return std::nullopt;
}

// Where the authority (user info, host and port) of `url` starts and ends; none without "://".
std::optional<std::pair<size_t, size_t>> authority_of(std::string_view url) {
    size_t scheme = url.find("://");
    if (scheme == std::string_view::npos)
        return std::nullopt;
    size_t start = scheme + 3;
    return std::make_pair(start, std::min(url.find_first_of("/?#", start), url.size()));
}

// `value` of `variable` as curl reads a proxy: its scheme and port written out.
Result<std::string> proxy_url(const char* variable, const std::string& value) {
    std::string url = value.find("://") == std::string::npos ? "http://" + value : value;
    std::string scheme = ascii_lower(url.substr(0, url.find("://")));
    if ((scheme != "http" && scheme != "https") || !split_url(url))
        return make_error(Exit::config, "%s '%s' is not an http or https proxy", variable,
                          redact_url(url).c_str());
    // A port is written when the authority ends in ":digits" after the host's last bracket.
    auto [start, end] = *authority_of(url);
    std::string_view authority = std::string_view(url).substr(start, end - start);
    size_t colon = authority.rfind(':');
    bool has_port = colon != std::string_view::npos
                    && authority.find_first_of("]@", colon) == std::string_view::npos;
    if (!has_port)
        url.insert(end, scheme == "https" ? ":443" : ":1080");
    return url;
}

} // namespace

std::optional<std::string> process_environment(const char* name) {
    const char* value = std::getenv(name); // NOLINT(concurrency-mt-unsafe): read, never set here
    if (value == nullptr)
        return std::nullopt;
    return std::string(value);
}

bool no_proxy_exempts(std::string_view list, std::string_view host) {
    size_t first = 0;
    while (first < list.size() && is_blank(list[first]))
        ++first;
    size_t last = list.size();
    while (last > first && is_blank(list[last - 1]))
        --last;
    if (list.substr(first, last - first) == "*")
        return true;
    if (host.ends_with('.'))
        host.remove_suffix(1);
    auto address = bytes_of(host);
    while (!list.empty()) {
        size_t cut = 0;
        while (cut < list.size() && list[cut] != ',' && !is_blank(list[cut]))
            ++cut;
        std::string_view entry = list.substr(0, cut);
        list.remove_prefix(cut == list.size() ? cut : cut + 1);
        if (entry.empty())
            continue;
        if (address ? in_range(*address, entry) : under_name(host, entry))
            return true;
    }
    return false;
}

Result<std::string> environment_proxy(std::string_view url, const Environment& env,
                                      bool loopback_exempt) {
    SION_TRY(Destination where, split_url(url));
    auto number = parse_address(where.host);
    if (is_localhost(ascii_lower(where.host))
        || (loopback_exempt && number && number->kind == AddressKind::loopback))
        return std::string();
    if (auto exempt = first_set({"no_proxy", "NO_PROXY"}, env);
        exempt && no_proxy_exempts(exempt->second, where.host))
        return std::string();
    auto chosen = where.scheme == "https"
                      ? first_set({"https_proxy", "HTTPS_PROXY", "all_proxy", "ALL_PROXY"}, env)
                      : first_set({"http_proxy", "all_proxy", "ALL_PROXY"}, env);
    if (!chosen || chosen->second.empty())
        return std::string();
    return proxy_url(chosen->first, chosen->second);
}

std::string user_info(std::string_view url) {
    auto authority = authority_of(url);
    if (!authority)
        return {};
    auto [start, end] = *authority;
    size_t at = url.substr(0, end).rfind('@');
    if (at == std::string_view::npos || at < start)
        return {};
    return std::string(url.substr(start, at - start));
}

} // namespace sion
