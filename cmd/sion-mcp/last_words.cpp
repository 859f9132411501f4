// SPDX-License-Identifier: MIT
// A server that failed at an operator's command: its error's line, then what it last wrote to its
// standard error and the variables of yours it names but was not given, on your terminal only.
#include "cmd/sion-mcp/commands.hpp"

#include "mcpd/last_words.hpp"

#include "lib/log.hpp"

#include <cstdio>
#include <cstdlib>

namespace sion::mcp_cmd {

Json served_or_die(Result<Json> served, std::string_view name, const mcpd::ServerConfig& config,
                   const std::vector<std::string>& words, bool on_shelf) {
    if (served)
        return std::move(*served);
    report(served.error());
    if (!words.empty()) {
        log_error("MCP server %.*s wrote last on its standard error:",
                  static_cast<int>(name.size()), name.data());
        std::string block;
        for (const std::string& line : words)
            block += "  " + line + "\n";
        std::fwrite(block.data(), 1, block.size(), stderr);
        std::fflush(stderr);
    }
    // What it gets besides --env's (mcpd::server_environment()) is among the machine's variables,
    // which are never named.
    for (const std::string& var : mcpd::ungiven_variables(words, config.env))
        log_error("%s is set in your environment but not given to the server: %s --env %s",
                  var.c_str(), on_shelf ? "remove it and add it again with" : "add", var.c_str());
    std::fflush(stdout);
    std::_Exit(to_int(served.error().exit()));
}

} // namespace sion::mcp_cmd
