// SPDX-License-Identifier: MIT
// Credentials kept sealed on this machine: $SION_HOME/agents/secrets.bin, a JSON object of
// NAME → value sealed (SealedFile, AES-256-GCM) under the key file $SION_HOME/agents/secrets.key.
// `sion agent credential add|list|remove` keeps them; lookup() is how providers, tools and servers
// find a variable's value: the environment's wins, else the sealed one.
//
// Names are those of environment variables: an uppercase letter or '_', then uppercase letters,
// digits and '_' ("ANTHROPIC_API_KEY"), at most 128 bytes. Values are one line of UTF-8 text, not
// empty, at most 64 KiB. Values never appear in messages.
//
// Errors: a name or value that is not one is Exit::usage; a store that fails to open (changed,
// sealed under another key, not a JSON object of strings) Exit::data, naming the file; a key file
// that is not safe Exit::no_perm (SealingKey's message); system calls Exit::os or Exit::io.
// Writers are not serialised with one another: the last one to finish wins, and the file is
// always either the old store or the new one.
//
// Threads: the environment is read with getenv; do not call these while another thread changes it.
#pragma once

#include "lib/result.hpp"

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace sion::secrets {

// Whether `name` may name a credential.
[[nodiscard]] bool valid_name(std::string_view name);
// Whether `value` may be one (a line of UTF-8 text, 1 byte to 64 KiB, no NUL, CR or LF).
[[nodiscard]] bool valid_value(std::string_view value);

// The value of `name`: the environment's when it is set and not empty, else the one sealed in the
// store of $SION_HOME, else none. A home or store that is not there is no value, not an error;
// nothing is created.
[[nodiscard]] Result<std::optional<std::string>> lookup(std::string_view name);

// The values a record that others read (a run's trace) must never hold: every credential kept
// in the store of `home`, and the values of the environment's variables named as secrets are
// named (ending in _KEY, _TOKEN, _SECRET or _PASSWORD, or holding _SECRET_: ANTHROPIC_API_KEY,
// GITHUB_TOKEN, AWS_SECRET_ACCESS_KEY). A store that cannot be opened adds none.
[[nodiscard]] std::vector<std::string> values_to_hide(const std::string& home);

// A file of $SION_HOME/agents sealed (SealedFile, AES-256-GCM) under the secrets' key file,
// agents/secrets.key: the credentials (secrets.bin, below), the MCP servers' authorizations
// (mcp-auth.bin) and the ChatGPT sign-in (chatgpt.bin) are each one. What read() gives is the
// caller's to check and to wipe(); a caller reads before it writes, so that a file that fails to
// open is never written over.
class SealedDocument {
public:
    // agents/`file` of `home`, called `what` in messages ("credentials"). With `create`, agents/
    // is made, and the key file at the first write; without it, a home with no key file has a
    // document that reads as empty (when the file is not there either) and cannot be written.
    [[nodiscard]] static Result<SealedDocument> open(const std::string& home, std::string_view file,
                                                     std::string what, bool create);
    // The file at `path` sealed under the key file at `key_path` ("" for none).
    SealedDocument(std::string path, std::string key_path, std::string what)
        : m_path(std::move(path)), m_key_path(std::move(key_path)), m_what(std::move(what)) {}

    [[nodiscard]] const std::string& path() const { return m_path; }

    // The plaintext; "" when the file is not there. One that fails to open (changed, cut short,
    // sealed under another key, its key file gone) is Exit::data: "cannot read WHAT 'PATH': why".
    [[nodiscard]] Result<std::string> read() const;
    // Seals `plaintext` and replaces the file with it atomically. Exit::config when the document
    // was opened without a key file and without `create`.
    [[nodiscard]] Status write(std::string_view plaintext) const;
    // Removes the file; false when there was none.
    [[nodiscard]] Result<bool> remove() const;
    // "cannot read WHAT 'PATH': WHY" (Exit::data), for contents that are not what they must be.
    [[nodiscard]] Error unreadable(std::string_view why) const;

private:
    std::string m_path;
    std::string m_key_path; // "" when there is none and none may be made
    std::string m_what;
};

// The sealed store of one $SION_HOME (as prepare_home() made it ready).
class Store {
public:
    // Opens the store of `home`, making agents/ and the key file when `create` is set (the store
    // itself is written by the first set()). Without `create`, a home with no key file is an
    // empty store.
    [[nodiscard]] static Result<Store> open(const std::string& home, bool create);

    [[nodiscard]] const std::string& path() const { return m_file.path(); }

    // The names it holds, sorted.
    [[nodiscard]] Result<std::vector<std::string>> names() const;
    [[nodiscard]] Result<std::optional<std::string>> get(std::string_view name) const;
    // Keeps `value` as `name`, replacing what it held.
    [[nodiscard]] Status set(std::string_view name, std::string_view value) const;
    // Forgets `name`; false when it held none.
    [[nodiscard]] Result<bool> remove(std::string_view name) const;

private:
    explicit Store(SealedDocument file) : m_file(std::move(file)) {}

    SealedDocument m_file; // agents/secrets.bin
};

} // namespace sion::secrets
