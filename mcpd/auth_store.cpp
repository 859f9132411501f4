// SPDX-License-Identifier: MIT
// The sealed store of MCP authorizations: one JSON document in a SealedFile, read and written whole.
#include "mcpd/auth_store.hpp"

#include "lib/json.hpp"
#include "lib/secret_bytes.hpp"

#include <algorithm>

namespace sion::mcpd {

namespace {

// Both members are objects of objects; anything else is a store that was not written by us.
Result<Json> parse_document(std::string plaintext, const secrets::SealedDocument& file) {
    if (plaintext.empty())
        return Json::parse(R"({"servers":{},"clients":{}})");
    auto doc = Json::parse(plaintext);
    wipe(plaintext);
    if (!doc)
        return file.unreadable(doc.error().message());
    if (!doc->view().is_object())
        return file.unreadable("not a JSON object");
    for (const char* member : {"servers", "clients"}) {
        JsonView part = doc->get(member);
        if (!part.is_object())
            return file.unreadable(std::string("member '") + member + "' is not an object");
        for (JsonView entry : part)
            if (!entry.is_object())
                return file.unreadable(std::string("an entry of '") + member
                                       + "' is not an object");
    }
    return doc;
}

Result<Json> read_document(const secrets::SealedDocument& file) {
    SION_TRY(std::string plaintext, file.read());
    return parse_document(std::move(plaintext), file);
}

Status write_document(const secrets::SealedDocument& file, const Json& doc) {
    std::string text = doc.dump();
    Status written = file.write(text);
    wipe(text);
    return written;
}

std::string text_of(JsonView entry, std::string_view key) {
    return std::string(entry.string_or(key, "").value_or(std::string_view()));
}

Json to_json(const ServerAuth& a) {
    Json out = Json::object();
    out.set("server_url", a.server_url)
        .set("resource", a.resource)
        .set("issuer", a.issuer)
        .set("token_endpoint", a.token_endpoint)
        .set("revocation_endpoint", a.revocation_endpoint)
        .set("client_id", a.client_id)
        .set("auth_method", a.auth_method)
        .set("secret_env", a.secret_env)
        .set("access_token", a.access_token)
        .set("refresh_token", a.refresh_token)
        .set("scope", a.scope)
        .set("expires_at", a.expires_at)
        .set("unattended", a.unattended)
        .set("workload_token_file", a.workload_token_file)
        .set("dpop_key", a.dpop_key)
        .set("dpop", a.dpop);
    return out;
}

ServerAuth server_of(JsonView e) {
    ServerAuth a;
    a.server_url = text_of(e, "server_url");
    a.resource = text_of(e, "resource");
    a.issuer = text_of(e, "issuer");
    a.token_endpoint = text_of(e, "token_endpoint");
    a.revocation_endpoint = text_of(e, "revocation_endpoint");
    a.client_id = text_of(e, "client_id");
    a.auth_method = text_of(e, "auth_method");
    a.secret_env = text_of(e, "secret_env");
    a.access_token = text_of(e, "access_token");
    a.refresh_token = text_of(e, "refresh_token");
    a.scope = text_of(e, "scope");
    a.expires_at = e.integer_or("expires_at", 0).value_or(0);
    a.unattended = e.boolean_or("unattended", false).value_or(false);
    a.workload_token_file = text_of(e, "workload_token_file");
    a.dpop_key = text_of(e, "dpop_key");
    a.dpop = e.boolean_or("dpop", false).value_or(false);
    return a;
}

Json to_json(const ClientRecord& c) {
    Json out = Json::object();
    out.set("issuer", c.issuer)
        .set("client_id", c.client_id)
        .set("client_secret", c.client_secret)
        .set("auth_method", c.auth_method)
        .set("redirect_uri", c.redirect_uri)
        .set("kind", c.kind);
    return out;
}

ClientRecord client_of(JsonView e) {
    ClientRecord c;
    c.issuer = text_of(e, "issuer");
    c.client_id = text_of(e, "client_id");
    c.client_secret = text_of(e, "client_secret");
    c.auth_method = text_of(e, "auth_method");
    c.redirect_uri = text_of(e, "redirect_uri");
    c.kind = text_of(e, "kind");
    return c;
}

// Replaces (or, with an empty value, removes) one entry of `part` and writes the document.
Result<bool> change(const secrets::SealedDocument& file, const char* part, std::string_view key,
                    Json value) {
    SION_TRY(Json doc, read_document(file));
    Json entries = doc.take(part);
    bool had = entries.get(key).exists();
    if (!value.exists() && !had)
        return false;
    (void)entries.take(key);
    if (value.exists())
        entries.set(key, std::move(value));
    doc.set(part, std::move(entries));
    SION_CHECK(write_document(file, doc));
    return had;
}

} // namespace

Result<AuthStore> AuthStore::open(const std::string& home, bool create) {
    SION_TRY(secrets::SealedDocument file,
             secrets::SealedDocument::open(home, "mcp-auth.bin", k_what, create));
    return AuthStore(std::move(file));
}

Result<std::optional<ServerAuth>> AuthStore::server(std::string_view name) const {
    SION_TRY(Json doc, read_document(m_file));
    JsonView entry = doc.get("servers").get(name);
    if (!entry.exists())
        return std::optional<ServerAuth>();
    return std::optional<ServerAuth>(server_of(entry));
}

Status AuthStore::put_server(std::string_view name, const ServerAuth& auth) const {
    SION_TRY(bool had, change(m_file, "servers", name, to_json(auth)));
    (void)had;
    return {};
}

Result<bool> AuthStore::forget_server(std::string_view name) const {
    return change(m_file, "servers", name, Json());
}

Result<std::vector<std::string>> AuthStore::servers_of(std::string_view issuer) const {
    SION_TRY(Json doc, read_document(m_file));
    std::vector<std::string> out;
    for (JsonView entry : doc.get("servers"))
        if (text_of(entry, "issuer") == issuer)
            out.emplace_back(entry.key());
    std::sort(out.begin(), out.end());
    return out;
}

Result<std::optional<ClientRecord>> AuthStore::client(std::string_view issuer) const {
    SION_TRY(Json doc, read_document(m_file));
    JsonView entry = doc.get("clients").get(issuer);
    if (!entry.exists())
        return std::optional<ClientRecord>();
    return std::optional<ClientRecord>(client_of(entry));
}

Status AuthStore::put_client(const ClientRecord& client) const {
    SION_TRY(bool had, change(m_file, "clients", client.issuer, to_json(client)));
    (void)had;
    return {};
}

Result<bool> AuthStore::forget_client(std::string_view issuer) const {
    return change(m_file, "clients", issuer, Json());
}

} // namespace sion::mcpd
