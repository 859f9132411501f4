// SPDX-License-Identifier: MIT
// A sandbox's options judged: the contract's grammar, then the places resolved and checked, with
// the seeds' messages.
#include "sandboxd/config.hpp"

#include "sandboxd/host_pattern.hpp"
#include "sandboxd/limits.hpp"

#include "lib/home.hpp"
#include "lib/text.hpp"

#include <sys/stat.h>

#include <cerrno>
#include <cstdlib>

namespace sion::sandboxd {

namespace {

std::string format_option(const char* name, const std::string& why) {
    return std::string("option '--") + name + "': " + why;
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

} // namespace sion::sandboxd
