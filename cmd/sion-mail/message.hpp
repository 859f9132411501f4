// SPDX-License-Identifier: MIT
// Mail messages read and made with GMime (never by hand): a message's headers decoded (encoded
// words, charsets), its text (text/plain preferred, HTML made text by lib/web's renderer), its
// attachments named; and a new message built with its headers encoded as RFC 2047 says, its text
// as UTF-8 in quoted-printable or base64 as GMime judges best, CRLF line ends.
//
// Contract: nothing here does I/O, throws or prints. Hostile input (truncated, bad charsets,
// nesting deeper than k_depth_max parts) gives what can be read and never fails; the text given is
// at most Limits::text bytes (cut at a UTF-8 boundary, `cut` set), and at most
// Limits::attachments attachments are named. Threads: mime_init() once, then any thread.
#pragma once

#include "lib/result.hpp"

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace sion::mail_cmd {

inline constexpr size_t k_depth_max = 32;

void mime_init();

struct Attachment {
    std::string name;  // the file name, decoded; "" when it has none
    std::string type;  // "application/pdf"
    uint64_t size = 0; // decoded bytes
};

struct Message {
    std::string from, to, cc, reply_to, date, subject, message_id, references;
    std::string text;
    bool cut = false;  // the text was longer than the limit
    bool html = false; // the text was made from HTML
    std::vector<Attachment> attachments;
    size_t attachments_more = 0;
};

struct Limits {
    size_t text = size_t{100} << 10;
    size_t attachments = 100;
};

// The message in `bytes` (a whole message, or its header block alone).
[[nodiscard]] Message read_message(std::string_view bytes, Limits limits = {});

// A header value decoded from RFC 2047 encoded words to UTF-8, on one line.
[[nodiscard]] std::string decode_header(std::string_view raw);

struct Draft {
    std::string from; // "alice@example.org" or "Alice <alice@example.org>"
    std::vector<std::string> to, cc, bcc;
    std::string subject;     // UTF-8
    std::string text;        // UTF-8
    std::string in_reply_to; // "<id@host>" or ""
    std::string references;  // "<a@b> <c@d>" or ""
};

struct Built {
    std::string bytes;                   // the message, CRLF line ends
    std::string message_id;              // without angle brackets
    std::vector<std::string> recipients; // addresses of to, cc and bcc, for SMTP
};

// Builds the message with Date and Message-ID set (no Bcc header, no Auto-Submitted). Exit::usage
// when an address cannot be read or there is no recipient.
[[nodiscard]] Result<Built> build_message(const Draft& draft);

// The address part of `mailbox` ("Alice <a@b>" → "a@b"); "" when it is not one.
[[nodiscard]] std::string address_of(std::string_view mailbox);

} // namespace sion::mail_cmd
