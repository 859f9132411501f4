// SPDX-License-Identifier: MIT
// IMAP and SMTP over libcurl for sion-mail: a connection to an IMAP server kept between commands,
// and SMTP submission of one message. What the commands say and what the answers mean is
// lib/imap.hpp's and the caller's; this is the transport.
//
// Security: imaps:// and smtps:// are TLS from the first byte. imap:// and smtp:// must upgrade
// with STARTTLS (CURLUSESSL_ALL), except to a host of this machine (localhost, 127.0.0.0/8, ::1),
// where STARTTLS is used when the server offers it and the connection stays plain when it does not.
// Peers are always verified, against the CA bundle SSL_CERT_FILE names when it is set, else
// libcurl's default. A proxy is used only as all_proxy (else ALL_PROXY) names one, exempting what
// no_proxy (else NO_PROXY) lists, and is tunnelled through (HTTP CONNECT). Credentials are a
// password or an OAuth 2.0 bearer token (XOAUTH2 or OAUTHBEARER, as the server offers) and never
// appear in messages; neither do a URL's user info, query or fragment.
//
// Errors, each one line naming the server: Exit::no_perm when it refuses the credentials,
// Exit::unavailable when it cannot be reached or TLS fails, Exit::timeout when it does not answer
// in time, Exit::data when it refuses a command (its own words quoted) or answers more than the
// limit, Exit::unavailable naming libcurl's package when libcurl cannot be loaded.
//
// Threads: an Imap is used by one thread at a time.
#pragma once

#include "lib/http.hpp"
#include "lib/result.hpp"

#include <chrono>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace sion::mail {

struct Account {
    std::string url; // imap://, imaps://, smtp:// or smtps://, host and port, no path
    std::string username;
    std::string password; // either this
    std::string bearer;   // or an OAuth 2.0 token
};

struct Limits {
    std::chrono::milliseconds connect{15000};
    std::chrono::milliseconds total{60000};
    size_t response_max = size_t{64} << 20; // bytes of a command's answer kept, at most
};

// `url` as messages show it: no user info, path, query or fragment.
[[nodiscard]] std::string shown_url(std::string_view url);

// Whether `url`'s host is this machine (localhost, 127.0.0.0/8, ::1).
[[nodiscard]] bool on_loopback(std::string_view url);

class Imap {
public:
    [[nodiscard]] static Result<Imap> open(Account account, Limits limits = {});

    // Runs `request` ("UID SEARCH ALL") with `mailbox` selected first ("" for none; UTF-8 or
    // modified UTF-7 as the server names it): everything the server said for it, untagged
    // responses and the tagged line, as lib/imap.hpp reads them.
    [[nodiscard]] Result<std::string> command(std::string_view mailbox, std::string_view request);

    // The message `uid` of `mailbox`, its first `max` bytes at most (with curl's own FETCH,
    // which reads literals as they come; it marks the message \Seen as FETCH BODY[] does).
    [[nodiscard]] Result<std::string> fetch(std::string_view mailbox, uint32_t uid, size_t max);

    // Appends `message` (CRLF lines) to `mailbox`: what the server said (APPENDUID).
    [[nodiscard]] Result<std::string> append(std::string_view mailbox, std::string_view message);

    [[nodiscard]] const Account& account() const { return m_account; }

private:
    Imap(CurlEasy easy, Account account, Limits limits)
        : m_easy(std::move(easy)), m_account(std::move(account)), m_limits(limits) {}

    CurlEasy m_easy;
    Account m_account;
    Limits m_limits;
};

// Submits `message` (CRLF lines, headers included) from `from` to `recipients` through the SMTP
// server of `account`.
[[nodiscard]] Status smtp_send(const Account& account, std::string_view from,
                               const std::vector<std::string>& recipients, std::string_view message,
                               Limits limits = {});

} // namespace sion::mail
