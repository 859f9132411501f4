// SPDX-License-Identifier: MIT
// An MCP server's question to the person (elicitation), asked at the terminal: the server named and
// its message quoted, then a form answered with `name: value` lines, or an address to open.
//
// A form is checked against its schema before anything is sent (types, choices, required fields,
// lengths, ranges, formats), and asked again, whole, while the answer does not fit. An empty line
// where the answer starts declines; the end of input cancels. A form that asks for a password, a
// key, a token, a secret or a card number is declined without asking: servers must not ask for
// those. An address is shown whole with its host apart, and never opened or fetched here: the
// person says whether they opened it.
//
// Nothing here prints: what the person sees goes through a Terminal, so tests can play one.
#pragma once

#include "lib/json.hpp"
#include "lib/result.hpp"

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace sion::session {

// One field of a form: a property of MCP's requestedSchema, which has only primitive ones.
struct FormField {
    enum class Type { string, number, integer, boolean };
    std::string name;
    std::string title;
    std::string description;
    Type type = Type::string;
    bool required = false;
    std::vector<std::string> choices;              // the values an enum allows; empty: any
    std::vector<std::string> choice_titles;        // their titles (oneOf), or empty
    std::optional<int64_t> min_length, max_length; // in characters
    std::optional<double> minimum, maximum;
    std::string format; // email, uri, date, date-time; "" for none
    Json fallback;      // the schema's default, given when the answer leaves the field out
};

struct Form {
    std::vector<FormField> fields; // in the schema's order
};

// The form a requestedSchema describes. Exit::data for one that is not a flat object of strings,
// numbers, integers, booleans and choices: "field 'tags': its type is 'array': only text, numbers,
// yes or no and choices can be answered here".
[[nodiscard]] Result<Form> parse_form(JsonView schema);

// Why the form must not be put to a person, if it asks for a secret by a field's name, title,
// description or format: "it asks for a password (field 'password')". nullopt otherwise.
[[nodiscard]] std::optional<std::string> secret_asked(const Form& form);

// The value `text` gives `field`, checked: Exit::data with the problem, "count: give a whole
// number, not 'x'", "email: give an email address, not 'me'".
[[nodiscard]] Result<Json> field_value(const FormField& field, std::string_view text);

// The content of an answer given as lines (`name: value`, or the value alone for a one-field form),
// checked whole: every problem, a line each, in the Error (Exit::data).
[[nodiscard]] Result<Json> form_answer(const Form& form, const std::vector<std::string>& lines);

// The host of an address, lowercased, without user or port: "x.example" for
// "https://me@X.example:8443/a?b"; "" when it has none.
[[nodiscard]] std::string url_host(std::string_view url);

// `text` safe to show on a terminal: control characters (but newlines) and the characters that
// reorder text shown as '?'.
[[nodiscard]] std::string terminal_text(std::string_view text);

// Where a question is asked.
struct Terminal {
    std::function<void(std::string_view text)> say;
    // Shows `prompt` and reads a line (without its newline); nullopt at the end of input.
    std::function<std::optional<std::string>(std::string_view prompt)> ask;
};

struct Elicited {
    Json result;      // MCP's ElicitResult: {"action":"accept","content":{…}}, decline or cancel
    std::string said; // for the transcript: "accepted", "declined", "cancelled",
                      // "declined without asking: it asks for a password (field 'password')"
};

// A question declined without asking anyone; `said` says why.
[[nodiscard]] Elicited declined(std::string said);

// Asks the question of `params` (an elicitation/create request's: server, mode "form" with
// requestedSchema or "url" with url, message) at `terminal`.
[[nodiscard]] Elicited elicit(JsonView params, const Terminal& terminal);

} // namespace sion::session
