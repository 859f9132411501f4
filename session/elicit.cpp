// SPDX-License-Identifier: MIT
// Elicitation at the terminal: forms checked against their schema, addresses shown and never
// opened.
#include "session/elicit.hpp"

#include "lib/text.hpp"

#include <cctype>
#include <cmath>
#include <cstdlib>
#include <set>

namespace sion::session {

namespace {

using Type = FormField::Type;

std::string_view trim(std::string_view s) {
    size_t from = s.find_first_not_of(" \t\r");
    if (from == std::string_view::npos)
        return {};
    return s.substr(from, s.find_last_not_of(" \t\r") - from + 1);
}

int64_t characters(std::string_view s) {
    int64_t n = 0;
    for (char c : s)
        n += (static_cast<unsigned char>(c) & 0xC0) != 0x80 ? 1 : 0;
    return n;
}

// A number as messages show it: 10, 2.5.
std::string number_text(double d) {
    return format("%g", d);
}

// ---- the form's schema

// The choices of an enum field: "enum" (with "enumNames", the older titles), or "oneOf"/"anyOf" of
// {"const", "title"}.
Status read_choices(JsonView property, FormField& f) {
    if (property.get("enum").exists()) {
        SION_TRY(f.choices, property.strings("enum"));
        if (property.get("enumNames").exists()) {
            SION_TRY(f.choice_titles, property.strings("enumNames"));
            if (f.choice_titles.size() != f.choices.size())
                f.choice_titles.clear();
        }
        return {};
    }
    for (const char* key : {"oneOf", "anyOf"}) {
        if (!property.get(key).exists())
            continue;
        SION_TRY(JsonView list, property.array(key));
        for (JsonView option : list) {
            SION_TRY(std::string_view value, option.string("const"));
            SION_TRY(std::string_view title, option.string_or("title", value));
            f.choices.emplace_back(value);
            f.choice_titles.emplace_back(title);
        }
    }
    return {};
}

Status read_limits(JsonView property, FormField& f) {
    for (auto [key, slot] :
         {std::pair{"minLength", &f.min_length}, std::pair{"maxLength", &f.max_length}})
        if (property.get(key).exists()) {
            SION_TRY(int64_t n, property.integer(key));
            *slot = n;
        }
    for (auto [key, slot] : {std::pair{"minimum", &f.minimum}, std::pair{"maximum", &f.maximum}})
        if (property.get(key).exists()) {
            SION_TRY(double d, property.number(key));
            *slot = d;
        }
    SION_TRY(std::string_view format_name, property.string_or("format", ""));
    f.format = std::string(format_name);
    return {};
}

Result<FormField> read_field(JsonView property, std::string_view name, bool required) {
    FormField f;
    f.name = std::string(name);
    f.required = required;
    if (!property.is_object())
        return make_error(Exit::data, "it is %s, not an object", property.type_name());
    SION_TRY(std::string_view title, property.string_or("title", ""));
    SION_TRY(std::string_view description, property.string_or("description", ""));
    SION_TRY(std::string_view type, property.string_or("type", "string"));
    f.title = std::string(title);
    f.description = std::string(description);
    if (type == "string")
        f.type = Type::string;
    else if (type == "number")
        f.type = Type::number;
    else if (type == "integer")
        f.type = Type::integer;
    else if (type == "boolean")
        f.type = Type::boolean;
    else
        return make_error(Exit::data,
                          "its type is '%.*s': only text, numbers, yes or no and choices can be "
                          "answered here",
                          static_cast<int>(type.size()), type.data());
    SION_CHECK(read_choices(property, f));
    if (!f.choices.empty() && f.type != Type::string)
        return make_error(Exit::data, "its choices are not text");
    SION_CHECK(read_limits(property, f));
    if (property.get("default").exists())
        f.fallback = Json::copy_of(property.get("default"));
    return f;
}

// ---- secrets

// The words of a text: runs of letters and digits, split where a lowercase letter meets an
// uppercase one ("apiKey" is "api" "key"), lowercased, a final 's' dropped.
std::vector<std::string> words_of(std::string_view text) {
    std::vector<std::string> words;
    std::string word;
    auto end = [&] {
        if (word.size() > 3 && word.back() == 's')
            word.pop_back();
        if (!word.empty())
            words.push_back(std::move(word));
        word.clear();
    };
    char last = 0;
    for (char c : text) {
        auto u = static_cast<unsigned char>(c);
        if (std::isalnum(u) == 0) {
            end();
        } else {
            if (std::isupper(u) != 0 && std::islower(static_cast<unsigned char>(last)) != 0)
                end();
            word += ascii_lower(c);
        }
        last = c;
    }
    end();
    return words;
}

// What a text asks for, if it is a secret: "a password", "a key", …
std::optional<std::string> secret_in(std::string_view text) {
    static const std::pair<const char*, std::vector<std::string_view>> k_secrets[] = {
        {"a password", {"password", "passwd", "passcode", "passphrase"}},
        {"a secret", {"secret"}},
        {"a token", {"token"}},
        {"a key", {"key", "apikey", "privatekey"}},
        {"a card number", {"cvv", "cvc", "cardnumber", "creditcard"}},
    };
    std::vector<std::string> words = words_of(text);
    for (size_t i = 0; i < words.size(); ++i) {
        for (const auto& [what, names] : k_secrets)
            for (std::string_view name : names)
                if (words[i] == name)
                    return std::string(what);
        if (words[i] == "card" && i + 1 < words.size()
            && (words[i + 1] == "number" || words[i + 1] == "no" || words[i + 1] == "num"))
            return std::string("a card number");
    }
    return std::nullopt;
}

// ---- checking values

// What a field takes, in words: "a whole number from 1 to 10", "one of: low, high".
std::string kind_of(const FormField& f) {
    if (!f.choices.empty()) {
        std::string s = "one of: ";
        for (size_t i = 0; i < f.choices.size(); ++i) {
            s += (i == 0 ? "" : ", ") + f.choices[i];
            if (!f.choice_titles.empty() && f.choice_titles[i] != f.choices[i])
                s += " (" + f.choice_titles[i] + ")";
        }
        return s;
    }
    std::string s;
    switch (f.type) {
    case Type::boolean:
        return "yes or no";
    case Type::integer:
    case Type::number:
        s = f.type == Type::integer ? "a whole number" : "a number";
        if (f.minimum && f.maximum)
            s += " from " + number_text(*f.minimum) + " to " + number_text(*f.maximum);
        else if (f.minimum)
            s += " of at least " + number_text(*f.minimum);
        else if (f.maximum)
            s += " of at most " + number_text(*f.maximum);
        return s;
    case Type::string:
        break;
    }
    if (f.format == "email")
        s = "an email address";
    else if (f.format == "uri")
        s = "an address (URI)";
    else if (f.format == "date")
        s = "a date (YYYY-MM-DD)";
    else if (f.format == "date-time")
        s = "a date and time (YYYY-MM-DDTHH:MM:SSZ)";
    else
        s = "text";
    if (f.min_length && f.max_length)
        s += format(" of %lld to %lld characters", static_cast<long long>(*f.min_length),
                    static_cast<long long>(*f.max_length));
    else if (f.min_length)
        s += format(" of at least %lld characters", static_cast<long long>(*f.min_length));
    else if (f.max_length)
        s += format(" of at most %lld characters", static_cast<long long>(*f.max_length));
    return s;
}

bool all_digits(std::string_view s) {
    return !s.empty() && s.find_first_not_of("0123456789") == std::string_view::npos;
}

// The number the `n` digits at `at` make, or -1 when they are not all digits.
int digits_at(std::string_view s, size_t at, size_t n) {
    if (at + n > s.size() || !all_digits(s.substr(at, n)))
        return -1;
    return std::atoi(std::string(s.substr(at, n)).c_str());
}

bool is_date(std::string_view s) {
    static const int k_days[] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
    int year = digits_at(s, 0, 4), month = digits_at(s, 5, 2), day = digits_at(s, 8, 2);
    if (s.size() != 10 || s[4] != '-' || s[7] != '-' || year < 0 || month < 1 || month > 12
        || day < 1)
        return false;
    bool leap = (year % 4 == 0 && year % 100 != 0) || year % 400 == 0;
    return day <= k_days[month - 1] + (month == 2 && leap ? 1 : 0);
}

// RFC 3339: 2026-12-01T09:30:00Z, with a fraction of a second and an offset allowed.
bool is_date_time(std::string_view s) {
    if (s.size() < 20 || !is_date(s.substr(0, 10)) || (s[10] != 'T' && s[10] != 't'))
        return false;
    std::string_view t = s.substr(11);
    int hour = digits_at(t, 0, 2), minute = digits_at(t, 3, 2), second = digits_at(t, 6, 2);
    if (t[2] != ':' || t[5] != ':' || hour < 0 || hour > 23 || minute < 0 || minute > 59
        || second < 0 || second > 60)
        return false;
    std::string_view rest = t.substr(8);
    if (!rest.empty() && rest[0] == '.') {
        size_t n = rest.find_first_not_of("0123456789", 1);
        if (n == 1 || n == std::string_view::npos)
            return false;
        rest = rest.substr(n);
    }
    if (rest == "Z" || rest == "z")
        return true;
    return rest.size() == 6 && (rest[0] == '+' || rest[0] == '-') && rest[3] == ':'
           && digits_at(rest, 1, 2) >= 0 && digits_at(rest, 4, 2) >= 0;
}

bool is_email(std::string_view s) {
    size_t at = s.find('@');
    if (at == 0 || at == std::string_view::npos || s.find('@', at + 1) != std::string_view::npos
        || s.find_first_of(" \t") != std::string_view::npos)
        return false;
    std::string_view domain = s.substr(at + 1);
    size_t dot = domain.find('.');
    return dot != std::string_view::npos && dot != 0 && domain.back() != '.';
}

// A URI's scheme: a letter, then letters, digits, '+', '-' and '.'.
bool is_scheme(std::string_view s) {
    if (s.empty() || std::isalpha(static_cast<unsigned char>(s[0])) == 0)
        return false;
    for (char c : s)
        if (std::isalnum(static_cast<unsigned char>(c)) == 0 && c != '+' && c != '-' && c != '.')
            return false;
    return true;
}

bool is_uri(std::string_view s) {
    size_t colon = s.find(':');
    return colon != std::string_view::npos && colon + 1 < s.size() && is_scheme(s.substr(0, colon))
           && s.find_first_of(" \t") == std::string_view::npos;
}

bool fits_format(std::string_view format_name, std::string_view s) {
    if (format_name == "email")
        return is_email(s);
    if (format_name == "uri")
        return is_uri(s);
    if (format_name == "date")
        return is_date(s);
    if (format_name == "date-time")
        return is_date_time(s);
    return true;
}

Result<Json> number_value(const FormField& f, std::string_view text) {
    std::string s(text);
    double d = 0;
    if (f.type == Type::integer) {
        bool sign = !text.empty() && (text[0] == '-' || text[0] == '+');
        std::string_view digits = text.substr(sign ? 1 : 0);
        if (!all_digits(digits) || digits.size() > 15)
            return Error(Exit::data, "");
        d = static_cast<double>(std::strtoll(s.c_str(), nullptr, 10));
    } else {
        char* end = nullptr;
        d = std::strtod(s.c_str(), &end);
        if (s.empty() || end != s.c_str() + s.size() || !std::isfinite(d)
            || std::isspace(static_cast<unsigned char>(s[0])) != 0)
            return Error(Exit::data, "");
    }
    if ((f.minimum && d < *f.minimum) || (f.maximum && d > *f.maximum))
        return Error(Exit::data, "");
    return f.type == Type::integer ? Json::integer(static_cast<int64_t>(d)) : Json::number(d);
}

Result<Json> string_value(const FormField& f, std::string_view text) {
    int64_t n = characters(text);
    if ((f.min_length && n < *f.min_length) || (f.max_length && n > *f.max_length)
        || !fits_format(f.format, text))
        return Error(Exit::data, "");
    return Json::string(text);
}

Result<Json> boolean_value(std::string_view text) {
    std::string a = ascii_lower(text);
    if (a == "yes" || a == "y" || a == "true")
        return Json::boolean(true);
    if (a == "no" || a == "n" || a == "false")
        return Json::boolean(false);
    return Error(Exit::data, "");
}

Result<Json> choice_value(const FormField& f, std::string_view text) {
    for (size_t i = 0; i < f.choices.size(); ++i)
        if (text == f.choices[i]
            || (!f.choice_titles.empty() && ascii_iequals(text, f.choice_titles[i])))
            return Json::string(f.choices[i]);
    return Error(Exit::data, "");
}

// ---- asking

std::string field_line(const FormField& f) {
    std::string line = "  " + f.name + " (" + kind_of(f) + (f.required ? ", required" : "");
    if (f.fallback.exists())
        line += ", " + canonical_json(f.fallback) + " if left out";
    line += ")";
    std::string about = f.title;
    if (!f.description.empty())
        about += (about.empty() ? "" : ": ") + f.description;
    if (!about.empty())
        line += ": " + about;
    return terminal_text(line) + "\n";
}

Elicited outcome(const char* action, std::string said, Json content = {}) {
    Json result = Json::object();
    result.set("action", action);
    if (content.exists())
        result.set("content", std::move(content));
    return {std::move(result), std::move(said)};
}

Elicited cancelled() {
    return outcome("cancel", "cancelled");
}

bool yes(const std::optional<std::string>& answer) {
    std::string a = ascii_lower(trim(answer.value_or("")));
    return a == "y" || a == "yes";
}

// The name a `name: value` line gives, "" when it has none.
std::string_view line_name(std::string_view line) {
    size_t colon = line.find(':');
    return colon == std::string_view::npos ? std::string_view() : trim(line.substr(0, colon));
}

// Reads one answer: lines until an empty one, until every field is named, or the one line of a
// one-field form. nullopt at the end of input; no lines when the first is empty.
std::optional<std::vector<std::string>> read_answer(const Form& form, const Terminal& terminal) {
    std::vector<std::string> lines;
    std::set<std::string, std::less<>> named;
    while (true) {
        auto line = terminal.ask("> ");
        if (!line)
            return std::nullopt;
        if (trim(*line).empty())
            return lines;
        lines.push_back(std::move(*line));
        if (form.fields.size() == 1)
            return lines;
        named.insert(std::string(line_name(lines.back())));
        bool all = true;
        for (const auto& f : form.fields)
            all = all && named.count(f.name) != 0;
        if (all)
            return lines;
    }
}

Elicited ask_form(const Form& form, const Terminal& terminal) {
    if (form.fields.empty()) {
        auto answer = terminal.ask("Accept? [y/N] ");
        if (!answer)
            return cancelled();
        return yes(answer) ? outcome("accept", "accepted", Json::object())
                           : outcome("decline", "declined");
    }
    for (const auto& f : form.fields)
        terminal.say(field_line(f));
    terminal.say(form.fields.size() == 1
                     ? "Answer with the value; an empty line declines, the end of input cancels.\n"
                     : "Answer with name: value lines, then an empty line; an empty line first "
                       "declines, the end of input cancels.\n");
    while (true) {
        auto lines = read_answer(form, terminal);
        if (!lines)
            return cancelled();
        if (lines->empty())
            return outcome("decline", "declined");
        auto content = form_answer(form, *lines);
        if (content)
            return outcome("accept", "accepted", std::move(*content));
        terminal.say(terminal_text(content.error().message()) + "\nAnswer again.\n");
    }
}

Elicited ask_url(const std::string& server, std::string_view url, const Terminal& terminal) {
    std::string host = url_host(url);
    std::string apart = host.empty() ? "it names no host" : "host " + terminal_text(host);
    terminal.say(format("MCP server %s wants you to open %s (%s)\n", server.c_str(),
                        terminal_text(url).c_str(), apart.c_str()));
    auto answer = terminal.ask("It is not opened for you. Did you open it? [y/N] ");
    if (!answer)
        return cancelled();
    return yes(answer) ? outcome("accept", "accepted: the person says they opened it")
                       : outcome("decline", "declined");
}

} // namespace

Result<Form> parse_form(JsonView schema) {
    Form form;
    if (!schema.is_object())
        return make_error(Exit::data, "the form is %s, not an object", schema.type_name());
    std::set<std::string, std::less<>> required;
    if (schema.get("required").exists()) {
        SION_TRY(auto names, schema.strings("required"));
        required.insert(names.begin(), names.end());
    }
    JsonView properties = schema.get("properties");
    if (properties.exists() && !properties.is_object())
        return make_error(Exit::data, "the form's properties are %s, not an object",
                          properties.type_name());
    for (JsonView p : properties) {
        auto field = read_field(p, p.key(), required.count(p.key()) != 0);
        if (!field)
            return field.error().context("field '" + terminal_text(p.key()) + "'");
        form.fields.push_back(std::move(*field));
    }
    return form;
}

std::optional<std::string> secret_asked(const Form& form) {
    for (const auto& f : form.fields)
        for (const std::string* text : {&f.name, &f.title, &f.description, &f.format})
            if (auto what = secret_in(*text))
                return "it asks for " + *what + " (field '" + terminal_text(f.name) + "')";
    return std::nullopt;
}

Result<Json> field_value(const FormField& field, std::string_view text) {
    text = trim(text);
    Result<Json> value = !field.choices.empty()        ? choice_value(field, text)
                         : field.type == Type::string  ? string_value(field, text)
                         : field.type == Type::boolean ? boolean_value(text)
                                                       : number_value(field, text);
    if (value)
        return value;
    std::string shown = terminal_text(text.substr(0, 60));
    return make_error(Exit::data, "%s: give %s, not '%s'", field.name.c_str(),
                      kind_of(field).c_str(), shown.c_str());
}

Result<Json> form_answer(const Form& form, const std::vector<std::string>& lines) {
    Json content = Json::object();
    std::vector<std::string> problems;
    std::set<std::string, std::less<>> wrong; // fields given a value that does not fit
    for (const std::string& whole : lines) {
        std::string_view line = trim(whole);
        if (line.empty())
            continue;
        const FormField* field = nullptr;
        std::string_view value = line;
        std::string_view name = line_name(line);
        for (const auto& f : form.fields)
            if (f.name == name)
                field = &f;
        if (field != nullptr) {
            value = trim(line.substr(line.find(':') + 1));
        } else if (form.fields.size() == 1) {
            field = &form.fields[0];
        } else {
            std::string names;
            for (const auto& f : form.fields)
                names += (names.empty() ? "" : ", ") + f.name;
            problems.push_back(name.empty() ? "'" + terminal_text(line.substr(0, 60))
                                                  + "': give name: value, with a name of " + names
                                            : "there is no field '" + terminal_text(name)
                                                  + "': give one of " + names);
            continue;
        }
        if (value.empty()) {
            (void)content.take(field->name);
            continue;
        }
        auto v = field_value(*field, value);
        if (v) {
            content.set(field->name, std::move(*v));
            wrong.erase(field->name);
        } else {
            (void)content.take(field->name);
            wrong.insert(field->name);
            problems.push_back(v.error().message());
        }
    }
    for (const auto& f : form.fields) {
        if (content.get(f.name).exists() || wrong.count(f.name) != 0)
            continue;
        if (f.fallback.exists())
            content.set(f.name, Json::copy_of(f.fallback));
        else if (f.required)
            problems.push_back(f.name + " is required");
    }
    if (!problems.empty()) {
        std::string all;
        for (const auto& p : problems)
            all += (all.empty() ? "" : "\n") + p;
        return Error(Exit::data, all);
    }
    return content;
}

std::string url_host(std::string_view url) {
    size_t scheme_end = url.find("://");
    if (scheme_end == std::string_view::npos || !is_scheme(url.substr(0, scheme_end)))
        return {};
    std::string_view authority = url.substr(scheme_end + 3);
    // A browser ends the authority at a backslash too: "https://a.example\@b.example" is a.example.
    authority = authority.substr(0, authority.find_first_of("/?#\\"));
    size_t at = authority.rfind('@');
    if (at != std::string_view::npos)
        authority = authority.substr(at + 1);
    if (!authority.empty() && authority[0] == '[') {
        size_t close = authority.find(']');
        return close == std::string_view::npos ? std::string()
                                               : ascii_lower(authority.substr(0, close + 1));
    }
    return ascii_lower(authority.substr(0, authority.find(':')));
}

std::string terminal_text(std::string_view text) {
    std::string out;
    out.reserve(text.size());
    for (size_t i = 0; i < text.size(); ++i) {
        auto c = static_cast<unsigned char>(text[i]);
        unsigned char next = i + 1 < text.size() ? static_cast<unsigned char>(text[i + 1]) : 0;
        unsigned char third = i + 2 < text.size() ? static_cast<unsigned char>(text[i + 2]) : 0;
        if (c == '\n') {
            out += '\n';
        } else if (c == '\t') {
            out += ' ';
        } else if (c < 0x20 || c == 0x7f) {
            out += '?';
        } else if (c == 0xC2 && next >= 0x80 && next <= 0x9F) { // C1 controls
            out += '?';
            i += 1;
        } else if (c == 0xE2
                   && ((next == 0x80
                        && (third == 0x8E || third == 0x8F || (third >= 0xAA && third <= 0xAE)))
                       || (next == 0x81 && third >= 0xA6 && third <= 0xA9))) {
            out += '?'; // marks and overrides of direction, which make text read otherwise
            i += 2;
        } else {
            out += static_cast<char>(c);
        }
    }
    return out;
}

Elicited declined(std::string said) {
    return outcome("decline", std::move(said));
}

Elicited elicit(JsonView params, const Terminal& terminal) {
    std::string server = terminal_text(params.string_or("server", "").value_or(""));
    std::string_view mode = params.string_or("mode", "form").value_or("");
    std::string message = terminal_text(params.string_or("message", "").value_or(""));
    if (mode == "url") {
        if (!message.empty())
            terminal.say(format("MCP server %s asks: \"%s\"\n", server.c_str(), message.c_str()));
        return ask_url(server, params.string_or("url", "").value_or(""), terminal);
    }
    if (mode != "form")
        return outcome("decline", "declined without asking: its mode '" + terminal_text(mode)
                                      + "' cannot be answered here");
    auto form = parse_form(params.get("requestedSchema"));
    if (!form)
        return outcome("decline", "declined without asking: " + form.error().message());
    if (auto secret = secret_asked(*form))
        return outcome("decline", "declined without asking: " + *secret);
    terminal.say(format("MCP server %s asks: \"%s\"\n", server.c_str(), message.c_str()));
    return ask_form(*form, terminal);
}

} // namespace sion::session
