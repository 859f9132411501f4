// SPDX-License-Identifier: MIT
// The sealed credential store: one JSON object in a SealedFile, read whole and written whole.
#include "lib/secrets.hpp"

#include "lib/home.hpp"
#include "lib/json.hpp"
#include "lib/seal.hpp"
#include "lib/secret_bytes.hpp"
#include "lib/utf8.hpp"

#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>

namespace sion::secrets {

namespace {

constexpr size_t k_max_name = 128;
constexpr size_t k_max_value = size_t{64} << 10;

bool exists(const std::string& path) {
    struct stat st {};

    return ::lstat(path.c_str(), &st) == 0;
}

} // namespace

bool valid_name(std::string_view name) {
    if (name.empty() || name.size() > k_max_name || (name[0] >= '0' && name[0] <= '9'))
        return false;
    return std::all_of(name.begin(), name.end(), [](char c) {
        return (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
    });
}

bool valid_value(std::string_view value) {
    return !value.empty() && value.size() <= k_max_value
           && value.find_first_of(std::string_view("\r\n\0", 3)) == std::string_view::npos
           && invalid_utf8_at(value) == std::string_view::npos;
}

Result<SealedDocument> SealedDocument::open(const std::string& home, std::string_view file,
                                            std::string what, bool create) {
    std::string agents = home + "/agents";
    std::string key = agents + "/secrets.key";
    if (create) {
        if (::mkdir(agents.c_str(), 0700) != 0 && errno != EEXIST)
            return sys_error(Exit::os, errno, "cannot create directory '%s'", agents.c_str());
    } else if (!exists(key)) {
        key.clear();
    }
    return SealedDocument(agents + "/" + std::string(file), std::move(key), std::move(what));
}

Error SealedDocument::unreadable(std::string_view why) const {
    return make_error(Exit::data, "cannot read %s '%s': %.*s", m_what.c_str(), m_path.c_str(),
                      static_cast<int>(why.size()), why.data());
}

Result<std::string> SealedDocument::read() const {
    if (m_key_path.empty() || !exists(m_key_path)) {
        if (exists(m_path))
            return unreadable("its key file secrets.key is missing");
        return std::string();
    }
    SION_TRY(SealingKey key, SealingKey::from_file(m_key_path));
    auto plaintext = SealedFile(m_path, std::move(key)).read();
    if (!plaintext)
        return unreadable(plaintext.error().message());
    return plaintext;
}

Status SealedDocument::write(std::string_view plaintext) const {
    if (m_key_path.empty())
        return make_error(Exit::config, "cannot write %s '%s': it was opened read-only",
                          m_what.c_str(), m_path.c_str());
    SION_TRY(SealingKey key, SealingKey::from_file(m_key_path));
    return SealedFile(m_path, std::move(key)).write(plaintext);
}

Result<bool> SealedDocument::remove() const {
    if (::unlink(m_path.c_str()) == 0)
        return true;
    if (errno == ENOENT)
        return false;
    return sys_error(Exit::os, errno, "cannot remove '%s'", m_path.c_str());
}

Result<Store> Store::open(const std::string& home, bool create) {
    SION_TRY(SealedDocument file,
             SealedDocument::open(home, "secrets.bin", "credentials", create));
    return Store(std::move(file));
}

namespace {

// The plaintext is wiped once parsed: only the tree holds the values from then on.
Result<Json> read_store(const SealedDocument& file) {
    SION_TRY(std::string plaintext, file.read());
    if (plaintext.empty())
        return Json::object();
    auto doc = Json::parse(plaintext);
    wipe(plaintext);
    if (!doc || !doc->view().is_object())
        return file.unreadable("not a JSON object");
    for (JsonView member : doc->view())
        if (!member.is_string())
            return file.unreadable("'" + std::string(member.key()) + "' is not a string");
    return doc;
}

Status write_store(const SealedDocument& file, const Json& store) {
    std::string text = store.dump();
    Status written = file.write(text);
    wipe(text);
    return written;
}

} // namespace

Result<std::vector<std::string>> Store::names() const {
    SION_TRY(Json store, read_store(m_file));
    std::vector<std::string> out;
    for (JsonView member : store.view())
        out.emplace_back(member.key());
    std::sort(out.begin(), out.end());
    return out;
}

Result<std::optional<std::string>> Store::get(std::string_view name) const {
    SION_TRY(Json store, read_store(m_file));
    auto value = store.view().string(name);
    if (!value)
        return std::optional<std::string>();
    return std::optional<std::string>(std::string(*value));
}

Status Store::set(std::string_view name, std::string_view value) const {
    if (!valid_name(name))
        return make_error(Exit::usage, "invalid credential name '%.*s': use A-Z, 0-9 and '_'",
                          static_cast<int>(name.size()), name.data());
    if (!valid_value(value))
        return make_error(Exit::usage, "invalid value for '%.*s': give one line of text",
                          static_cast<int>(name.size()), name.data());
    SION_TRY(Json store, read_store(m_file));
    store.set(name, value);
    return write_store(m_file, store);
}

Result<bool> Store::remove(std::string_view name) const {
    SION_TRY(Json store, read_store(m_file));
    if (!store.get(name).exists())
        return false;
    (void)store.take(name);
    SION_CHECK(write_store(m_file, store));
    return true;
}

Result<std::optional<std::string>> lookup(std::string_view name) {
    std::string key(name);
    const char* env = std::getenv(key.c_str());
    if (env != nullptr && *env != '\0')
        return std::optional<std::string>(env);
    SION_TRY(std::string home, resolve_home());
    if (!exists(home + "/agents/secrets.bin"))
        return std::optional<std::string>();
    SION_TRY(Store store, Store::open(home, false));
    return store.get(name);
}

std::vector<std::string> values_to_hide(const std::string& home) {
    std::vector<std::string> values;
    if (auto store = Store::open(home, false))
        if (auto names = store->names())
            for (const std::string& name : *names)
                if (auto value = store->get(name); value && *value)
                    values.push_back(**value);
    auto secret_name = [](std::string_view name) {
        for (std::string_view end : {"_KEY", "_TOKEN", "_SECRET", "_PASSWORD"})
            if (name.ends_with(end))
                return true;
        return name.find("_SECRET_") != std::string_view::npos;
    };
    for (char** e = environ; *e != nullptr; ++e) {
        std::string_view pair(*e);
        size_t eq = pair.find('=');
        if (eq != std::string_view::npos && eq + 1 < pair.size() && secret_name(pair.substr(0, eq)))
            values.emplace_back(pair.substr(eq + 1));
    }
    return values;
}

} // namespace sion::secrets
