// SPDX-License-Identifier: MIT
// IP addresses classified, hosts resolved once with a time limit, and curl's pin for them.
#include "lib/address.hpp"

#include "lib/curl_api.hpp"
#include "lib/http.hpp"

#include <arpa/inet.h>
#include <netdb.h>
#include <netinet/in.h>
#include <sys/socket.h>

#include <algorithm>
#include <condition_variable>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <mutex>
#include <system_error>
#include <thread>

namespace sion {

namespace {

AddressKind kind_of_v4(const unsigned char* b) {
    uint32_t a = (uint32_t{b[0]} << 24) | (uint32_t{b[1]} << 16) | (uint32_t{b[2]} << 8) | b[3];
    auto in = [a](uint32_t net, int bits) { return (a >> (32 - bits)) == (net >> (32 - bits)); };
    if (a == 0)
        return AddressKind::unspecified;
    if (in(0x7F000000, 8))
        return AddressKind::loopback;
    if (in(0x00000000, 8) || in(0x0A000000, 8) || in(0x64400000, 10) || in(0xA9FE0000, 16)
        || in(0xAC100000, 12) || in(0xC0000000, 24) || in(0xC0A80000, 16) || in(0xC6120000, 15)
        || in(0xE0000000, 4) || in(0xF0000000, 4))
        return AddressKind::private_network;
    return AddressKind::public_network;
}

AddressKind kind_of_v6(const unsigned char* b) {
    static const unsigned char k_loopback[16] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1};
    static const unsigned char k_mapped[12] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xFF, 0xFF};
    static const unsigned char k_nat64[12] = {0, 0x64, 0xFF, 0x9B, 0, 0, 0, 0, 0, 0, 0, 0};
    if (std::all_of(b, b + 16, [](unsigned char c) { return c == 0; }))
        return AddressKind::unspecified;
    if (std::memcmp(b, k_loopback, 16) == 0)
        return AddressKind::loopback;
    if (std::memcmp(b, k_mapped, 12) == 0 || std::memcmp(b, k_nat64, 12) == 0)
        return kind_of_v4(b + 12);
    if ((b[0] & 0xFE) == 0xFC || (b[0] == 0xFE && (b[1] & 0xC0) == 0x80) || b[0] == 0xFF)
        return AddressKind::private_network;
    return AddressKind::public_network;
}

Address address_from(int family, const void* bytes) {
    char buf[INET6_ADDRSTRLEN] = "";
    ::inet_ntop(family, bytes, buf, sizeof buf);
    const auto* b = static_cast<const unsigned char*>(bytes);
    bool v6 = family == AF_INET6;
    return Address{buf, v6, v6 ? kind_of_v6(b) : kind_of_v4(b)};
}

struct AddrInfoDeleter {
    void operator()(addrinfo* a) const { freeaddrinfo(a); }
};

using AddrInfo = std::unique_ptr<addrinfo, AddrInfoDeleter>;

// One getaddrinfo, shared by the thread that runs it and the one that waits for it: whichever
// lets go last frees it.
struct Lookup {
    std::mutex mutex;
    std::condition_variable done_cv;
    bool done = false;
    int rc = 0;
    AddrInfo found;
};

Result<std::vector<std::string>> system_lookup(const std::string& name,
                                               std::chrono::milliseconds limit) {
    auto lookup = std::make_shared<Lookup>();
    try {
        std::thread([lookup, name]() noexcept {
            addrinfo hints{};
            hints.ai_family = AF_UNSPEC;
            hints.ai_socktype = SOCK_STREAM;
            addrinfo* found = nullptr;
            int rc = ::getaddrinfo(name.c_str(), nullptr, &hints, &found);
            std::lock_guard lock(lookup->mutex);
            lookup->rc = rc;
            lookup->found.reset(found);
            lookup->done = true;
            lookup->done_cv.notify_one();
        }).detach();
    } catch (const std::system_error& e) {
        return make_error(Exit::os, "cannot start a thread to resolve '%s': %s", name.c_str(),
                          e.what());
    }
    std::unique_lock lock(lookup->mutex);
    if (!lookup->done_cv.wait_for(lock, limit, [&] { return lookup->done; }))
        return make_error(Exit::unavailable, "no answer in %lld ms",
                          static_cast<long long>(limit.count()));
    if (lookup->rc != 0)
        return make_error(Exit::unavailable, "%s", gai_strerror(lookup->rc));
    std::vector<std::string> out;
    for (addrinfo* a = lookup->found.get(); a != nullptr; a = a->ai_next)
        if (auto address = address_of(a->ai_addr))
            out.push_back(address->text);
    return out;
}

std::optional<std::string> url_part(CURLU* u, CURLUPart part, unsigned flags = 0) {
    char* text = nullptr;
    if (curl().url_get(u, part, &text, flags) != CURLUE_OK || text == nullptr)
        return std::nullopt;
    std::string out = text;
    curl().free(text);
    return out;
}

struct CurlUrlDeleter {
    void operator()(CURLU* u) const { curl().url_cleanup(u); }
};

} // namespace

bool is_localhost(std::string_view host) {
    return host == "localhost" || host.ends_with(".localhost");
}

std::optional<Address> parse_address(std::string_view text) {
    std::string s(text.substr(0, text.find('%')));
    unsigned char bytes[16];
    if (::inet_pton(AF_INET, s.c_str(), bytes) == 1)
        return text.find('%') == std::string_view::npos
                   ? std::optional<Address>(address_from(AF_INET, bytes))
                   : std::nullopt;
    if (::inet_pton(AF_INET6, s.c_str(), bytes) == 1)
        return address_from(AF_INET6, bytes);
    return std::nullopt;
}

std::optional<Address> address_of(const sockaddr* sa) {
    if (sa->sa_family == AF_INET)
        return address_from(AF_INET, &reinterpret_cast<const sockaddr_in*>(sa)->sin_addr);
    if (sa->sa_family == AF_INET6)
        return address_from(AF_INET6, &reinterpret_cast<const sockaddr_in6*>(sa)->sin6_addr);
    return std::nullopt;
}

Result<std::vector<Address>> resolve_host(const std::string& host,
                                          std::chrono::milliseconds limit,
                                          const Resolver& resolver) {
    if (auto literal = parse_address(host))
        return std::vector<Address>{*literal};
    std::vector<std::string> texts;
    if (is_localhost(host)) {
        texts = {"127.0.0.1", "::1"};
    } else {
        auto found = resolver ? resolver(host) : system_lookup(host, limit);
        if (!found)
            return make_error(found.error().exit(), "cannot resolve '%s': %s", host.c_str(),
                              found.error().message().c_str());
        texts = std::move(*found);
    }
    std::vector<Address> out;
    for (const std::string& text : texts) {
        auto address = parse_address(text);
        if (!address)
            return make_error(Exit::software, "cannot resolve '%s': '%s' is not an address",
                              host.c_str(), text.c_str());
        bool seen = std::any_of(out.begin(), out.end(),
                                [&](const Address& a) { return a.text == address->text; });
        if (!seen)
            out.push_back(std::move(*address));
    }
    if (out.empty())
        return make_error(Exit::unavailable, "cannot resolve '%s': it has no address",
                          host.c_str());
    return out;
}

std::string Destination::pin() const {
    if (!named)
        return {};
    std::string out = host + ":" + std::to_string(port) + ":";
    for (size_t i = 0; i < addresses.size(); ++i) {
        if (i > 0)
            out += ',';
        const Address& a = addresses[i];
        out += a.v6 ? "[" + a.text + "]" : a.text;
    }
    return out;
}

Result<Destination> split_url(std::string_view url, std::span<const std::string_view> schemes) {
    SION_CHECK(curl_api());
    Destination d;
    d.url = redact_url(url);
    auto bad = [&] {
        std::string names;
        for (size_t i = 0; i < schemes.size(); ++i)
            names += (i == 0 ? "" : i + 1 == schemes.size() ? " or " : ", ")
                     + std::string(schemes[i]);
        return make_error(Exit::data, "bad URL '%s': not an %s URL with a host", d.url.c_str(),
                          names.c_str());
    };
    std::unique_ptr<CURLU, CurlUrlDeleter> u(curl().url());
    if (!u || curl().url_set(u.get(), CURLUPART_URL, std::string(url).c_str(), 0) != CURLUE_OK)
        return bad();
    auto scheme = url_part(u.get(), CURLUPART_SCHEME);
    auto host = url_part(u.get(), CURLUPART_HOST);
    auto port = url_part(u.get(), CURLUPART_PORT, CURLU_DEFAULT_PORT);
    if (!scheme || !host || !port || host->empty()
        || std::find(schemes.begin(), schemes.end(), *scheme) == schemes.end())
        return bad();
    if (host->front() == '[' && host->back() == ']')
        *host = host->substr(1, host->size() - 2);
    d.scheme = *scheme;
    d.host = *host;
    d.port = std::atoi(port->c_str());
    d.named = !parse_address(d.host);
    return d;
}

Result<Destination> resolve_url(std::string_view url, std::chrono::milliseconds limit,
                                const Resolver& resolver) {
    SION_TRY(Destination d, split_url(url));
    auto found = resolve_host(d.host, limit, resolver);
    if (!found)
        return make_error(found.error().exit(), "cannot reach '%s': %s", d.url.c_str(),
                          found.error().message().c_str());
    d.addresses = std::move(*found);
    return d;
}

} // namespace sion
