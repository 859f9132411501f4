// SPDX-License-Identifier: MIT
// Pre-flight: what is checked before anything runs in a sandbox (seed "What the runtime checks
// first"). Each refusal is Exit::config with one line in the seed's words; paths appear as the
// user wrote them (Config's *_as_given), and are compared once resolved.
#pragma once

#include "sandboxd/config.hpp"

#include "lib/result.hpp"

namespace sion::sandboxd {

// The workspace may neither hold $SION_HOME nor lie inside it:
//   "the workspace ~/.sion/.. and ~/.sion (wallets, sessions, skills) overlap: give a workspace
//    apart from it"
[[nodiscard]] Status check_workspace(const Config& config);

// No --sandbox-read directory may show $SION_HOME, whole or in part:
//   "the directory ~ given with --sandbox-read and ~/.sion (wallets, sessions, skills) overlap:
//    give a directory apart from it"
[[nodiscard]] Status check_reads(const Config& config);

// Every check above, in order; the first refusal.
[[nodiscard]] Status preflight(const Config& config);

} // namespace sion::sandboxd
