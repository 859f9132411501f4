// SPDX-License-Identifier: MIT
// The contract of a sandbox's options, between the programs that start sandboxes (sion-run,
// sion-mcp) and sion-sandbox, which alone judges them: the option table exec, serve, check and
// describe share; the grammar of the values a program may check as it takes its own flags (the
// backend, the network, byte counts); and the sandbox they describe, as a struct and as the JSON
// `sion-sandbox describe` prints (schemas/sandbox.describe.json). Whether the directories exist,
// and pre-flight, are sion-sandbox's (sandboxd/config.hpp, sandboxd/preflight.hpp).
#pragma once

#include "lib/cli.hpp"
#include "lib/json.hpp"
#include "lib/result.hpp"

#include <chrono>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace sion::proto {

// Per command (seed: "A shell in a sandbox").
struct Limits {
    std::chrono::seconds timeout{120};        // wall clock, enforced from outside the command
    std::chrono::seconds cpu{120};            // RLIMIT_CPU
    uint64_t memory = uint64_t{4} << 30;      // the sandbox cgroup's, else RLIMIT_DATA (bwrap); the container's (Docker)
    uint64_t file_size = uint64_t{512} << 20; // RLIMIT_FSIZE
    uint64_t output = uint64_t{64} << 10;     // stdout and stderr, each
    uint64_t processes = 256;                 // RLIMIT_NPROC inside, and the cgroup's pids.max
};

enum class BackendKind { bwrap, docker };

enum class Network {
    none,     // loopback only
    declared, // bwrap: no network but a proxy that admits the declared hosts
    host,     // bwrap: the machine's network
    named,    // Docker: a network the user set up, by name
};

struct Config {
    std::string workspace;              // absolute, as resolved; mounted at /workspace
    std::string workspace_as_given;     // as the user wrote it, for messages
    std::vector<std::string> reads;     // --sandbox-read, absolute
    std::vector<std::string> reads_as_given;
    BackendKind backend = BackendKind::bwrap;
    std::string image;                  // Docker: name@sha256:<64 hex>
    Network network = Network::none;
    std::string network_name;           // Docker: the named network
    std::vector<std::string> allow_hosts; // HOST or HOST:PORT, "*.example.org" allowed
    Limits limits;
    std::string home;                   // $SION_HOME, which must stay hidden
    std::string home_as_given;
    std::string channel;                // a Unix socket commands may connect to (k_channel_inside)
    std::string skill_dir;              // a skill's folder, read-only at k_skill_inside (its scripts')
};

// Where a skill's script finds its skill's files.
inline constexpr const char* k_skill_inside = "/skill";

// "bwrap" or "docker:IMAGE@sha256:<64 hex>". Errors (Exit::config):
//   "alpine:3.20 is not pinned by digest: give name@sha256:<64 hex digits>"
[[nodiscard]] Status parse_backend(Config& config, std::string_view text);

// none|declared|host with bwrap, none|NAME with Docker; call after parse_backend. Errors (Exit::config):
//   "with bubblewrap the network is none, declared or host, not sion-egress"
//   "Docker's \"bridge\" network does not restrict where a command connects: name a network you set up"
[[nodiscard]] Status parse_network(Config& config, std::string_view text);

// Where commands find the --channel socket.
inline constexpr const char* k_channel_inside = "/run/sion/channel.sock";

// The options sion-sandbox's exec, serve, check and describe share (--json is exec's): the one
// list that --help, the man page and sandboxd::config_from_args() agree on.
[[nodiscard]] std::vector<OptionSpec> sandbox_options(bool with_json);

// A byte count: digits with an optional K, M, G (powers of 1024; KiB, MiB, GiB too). Exit::usage.
[[nodiscard]] Result<uint64_t> parse_bytes(std::string_view text);

// The memory a sandbox is given (--memory, sion-run's and sion-mcp's --sandbox-memory): a byte
// count of 16M or more, since less is surely a mistake and no program starts in it. Exit::usage:
// parse_bytes()'s, or "'8K' is too little: give 16M or more".
[[nodiscard]] Result<uint64_t> parse_memory(std::string_view text);

// A byte count as people read it: "4 GiB", "512 MiB", "1536 KiB", "1000 bytes".
[[nodiscard]] std::string size_text(uint64_t bytes);

// The sandbox `config` describes as `sion-sandbox describe` prints it, and read back. The backend
// is written as the option gives it ("bwrap", "docker:IMAGE@sha256:…"), the network as its kind
// with the Docker network's name beside it; limits are seconds and bytes. Reading checks the shape
// and the backend's and network's grammar (Exit::data "sandbox description: …"), not the paths.
[[nodiscard]] Json config_to_json(const Config& config);
[[nodiscard]] Result<Config> config_from_json(JsonView json);

// What the backend option says for `config`: "bwrap" or "docker:IMAGE@sha256:…".
[[nodiscard]] std::string backend_text(const Config& config);

} // namespace sion::proto
