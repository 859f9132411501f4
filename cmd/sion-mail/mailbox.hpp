// SPDX-License-Identifier: MIT
// The five tools of sion-mail (sion-mail(1)) over one mailbox: list_folders, search_mail and
// read_mail read it over IMAP; draft_mail appends to its drafts folder; send_mail submits over
// SMTP and keeps a copy in its sent folder. Their definitions as tools/list gives them carry the
// effects the review takes: reads (which taint the session), a write, and an external call.
//
// Settings are read at each call (secrets::lookup: the environment's, else the credential kept
// with `sion agent credential add`), so a server that starts without them answers each call with
// the one line naming what to set, and works once it is set. A call never throws and never ends
// the program: what goes wrong is an answer with is_error and one line naming the server and what
// to do, never a password or a token.
//
// Threads: one call at a time.
#pragma once

#include "cmd/sion-mail/message.hpp"
#include "lib/json.hpp"
#include "lib/mail_client.hpp"
#include "lib/mcp_serve.hpp"

#include <chrono>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace sion::mail_cmd {

using mcp_serve::Answer;

// The settings a call needs, as they are now.
struct Settings {
    std::string address;       // MAIL_ADDRESS
    std::string imap_url;      // MAIL_IMAP_URL, without a path
    std::string smtp_url;      // MAIL_SMTP_URL, without a path
    std::string username;      // MAIL_USERNAME, else MAIL_ADDRESS
    std::string password;      // MAIL_PASSWORD
    std::string token_command; // MAIL_TOKEN_COMMAND
};

class Mailbox final : public mcp_serve::Tools {
public:
    Mailbox() = default;

    [[nodiscard]] std::string_view server_name() const override { return "sion-mail"; }

    [[nodiscard]] Json list() const override { return tools(); }

    [[nodiscard]] static Json tools();

    [[nodiscard]] bool has(std::string_view name) const override { return has_tool(name); }

    [[nodiscard]] static bool has_tool(std::string_view name);
    [[nodiscard]] Answer call(std::string_view name, JsonView arguments) override;

private:
    [[nodiscard]] Answer list_folders();
    [[nodiscard]] Answer search(JsonView arguments);
    [[nodiscard]] Answer read(JsonView arguments);
    [[nodiscard]] Answer draft(JsonView arguments);
    [[nodiscard]] Answer send(JsonView arguments);

    // The settings IMAP needs (and, with `smtp`, what sending needs); the error names the first
    // one missing.
    [[nodiscard]] Result<Settings> settings(bool imap, bool smtp) const;
    // The password or token for `s`: the token from MAIL_TOKEN_COMMAND, kept for five minutes.
    [[nodiscard]] Result<mail::Account> account(const Settings& s, const std::string& url);
    // The IMAP connection for `s`, made again when the settings changed or the last call failed.
    [[nodiscard]] Result<mail::Imap*> imap(const Settings& s);
    [[nodiscard]] Result<std::vector<std::string>> capabilities();
    // The folder whose special use is `use` ("\Drafts"), else one named `fallback`.
    [[nodiscard]] Result<std::string> special_folder(const char* use, const char* fallback);
    // What the server said of `command` in `mailbox`, dropping the connection when it fails.
    [[nodiscard]] Result<std::string> command(std::string_view mailbox, std::string_view request);
    [[nodiscard]] Answer failed(std::string_view what, const Error& e, bool smtp = false);
    // Makes `draft` a reply to the message `uid` of `folder`: In-Reply-To and References, and the
    // subject and recipient when not given. Exit::no_input when there is no such message.
    [[nodiscard]] Status thread(Draft& draft, const std::string& folder, uint32_t uid);

    std::unique_ptr<mail::Imap> m_imap;
    std::string m_imap_key; // what m_imap was made for
    Settings m_settings;    // and with what
    bool m_proven = false;  // m_imap's last command was answered
    std::optional<std::vector<std::string>> m_capabilities;
    std::string m_token;
    std::string m_token_for;
    std::chrono::steady_clock::time_point m_token_until{};
};

} // namespace sion::mail_cmd
