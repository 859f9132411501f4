// SPDX-License-Identifier: MIT
// Parsing the backend, network and sizes of a sandbox, with the seeds' messages.
#include "sandboxd/config.hpp"

#include <cctype>
#include <limits>

namespace sion::sandboxd {

namespace {

bool is_digest(std::string_view hex) {
    if (hex.size() != 64)
        return false;
    for (char c : hex)
        if (!std::isxdigit(static_cast<unsigned char>(c)) || std::isupper(static_cast<unsigned char>(c)))
            return false;
    return true;
}

} // namespace

Status parse_backend(Config& config, std::string_view text) {
    if (text == "bwrap") {
        config.backend = BackendKind::bwrap;
        config.image.clear();
        return {};
    }
    constexpr std::string_view k_docker = "docker:";
    if (text.substr(0, k_docker.size()) != k_docker)
        return make_error(Exit::config, "the backend is bwrap or docker:IMAGE@sha256:DIGEST, not %.*s",
                          static_cast<int>(text.size()), text.data());
    std::string_view image = text.substr(k_docker.size());
    size_t at = image.find("@sha256:");
    if (at == std::string_view::npos || at == 0 || !is_digest(image.substr(at + 8)))
        return make_error(Exit::config, "%.*s is not pinned by digest: give name@sha256:<64 hex digits>",
                          static_cast<int>(image.size()), image.data());
    config.backend = BackendKind::docker;
    config.image = std::string(image);
    return {};
}

Status parse_network(Config& config, std::string_view text) {
    std::string name(text);
    if (config.backend == BackendKind::bwrap) {
        if (name == "none")
            config.network = Network::none;
        else if (name == "declared")
            config.network = Network::declared;
        else if (name == "host")
            config.network = Network::host;
        else
            return make_error(Exit::config,
                              "with bubblewrap the network is none, declared or host, not %s",
                              name.c_str());
        return {};
    }
    if (name == "none") {
        config.network = Network::none;
        return {};
    }
    if (name == "bridge" || name == "host" || name == "default")
        return make_error(Exit::config,
                          "Docker's \"%s\" network does not restrict where a command connects: "
                          "name a network you set up",
                          name.c_str());
    if (name.empty() || name == "declared")
        return make_error(Exit::config, "with Docker the network is none or a network you set up, not %s",
                          name.empty() ? "''" : name.c_str());
    config.network = Network::named;
    config.network_name = name;
    return {};
}

Result<uint64_t> parse_bytes(std::string_view text) {
    std::string_view digits = text;
    size_t n = 0;
    while (n < digits.size() && std::isdigit(static_cast<unsigned char>(digits[n])))
        ++n;
    std::string_view unit = text.substr(n);
    digits = text.substr(0, n);
    uint64_t shift = 0;
    if (unit.empty() || unit == "B")
        shift = 0;
    else if (unit == "K" || unit == "KiB")
        shift = 10;
    else if (unit == "M" || unit == "MiB")
        shift = 20;
    else if (unit == "G" || unit == "GiB")
        shift = 30;
    else
        digits = {};
    if (digits.empty() || digits.size() > 19)
        return make_error(Exit::usage, "'%.*s' is not a size: give bytes, or a number with K, M or G",
                          static_cast<int>(text.size()), text.data());
    uint64_t value = 0;
    for (char c : digits)
        value = value * 10 + static_cast<uint64_t>(c - '0');
    if (value > (std::numeric_limits<uint64_t>::max() >> shift))
        return make_error(Exit::usage, "'%.*s' is too large", static_cast<int>(text.size()), text.data());
    return value << shift;
}

} // namespace sion::sandboxd
