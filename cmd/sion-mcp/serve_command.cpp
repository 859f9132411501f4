// SPDX-License-Identifier: MIT
// sion-mcp serve: the bridge between a session and its servers (mcpd/bridge.hpp).
#include "cmd/sion-mcp/commands.hpp"
#include "lib/db_schema.hpp"
#include "lib/home.hpp"
#include "lib/log.hpp"
#include "lib/proto/mcp_names.hpp"
#include "mcpd/bridge.hpp"

namespace sion::mcp_cmd {

int serve_command(int argc, const char* const* argv) {
    const CommandSpec spec{
        "sion-mcp serve",
        "sion-mcp serve [--ask] [--sampling-model M] NAME...",
        "Start the servers NAME... and bridge them to a session over the pipes protocol on\n"
        "standard input and output (sion-run starts this once per session).",
        {
            {"ask", 0, nullptr, "a person can be asked: servers may elicit input"},
            {"sampling-model", 0, "M",
             "writes completions for servers whose sampling names no model", nullptr, ":provider"},
        },
        false,
        {":mcp-server..."},
    };
    Args args = parse_args_or_exit(spec, argc, argv);
    std::vector<std::string> names = args.operands();
    for (const std::string& name : names)
        or_die(proto::check_server_name(name));
    std::string home = or_die(prepare_home());
    (void)or_die(open_state(home)); // a store that cannot be opened stops the bridge at once
    auto load = [home](const std::vector<std::string>& wanted) {
        std::vector<mcpd::BridgedServer> servers;
        auto db = open_state(home);
        if (!db) {
            for (const std::string& name : wanted)
                servers.push_back({name, std::nullopt, {}, db.error().message()});
            return servers;
        }
        return mcpd::load_servers(*db, wanted);
    };
    return mcpd::serve_bridge(std::move(names), load, args.has("ask"),
                              args.value("sampling-model").value_or(""));
}

} // namespace sion::mcp_cmd
