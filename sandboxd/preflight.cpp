// SPDX-License-Identifier: MIT
// The pre-flight checks on a sandbox's configuration, with the seed's messages.
#include "sandboxd/preflight.hpp"

#include "lib/home.hpp"

namespace sion::sandboxd {

namespace {

Result<bool> overlap(const std::string& a, const std::string& b) {
    auto r = paths_overlap(a, b);
    if (!r)
        return Error(Exit::config, r.error().message());
    return *r;
}

} // namespace

Status check_workspace(const Config& config) {
    SION_TRY(bool both, overlap(config.workspace, config.home));
    if (both)
        return make_error(Exit::config,
                          "the workspace %s and %s (wallets, sessions, skills) overlap: give a "
                          "workspace apart from it",
                          config.workspace_as_given.c_str(), config.home_as_given.c_str());
    return {};
}

Status check_reads(const Config& config) {
    for (size_t i = 0; i < config.reads.size(); ++i) {
        SION_TRY(bool both, overlap(config.reads[i], config.home));
        if (both) {
            const std::string& given =
                i < config.reads_as_given.size() ? config.reads_as_given[i] : config.reads[i];
            return make_error(Exit::config,
                              "the directory %s given with --sandbox-read and %s (wallets, "
                              "sessions, skills) overlap: give a directory apart from it",
                              given.c_str(), config.home_as_given.c_str());
        }
    }
    return {};
}

Status preflight(const Config& config) {
    SION_CHECK(check_workspace(config));
    SION_CHECK(check_reads(config));
    return {};
}

} // namespace sion::sandboxd
