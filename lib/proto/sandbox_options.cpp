// SPDX-License-Identifier: MIT
// A sandbox's options: their table, the grammar of their values, and the sandbox they describe as
// JSON.
#include "lib/proto/sandbox_options.hpp"

#include "lib/text.hpp"

#include <cctype>
#include <cmath>
#include <limits>
#include <utility>

namespace sion::proto {

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

std::vector<OptionSpec> sandbox_options(bool with_json) {
    std::vector<OptionSpec> options = {
        {"workspace", 0, "DIR", "the directory at /workspace, writable (default: the current one)",
         nullptr, ":directory"},
        {"sandbox-read", 0, "DIR", "a directory shown read-only at its own path (repeatable)",
         nullptr, ":directory"},
        {"backend", 0, "BACKEND", "bwrap (the default) or docker:IMAGE@sha256:DIGEST", nullptr,
         "bwrap docker:"},
        {"network", 0, "NETWORK", "none (the default), declared or host; with Docker none or NAME",
         nullptr, "none declared host"},
        {"allow-host", 0, "HOST[:PORT]", "a host the declared network admits (repeatable)"},
        {"timeout", 0, "S", "wall-clock seconds a command may run (120)"},
        {"cpu", 0, "S", "CPU seconds a process may use (120)"},
        {"memory", 0, "BYTES", "the sandbox's memory (4G)"},
        {"file-size", 0, "BYTES", "the largest file a process may write (512M)"},
        {"output", 0, "BYTES", "bytes of stdout, and of stderr, kept (64K)"},
        {"home", 0, "DIR", "the runtime's home, which must stay hidden (default: $SION_HOME)",
         nullptr, ":directory"},
        {"channel", 0, "SOCKET", "a Unix socket commands may connect to, at /run/sion/channel.sock",
         nullptr, ":file"},
    };
    if (with_json)
        options.push_back({"json", 0, nullptr, "print the result as one JSON object"});
    return options;
}

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

Result<uint64_t> parse_memory(std::string_view text) {
    SION_TRY(uint64_t n, parse_bytes(text));
    if (n < (uint64_t{16} << 20))
        return make_error(Exit::usage, "'%.*s' is too little: give 16M or more",
                          static_cast<int>(text.size()), text.data());
    return n;
}

std::string size_text(uint64_t bytes) {
    for (auto [shift, unit] : {std::pair{30, "GiB"}, std::pair{20, "MiB"}, std::pair{10, "KiB"}})
        if (bytes >= (uint64_t{1} << shift) && bytes % (uint64_t{1} << shift) == 0)
            return format("%llu %s", static_cast<unsigned long long>(bytes >> shift), unit);
    return format("%llu bytes", static_cast<unsigned long long>(bytes));
}

namespace {

Error malformed(const std::string& why) { return Error(Exit::data, "sandbox description: " + why); }

// A count of seconds or bytes: a whole number from 0 to 2^64 (exact below 2^53).
Result<uint64_t> count_of(JsonView limits, const char* key, uint64_t fallback) {
    JsonView v = limits.get(key);
    if (!v.exists())
        return fallback;
    auto n = v.as_number();
    if (!n || *n < 0 || *n != std::floor(*n) || *n >= 18446744073709551616.0)
        return malformed(format("limit '%s' is not a whole number of 0 or more", key));
    return static_cast<uint64_t>(*n);
}

const char* network_kind(Network network) {
    switch (network) {
    case Network::none:
        return "none";
    case Network::declared:
        return "declared";
    case Network::host:
        return "host";
    case Network::named:
        return "named";
    }
    return "none";
}

} // namespace

std::string backend_text(const Config& config) {
    return config.backend == BackendKind::docker ? "docker:" + config.image : "bwrap";
}

Json config_to_json(const Config& config) {
    Json j = Json::object();
    j.set("workspace", std::string_view(config.workspace));
    j.set("workspace_as_given", std::string_view(config.workspace_as_given));
    j.set("reads", Json::strings(config.reads));
    j.set("reads_as_given", Json::strings(config.reads_as_given));
    j.set("backend", backend_text(config));
    j.set("network", network_kind(config.network));
    if (config.network == Network::named)
        j.set("network_name", std::string_view(config.network_name));
    j.set("allow_hosts", Json::strings(config.allow_hosts));
    Json limits = Json::object();
    limits.set("timeout", Json::number(static_cast<double>(config.limits.timeout.count())));
    limits.set("cpu", Json::number(static_cast<double>(config.limits.cpu.count())));
    limits.set("memory", Json::number(static_cast<double>(config.limits.memory)));
    limits.set("file_size", Json::number(static_cast<double>(config.limits.file_size)));
    limits.set("output", Json::number(static_cast<double>(config.limits.output)));
    limits.set("processes", Json::number(static_cast<double>(config.limits.processes)));
    j.set("limits", std::move(limits));
    j.set("home", std::string_view(config.home));
    j.set("home_as_given", std::string_view(config.home_as_given));
    if (!config.channel.empty())
        j.set("channel", std::string_view(config.channel));
    return j;
}

Result<Config> config_from_json(JsonView json) {
    if (!json.is_object())
        return malformed(format("%s, not an object", json.type_name()));
    Config config;
    for (auto [key, field] : {std::pair{"workspace", &config.workspace},
                              std::pair{"workspace_as_given", &config.workspace_as_given},
                              std::pair{"home", &config.home},
                              std::pair{"home_as_given", &config.home_as_given}}) {
        auto s = json.string(key);
        if (!s)
            return malformed(s.error().message());
        *field = std::string(*s);
    }
    if (auto channel = json.string_or("channel", ""); channel)
        config.channel = std::string(*channel);
    else
        return malformed(channel.error().message());
    for (auto [key, field] : {std::pair{"reads", &config.reads},
                              std::pair{"reads_as_given", &config.reads_as_given},
                              std::pair{"allow_hosts", &config.allow_hosts}}) {
        auto list = json.strings(key);
        if (!list)
            return malformed(list.error().message());
        *field = std::move(*list);
    }
    auto backend = json.string("backend");
    if (!backend)
        return malformed(backend.error().message());
    if (Status ok = parse_backend(config, *backend); !ok)
        return malformed(ok.error().message());
    auto network = json.string("network");
    if (!network)
        return malformed(network.error().message());
    if (*network == "named") {
        auto name = json.string("network_name");
        if (!name)
            return malformed(name.error().message());
        if (Status ok = parse_network(config, *name); !ok || config.network != Network::named)
            return malformed(format("'%.*s' is not a network's name",
                                    static_cast<int>(name->size()), name->data()));
    } else if (Status ok = parse_network(config, *network); !ok) {
        return malformed(ok.error().message());
    }
    JsonView limits = json.get("limits");
    if (limits.exists() && !limits.is_object())
        return malformed("'limits' is not an object");
    Limits& l = config.limits;
    SION_TRY(uint64_t timeout, count_of(limits, "timeout", static_cast<uint64_t>(l.timeout.count())));
    SION_TRY(uint64_t cpu, count_of(limits, "cpu", static_cast<uint64_t>(l.cpu.count())));
    l.timeout = std::chrono::seconds(static_cast<int64_t>(timeout));
    l.cpu = std::chrono::seconds(static_cast<int64_t>(cpu));
    SION_TRY(l.memory, count_of(limits, "memory", l.memory));
    SION_TRY(l.file_size, count_of(limits, "file_size", l.file_size));
    SION_TRY(l.output, count_of(limits, "output", l.output));
    SION_TRY(l.processes, count_of(limits, "processes", l.processes));
    return config;
}

} // namespace sion::proto
