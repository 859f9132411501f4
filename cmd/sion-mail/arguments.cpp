// SPDX-License-Identifier: MIT
// sion-mail's tools' arguments, read and bounded (cmd/sion-mail/arguments.hpp).
#include "cmd/sion-mail/arguments.hpp"

namespace sion::mail_cmd {

std::string not_set(const char* name) {
    return std::string("mail is not set up: ") + name + " is not set; keep it with sion agent "
           + "credential add " + name;
}

Result<std::string> text_arg(JsonView arguments, const char* key, size_t max) {
    SION_TRY(std::string_view v, arguments.string_or(key, ""));
    if (v.size() > max)
        return make_error(Exit::usage, "member '%s' is longer than %zu bytes", key, max);
    return std::string(v);
}

Result<std::string> folder_arg(JsonView arguments) {
    SION_TRY(std::string f, text_arg(arguments, "folder", k_field_max));
    for (char c : f)
        if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f)
            return make_error(Exit::usage, "a folder's name cannot hold a control character");
    return f;
}

Result<std::vector<std::string>> addresses_arg(JsonView arguments, const char* key) {
    std::vector<std::string> out;
    JsonView v = arguments.get(key);
    if (!v.exists() || v.is_null())
        return out;
    if (v.is_string()) {
        SION_TRY(std::string_view s, v.as_string());
        out.emplace_back(s);
    } else {
        SION_TRY(out, arguments.strings(key));
    }
    if (out.size() > k_recipients_max)
        return make_error(Exit::usage, "member '%s' names more than %zu addresses", key,
                          k_recipients_max);
    return out;
}

const imap::Fetched* find_uid(const std::vector<imap::Fetched>& all, uint32_t uid) {
    for (const auto& f : all)
        if (f.uid == uid)
            return &f;
    return nullptr;
}

} // namespace sion::mail_cmd
