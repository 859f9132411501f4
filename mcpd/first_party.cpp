// SPDX-License-Identifier: MIT
// sion's own servers: their settings, and the hosts they reach.
#include "mcpd/first_party.hpp"

#include "lib/address.hpp"
#include "lib/secrets.hpp"
#include "lib/text.hpp"

#include <algorithm>
#include <array>

namespace sion::mcpd {

namespace {

const std::array<FirstParty, 3>& servers() {
    static const std::array<FirstParty, 3> table = {{
        {"documents", "sion-documents", {}, {}, {}, {}, false},
        {"mail",
         "sion-mail",
         {"MAIL_ADDRESS", "MAIL_USERNAME", "MAIL_IMAP_URL", "MAIL_SMTP_URL", "MAIL_PASSWORD",
          "MAIL_TOKEN_COMMAND", "SSL_CERT_FILE"},
         {"MAIL_IMAP_URL", "MAIL_SMTP_URL"},
         {"imap", "imaps", "smtp", "smtps"},
         {"MAIL_PASSWORD"},
         true},
        {"calendar",
         "sion-calendar",
         {"CALDAV_URL", "CALDAV_USERNAME", "CALDAV_PASSWORD", "CALDAV_TOKEN_COMMAND",
          "SSL_CERT_FILE"},
         {"CALDAV_URL"},
         {"http", "https"},
         {"CALDAV_PASSWORD"},
         true},
    }};
    return table;
}

} // namespace

const FirstParty* first_party(std::string_view kind) {
    for (const FirstParty& s : servers())
        if (s.kind == kind)
            return &s;
    return nullptr;
}

bool data_from_outside(std::string_view kind) {
    const FirstParty* own = first_party(kind);
    return own != nullptr && own->from_outside;
}

std::string first_party_kinds() {
    std::string out;
    const auto& all = servers();
    for (size_t i = 0; i < all.size(); ++i)
        out += (i == 0 ? "" : i + 1 == all.size() ? " or " : ", ") + std::string(all[i].kind);
    return out;
}

Result<std::vector<std::pair<std::string, std::string>>>
first_party_settings(const FirstParty& server) {
    std::vector<std::pair<std::string, std::string>> out;
    for (std::string_view name : server.settings) {
        SION_TRY(std::optional<std::string> value, secrets::lookup(name));
        if (value)
            out.emplace_back(std::string(name), std::move(*value));
    }
    return out;
}

std::vector<std::string>
first_party_hosts(const FirstParty& server,
                  const std::vector<std::pair<std::string, std::string>>& settings) {
    std::vector<std::string> hosts;
    for (const auto& [name, value] : settings) {
        if (std::find(server.url_settings.begin(), server.url_settings.end(), name)
            == server.url_settings.end())
            continue;
        auto d = split_url(value, server.schemes);
        if (!d)
            continue;
        std::string host = ascii_lower(d->host);
        if (host.find(':') != std::string::npos)
            host = "[" + host + "]";
        host += ":" + std::to_string(d->port);
        if (std::find(hosts.begin(), hosts.end(), host) == hosts.end())
            hosts.push_back(std::move(host));
    }
    return hosts;
}

} // namespace sion::mcpd
