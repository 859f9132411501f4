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
    std::vector<mcpd::BridgedServer> servers;
    {
        Db db = or_die(open_state(or_die(prepare_home())));
        servers = mcpd::load_servers(db, names);
    }
    return mcpd::serve_bridge(std::move(servers), args.has("ask"),
                              args.value("sampling-model").value_or(""));
}

} // namespace sion::mcp_cmd
