// SPDX-License-Identifier: MIT
// sion-mail: sion's own MCP server over one mailbox, IMAP and SMTP (sion-mail(1)), speaking MCP
// on stdin and stdout.
#include "cmd/sion-mail/mailbox.hpp"
#include "cmd/sion-mail/message.hpp"
#include "lib/cli.hpp"
#include "lib/log.hpp"
#include "lib/mcp_serve.hpp"

namespace {

const sion::CommandSpec k_spec{
    "sion-mail",
    "sion-mail",
    "Serve one mailbox as an MCP server on standard input and output: list_folders, search_mail\n"
    "and read_mail read it over IMAP, draft_mail saves a draft in its drafts folder, send_mail\n"
    "sends over SMTP and keeps a copy in its sent folder. Settings come from the environment or\n"
    "from credentials kept with sion agent credential add: MAIL_ADDRESS, MAIL_IMAP_URL,\n"
    "MAIL_SMTP_URL, MAIL_USERNAME, and MAIL_PASSWORD or MAIL_TOKEN_COMMAND.",
    {},
};

} // namespace

int main(int argc, char** argv) {
    sion::guard_standard_fds();
    sion::set_program_name("sion-mail");
    sion::complete_or_return(k_spec, argc, argv);
    sion::or_die(sion::check_utf8_arguments(argc, argv));
    sion::Args args = sion::parse_args_or_exit(k_spec, argc, argv);
    sion::check_operands(args, 0, 0);
    sion::mail_cmd::mime_init();
    sion::mail_cmd::Mailbox mailbox;
    return sion::mcp_serve::serve(mailbox);
}
