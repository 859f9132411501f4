// SPDX-License-Identifier: MIT
// sion-mail's messages (cmd/sion-mail/message.cpp, GMime): hostile input read without failing
// (truncated, a bad charset, nesting far past the bound, text past the limit), the parts chosen
// (plain text before HTML, HTML made text, attachments named and sized), and messages built with
// encoded words, UTF-8 text, threading, Bcc kept out and no Auto-Submitted.
#include "cmd/sion-mail/message.hpp"

#include <gtest/gtest.h>

#include <string>

namespace sion::mail_cmd {
namespace {

TEST(MailMessage, MultipartWithQuotedPrintableAndAttachment) {
    std::string raw =
        "From: =?UTF-8?B?SsO8cmdlbg==?= <j@example.org>\r\n"
        "To: a@example.org\r\nSubject: =?ISO-8859-1?Q?K=F6ln?=\r\n"
        "Message-ID: <m1@example.org>\r\nReferences: <r0@example.org>\r\n"
        "MIME-Version: 1.0\r\nContent-Type: multipart/mixed; boundary=b\r\n\r\n"
        "--b\r\nContent-Type: text/plain; charset=iso-8859-1\r\n"
        "Content-Transfer-Encoding: quoted-printable\r\n\r\nSch=F6n=\r\n!\r\n"
        "--b\r\nContent-Type: image/png\r\nContent-Disposition: attachment; "
        "filename*=UTF-8''gr%C3%BC%C3%9Fe.png\r\nContent-Transfer-Encoding: base64\r\n\r\n"
        "AAECAwQFBgc=\r\n--b--\r\n";
    Message m = read_message(raw);
    EXPECT_EQ(m.from, "Jürgen <j@example.org>");
    EXPECT_EQ(m.subject, "Köln");
    EXPECT_EQ(m.message_id, "m1@example.org");
    EXPECT_EQ(m.references, "<r0@example.org>");
    EXPECT_EQ(m.text, "Schön!");
    ASSERT_EQ(m.attachments.size(), 1U);
    EXPECT_EQ(m.attachments[0].name, "grüße.png");
    EXPECT_EQ(m.attachments[0].type, "image/png");
    EXPECT_EQ(m.attachments[0].size, 8U);
}

TEST(MailMessage, HtmlOnlyIsMadeText) {
    Message m = read_message("Subject: x\r\nContent-Type: text/html; charset=utf-8\r\n\r\n"
                             "<html><head><style>p{}</style><script>evil()</script></head><body>"
                             "<h1>Title</h1><p>Hello <b>there</b></p></body></html>\r\n");
    EXPECT_TRUE(m.html);
    EXPECT_EQ(m.text, "# Title\n\nHello there");
}

TEST(MailMessage, AlternativePrefersPlainText) {
    Message m = read_message("Content-Type: multipart/alternative; boundary=a\r\n\r\n--a\r\n"
                             "Content-Type: text/html\r\n\r\n<p>rich</p>\r\n--a\r\n"
                             "Content-Type: text/plain\r\n\r\nplain\r\n--a--\r\n");
    EXPECT_FALSE(m.html);
    EXPECT_EQ(m.text, "plain");
}

TEST(MailMessage, HostileInputIsReadAsFarAsItGoes) {
    // Truncated inside a part, and inside a header.
    Message cut = read_message("Subject: half\r\nContent-Type: multipart/mixed; boundary=b\r\n\r\n"
                               "--b\r\nContent-Type: text/plain\r\n\r\nthe start of");
    EXPECT_EQ(cut.subject, "half");
    EXPECT_NE(cut.text.find("the start of"), std::string::npos);
    (void)read_message("Subj");
    (void)read_message("");
    (void)read_message(std::string("\0\0\0\xff\xfe", 5));
    // A charset nobody knows: still UTF-8 out.
    Message odd = read_message("Subject: =?x-nonsense?Q?caf=E9?=\r\nContent-Type: text/plain; "
                               "charset=x-nonsense\r\n\r\ncaf\xe9\r\n");
    EXPECT_NE(odd.text.find("caf"), std::string::npos);
    for (unsigned char ch : odd.text + odd.subject)
        EXPECT_NE(ch, 0xe9);
    // Nesting far past the bound.
    std::string deep;
    for (int i = 0; i < 200; ++i)
        deep += "Content-Type: multipart/mixed; boundary=b" + std::to_string(i) + "\r\n\r\n--b"
                + std::to_string(i) + "\r\n";
    deep += "Content-Type: text/plain\r\n\r\nbottom\r\n";
    Message nested = read_message(deep);
    EXPECT_NE(nested.text.find("left out"), std::string::npos);
    // Text past the limit is cut at a character's boundary.
    std::string big = "Content-Type: text/plain; charset=utf-8\r\n\r\n";
    for (int i = 0; i < 10000; ++i)
        big += "ééééé";
    Limits small;
    small.text = 1001;
    Message long_one = read_message(big, small);
    EXPECT_TRUE(long_one.cut);
    EXPECT_EQ(long_one.text.size(), 1000U);
    // Too many attachments are counted, not listed.
    std::string many = "Content-Type: multipart/mixed; boundary=b\r\n\r\n";
    for (int i = 0; i < 150; ++i)
        many += "--b\r\nContent-Type: application/octet-stream\r\nContent-Disposition: attachment; "
                "filename=f"
                + std::to_string(i) + "\r\n\r\nx\r\n";
    many += "--b--\r\n";
    Message lots = read_message(many);
    EXPECT_EQ(lots.attachments.size(), 100U);
    EXPECT_EQ(lots.attachments_more, 50U);
}

TEST(MailMessage, BuiltWithEncodedWordsDateIdAndThreading) {
    Draft d;
    d.from = "alice@example.org";
    d.to = {"Bob Müller <bob@example.org>"};
    d.cc = {"carol@example.net"};
    d.bcc = {"secret@example.net"};
    d.subject = "Grüße aus Köln";
    d.text = "Hallo — schön.\nZwei";
    d.in_reply_to = "<orig@example.org>";
    d.references = "<a@example.org> <orig@example.org>";
    auto built = build_message(d);
    ASSERT_TRUE(built) << built.error().message();
    const std::string& b = built->bytes;
    EXPECT_EQ(built->recipients, (std::vector<std::string>{"bob@example.org", "carol@example.net",
                                                           "secret@example.net"}));
    EXPECT_LT(b.find("Date: "), b.find("\r\n\r\n"));
    EXPECT_NE(b.find("Message-Id: <" + built->message_id + ">"), std::string::npos);
    EXPECT_NE(b.find("In-Reply-To: <orig@example.org>\r\n"), std::string::npos);
    EXPECT_EQ(b.find("secret@"), std::string::npos);
    EXPECT_EQ(b.find("Auto-Submitted"), std::string::npos);
    EXPECT_EQ(b.find("Grüße"), std::string::npos); // encoded, not raw 8-bit
    for (size_t at = b.find('\n'); at != std::string::npos; at = b.find('\n', at + 1))
        EXPECT_EQ(b[at - 1], '\r');
    Message back = read_message(b);
    EXPECT_EQ(back.subject, "Grüße aus Köln");
    EXPECT_EQ(back.to, "Bob Müller <bob@example.org>");
    EXPECT_EQ(back.text, "Hallo — schön.\nZwei\n");
}

TEST(MailMessage, BadAddressesAndHeadersAreRefused) {
    Draft d;
    d.from = "alice@example.org";
    d.to = {"not an address"};
    EXPECT_EQ(build_message(d).error().message(), "'not an address' is not a mail address");
    d.to = {"bob@example.org\r\nBcc: x@y"};
    EXPECT_FALSE(build_message(d));
    d.to = {"bob@example.org"};
    d.subject = "x\r\nBcc: evil@example.org";
    EXPECT_FALSE(build_message(d));
    d.subject = "ok";
    d.text = "\xff\xfe";
    EXPECT_FALSE(build_message(d));
    EXPECT_EQ(address_of("Bob <bob@example.org>"), "bob@example.org");
    EXPECT_EQ(address_of("a@b, c@d"), "");
    EXPECT_EQ(address_of("nobody"), "");
}

} // namespace
} // namespace sion::mail_cmd
