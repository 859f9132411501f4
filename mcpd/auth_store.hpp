// SPDX-License-Identifier: MIT
// The MCP servers' authorizations, sealed on this machine: $SION_HOME/agents/mcp-auth.bin, one
// JSON document sealed (SealedFile, AES-256-GCM) under the secrets' key file, agents/secrets.key:
//   {"servers":{"notes":{ServerAuth}},"clients":{"https://as.example":{ClientRecord}}}
// Tokens are kept per server name; a client registration per issuer, for later logins.
//
// Every call reads the whole file, and every change writes it whole and atomically (SealedFile):
// the other entries are kept as they were. A file that fails to open (changed, sealed under
// another key, not such a document) is Exit::data naming the file, and is never written over.
// Writers are not serialised with one another: the last one to finish wins.
//
// Secrets read from the store are the caller's to wipe() when done; none appears in a message.
#pragma once

#include "lib/result.hpp"
#include "lib/secrets.hpp"

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace sion::mcpd {

// A client of one authorization server.
struct ClientRecord {
    std::string issuer;
    std::string client_id;
    std::string client_secret; // what a dynamic registration issued; "" for none
    // "none", "client_secret_basic", "client_secret_post" or "private_key_jwt".
    std::string auth_method = "none";
    std::string redirect_uri; // the one registered (dynamic registrations)
    // "registered" (dynamic, kept for later logins), "configured" (--client-id) or "metadata"
    // (a client ID metadata document's URL).
    std::string kind = "registered";
};

// One server's authorization.
struct ServerAuth {
    std::string server_url;
    std::string resource;
    std::string issuer;
    std::string token_endpoint;
    std::string revocation_endpoint;
    std::string client_id;
    std::string auth_method = "none";
    // The variable holding the client's secret or private key (--client-secret-env): it stays
    // there, and renewals read it where they run.
    std::string secret_env;
    std::string access_token;
    std::string refresh_token;
    std::string scope;
    int64_t expires_at = 0; // seconds since the epoch; 0: unknown
    bool unattended = false; // the client credentials grant, or the workload's identity
    // --workload-token-file: renewals are the jwt-bearer grant again, with the file read then.
    std::string workload_token_file;
    // The login's DPoP key (PEM, P-256; a secret), kept as long as its tokens: a DPoP-bound
    // refresh token is of no use without it. "" where the server offered no DPoP.
    std::string dpop_key;
    bool dpop = false; // the access token is bound to dpop_key (token_type DPoP)
};

class AuthStore {
public:
    // The store of `home`, making agents/ and the key file when `create` is set. Without it, a
    // home with no key file is an empty store that cannot be written (Exit::config).
    [[nodiscard]] static Result<AuthStore> open(const std::string& home, bool create);
    // A store at `path` sealed under the key file at `key_path` (tests).
    AuthStore(std::string path, std::string key_path)
        : m_file(std::move(path), std::move(key_path), k_what) {}

    [[nodiscard]] const std::string& path() const { return m_file.path(); }

    [[nodiscard]] Result<std::optional<ServerAuth>> server(std::string_view name) const;
    [[nodiscard]] Status put_server(std::string_view name, const ServerAuth& auth) const;
    // False when it held none.
    [[nodiscard]] Result<bool> forget_server(std::string_view name) const;
    // The names of the servers whose authorization is from `issuer`, sorted.
    [[nodiscard]] Result<std::vector<std::string>> servers_of(std::string_view issuer) const;

    [[nodiscard]] Result<std::optional<ClientRecord>> client(std::string_view issuer) const;
    [[nodiscard]] Status put_client(const ClientRecord& client) const;
    [[nodiscard]] Result<bool> forget_client(std::string_view issuer) const;

private:
    static constexpr const char* k_what = "MCP authorizations";

    explicit AuthStore(secrets::SealedDocument file) : m_file(std::move(file)) {}

    secrets::SealedDocument m_file; // agents/mcp-auth.bin
};

} // namespace sion::mcpd
