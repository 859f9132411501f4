// SPDX-License-Identifier: MIT
// lib/imap: responses read (LIST, STATUS, SEARCH, ESEARCH, FETCH with literals, hostile ones each
// an error or nothing, never a crash), and commands made from a user's text with nothing of it able
// to end the command (quotes, backslashes, CR, LF, NUL, a literal's braces).
#include "lib/imap.hpp"

#include <gtest/gtest.h>

#include <string>

namespace sion::imap {
namespace {

std::vector<std::vector<Item>> parsed(std::string_view raw) {
    auto r = parse_untagged(raw);
    EXPECT_TRUE(r) << (r ? "" : r.error().message());
    return r ? *r : std::vector<std::vector<Item>>{};
}

TEST(MailImap, ListGivesFoldersWithSpecialUseAndDecodedNames) {
    auto r = parsed("* LIST (\\HasNoChildren \\Drafts) \"/\" Drafts\r\n"
                    "* LIST (\\HasNoChildren) \"/\" \"Gr&APw-&AN8-e\"\r\n"
                    "* LIST (\\Noselect \\HasChildren) \"/\" {7}\r\nArchiv)\r\n"
                    "* LIST (\\HasNoChildren) \"/\" inbox\r\n"
                    "A003 OK List completed.\r\n");
    auto f = folders(r);
    ASSERT_EQ(f.size(), 4U);
    EXPECT_EQ(f[0].name, "Drafts");
    EXPECT_EQ(f[0].special, "\\Drafts");
    EXPECT_EQ(f[1].name, "Gr&APw-&AN8-e");
    EXPECT_EQ(f[1].shown, "Grüße");
    EXPECT_EQ(f[2].name, "Archiv)");
    EXPECT_FALSE(f[2].selectable);
    EXPECT_EQ(f[3].name, "INBOX");
}

TEST(MailImap, StatusCounts) {
    auto s = statuses(parsed("* STATUS INBOX (MESSAGES 12 UNSEEN 3)\r\n"
                             "* STATUS \"Sent\" (UNSEEN 0 MESSAGES 4)\r\n"));
    ASSERT_EQ(s.size(), 2U);
    EXPECT_EQ(*s[0].messages, 12U);
    EXPECT_EQ(*s[0].unseen, 3U);
    EXPECT_EQ(s[1].mailbox, "Sent");
    EXPECT_EQ(*s[1].messages, 4U);
}

TEST(MailImap, SearchAndEsearchUidsAscendingNewestKept) {
    auto plain = search_uids(parsed("* SEARCH 5 3 9 3\r\nA1 OK done\r\n"), 10);
    EXPECT_EQ(plain.uids, (std::vector<uint32_t>{3, 5, 9}));
    EXPECT_FALSE(plain.more);
    auto e = search_uids(parsed("* ESEARCH (TAG \"A5\") UID ALL 1:3,7,10:9\r\n"), 10);
    EXPECT_EQ(e.uids, (std::vector<uint32_t>{1, 2, 3, 7, 9, 10}));
    auto cut = search_uids(parsed("* ESEARCH (TAG \"A5\") UID ALL 1:100\r\n"), 5);
    EXPECT_TRUE(cut.more);
    EXPECT_EQ(cut.uids.size(), 5U);
    auto none = search_uids(parsed("* SEARCH\r\n"), 5);
    EXPECT_TRUE(none.uids.empty());
    // A range too large to hold is cut at the bound, not expanded.
    auto huge = search_uids(parsed("* ESEARCH UID ALL 1:4294967295\r\n"), 1000);
    EXPECT_TRUE(huge.more);
}

TEST(MailImap, FetchReadsLiteralsWhateverTheyHold) {
    std::string header = "Subject: a ) ( \" { } line\r\n* 9 FETCH (UID 99)\r\n\r\n";
    std::string raw = "* 1 FETCH (UID 7 FLAGS (\\Seen $Junk) INTERNALDATE \"07-Dec-2026 10:00:00 "
                      "+0000\" RFC822.SIZE 1234 BODY[HEADER.FIELDS (DATE FROM SUBJECT)] {"
                      + std::to_string(header.size()) + "}\r\n" + header + ")\r\n"
                      + "* 2 FETCH (UID 8 FLAGS () BODY[HEADER] NIL)\r\nA4 OK Fetch completed.\r\n";
    auto all = fetched(parsed(raw));
    ASSERT_EQ(all.size(), 2U);
    EXPECT_EQ(all[0].uid, 7U);
    EXPECT_TRUE(all[0].has_flag("\\seen"));
    EXPECT_EQ(all[0].internal_date, "07-Dec-2026 10:00:00 +0000");
    EXPECT_EQ(*all[0].size, 1234U);
    EXPECT_EQ(all[0].section, header);
    EXPECT_EQ(all[1].uid, 8U);
    EXPECT_EQ(all[1].section, "");
}

TEST(MailImap, HostileResponsesAreErrorsOrNothing) {
    EXPECT_FALSE(parse_untagged("* LIST (\\A \"/\" x\r\n")); // a list never closed
    EXPECT_FALSE(parse_untagged("* LIST )\r\n"));            // closed, never opened
    EXPECT_FALSE(parse_untagged("* X \"never closed\r\n"));
    EXPECT_FALSE(parse_untagged("* X {12x}\r\nabc\r\n"));
    EXPECT_FALSE(parse_untagged("* X {99999999999999999999999}\r\n"));
    EXPECT_FALSE(parse_untagged(std::string(5000, '(').insert(0, "* X ")));
    // A literal longer than what is there is cut to what is there.
    auto cut = parse_untagged("* 1 FETCH (UID 1 BODY[] {100}\r\nshort");
    EXPECT_FALSE(cut);
    EXPECT_TRUE(parse_untagged("A1 OK fine\r\n+ go on\r\nnot imap at all\r\n"));
    EXPECT_TRUE(folders(parsed("* LIST\r\n* LIST () \r\n* FETCH\r\n")).empty());
    EXPECT_TRUE(fetched(parsed("* 1 FETCH (UID)\r\n* 1 FETCH (UID 99999999999)\r\n")).empty());
}

TEST(MailImap, TaggedLinesAndCapabilities) {
    std::string raw = "* OK [CAPABILITY IMAP4rev1 LITERAL+ AUTH=PLAIN] ready\r\n"
                      "A1 OK [CAPABILITY IMAP4rev1 ESEARCH special-use] Logged in\r\n"
                      "A2 NO [TRYCREATE] Mailbox doesn't exist: Nowhere\r\n";
    EXPECT_EQ(last_tagged(raw), "A2 NO [TRYCREATE] Mailbox doesn't exist: Nowhere");
    EXPECT_EQ(capabilities(raw), (std::vector<std::string>{"IMAP4REV1", "ESEARCH", "SPECIAL-USE"}));
    EXPECT_EQ(capabilities("* CAPABILITY IMAP4rev1 X-GM-EXT-1\r\n"),
              (std::vector<std::string>{"IMAP4REV1", "X-GM-EXT-1"}));
}

TEST(MailImap, QuotingLetsNothingOutOfTheString) {
    EXPECT_EQ(*quote("plain"), "\"plain\"");
    EXPECT_EQ(*quote("a \"b\" \\ c"), "\"a \\\"b\\\" \\\\ c\"");
    EXPECT_EQ(*quote("{5}"), "\"{5}\"");
    EXPECT_EQ(*quote("Grüße"), "\"Grüße\"");
    for (std::string bad : {std::string("x\r\nA1 LOGOUT"), std::string("x\nA1"),
                            std::string("a\0b", 3), std::string("\r")}) {
        auto q = quote(bad);
        ASSERT_FALSE(q);
        EXPECT_EQ(q.error().message(), "search text cannot hold a line break or a NUL");
    }
}

TEST(MailImap, SearchCommands) {
    EXPECT_EQ(*search_command({}, false), "UID SEARCH ALL");
    EXPECT_EQ(*search_command({}, true), "UID SEARCH RETURN (ALL) ALL");
    Criteria c;
    c.from = "bob";
    c.subject = "Köln \"x\"";
    c.since = "2026-12-07";
    c.before = "2027-01-01";
    c.unseen = true;
    EXPECT_EQ(*search_command(c, true),
              "UID SEARCH RETURN (ALL) CHARSET UTF-8 FROM \"bob\" SUBJECT \"Köln \\\"x\\\"\" "
              "SINCE 7-Dec-2026 BEFORE 1-Jan-2027 UNSEEN");
    Criteria bad;
    bad.text = "x\r\nA9 DELETE INBOX";
    EXPECT_FALSE(search_command(bad, false));
    Criteria date;
    date.since = "2026-13-01";
    EXPECT_EQ(search_command(date, false).error().message(),
              "'2026-13-01' is not a date: give YYYY-MM-DD");
    date.since = "7 Dec 2026";
    EXPECT_FALSE(search_command(date, false));
}

TEST(MailImap, SequenceSets) {
    EXPECT_EQ(sequence_set({9, 1, 2, 3, 7}), "1:3,7,9");
    EXPECT_EQ(sequence_set({5}), "5");
    EXPECT_EQ(sequence_set({}), "");
}

TEST(MailImap, MailboxNamesRoundTrip) {
    for (std::string name : {"INBOX", "Grüße", "A&B", "日本語", "emoji 😀 box", "Entwürfe/Alt"}) {
        std::string encoded = encode_mailbox(name);
        for (char ch : encoded)
            EXPECT_LT(static_cast<unsigned char>(ch), 0x80U) << name;
        EXPECT_EQ(decode_mailbox(encoded), name);
    }
    EXPECT_EQ(encode_mailbox("A&B"), "A&-B");
    EXPECT_EQ(decode_mailbox("&Jjo-!"), "☺!");
    EXPECT_EQ(decode_mailbox("bad&***-"), "bad&***-"); // not modified UTF-7: as it is
    EXPECT_EQ(decode_mailbox("open&AAA"), "open&AAA");
}

} // namespace
} // namespace sion::imap
