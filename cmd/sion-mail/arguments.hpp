// SPDX-License-Identifier: MIT
// sion-mail's tools' arguments, each read with its bound, and the one line a missing setting is.
// Errors are Exit::usage, naming the member ("member 'to' names more than 100 addresses").
#pragma once

#include "lib/imap.hpp"
#include "lib/json.hpp"
#include "lib/result.hpp"

#include <cstdint>
#include <string>
#include <vector>

namespace sion::mail_cmd {

inline constexpr size_t k_recipients_max = 100;       // addresses of to, cc or bcc
inline constexpr size_t k_field_max = 1000;           // bytes of a criterion, subject or folder
inline constexpr size_t k_text_max = size_t{1} << 20; // bytes of a message's text

// "mail is not set up: NAME is not set; keep it with sion agent credential add NAME".
[[nodiscard]] std::string not_set(const char* name);

// A string member, "" when absent, at most `max` bytes.
[[nodiscard]] Result<std::string> text_arg(JsonView arguments, const char* key, size_t max);

// The member "folder", "" when absent: no control character, which could end the command that
// names it.
[[nodiscard]] Result<std::string> folder_arg(JsonView arguments);

// Addresses: an array of strings, or one string; at most k_recipients_max.
[[nodiscard]] Result<std::vector<std::string>> addresses_arg(JsonView arguments, const char* key);

// The message of `uid` among those a FETCH answered, if any.
[[nodiscard]] const imap::Fetched* find_uid(const std::vector<imap::Fetched>& all, uint32_t uid);

} // namespace sion::mail_cmd
