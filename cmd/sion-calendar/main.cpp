// SPDX-License-Identifier: MIT
// sion-calendar: sion's own MCP server over a CalDAV account (sion-calendar(1)), speaking MCP on
// stdin and stdout.
#include "cmd/sion-calendar/server.hpp"
#include "lib/cli.hpp"
#include "lib/log.hpp"
#include "lib/mcp_serve.hpp"
#include "lib/secrets.hpp"

namespace {

const sion::CommandSpec k_spec{
    "sion-calendar",
    "sion-calendar",
    "Serve the calendars of a CalDAV account as an MCP server on standard input and output:\n"
    "list_calendars and list_events read them, repeating events expanded; create_event adds an\n"
    "event; delete_event deletes one. The account is $CALDAV_URL, $CALDAV_USERNAME, and\n"
    "$CALDAV_PASSWORD or $CALDAV_TOKEN_COMMAND, each from the environment or kept with sion\n"
    "agent credential add.",
    {},
};

} // namespace

int main(int argc, char** argv) {
    sion::guard_standard_fds();
    sion::set_program_name("sion-calendar");
    sion::complete_or_return(k_spec, argc, argv);
    sion::or_die(sion::check_utf8_arguments(argc, argv));
    sion::Args args = sion::parse_args_or_exit(k_spec, argc, argv);
    sion::check_operands(args, 0, 0);
    sion::calendar_cmd::CalendarTools tools(sion::secrets::lookup);
    return sion::mcp_serve::serve(tools);
}
