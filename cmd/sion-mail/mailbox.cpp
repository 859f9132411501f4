// SPDX-License-Identifier: MIT
// sion-mail's tools: what each asks the IMAP and SMTP servers, and how their answers read.
#include "cmd/sion-mail/mailbox.hpp"

#include "cmd/sion-mail/arguments.hpp"
#include "cmd/sion-mail/message.hpp"
#include "lib/child.hpp"
#include "lib/imap.hpp"
#include "lib/secrets.hpp"
#include "lib/text.hpp"

#include <algorithm>

namespace sion::mail_cmd {

namespace {

constexpr int64_t k_results_default = 20;
constexpr int64_t k_results_max = 100;
constexpr size_t k_search_max = 1000000;           // UIDs a search reads, at most
constexpr size_t k_message_max = size_t{16} << 20; // bytes of a message read
constexpr size_t k_folders_max = 500;
constexpr size_t k_status_max = 50; // folders counted one STATUS each, without LIST-STATUS
constexpr auto k_token_kept = std::chrono::minutes(5);
constexpr auto k_token_time = std::chrono::seconds(30);

using mcp_serve::fail;
using mcp_serve::integer_property;
using mcp_serve::string_property;
using mcp_serve::strings_property;

Json read_tool(const char* name, const char* title, const char* description, Json properties,
               const std::vector<std::string>& required) {
    mcp_serve::Hints hints;
    hints.read_only = true;
    hints.open_world = false;
    return mcp_serve::tool(name, title, description, std::move(properties), required, hints);
}

Result<std::string> setting(const char* name) {
    auto v = secrets::lookup(name);
    if (!v)
        return v.error();
    return v->value_or(std::string());
}

// The URL of `name`, one of `schemes`, without its path; "" when unset.
Result<std::string> url_setting(const char* name, const char* a, const char* b) {
    SION_TRY(std::string url, setting(name));
    if (url.empty())
        return url;
    std::string lower = ascii_lower(url);
    if (lower.rfind(std::string(a) + "://", 0) != 0 && lower.rfind(std::string(b) + "://", 0) != 0)
        return make_error(Exit::config, "%s '%s' is not an %s:// or %s:// URL", name,
                          mail::shown_url(url).c_str(), a, b);
    size_t path = url.find('/', url.find("://") + 3);
    if (path != std::string::npos)
        url.resize(path);
    return url;
}

std::string bytes_shown(uint64_t n) {
    if (n >= (uint64_t{1} << 20))
        return std::to_string((n * 10 >> 20) / 10) + "." + std::to_string((n * 10 >> 20) % 10)
               + " MiB";
    if (n >= 1024)
        return std::to_string(n >> 10) + " KiB";
    return std::to_string(n) + " bytes";
}

} // namespace

Json Mailbox::tools() {
    Json folders_props = Json::object();
    Json search_props = Json::object();
    search_props.set("folder", string_property("the folder to search (INBOX)"));
    search_props.set("from", string_property("text the From header holds"));
    search_props.set("to", string_property("text the To header holds"));
    search_props.set("subject", string_property("text the subject holds"));
    search_props.set("text", string_property("text the headers or body hold"));
    search_props.set("since", string_property("on or after this date, YYYY-MM-DD"));
    search_props.set("before", string_property("before this date, YYYY-MM-DD"));
    search_props.set("unseen", mcp_serve::boolean_property("only messages not yet read"));
    search_props.set("limit", integer_property("how many messages to list, newest first (20)", 1,
                                               k_results_max));
    search_props.set("offset",
                     integer_property("how many of the newest to pass over (0)", 0, INT32_MAX));
    Json read_props = Json::object();
    read_props.set("folder", string_property("the folder the message is in (INBOX)"));
    read_props.set("uid",
                   integer_property("the message's UID, as search_mail gives it", 1, UINT32_MAX));
    auto compose = [](bool send) {
        Json p = Json::object();
        p.set("to", strings_property("the recipients' addresses (\"Bob <bob@example.org>\" or "
                                     "\"bob@example.org\"); a reply's sender when absent"));
        p.set("cc", strings_property("addresses to copy"));
        if (send)
            p.set("bcc", strings_property("addresses to copy blind (not shown to the others)"));
        p.set("subject", string_property("the subject (\"Re: \" and the original's for a reply "
                                         "when absent)"));
        p.set("text", string_property("the message's text"));
        p.set("in_reply_to", integer_property("the UID of the message this answers, in folder: "
                                              "the reply threads with it",
                                              1, UINT32_MAX));
        p.set("folder", string_property("the folder of in_reply_to's message (INBOX)"));
        return p;
    };
    Json tools = Json::array();
    tools.push(read_tool("list_folders", "List mail folders",
                         "List the mailbox's folders: each one's name, its special use (\\Drafts, "
                         "\\Sent, \\Trash, ...) and how many messages it holds, how many unseen.",
                         std::move(folders_props), {}));
    tools.push(read_tool("search_mail", "Search mail",
                         "Find messages in a folder by sender, recipient, subject, text and "
                         "date, searched by the server, newest first: each one's UID, date, "
                         "sender, subject and whether it was read. Criteria given together must "
                         "all match; none lists the folder.",
                         std::move(search_props), {}));
    tools.push(read_tool("read_mail", "Read a message",
                         "Read one message: its headers, its text (HTML made text), and its "
                         "attachments by name, type and size (they are not given).",
                         std::move(read_props), {"uid"}));
    mcp_serve::Hints write;
    write.read_only = false;
    write.destructive = false;
    write.idempotent = false;
    write.open_world = false;
    tools.push(mcp_serve::tool("draft_mail", "Draft a message",
                               "Write a message as a draft in the mailbox's drafts folder, for "
                               "you to send: nothing is sent. A reply (in_reply_to) threads with "
                               "the message it answers.",
                               compose(false), {"text"}, write));
    mcp_serve::Hints external;
    external.read_only = false;
    external.destructive = false;
    external.idempotent = false;
    external.open_world = true;
    tools.push(mcp_serve::tool("send_mail", "Send a message",
                               "Send a message from the mailbox's address over SMTP, and keep a "
                               "copy in its sent folder. A reply (in_reply_to) threads with the "
                               "message it answers.",
                               compose(true), {"text"}, external));
    return tools;
}

bool Mailbox::has_tool(std::string_view name) {
    return name == "list_folders" || name == "search_mail" || name == "read_mail"
           || name == "draft_mail" || name == "send_mail";
}

Answer Mailbox::call(std::string_view name, JsonView arguments) {
    if (arguments.exists() && !arguments.is_object())
        return fail(std::string(name) + " takes its arguments as an object");
    if (name == "list_folders")
        return list_folders();
    if (name == "search_mail")
        return search(arguments);
    if (name == "read_mail")
        return read(arguments);
    if (name == "draft_mail")
        return draft(arguments);
    return send(arguments);
}

Result<Settings> Mailbox::settings(bool imap, bool smtp) const {
    Settings s;
    SION_TRY(s.address, setting("MAIL_ADDRESS"));
    SION_TRY(s.imap_url, url_setting("MAIL_IMAP_URL", "imap", "imaps"));
    SION_TRY(s.smtp_url, url_setting("MAIL_SMTP_URL", "smtp", "smtps"));
    SION_TRY(s.username, setting("MAIL_USERNAME"));
    SION_TRY(s.password, setting("MAIL_PASSWORD"));
    SION_TRY(s.token_command, setting("MAIL_TOKEN_COMMAND"));
    if (imap && s.imap_url.empty())
        return make_error(Exit::config, "%s", not_set("MAIL_IMAP_URL").c_str());
    if (smtp && s.smtp_url.empty())
        return make_error(Exit::config, "%s", not_set("MAIL_SMTP_URL").c_str());
    if (s.address.empty() && (smtp || s.username.empty()))
        return make_error(Exit::config, "%s", not_set("MAIL_ADDRESS").c_str());
    if (s.password.empty() && s.token_command.empty())
        return make_error(Exit::config,
                          "mail is not set up: neither MAIL_PASSWORD nor MAIL_TOKEN_COMMAND is "
                          "set; keep one with sion agent credential add MAIL_PASSWORD");
    if (s.username.empty())
        s.username = address_of(s.address).empty() ? s.address : address_of(s.address);
    return s;
}

Result<mail::Account> Mailbox::account(const Settings& s, const std::string& url) {
    mail::Account a;
    a.url = url;
    a.username = s.username;
    if (s.token_command.empty()) {
        a.password = s.password;
        return a;
    }
    auto now = std::chrono::steady_clock::now();
    if (m_token.empty() || m_token_for != s.token_command || now >= m_token_until) {
        m_token.clear();
        ChildSpec spec;
        spec.argv = {"/bin/sh", "-c", s.token_command};
        spec.env = own_environment();
        spec.in = Stdio::null();
        spec.time_limit = k_token_time;
        auto ran = run(std::move(spec), "", size_t{64} << 10);
        if (!ran)
            return make_error(Exit::unavailable, "cannot run MAIL_TOKEN_COMMAND: %s",
                              ran.error().message().c_str());
        if (ran->timed_out)
            return make_error(Exit::timeout, "MAIL_TOKEN_COMMAND printed no token within 30 s");
        if (ran->status != 0)
            return make_error(Exit::unavailable, "MAIL_TOKEN_COMMAND failed: %s",
                              first_said(*ran, "MAIL_TOKEN_COMMAND").c_str());
        std::string token(trim_space(ran->out));
        if (size_t lf = token.find('\n'); lf != std::string::npos)
            token = std::string(trim_space(token.substr(0, lf)));
        if (token.empty())
            return make_error(Exit::unavailable, "MAIL_TOKEN_COMMAND printed no token");
        m_token = token;
        m_token_for = s.token_command;
        m_token_until = now + k_token_kept;
    }
    a.bearer = m_token;
    return a;
}

Result<mail::Imap*> Mailbox::imap(const Settings& s) {
    std::string key = s.imap_url + '\n' + s.username + '\n' + s.password + '\n' + s.token_command;
    if (m_imap && key == m_imap_key)
        return m_imap.get();
    m_imap.reset();
    m_capabilities.reset();
    SION_TRY(mail::Account a, account(s, s.imap_url));
    SION_TRY(mail::Imap opened, mail::Imap::open(std::move(a)));
    m_imap = std::make_unique<mail::Imap>(std::move(opened));
    m_imap_key = key;
    m_settings = s;
    m_proven = false;
    return m_imap.get();
}

Result<std::string> Mailbox::command(std::string_view mailbox, std::string_view request) {
    auto said = m_imap->command(mailbox, request);
    if (!said && said.error().exit() == Exit::unavailable && m_proven) {
        // The connection kept from an earlier call may have been closed since, by the server or
        // on the way: once more, on a new one.
        Settings s = m_settings;
        m_imap.reset();
        SION_TRY(mail::Imap * again, imap(s));
        said = again->command(mailbox, request);
    }
    m_proven = said || said.error().exit() == Exit::data;
    if (!said && said.error().exit() != Exit::data) {
        m_imap.reset(); // the next call connects again (and runs the token command again)
        m_token.clear();
    }
    return said;
}

Result<std::vector<std::string>> Mailbox::capabilities() {
    if (!m_capabilities) {
        SION_TRY(std::string said, command("", "CAPABILITY"));
        m_capabilities = imap::capabilities(said);
    }
    return *m_capabilities;
}

Result<std::string> Mailbox::special_folder(const char* use, const char* fallback) {
    SION_TRY(std::string said, command("", "LIST \"\" \"*\""));
    SION_TRY(auto responses, imap::parse_untagged(said));
    std::string named;
    for (const auto& f : imap::folders(responses)) {
        if (!f.selectable)
            continue;
        if (f.special == use)
            return f.shown;
        if (ascii_iequals(f.shown, fallback))
            named = f.shown;
    }
    if (!named.empty())
        return named;
    return make_error(Exit::data, "the mailbox has no folder marked %s", use);
}

Answer Mailbox::failed(std::string_view what, const Error& e, bool smtp) {
    std::string line = std::string(what) + ": " + e.message();
    const char* url = smtp ? "MAIL_SMTP_URL" : "MAIL_IMAP_URL";
    if (e.exit() == Exit::no_perm)
        line += m_token_for.empty() ? "; check MAIL_PASSWORD (and MAIL_USERNAME)"
                                    : "; check what MAIL_TOKEN_COMMAND prints (and MAIL_USERNAME)";
    else if (e.exit() == Exit::unavailable && e.message().find("cannot reach") == 0
             && e.message().find("over TLS") == std::string::npos)
        line += std::string("; is the server up, and ") + url + " right?";
    else if (e.exit() == Exit::timeout)
        line += "; try again later";
    return fail(one_line(line));
}

Answer Mailbox::list_folders() {
    auto s = settings(true, false);
    if (!s)
        return fail(s.error().message());
    auto connected = imap(*s);
    if (!connected)
        return failed("cannot list folders", connected.error());
    auto caps = capabilities();
    if (!caps)
        return failed("cannot list folders", caps.error());
    bool list_status = std::find(caps->begin(), caps->end(), "LIST-STATUS") != caps->end();
    auto said =
        command("", list_status ? R"(LIST "" "*" RETURN (SPECIAL-USE STATUS (MESSAGES UNSEEN)))"
                                : R"(LIST "" "*")");
    if (!said)
        return failed("cannot list folders", said.error());
    auto responses = imap::parse_untagged(*said);
    if (!responses)
        return failed("cannot list folders", responses.error());
    std::vector<imap::Folder> folders = imap::folders(*responses);
    std::vector<imap::FolderStatus> statuses = imap::statuses(*responses);
    if (folders.size() > k_folders_max)
        folders.resize(k_folders_max);
    if (!list_status)
        for (size_t i = 0; i < folders.size() && i < k_status_max; ++i) {
            if (!folders[i].selectable)
                continue;
            auto q = imap::quote(folders[i].name);
            auto st = q ? command("", "STATUS " + *q + " (MESSAGES UNSEEN)")
                        : Result<std::string>(q.error());
            if (!st)
                continue;
            auto parsed = imap::parse_untagged(*st);
            if (parsed)
                for (auto& one : imap::statuses(*parsed))
                    statuses.push_back(std::move(one));
        }
    std::sort(folders.begin(), folders.end(), [](const imap::Folder& a, const imap::Folder& b) {
        if ((a.name == "INBOX") != (b.name == "INBOX"))
            return a.name == "INBOX";
        return a.shown < b.shown;
    });
    std::string text;
    for (const auto& f : folders) {
        text += f.shown;
        if (!f.special.empty())
            text += " (" + f.special + ")";
        for (const auto& st : statuses)
            if (st.mailbox == f.name && st.messages) {
                text += ": " + std::to_string(*st.messages)
                        + (*st.messages == 1 ? " message" : " messages");
                if (st.unseen)
                    text += ", " + std::to_string(*st.unseen) + " unseen";
                break;
            }
        if (!f.selectable)
            text += " (holds only folders)";
        text += "\n";
    }
    if (text.empty())
        return {"the mailbox has no folders"};
    text.pop_back();
    return {text};
}

Answer Mailbox::search(JsonView arguments) {
    imap::Criteria c;
    std::string folder;
    int64_t limit = k_results_default, offset = 0;
    {
        auto f = folder_arg(arguments);
        auto from = text_arg(arguments, "from", k_field_max);
        auto to = text_arg(arguments, "to", k_field_max);
        auto subject = text_arg(arguments, "subject", k_field_max);
        auto text = text_arg(arguments, "text", k_field_max);
        auto since = text_arg(arguments, "since", 10);
        auto before = text_arg(arguments, "before", 10);
        auto unseen = arguments.boolean_or("unseen", false);
        auto l = arguments.integer_or("limit", k_results_default);
        auto o = arguments.integer_or("offset", 0);
        for (const Result<std::string>* r : {&f, &from, &to, &subject, &text, &since, &before})
            if (!*r)
                return fail("search_mail: " + r->error().message());
        if (!unseen)
            return fail("search_mail: " + unseen.error().message());
        if (!l || !o)
            return fail("search_mail: " + (!l ? l.error() : o.error()).message());
        folder = f->empty() ? "INBOX" : *f;
        c = {*from, *to, *subject, *text, *since, *before, *unseen};
        limit = std::clamp<int64_t>(*l, 1, k_results_max);
        offset = std::max<int64_t>(*o, 0);
    }
    auto s = settings(true, false);
    if (!s)
        return fail(s.error().message());
    auto connected = imap(*s);
    if (!connected)
        return failed("cannot search mail", connected.error());
    auto caps = capabilities();
    if (!caps)
        return failed("cannot search mail", caps.error());
    bool esearch = std::find(caps->begin(), caps->end(), "ESEARCH") != caps->end();
    auto request = imap::search_command(c, esearch);
    if (!request)
        return fail("search_mail: " + request.error().message());
    auto said = command(folder, *request);
    if (!said)
        return failed("cannot search mail", said.error());
    auto responses = imap::parse_untagged(*said);
    if (!responses)
        return failed("cannot search mail", responses.error());
    imap::Uids found = imap::search_uids(*responses, k_search_max);
    size_t total = found.uids.size();
    std::string shown_folder = "'" + folder + "'";
    if (total == 0)
        return {"no messages match in " + shown_folder};
    if (static_cast<size_t>(offset) >= total)
        return {std::to_string(total) + " messages match in " + shown_folder + "; none past offset "
                + std::to_string(offset)};
    std::vector<uint32_t> page;
    for (size_t i = total - 1 - static_cast<size_t>(offset);
         page.size() < static_cast<size_t>(limit); --i) {
        page.push_back(found.uids[i]);
        if (i == 0)
            break;
    }
    auto fetched = command(folder, "UID FETCH " + imap::sequence_set(page)
                                       + " (UID FLAGS INTERNALDATE BODY.PEEK[HEADER.FIELDS "
                                         "(DATE FROM SUBJECT)])");
    if (!fetched)
        return failed("cannot search mail", fetched.error());
    auto fetched_responses = imap::parse_untagged(*fetched);
    if (!fetched_responses)
        return failed("cannot search mail", fetched_responses.error());
    std::vector<imap::Fetched> all = imap::fetched(*fetched_responses);
    std::string text =
        std::to_string(total) + (found.more ? "+" : "")
        + (total == 1 ? " message matches" : " messages match") + " in " + shown_folder
        + ", newest first; "
        + (page.size() == total ? std::string("all shown")
                                : std::to_string(offset + 1) + " to "
                                      + std::to_string(offset + page.size()) + " shown")
        + ":";
    for (uint32_t uid : page) {
        const imap::Fetched* f = find_uid(all, uid);
        if (f == nullptr)
            continue;
        Message m = read_message(f->section);
        std::string date = m.date.empty() ? f->internal_date : m.date;
        text += "\nuid " + std::to_string(uid) + " | " + date + " | "
                + (m.from.empty() ? "(no sender)" : m.from) + " | "
                + (m.subject.empty() ? "(no subject)" : m.subject) + " | "
                + (f->has_flag("\\Seen") ? "seen" : "unseen");
    }
    return {text};
}

Answer Mailbox::read(JsonView arguments) {
    auto f = folder_arg(arguments);
    if (!f)
        return fail("read_mail: " + f.error().message());
    auto uid_arg = arguments.integer("uid");
    if (!uid_arg)
        return fail("read_mail: " + uid_arg.error().message());
    if (*uid_arg < 1 || *uid_arg > UINT32_MAX)
        return fail("read_mail: member 'uid' is not a UID: give one search_mail gave");
    auto uid = static_cast<uint32_t>(*uid_arg);
    std::string folder = f->empty() ? "INBOX" : *f;
    auto s = settings(true, false);
    if (!s)
        return fail(s.error().message());
    auto connected = imap(*s);
    if (!connected)
        return failed("cannot read mail", connected.error());
    auto flags = command(folder, "UID FETCH " + std::to_string(uid) + " (UID FLAGS RFC822.SIZE)");
    if (!flags)
        return failed("cannot read mail", flags.error());
    auto parsed = imap::parse_untagged(*flags);
    if (!parsed)
        return failed("cannot read mail", parsed.error());
    auto all = imap::fetched(*parsed);
    const imap::Fetched* known = find_uid(all, uid);
    if (known == nullptr)
        return fail("read_mail: no message of uid " + std::to_string(uid) + " in '" + folder
                    + "': search_mail gives the UIDs");
    auto bytes = m_imap->fetch(folder, uid, k_message_max);
    if (!bytes) {
        m_imap.reset();
        return failed("cannot read mail", bytes.error());
    }
    // FETCH BODY[] marked it read: a read_mail leaves the mailbox as it was.
    if (!known->has_flag("\\Seen"))
        (void)command(folder, "UID STORE " + std::to_string(uid) + " -FLAGS.SILENT (\\Seen)");
    Message m = read_message(*bytes);
    std::string text;
    auto header = [&](const char* name, const std::string& value) {
        if (!value.empty())
            text += std::string(name) + ": " + value + "\n";
    };
    header("From", m.from);
    header("To", m.to);
    header("Cc", m.cc);
    header("Reply-To", m.reply_to);
    header("Date", m.date);
    header("Subject", m.subject);
    header("Message-ID", m.message_id.empty() ? "" : "<" + m.message_id + ">");
    if (!m.attachments.empty()) {
        std::string list;
        for (const auto& a : m.attachments)
            list += std::string(list.empty() ? "" : "; ") + (a.name.empty() ? "(unnamed)" : a.name)
                    + " (" + a.type + ", " + bytes_shown(a.size) + ")";
        if (m.attachments_more > 0)
            list += "; and " + std::to_string(m.attachments_more) + " more";
        header("Attachments", list + " — not given");
    }
    std::string body = m.text;
    while (!body.empty() && (body.back() == '\n' || body.back() == '\r' || body.back() == ' '))
        body.pop_back();
    text += "\n" + body;
    if (m.cut)
        text += "\n[the text is cut at 100 KiB]";
    if (bytes->size() >= k_message_max || (known->size && *known->size > k_message_max))
        text += "\n[the message is larger than 16 MiB: only its first 16 MiB were read]";
    return {text};
}

} // namespace sion::mail_cmd
