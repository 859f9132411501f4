// SPDX-License-Identifier: MIT
// The sealed store of MCP authorizations: one JSON document in a SealedFile, read and written whole.
#include "mcpd/auth_store.hpp"

#include "lib/json.hpp"

#include <sys/stat.h>

#include <algorithm>
#include <cerrno>

namespace sion::mcpd {

namespace {

bool exists(const std::string& path) {
    struct stat st {};

    return ::lstat(path.c_str(), &st) == 0;
}

Error unreadable(const std::string& path, const std::string& why) {
    return make_error(Exit::data, "cannot read MCP authorizations '%s': %s", path.c_str(),
                      why.c_str());
}

// Both members are objects of objects; anything else is a store that was not written by us.
Result<Json> parse_document(std::string plaintext, const std::string& path) {
    if (plaintext.empty())
        return Json::parse(R"({"servers":{},"clients":{}})");
    auto doc = Json::parse(plaintext);
    wipe(plaintext);
    if (!doc)
        return unreadable(path, doc.error().message());
    if (!doc->view().is_object())
        return unreadable(path, "not a JSON object");
    for (const char* member : {"servers", "clients"}) {
        JsonView part = doc->get(member);
        if (!part.is_object())
            return unreadable(path, std::string("member '") + member + "' is not an object");
        for (JsonView entry : part)
            if (!entry.is_object())
                return unreadable(path, std::string("an entry of '") + member
                                            + "' is not an object");
    }
    return doc;
}

Result<SealedFile> sealed(const std::string& path, const std::string& key_path) {
    SION_TRY(SealingKey key, SealingKey::from_file(key_path));
    return SealedFile(path, std::move(key));
}

Result<Json> read_document(const std::string& path, const std::string& key_path) {
    if (key_path.empty()) {
        if (exists(path))
            return unreadable(path, "its key file secrets.key is missing");
        return parse_document({}, path);
    }
    SION_TRY(SealedFile file, sealed(path, key_path));
    auto plaintext = file.read();
    if (!plaintext)
        return unreadable(path, plaintext.error().message());
    return parse_document(std::move(*plaintext), path);
}

Status write_document(const std::string& path, const std::string& key_path, const Json& doc) {
    if (key_path.empty())
        return make_error(Exit::config, "MCP authorizations '%s' were opened read-only",
                          path.c_str());
    SION_TRY(SealedFile file, sealed(path, key_path));
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
        .set("unattended", a.unattended);
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
Result<bool> change(const std::string& path, const std::string& key_path, const char* part,
                    std::string_view key, Json value) {
    SION_TRY(Json doc, read_document(path, key_path));
    Json entries = doc.take(part);
    bool had = entries.get(key).exists();
    if (!value.exists() && !had)
        return false;
    (void)entries.take(key);
    if (value.exists())
        entries.set(key, std::move(value));
    doc.set(part, std::move(entries));
    SION_CHECK(write_document(path, key_path, doc));
    return had;
}

} // namespace

Result<AuthStore> AuthStore::open(const std::string& home, bool create) {
    std::string agents = home + "/agents";
    std::string key = agents + "/secrets.key";
    if (create) {
        if (::mkdir(agents.c_str(), 0700) != 0 && errno != EEXIST)
            return sys_error(Exit::os, errno, "cannot create directory '%s'", agents.c_str());
    } else if (!exists(key)) {
        key.clear();
    }
    return AuthStore(agents + "/mcp-auth.bin", std::move(key));
}

Result<std::optional<ServerAuth>> AuthStore::server(std::string_view name) const {
    SION_TRY(Json doc, read_document(m_path, m_key_path));
    JsonView entry = doc.get("servers").get(name);
    if (!entry.exists())
        return std::optional<ServerAuth>();
    return std::optional<ServerAuth>(server_of(entry));
}

Status AuthStore::put_server(std::string_view name, const ServerAuth& auth) const {
    SION_TRY(bool had, change(m_path, m_key_path, "servers", name, to_json(auth)));
    (void)had;
    return {};
}

Result<bool> AuthStore::forget_server(std::string_view name) const {
    return change(m_path, m_key_path, "servers", name, Json());
}

Result<std::vector<std::string>> AuthStore::servers_of(std::string_view issuer) const {
    SION_TRY(Json doc, read_document(m_path, m_key_path));
    std::vector<std::string> out;
    for (JsonView entry : doc.get("servers"))
        if (text_of(entry, "issuer") == issuer)
            out.emplace_back(entry.key());
    std::sort(out.begin(), out.end());
    return out;
}

Result<std::optional<ClientRecord>> AuthStore::client(std::string_view issuer) const {
    SION_TRY(Json doc, read_document(m_path, m_key_path));
    JsonView entry = doc.get("clients").get(issuer);
    if (!entry.exists())
        return std::optional<ClientRecord>();
    return std::optional<ClientRecord>(client_of(entry));
}

Status AuthStore::put_client(const ClientRecord& client) const {
    SION_TRY(bool had, change(m_path, m_key_path, "clients", client.issuer, to_json(client)));
    (void)had;
    return {};
}

Result<bool> AuthStore::forget_client(std::string_view issuer) const {
    return change(m_path, m_key_path, "clients", issuer, Json());
}

} // namespace sion::mcpd
