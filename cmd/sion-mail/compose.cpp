// SPDX-License-Identifier: MIT
// sion-mail's draft_mail and send_mail: a message made from the arguments, threaded with the one it
// answers, saved in the drafts folder or submitted over SMTP with a copy in the sent folder.
#include "cmd/sion-mail/arguments.hpp"
#include "cmd/sion-mail/mailbox.hpp"
#include "cmd/sion-mail/message.hpp"
#include "lib/imap.hpp"
#include "lib/text.hpp"

#include <algorithm>

namespace sion::mail_cmd {

using mcp_serve::fail;

namespace {

// The UID of the tagged line's [APPENDUID validity uid], or 0.
uint32_t append_uid(std::string_view said) {
    size_t at = said.find("[APPENDUID ");
    if (at == std::string_view::npos)
        return 0;
    size_t space = said.find(' ', at + 11);
    if (space == std::string_view::npos)
        return 0;
    uint64_t n = 0;
    for (size_t i = space + 1; i < said.size() && said[i] >= '0' && said[i] <= '9'; ++i)
        n = n * 10 + static_cast<uint64_t>(said[i] - '0');
    return n <= UINT32_MAX ? static_cast<uint32_t>(n) : 0;
}

struct Composed {
    Draft draft;
    std::string reply_folder;
    uint32_t reply_uid = 0;
};

Result<Composed> composed(JsonView arguments, bool send) {
    Composed c;
    SION_TRY(c.draft.to, addresses_arg(arguments, "to"));
    SION_TRY(c.draft.cc, addresses_arg(arguments, "cc"));
    if (send) {
        SION_TRY(c.draft.bcc, addresses_arg(arguments, "bcc"));
    }
    SION_TRY(c.draft.subject, text_arg(arguments, "subject", k_field_max));
    SION_TRY(c.draft.text, text_arg(arguments, "text", k_text_max));
    for (const auto* list : {&c.draft.to, &c.draft.cc, &c.draft.bcc})
        for (const std::string& one : *list)
            if (address_of(one).empty())
                return make_error(Exit::usage, "'%s' is not a mail address", one_line(one).c_str());
    SION_TRY(c.reply_folder, folder_arg(arguments));
    if (c.reply_folder.empty())
        c.reply_folder = "INBOX";
    SION_TRY(int64_t reply, arguments.integer_or("in_reply_to", 0));
    if (reply < 0 || reply > UINT32_MAX)
        return make_error(Exit::usage, "member 'in_reply_to' is not a UID");
    c.reply_uid = static_cast<uint32_t>(reply);
    return c;
}

} // namespace

Status Mailbox::thread(Draft& draft, const std::string& folder, uint32_t uid) {
    SION_TRY(std::string said,
             command(folder, "UID FETCH " + std::to_string(uid) + " (UID BODY.PEEK[HEADER])"));
    SION_TRY(auto parsed, imap::parse_untagged(said));
    std::vector<imap::Fetched> all = imap::fetched(parsed);
    const imap::Fetched* orig = find_uid(all, uid);
    if (orig == nullptr)
        return make_error(Exit::no_input, "no message of uid %u in '%s' to reply to", uid,
                          folder.c_str());
    Message m = read_message(orig->section);
    if (!m.message_id.empty()) {
        draft.in_reply_to = "<" + m.message_id + ">";
        draft.references = one_line(m.references + " " + draft.in_reply_to);
    }
    if (draft.subject.empty())
        draft.subject =
            ascii_lower(m.subject.substr(0, 3)) == "re:" ? m.subject : "Re: " + m.subject;
    if (draft.to.empty() && !(m.reply_to.empty() && m.from.empty()))
        draft.to.push_back(m.reply_to.empty() ? m.from : m.reply_to);
    return {};
}

Answer Mailbox::draft(JsonView arguments) {
    auto c = composed(arguments, false);
    if (!c)
        return fail("draft_mail: " + c.error().message());
    auto s = settings(true, false);
    if (!s)
        return fail(s.error().message());
    if (s->address.empty())
        return fail(not_set("MAIL_ADDRESS"));
    auto connected = imap(*s);
    if (!connected)
        return failed("cannot save the draft", connected.error());
    c->draft.from = s->address;
    if (c->reply_uid != 0) {
        Status threaded = thread(c->draft, c->reply_folder, c->reply_uid);
        if (!threaded)
            return threaded.error().exit() == Exit::no_input
                       ? fail("draft_mail: " + threaded.error().message())
                       : failed("cannot save the draft", threaded.error());
    }
    auto built = build_message(c->draft);
    if (!built)
        return fail("draft_mail: " + built.error().message());
    auto drafts = special_folder("\\Drafts", "Drafts");
    if (!drafts)
        return failed("cannot save the draft", drafts.error());
    auto said = m_imap->append(*drafts, built->bytes);
    if (!said) {
        m_imap.reset();
        return failed("cannot save the draft", said.error());
    }
    uint32_t uid = append_uid(imap::last_tagged(*said));
    if (uid == 0) {
        auto q = imap::quote("<" + built->message_id + ">");
        auto found = q ? command(*drafts, "UID SEARCH HEADER Message-ID " + *q)
                       : Result<std::string>(q.error());
        auto parsed = found ? imap::parse_untagged(*found)
                            : Result<std::vector<std::vector<imap::Item>>>(found.error());
        if (parsed) {
            auto uids = imap::search_uids(*parsed, 10);
            if (!uids.uids.empty())
                uid = uids.uids.back();
        }
    }
    std::string flagged;
    if (uid != 0) {
        auto stored =
            command(*drafts, "UID STORE " + std::to_string(uid) + " +FLAGS.SILENT (\\Draft)");
        if (!stored)
            flagged = " (not flagged \\Draft: " + stored.error().message() + ")";
    }
    std::string to;
    for (const auto& r : built->recipients)
        to += (to.empty() ? "" : ", ") + r;
    return {"draft saved in '" + *drafts + "'" + (uid != 0 ? " as uid " + std::to_string(uid) : "")
            + flagged + ", to " + (to.empty() ? "no one yet" : to) + ": " + c->draft.subject
            + (c->draft.in_reply_to.empty() ? "" : " (a reply to " + c->draft.in_reply_to + ")")};
}

Answer Mailbox::send(JsonView arguments) {
    auto c = composed(arguments, true);
    if (!c)
        return fail("send_mail: " + c.error().message());
    auto s = settings(false, true);
    if (!s)
        return fail(s.error().message());
    c->draft.from = s->address;
    if (c->reply_uid != 0) {
        if (s->imap_url.empty())
            return fail(not_set("MAIL_IMAP_URL"));
        auto connected = imap(*s);
        if (!connected)
            return failed("cannot send the message", connected.error());
        Status threaded = thread(c->draft, c->reply_folder, c->reply_uid);
        if (!threaded)
            return threaded.error().exit() == Exit::no_input
                       ? fail("send_mail: " + threaded.error().message())
                       : failed("cannot send the message", threaded.error());
    }
    auto built = build_message(c->draft);
    if (!built)
        return fail("send_mail: " + built.error().message());
    if (built->recipients.empty())
        return fail("send_mail: give at least one recipient: to, cc or bcc");
    auto smtp_account = account(*s, s->smtp_url);
    if (!smtp_account)
        return failed("cannot send the message", smtp_account.error(), true);
    Status sent =
        mail::smtp_send(*smtp_account, address_of(s->address), built->recipients, built->bytes);
    if (!sent)
        return failed("cannot send the message", sent.error(), true);
    std::string to;
    for (const auto& r : built->recipients)
        to += (to.empty() ? "" : ", ") + r;
    std::string done = "sent to " + to + " as <" + built->message_id + ">";
    // The copy: not where the server keeps its own (Gmail's X-GM-EXT-1), nor without IMAP.
    if (s->imap_url.empty())
        return {done + "; no copy kept: MAIL_IMAP_URL is not set"};
    auto connected = imap(*s);
    auto caps = connected ? capabilities() : Result<std::vector<std::string>>(connected.error());
    if (!caps)
        return {done + "; no copy kept in the sent folder: " + caps.error().message()};
    if (std::find(caps->begin(), caps->end(), "X-GM-EXT-1") != caps->end())
        return {done + "; the server keeps its own copy in its sent folder"};
    auto sent_folder = special_folder("\\Sent", "Sent");
    if (!sent_folder)
        return {done + "; no copy kept: " + sent_folder.error().message()};
    auto appended = m_imap->append(*sent_folder, built->bytes);
    if (!appended) {
        m_imap.reset();
        return {done + "; no copy kept in '" + *sent_folder + "': " + appended.error().message()};
    }
    return {done + "; a copy is in '" + *sent_folder + "'"};
}

} // namespace sion::mail_cmd
