// SPDX-License-Identifier: MIT
// The sandbox sion-sandbox's options describe (lib/proto/sandbox_options.hpp): the workspace, what
// else it may read, the backend, the network and the limits, judged here as the programs run them,
// the directories resolved and checked; every check whose failure the seeds spell out says it their
// way.
#pragma once

#include "lib/cli.hpp"
#include "lib/proto/sandbox_options.hpp"
#include "lib/result.hpp"

#include <chrono>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace sion::sandboxd {

// The contract's types and value grammars (lib/proto/sandbox_options.hpp), under the names the
// engine has always used.
using proto::BackendKind;
using proto::Config;
using proto::k_channel_inside;
using proto::Limits;
using proto::Network;
using proto::parse_backend;
using proto::parse_bytes;
using proto::parse_memory;
using proto::parse_network;
using proto::sandbox_options;
using proto::size_text;

// The configuration exec and serve take from their options (--workspace, --sandbox-read,
// --backend, --network, --allow-host, --timeout, --cpu, --memory, --file-size, --output, --home).
// The workspace defaults to the current directory and must be a directory; the home to $SION_HOME
// as resolve_home() finds it (it need not exist). Paths are resolved as resolve_path() does; the
// *_as_given members keep what the user wrote, with the home directory shown as "~". Errors:
// Exit::usage for a malformed number, Exit::config for the rest. Pre-flight (preflight.hpp) is
// separate.
[[nodiscard]] Result<Config> config_from_args(const Args& args);

// `path` for messages: as given, with a leading $HOME shown as "~" (the shell's reading reversed).
[[nodiscard]] std::string display_path(const std::string& path);

} // namespace sion::sandboxd
