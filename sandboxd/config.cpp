// SPDX-License-Identifier: MIT
// Parsing the backend, network and sizes of a sandbox, with the seeds' messages.
#include "sandboxd/config.hpp"

#include "sandboxd/host_pattern.hpp"
#include "sandboxd/limits.hpp"

#include "lib/home.hpp"
#include "lib/text.hpp"

#include <sys/stat.h>

#include <cctype>
#include <cerrno>
#include <cstdlib>
#include <limits>

namespace sion::sandboxd {

namespace {

std::string format_option(const char* name, const std::string& why) {
    return std::string("option '--") + name + "': " + why;
}

bool is_digest(std::string_view hex) {
    if (hex.size() != 64)
        return false;
    for (char c : hex)
        if (!std::isxdigit(static_cast<unsigned char>(c)) || std::isupper(static_cast<unsigned char>(c)))
            return false;
    return true;
}

// An existing directory, resolved; `what` names it in messages as the user wrote it.
Result<std::string> existing_dir(const std::string& given, const char* what) {
    auto resolved = resolve_path(given);
    if (!resolved)
        return Error(Exit::config, resolved.error().message());
    struct stat st {};
    if (::stat(resolved->c_str(), &st) != 0)
        return sys_error(Exit::config, errno, "cannot use %s '%s'", what, given.c_str());
    if (!S_ISDIR(st.st_mode))
        return make_error(Exit::config, "cannot use %s '%s': not a directory", what, given.c_str());
    return std::move(*resolved);
}

Status parse_sizes(Config& config, const Args& args) {
    struct Size {
        const char* name;
        uint64_t* field;
    };
    for (Size s : {Size{"memory", &config.limits.memory}, Size{"file-size", &config.limits.file_size},
                   Size{"output", &config.limits.output}}) {
        if (auto v = args.value(s.name)) {
            auto n = s.field == &config.limits.memory ? parse_memory(*v) : parse_bytes(*v);
            if (!n)
                return Error(Exit::usage, format_option(s.name, n.error().message()));
            *s.field = *n;
        }
    }
    if (auto v = args.value("timeout")) {
        SION_TRY(config.limits.timeout, parse_seconds("timeout", *v));
    }
    if (auto v = args.value("cpu")) {
        SION_TRY(config.limits.cpu, parse_seconds("cpu", *v));
    }
    return {};
}

Status parse_places(Config& config, const Args& args) {
    config.workspace_as_given = args.value("workspace").value_or(".");
    SION_TRY(config.workspace, existing_dir(config.workspace_as_given, "the workspace"));
    config.workspace_as_given = display_path(config.workspace_as_given);
    for (const std::string& given : args.values("sandbox-read")) {
        SION_TRY(std::string dir, existing_dir(given, "the directory"));
        config.reads.push_back(std::move(dir));
        config.reads_as_given.push_back(display_path(given));
    }
    if (auto channel = args.value("channel")) {
        SION_TRY(config.channel, resolve_path(*channel));
        struct stat st {};
        if (::stat(config.channel.c_str(), &st) != 0)
            return sys_error(Exit::config, errno, "cannot use the channel '%s'", channel->c_str());
        if (!S_ISSOCK(st.st_mode))
            return make_error(Exit::config, "cannot use the channel '%s': not a socket", channel->c_str());
    }
    if (auto home = args.value("home")) {
        SION_TRY(config.home, resolve_path(*home));
        config.home_as_given = display_path(*home);
        return {};
    }
    auto home = resolve_home();
    if (!home)
        return Error(Exit::config, home.error().message());
    config.home = std::move(*home);
    // NOLINTNEXTLINE(concurrency-mt-unsafe): read once, before any thread runs
    const char* env = std::getenv("SION_HOME");
    config.home_as_given = env != nullptr && *env != '\0' ? display_path(env) : "~/.sion";
    return {};
}

} // namespace

std::vector<OptionSpec> sandbox_options(bool with_json) {
    std::vector<OptionSpec> options = {
        {"workspace", 0, "DIR", "the directory at /workspace, writable (default: the current one)"},
        {"sandbox-read", 0, "DIR", "a directory shown read-only at its own path (repeatable)"},
        {"backend", 0, "BACKEND", "bwrap (the default) or docker:IMAGE@sha256:DIGEST"},
        {"network", 0, "NETWORK", "none (the default), declared or host; with Docker none or NAME"},
        {"allow-host", 0, "HOST[:PORT]", "a host the declared network admits (repeatable)"},
        {"timeout", 0, "S", "wall-clock seconds a command may run (120)"},
        {"cpu", 0, "S", "CPU seconds a process may use (120)"},
        {"memory", 0, "BYTES", "the sandbox's memory (4G)"},
        {"file-size", 0, "BYTES", "the largest file a process may write (512M)"},
        {"output", 0, "BYTES", "bytes of stdout, and of stderr, kept (64K)"},
        {"home", 0, "DIR", "the runtime's home, which must stay hidden (default: $SION_HOME)"},
        {"channel", 0, "SOCKET", "a Unix socket commands may connect to, at /run/sion/channel.sock"},
    };
    if (with_json)
        options.push_back({"json", 0, nullptr, "print the result as one JSON object"});
    return options;
}

std::string display_path(const std::string& path) {
    // NOLINTNEXTLINE(concurrency-mt-unsafe): read once, before any thread runs
    const char* home = std::getenv("HOME");
    if (home == nullptr || home[0] != '/' || home[1] == '\0')
        return path;
    std::string_view h = home;
    while (h.size() > 1 && h.back() == '/')
        h.remove_suffix(1);
    std::string_view p = path;
    if (p.substr(0, h.size()) != h || (p.size() > h.size() && p[h.size()] != '/'))
        return path;
    return "~" + std::string(p.substr(h.size()));
}

Result<Config> config_from_args(const Args& args) {
    Config config;
    SION_CHECK(parse_sizes(config, args));
    SION_CHECK(parse_backend(config, args.value("backend").value_or("bwrap")));
    if (auto network = args.value("network"))
        SION_CHECK(parse_network(config, *network));
    for (const std::string& host : args.values("allow-host")) {
        SION_CHECK(parse_host_rule(host));
        config.allow_hosts.push_back(host);
    }
    if (!config.allow_hosts.empty() && config.network != Network::declared)
        return make_error(Exit::config, "--allow-host is for the declared network: add --network declared");
    SION_CHECK(parse_places(config, args));
    return config;
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

} // namespace sion::sandboxd
