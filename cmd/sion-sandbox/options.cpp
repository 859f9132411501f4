// SPDX-License-Identifier: MIT
// The options exec and serve share: one list for --help, the man page and config_from_args.
#include "cmd/sion-sandbox/commands.hpp"

namespace sion::sandbox_cmd {

std::vector<OptionSpec> sandbox_options(bool with_json) {
    std::vector<OptionSpec> options = {
        {"workspace", 0, "DIR", "the directory at /workspace, writable (default: the current one)"},
        {"sandbox-read", 0, "DIR", "a directory shown read-only at its own path (repeatable)"},
        {"backend", 0, "BACKEND", "bwrap (the default) or docker:IMAGE@sha256:DIGEST"},
        {"network", 0, "NETWORK", "none (the default), declared or host; with Docker none or NAME"},
        {"allow-host", 0, "HOST[:PORT]", "a host the declared network admits (repeatable)"},
        {"timeout", 0, "S", "wall-clock seconds a command may run (120)"},
        {"cpu", 0, "S", "CPU seconds a process may use (120)"},
        {"memory", 0, "BYTES", "address space of a process (4G)"},
        {"file-size", 0, "BYTES", "the largest file a process may write (512M)"},
        {"output", 0, "BYTES", "bytes of stdout, and of stderr, kept (64K)"},
        {"home", 0, "DIR", "the runtime's home, which must stay hidden (default: $SION_HOME)"},
    };
    if (with_json)
        options.push_back({"json", 0, nullptr, "print the result as one JSON object"});
    return options;
}

} // namespace sion::sandbox_cmd
