// SPDX-License-Identifier: MIT
// Parsing the limits, passing them to init as options, and setting them with setrlimit.
#include "sandboxd/limits.hpp"

#include <sys/resource.h>

#include <algorithm>
#include <cerrno>

namespace sion::sandboxd {

namespace {

// A non-negative decimal integer that fits in 64 bits, nothing else.
bool parse_u64(std::string_view text, uint64_t& out) {
    if (text.empty() || text.size() > 19)
        return false;
    uint64_t v = 0;
    for (char c : text) {
        if (c < '0' || c > '9')
            return false;
        v = v * 10 + static_cast<uint64_t>(c - '0');
    }
    out = v;
    return true;
}

// Lowers a limit; one already lower (inherited from outside) stays, since nothing unprivileged can
// raise a hard limit.
Status set_limit(int resource, const char* name, rlim_t soft, rlim_t hard) {
    struct rlimit limit {};
    if (::getrlimit(resource, &limit) != 0)
        return sys_error(Exit::os, errno, "cannot read %s", name);
    if (limit.rlim_max != RLIM_INFINITY && limit.rlim_max < hard)
        hard = limit.rlim_max;
    limit = {std::min(soft, hard), hard};
    if (::setrlimit(resource, &limit) != 0)
        return sys_error(Exit::os, errno, "cannot set %s", name);
    return {};
}

} // namespace

Result<std::chrono::seconds> parse_seconds(std::string_view option, std::string_view text) {
    uint64_t v = 0;
    // A year at most: more is surely a mistake, and it keeps every sum of times from overflowing.
    if (!parse_u64(text, v) || v == 0 || v > 366ULL * 24 * 3600)
        return make_error(Exit::usage, "option '--%.*s' needs a whole number of seconds, not '%.*s'",
                          static_cast<int>(option.size()), option.data(),
                          static_cast<int>(text.size()), text.data());
    return std::chrono::seconds(static_cast<int64_t>(v));
}

std::vector<std::string> limits_to_args(const Limits& limits) {
    return {"--cpu",       std::to_string(limits.cpu.count()),
            "--memory",    std::to_string(limits.memory),
            "--file-size", std::to_string(limits.file_size),
            "--processes", std::to_string(limits.processes)};
}

std::vector<OptionSpec> limit_options() {
    return {{"cpu", 0, "S", "RLIMIT_CPU in seconds"},
            {"memory", 0, "BYTES", "RLIMIT_DATA (0: none, the cgroup bounds memory)"},
            {"file-size", 0, "BYTES", "RLIMIT_FSIZE"},
            {"processes", 0, "N", "RLIMIT_NPROC"}};
}

Result<Limits> limits_from_args(const Args& args) {
    Limits limits;
    if (auto v = args.value("cpu")) {
        SION_TRY(limits.cpu, parse_seconds("cpu", *v));
    }
    struct Size {
        const char* name;
        uint64_t* field;
    };
    for (Size s : {Size{"memory", &limits.memory}, Size{"file-size", &limits.file_size},
                   Size{"processes", &limits.processes}}) {
        auto v = args.value(s.name);
        if (v && !parse_u64(*v, *s.field))
            return make_error(Exit::usage, "option '--%s' needs a number, not '%s'", s.name,
                              v->c_str());
    }
    return limits;
}

Status apply_limits(const Limits& limits) {
    auto cpu = static_cast<rlim_t>(limits.cpu.count());
    // SIGXCPU at the limit says what happened; SIGKILL a second later if it is caught.
    SION_CHECK(set_limit(RLIMIT_CPU, "RLIMIT_CPU", cpu, cpu + 1));
    if (limits.memory != 0) // 0: the sandbox's memory cgroup bounds memory instead
        SION_CHECK(set_limit(RLIMIT_DATA, "RLIMIT_DATA", limits.memory, limits.memory));
    SION_CHECK(set_limit(RLIMIT_FSIZE, "RLIMIT_FSIZE", limits.file_size, limits.file_size));
    SION_CHECK(set_limit(RLIMIT_NPROC, "RLIMIT_NPROC", limits.processes, limits.processes));
    SION_CHECK(set_limit(RLIMIT_CORE, "RLIMIT_CORE", 0, 0));
    return {};
}

} // namespace sion::sandboxd
