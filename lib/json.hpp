// SPDX-License-Identifier: MIT
// JSON: Json owns a cJSON tree; JsonView looks into one without owning it. Typed accessors return
// Errors (Exit::data) on a missing member or a wrong type; nothing here crashes on input.
//
// A JsonView is valid while the Json it looks into lives and is not changed. A view of something
// absent (a missing member, an index past the end) is empty: every accessor on it answers
// "missing". Strings are UTF-8 and NUL-terminated (cJSON's): parse() refuses a \u0000 escape rather
// than cut a string at it.
#pragma once

#include "lib/result.hpp"

#include <cjson/cJSON.h>

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace sion {

class JsonView {
public:
    JsonView() = default;

    explicit JsonView(const cJSON* node, std::string_view name = {}) : m_node(node), m_name(name) {}

    // Whether there is a value here at all (a JSON null is a value).
    [[nodiscard]] bool exists() const { return m_node != nullptr; }

    explicit operator bool() const { return exists(); }

    [[nodiscard]] bool is_null() const;
    [[nodiscard]] bool is_bool() const;
    [[nodiscard]] bool is_number() const;
    [[nodiscard]] bool is_string() const;
    [[nodiscard]] bool is_array() const;
    [[nodiscard]] bool is_object() const;
    // "string", "number", … or "nothing", for messages.
    [[nodiscard]] const char* type_name() const;

    // A member of an object, or an element of an array; empty when there is none.
    [[nodiscard]] JsonView get(std::string_view key) const;
    [[nodiscard]] JsonView at(size_t index) const;
    // Elements of an array or members of an object; 0 for anything else.
    [[nodiscard]] size_t size() const;
    // The member name of this value inside its object ("" otherwise).
    [[nodiscard]] std::string_view key() const;

    [[nodiscard]] Result<std::string_view> as_string() const;
    [[nodiscard]] Result<double> as_number() const;
    // A number that is integral and within ±2^53.
    [[nodiscard]] Result<int64_t> as_int() const;
    [[nodiscard]] Result<bool> as_bool() const;

    // Typed members: "member 'path' is missing", "member 'path' is a number, not a string".
    [[nodiscard]] Result<std::string_view> string(std::string_view key) const;
    [[nodiscard]] Result<int64_t> integer(std::string_view key) const;
    [[nodiscard]] Result<double> number(std::string_view key) const;
    [[nodiscard]] Result<bool> boolean(std::string_view key) const;
    [[nodiscard]] Result<JsonView> object(std::string_view key) const;
    [[nodiscard]] Result<JsonView> array(std::string_view key) const;
    // Optional members: the fallback when absent or null, an error when present with another type.
    [[nodiscard]] Result<std::string_view> string_or(std::string_view key,
                                                     std::string_view fallback) const;
    [[nodiscard]] Result<int64_t> integer_or(std::string_view key, int64_t fallback) const;
    [[nodiscard]] Result<bool> boolean_or(std::string_view key, bool fallback) const;
    // An optional array of strings, empty when absent: "member 'k' is null, not an array of
    // strings", "member 'k' holds a number, not only strings".
    [[nodiscard]] Result<std::vector<std::string>> strings(std::string_view key) const;

    // Iterates elements of an array or members of an object (key() names them).
    class Iterator {
    public:
        explicit Iterator(const cJSON* node) : m_node(node) {}

        JsonView operator*() const {
            return JsonView(m_node, m_node->string ? m_node->string : "");
        }

        Iterator& operator++() {
            m_node = m_node->next;
            return *this;
        }

        bool operator!=(const Iterator& other) const { return m_node != other.m_node; }

    private:
        const cJSON* m_node;
    };

    [[nodiscard]] Iterator begin() const;

    [[nodiscard]] Iterator end() const { return Iterator(nullptr); }

    // Compact JSON text ("" for an empty view). A whole number is printed with all its digits up
    // to 2^53 (1796644857181360, never 1.79664485718136e+15).
    [[nodiscard]] std::string dump() const;

    [[nodiscard]] const cJSON* raw() const { return m_node; }

private:
    [[nodiscard]] Error wrong(std::string_view key, const JsonView& v, const char* want) const;

    const cJSON* m_node = nullptr;
    std::string_view m_name;
};

class Json {
public:
    Json() = default; // empty: holds nothing
    Json(const Json&) = delete;
    Json& operator=(const Json&) = delete;
    Json(Json&&) noexcept = default;
    Json& operator=(Json&&) noexcept = default;
    ~Json() = default;

    // Parses exactly one JSON text (whitespace around it allowed, nothing else), strictly as RFC
    // 8259 writes it: no leading zeros, no raw control bytes in strings, only JSON's four
    // whitespace bytes, arrays and objects nested at most 1000 deep, no object with two members of
    // one name. Input must be UTF-8. Errors are Exit::data: "invalid JSON at byte 12", "invalid
    // UTF-8 at byte 3", "invalid JSON at byte 1000: nested deeper than 1000", "invalid JSON: member
    // 'input.path' is given twice" (where: members by name, array elements by index from 0).
    [[nodiscard]] static Result<Json> parse(std::string_view text);

    static Json object();
    static Json array();
    // An array of `values`, as JSON strings.
    static Json strings(const std::vector<std::string>& values);
    static Json null();
    static Json string(std::string_view s);
    static Json number(double d);
    static Json integer(int64_t i);
    static Json boolean(bool b);
    [[nodiscard]] static Json copy_of(JsonView v);

    // Builders for objects (set replaces a member of the same name) and arrays. Return *this.
    Json& set(std::string_view key, Json value);

    Json& set(std::string_view key, std::string_view value) { return set(key, string(value)); }

    Json& set(std::string_view key, const char* value) { return set(key, string(value)); }

    Json& set(std::string_view key, int64_t value) { return set(key, integer(value)); }

    Json& set(std::string_view key, int value) { return set(key, integer(value)); }

    Json& set(std::string_view key, bool value) { return set(key, boolean(value)); }

    Json& push(Json value);
    // Removes a member and returns it (empty if there was none).
    Json take(std::string_view key);
    // Replaces, in place, each string value and each member name by what `change` makes of it
    // (strings are passed without their NUL; what it returns must hold none). A member renamed to
    // a name its object has already is removed, so that no object has two members of one name.
    void rewrite_strings(const std::function<std::string(std::string_view)>& change);

    [[nodiscard]] JsonView view() const { return JsonView(m_root.get()); }

    operator JsonView() const { return view(); } // NOLINT: a Json is usable wherever a view is

    [[nodiscard]] bool exists() const { return m_root != nullptr; }

    [[nodiscard]] JsonView get(std::string_view key) const { return view().get(key); }

    [[nodiscard]] std::string dump() const { return view().dump(); }

private:
    struct Deleter {
        void operator()(cJSON* p) const { cJSON_Delete(p); }
    };

    explicit Json(cJSON* root) : m_root(root) {}

    std::unique_ptr<cJSON, Deleter> m_root;
};

// Appends `s` to `out` as a JSON string literal, quotes included. Bytes are copied as they are
// except what JSON requires escaped.
void append_json_string(std::string& out, std::string_view s);

} // namespace sion

namespace sion {

// The JSON text of `v` with the members of every object sorted by name (bytewise) and no spaces:
// equal values give equal text, for keys (the journal) and for transcripts. Numbers are as cJSON
// prints them (integers without a fraction). "" for an empty view.
[[nodiscard]] std::string canonical_json(JsonView v);

} // namespace sion
