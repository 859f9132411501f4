// SPDX-License-Identifier: MIT
// The per-command limits: parsing them from options, handing them to the init inside the sandbox,
// and setting them there with setrlimit.
//
// What holds (the man page's table): RLIMIT_CPU (soft at the limit, SIGXCPU; hard one second later,
// SIGKILL), RLIMIT_DATA where the sandbox has no memory cgroup (cgroup.hpp), RLIMIT_FSIZE (SIGXFSZ, or EFBIG when caught), RLIMIT_CORE 0, and
// RLIMIT_NPROC. The kernel counts RLIMIT_NPROC per user in each user namespace, so it bounds the
// processes and threads of the sandbox's own user 10001 only, and it exempts processes whose user
// outside is root: run by root with a workspace of root's, the number of processes is bounded by
// the sandbox's cgroup where one can be made (cgroup.hpp, the same number as pids.max), else by
// nothing but the wall clock. The wall clock is enforced from outside (the process group, or the
// whole sandbox, is killed).
#pragma once

#include "sandboxd/config.hpp"

#include "lib/result.hpp"

#include <chrono>
#include <string>
#include <string_view>
#include <vector>

namespace sion::sandboxd {

// Whole seconds, at least 1: "120". Exit::usage naming `option`:
//   "option '--timeout' needs a whole number of seconds, not '2.5'"
[[nodiscard]] Result<std::chrono::seconds> parse_seconds(std::string_view option,
                                                         std::string_view text);

// The options init takes for the limits it sets on itself ("--cpu", "120", "--memory", …), and
// back. The wall clock and the output cap are not among them: they are enforced outside init's
// rlimits. limits_from_args fills what it finds in `args` into a default Limits.
[[nodiscard]] std::vector<std::string> limits_to_args(const Limits& limits);
[[nodiscard]] Result<Limits> limits_from_args(const Args& args);

// The OptionSpecs limits_from_args reads, for init's CommandSpec.
[[nodiscard]] std::vector<OptionSpec> limit_options();

// Sets the rlimits of the calling process (inherited by what it spawns). Exit::os on failure.
[[nodiscard]] Status apply_limits(const Limits& limits);

} // namespace sion::sandboxd
