// SPDX-License-Identifier: MIT
// RAII and typed access over cJSON.
#include "lib/json.hpp"

#include "lib/utf8.hpp"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <vector>

namespace sion {

namespace {

constexpr double k_max_safe_int = 9007199254740992.0; // 2^53

// How deep arrays and objects may nest: cJSON's own limit, checked here first so the message says so.
constexpr size_t k_max_depth = CJSON_NESTING_LIMIT;

// A strict RFC 8259 syntax check, without recursion. cJSON is lenient where the pipes must not be:
// it takes "01", "1." and "-01" as numbers, any byte up to 0x20 (NUL included) as whitespace, and
// raw control bytes inside strings (a NUL silently cuts the string short).
class Syntax {
public:
    explicit Syntax(std::string_view text) : m_s(text) {}

    // The offset of the first byte that is not valid JSON (text.size() if the text ends early), or
    // npos. Sets too_deep when nesting is what is wrong.
    size_t first_error() {
        std::string nest; // '[' or '{' for each open container
        for (;;) {
            // A value is expected here.
            skip_ws();
            if (at('[') || at('{')) {
                if (nest.size() >= k_max_depth) {
                    too_deep = true;
                    return m_i;
                }
                char open = m_s[m_i++];
                skip_ws();
                if (at(open == '[' ? ']' : '}')) {
                    ++m_i;
                } else {
                    nest += open;
                    if (open == '{' && !member_name())
                        return m_i;
                    continue;
                }
            } else if (!scalar()) {
                return m_i;
            }
            // After a value: a separator, the end of containers, or the end of the text.
            for (;;) {
                skip_ws();
                if (nest.empty())
                    return m_i == m_s.size() ? std::string_view::npos : m_i;
                if (at(',')) {
                    ++m_i;
                    if (nest.back() == '{' && !member_name())
                        return m_i;
                    break;
                }
                if (!at(nest.back() == '[' ? ']' : '}'))
                    return m_i;
                ++m_i;
                nest.pop_back();
            }
        }
    }

    bool too_deep = false;
    bool nul_escape = false;

private:
    [[nodiscard]] bool at(char c) const { return m_i < m_s.size() && m_s[m_i] == c; }
    [[nodiscard]] static bool hex(char c) {
        return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F');
    }
    [[nodiscard]] bool digit() const { return m_i < m_s.size() && m_s[m_i] >= '0' && m_s[m_i] <= '9'; }

    void skip_ws() {
        while (at(' ') || at('\t') || at('\n') || at('\r'))
            ++m_i;
    }

    // A string, then ':' (whitespace around it allowed).
    bool member_name() {
        skip_ws();
        if (!at('"') || !string())
            return false;
        skip_ws();
        if (!at(':'))
            return false;
        ++m_i;
        return true;
    }

    bool scalar() {
        if (at('"'))
            return string();
        if (at('-') || digit())
            return number();
        for (std::string_view word : {"true", "false", "null"}) {
            if (m_s.substr(m_i, word.size()) == word) {
                m_i += word.size();
                return true;
            }
        }
        return false;
    }

    bool string() {
        ++m_i; // the opening quote
        while (m_i < m_s.size()) {
            auto c = static_cast<unsigned char>(m_s[m_i]);
            if (c == '"') {
                ++m_i;
                return true;
            }
            if (c < 0x20)
                return false;
            if (c != '\\') {
                ++m_i;
                continue;
            }
            ++m_i;
            if (m_i >= m_s.size())
                return false;
            char e = m_s[m_i];
            if (e == 'u') {
                size_t start = m_i - 1;
                bool zero = true;
                for (int k = 0; k < 4; ++k) {
                    ++m_i;
                    if (m_i >= m_s.size() || !hex(m_s[m_i]))
                        return false;
                    zero = zero && m_s[m_i] == '0';
                }
                if (zero) {
                    // cJSON's strings end at a NUL: the rest would be lost, or read otherwise by
                    // another peer. Refused rather than cut.
                    m_i = start;
                    nul_escape = true;
                    return false;
                }
            } else if (std::string_view("\"\\/bfnrt").find(e) == std::string_view::npos) {
                return false;
            }
            ++m_i;
        }
        return false;
    }

    bool number() {
        if (at('-'))
            ++m_i;
        if (at('0')) {
            ++m_i; // no leading zeros
        } else if (digit()) {
            while (digit())
                ++m_i;
        } else {
            return false;
        }
        if (at('.')) {
            ++m_i;
            if (!digit())
                return false;
            while (digit())
                ++m_i;
        }
        if (at('e') || at('E')) {
            ++m_i;
            if (at('+') || at('-'))
                ++m_i;
            if (!digit())
                return false;
            while (digit())
                ++m_i;
        }
        return true;
    }

    std::string_view m_s;
    size_t m_i = 0;
};

Error missing(std::string_view key) {
    return make_error(Exit::data, "member '%.*s' is missing", static_cast<int>(key.size()), key.data());
}

} // namespace

bool JsonView::is_null() const { return cJSON_IsNull(m_node) != 0; }
bool JsonView::is_bool() const { return cJSON_IsBool(m_node) != 0; }
bool JsonView::is_number() const { return cJSON_IsNumber(m_node) != 0; }
bool JsonView::is_string() const { return cJSON_IsString(m_node) != 0; }
bool JsonView::is_array() const { return cJSON_IsArray(m_node) != 0; }
bool JsonView::is_object() const { return cJSON_IsObject(m_node) != 0; }

const char* JsonView::type_name() const {
    if (m_node == nullptr)
        return "nothing";
    if (is_null())
        return "null";
    if (is_bool())
        return "a boolean";
    if (is_number())
        return "a number";
    if (is_string())
        return "a string";
    if (is_array())
        return "an array";
    return "an object";
}

JsonView JsonView::get(std::string_view key) const {
    if (!is_object())
        return {};
    for (const cJSON* c = m_node->child; c != nullptr; c = c->next)
        if (c->string != nullptr && key == c->string)
            return JsonView(c, c->string);
    return {};
}

JsonView JsonView::at(size_t index) const {
    if (!is_array())
        return {};
    const cJSON* c = m_node->child;
    for (; c != nullptr && index > 0; --index)
        c = c->next;
    return JsonView(c);
}

size_t JsonView::size() const {
    if (!is_array() && !is_object())
        return 0;
    size_t n = 0;
    for (const cJSON* c = m_node->child; c != nullptr; c = c->next)
        ++n;
    return n;
}

std::string_view JsonView::key() const { return m_name; }

JsonView::Iterator JsonView::begin() const {
    return Iterator(is_array() || is_object() ? m_node->child : nullptr);
}

Error JsonView::wrong(std::string_view key, const JsonView& v, const char* want) const {
    if (!v.exists())
        return missing(key);
    return make_error(Exit::data, "member '%.*s' is %s, not %s", static_cast<int>(key.size()),
                      key.data(), v.type_name(), want);
}

Result<std::string_view> JsonView::as_string() const {
    if (!is_string())
        return make_error(Exit::data, "%s is not a string", type_name());
    return std::string_view(m_node->valuestring);
}

Result<double> JsonView::as_number() const {
    if (!is_number())
        return make_error(Exit::data, "%s is not a number", type_name());
    return m_node->valuedouble;
}

Result<int64_t> JsonView::as_int() const {
    if (!is_number())
        return make_error(Exit::data, "%s is not a number", type_name());
    double d = m_node->valuedouble;
    if (!std::isfinite(d) || std::trunc(d) != d || std::fabs(d) > k_max_safe_int)
        return make_error(Exit::data, "%s is not an integer", dump().c_str());
    return static_cast<int64_t>(d);
}

Result<bool> JsonView::as_bool() const {
    if (!is_bool())
        return make_error(Exit::data, "%s is not a boolean", type_name());
    return cJSON_IsTrue(m_node) != 0;
}

Result<std::string_view> JsonView::string(std::string_view key) const {
    JsonView v = get(key);
    if (!v.is_string())
        return wrong(key, v, "a string");
    return v.as_string();
}

Result<int64_t> JsonView::integer(std::string_view key) const {
    JsonView v = get(key);
    if (!v.is_number())
        return wrong(key, v, "an integer");
    auto i = v.as_int();
    if (!i)
        return make_error(Exit::data, "member '%.*s' is not an integer", static_cast<int>(key.size()),
                          key.data());
    return i;
}

Result<double> JsonView::number(std::string_view key) const {
    JsonView v = get(key);
    if (!v.is_number())
        return wrong(key, v, "a number");
    return v.as_number();
}

Result<bool> JsonView::boolean(std::string_view key) const {
    JsonView v = get(key);
    if (!v.is_bool())
        return wrong(key, v, "a boolean");
    return v.as_bool();
}

Result<JsonView> JsonView::object(std::string_view key) const {
    JsonView v = get(key);
    if (!v.is_object())
        return wrong(key, v, "an object");
    return v;
}

Result<JsonView> JsonView::array(std::string_view key) const {
    JsonView v = get(key);
    if (!v.is_array())
        return wrong(key, v, "an array");
    return v;
}

Result<std::string_view> JsonView::string_or(std::string_view key, std::string_view fallback) const {
    JsonView v = get(key);
    if (!v.exists() || v.is_null())
        return fallback;
    return string(key);
}

Result<std::vector<std::string>> JsonView::strings(std::string_view key) const {
    std::vector<std::string> out;
    JsonView list = get(key);
    if (!list.exists())
        return out;
    if (!list.is_array())
        return wrong(key, list, "an array of strings");
    for (JsonView v : list) {
        if (!v.is_string())
            return make_error(Exit::data, "member '%.*s' holds %s, not only strings",
                              static_cast<int>(key.size()), key.data(), v.type_name());
        out.emplace_back(v.m_node->valuestring);
    }
    return out;
}

Result<int64_t> JsonView::integer_or(std::string_view key, int64_t fallback) const {
    JsonView v = get(key);
    if (!v.exists() || v.is_null())
        return fallback;
    return integer(key);
}

Result<bool> JsonView::boolean_or(std::string_view key, bool fallback) const {
    JsonView v = get(key);
    if (!v.exists() || v.is_null())
        return fallback;
    return boolean(key);
}

namespace {

// A whole number of 16 digits or more, up to 2^53 (Unix microseconds, nanoseconds' millions):
// cJSON prints one as "1.79664485718136e+15" when that is exact; it is printed whole instead.
bool long_integer(const cJSON* node) {
    if (!cJSON_IsNumber(node))
        return false;
    double d = std::fabs(node->valuedouble);
    return d >= 1e15 && d <= 9007199254740992.0 && d == std::floor(d);
}

bool has_long_integer(const cJSON* node) {
    if (long_integer(node))
        return true;
    for (const cJSON* c = node->child; c != nullptr; c = c->next)
        if (has_long_integer(c))
            return true;
    return false;
}

std::string whole(double d) {
    char text[32];
    std::snprintf(text, sizeof text, "%.0f", d);
    return text;
}

// Each long integer under `node` made, in place, a raw node of its digits (its key kept).
void print_whole(cJSON* node) {
    for (cJSON* c = node->child; c != nullptr; c = c->next) {
        if (!long_integer(c)) {
            print_whole(c);
            continue;
        }
        std::string digits = whole(c->valuedouble);
        auto* text = static_cast<char*>(cJSON_malloc(digits.size() + 1));
        if (text == nullptr)
            continue; // printed as cJSON prints it
        std::memcpy(text, digits.c_str(), digits.size() + 1);
        c->type = (c->type & ~0xff) | cJSON_Raw;
        c->valuestring = text;
    }
}

} // namespace

std::string JsonView::dump() const {
    if (m_node == nullptr)
        return {};
    if (long_integer(m_node))
        return whole(m_node->valuedouble);
    if (has_long_integer(m_node)) {
        Json copy = Json::copy_of(*this);
        print_whole(const_cast<cJSON*>(copy.view().raw()));
        return copy.view().dump();
    }
    char* text = cJSON_PrintUnformatted(m_node);
    if (text == nullptr)
        return {};
    std::string out(text);
    cJSON_free(text);
    return out;
}

namespace {

// Sorts the members of every object under `node` by name, in place.
void sort_members(cJSON* node) {
    std::vector<cJSON*> kids;
    for (cJSON* c = node->child; c != nullptr; c = c->next) {
        sort_members(c);
        kids.push_back(c);
    }
    if (!cJSON_IsObject(node) || kids.size() < 2)
        return;
    std::stable_sort(kids.begin(), kids.end(), [](const cJSON* a, const cJSON* b) {
        return std::strcmp(a->string, b->string) < 0;
    });
    node->child = kids.front();
    for (size_t i = 0; i < kids.size(); ++i) {
        kids[i]->prev = i == 0 ? kids.back() : kids[i - 1]; // cJSON: the head's prev is the tail
        kids[i]->next = i + 1 < kids.size() ? kids[i + 1] : nullptr;
    }
}

} // namespace

std::string canonical_json(JsonView v) {
    if (!v.exists())
        return {};
    Json copy = Json::copy_of(v);
    sort_members(const_cast<cJSON*>(copy.view().raw()));
    return copy.dump();
}

namespace {

// A member of the object `node` whose name an earlier member has. Most objects are small, and a
// quadratic look is the fast one for them; a large one is sorted, so hostile input stays n log n.
const cJSON* repeated_name(const cJSON* node) {
    size_t n = 0;
    for (const cJSON* c = node->child; c != nullptr && n <= 16; c = c->next)
        ++n;
    if (n <= 16) {
        for (const cJSON* c = node->child; c != nullptr; c = c->next)
            for (const cJSON* d = node->child; d != c; d = d->next)
                if (std::strcmp(c->string, d->string) == 0)
                    return c;
        return nullptr;
    }
    std::vector<const cJSON*> members;
    for (const cJSON* c = node->child; c != nullptr; c = c->next)
        members.push_back(c);
    std::sort(members.begin(), members.end(),
              [](const cJSON* a, const cJSON* b) { return std::strcmp(a->string, b->string) < 0; });
    for (size_t i = 1; i < members.size(); ++i)
        if (std::strcmp(members[i - 1]->string, members[i]->string) == 0)
            return members[i];
    return nullptr;
}

// Whether a member anywhere in the tree has a name its object has already: readers disagree on
// which of the two counts (cJSON takes the first, jq the last), so a guard that reads one could be
// shown another than the tool runs with. `path` gets where it is ("input.edits[1].b"), built only
// on the way back from one that is found.
bool member_given_twice(const cJSON* node, std::string& path) {
    auto step = [&path, node](const cJSON* c, size_t index) {
        std::string at = cJSON_IsObject(node) ? std::string(c->string) : "[" + std::to_string(index) + "]";
        path = path.empty() || path.front() == '[' ? at + path : at + "." + path;
    };
    if (cJSON_IsObject(node))
        if (const cJSON* twice = repeated_name(node)) {
            step(twice, 0);
            return true;
        }
    size_t index = 0;
    for (const cJSON* c = node->child; c != nullptr; c = c->next, ++index)
        if (c->child != nullptr && member_given_twice(c, path)) {
            step(c, index);
            return true;
        }
    return false;
}

} // namespace

Result<Json> Json::parse(std::string_view text) {
    if (size_t bad = invalid_utf8_at(text); bad != std::string_view::npos)
        return make_error(Exit::data, "invalid UTF-8 at byte %zu", bad);
    Syntax syntax(text);
    if (size_t bad = syntax.first_error(); bad != std::string_view::npos) {
        if (syntax.too_deep)
            return make_error(Exit::data, "invalid JSON at byte %zu: nested deeper than %zu", bad,
                              k_max_depth);
        if (syntax.nul_escape)
            return make_error(Exit::data, "invalid JSON at byte %zu: \\u0000 is not supported", bad);
        return make_error(Exit::data, "invalid JSON at byte %zu", bad);
    }
    cJSON* root = cJSON_ParseWithLengthOpts(text.data(), text.size(), nullptr, 0);
    if (root == nullptr) {
        // Valid syntax cJSON still refuses: a \u escape of half a surrogate pair. cJSON reports
        // where it stopped through a global.
        const char* at = cJSON_GetErrorPtr();
        size_t offset = at >= text.data() && at <= text.data() + text.size()
                            ? static_cast<size_t>(at - text.data())
                            : 0;
        return make_error(Exit::data, "invalid JSON at byte %zu", offset);
    }
    Json doc(root);
    if (std::string path; member_given_twice(root, path))
        return make_error(Exit::data, "invalid JSON: member '%s' is given twice", path.c_str());
    return doc;
}

Json Json::object() { return Json(cJSON_CreateObject()); }
Json Json::array() { return Json(cJSON_CreateArray()); }
Json Json::strings(const std::vector<std::string>& values) {
    Json a = array();
    for (const std::string& v : values)
        a.push(string(v));
    return a;
}
Json Json::null() { return Json(cJSON_CreateNull()); }
Json Json::string(std::string_view s) { return Json(cJSON_CreateString(std::string(s).c_str())); }
Json Json::number(double d) { return Json(cJSON_CreateNumber(d)); }
Json Json::integer(int64_t i) { return Json(cJSON_CreateNumber(static_cast<double>(i))); }
Json Json::boolean(bool b) { return Json(cJSON_CreateBool(b ? 1 : 0)); }

Json Json::copy_of(JsonView v) {
    return v.exists() ? Json(cJSON_Duplicate(v.raw(), 1)) : Json();
}

Json& Json::set(std::string_view key, Json value) {
    if (!m_root)
        m_root.reset(cJSON_CreateObject());
    if (!cJSON_IsObject(m_root.get()) || !value.m_root)
        return *this;
    std::string k(key);
    cJSON* item = value.m_root.release();
    if (cJSON_GetObjectItemCaseSensitive(m_root.get(), k.c_str()) != nullptr)
        cJSON_ReplaceItemInObjectCaseSensitive(m_root.get(), k.c_str(), item);
    else
        cJSON_AddItemToObject(m_root.get(), k.c_str(), item);
    return *this;
}

Json& Json::push(Json value) {
    if (!m_root)
        m_root.reset(cJSON_CreateArray());
    if (cJSON_IsArray(m_root.get()) && value.m_root)
        cJSON_AddItemToArray(m_root.get(), value.m_root.release());
    return *this;
}

Json Json::take(std::string_view key) {
    if (!cJSON_IsObject(m_root.get()))
        return {};
    return Json(cJSON_DetachItemFromObjectCaseSensitive(m_root.get(), std::string(key).c_str()));
}

namespace {

using Change = std::function<std::string(std::string_view)>;

// Whether another member of `object` than `member` is named `name`.
bool named_elsewhere(const cJSON* object, const cJSON* member, const char* name) {
    for (const cJSON* m = object->child; m != nullptr; m = m->next)
        if (m != member && m->string != nullptr && std::strcmp(m->string, name) == 0)
            return true;
    return false;
}

// `change` on `node`'s strings and on its members' names, depth first. Iterative over siblings,
// recursive over nesting (at most parse()'s depth, or what the program built).
void rewrite(cJSON* node, const Change& change) {
    if (cJSON_IsString(node) && node->valuestring != nullptr) {
        std::string now = change(node->valuestring);
        if (now != node->valuestring)
            cJSON_SetValuestring(node, now.c_str());
        return;
    }
    if (!cJSON_IsArray(node) && !cJSON_IsObject(node))
        return;
    cJSON* child = node->child;
    while (child != nullptr) {
        cJSON* next = child->next;
        if (cJSON_IsObject(node) && child->string != nullptr) {
            std::string name = change(child->string);
            if (name != child->string) {
                if (named_elsewhere(node, child, name.c_str())) {
                    cJSON_Delete(cJSON_DetachItemViaPointer(node, child));
                    child = next;
                    continue;
                }
                char* copy = static_cast<char*>(cJSON_malloc(name.size() + 1));
                std::memcpy(copy, name.c_str(), name.size() + 1);
                if ((child->type & cJSON_StringIsConst) == 0)
                    cJSON_free(child->string);
                child->type &= ~cJSON_StringIsConst;
                child->string = copy;
            }
        }
        rewrite(child, change);
        child = next;
    }
}

} // namespace

void Json::rewrite_strings(const Change& change) {
    if (m_root)
        rewrite(m_root.get(), change);
}

void append_json_string(std::string& out, std::string_view s) {
    static const char k_hex[] = "0123456789abcdef";
    out.reserve(out.size() + s.size() + 2);
    out += '"';
    size_t run = 0; // start of the stretch that needs no escaping
    for (size_t i = 0; i < s.size(); ++i) {
        auto c = static_cast<unsigned char>(s[i]);
        if (c >= 0x20 && c != '"' && c != '\\')
            continue;
        out.append(s.data() + run, i - run);
        run = i + 1;
        switch (c) {
        case '"': out += "\\\""; break;
        case '\\': out += "\\\\"; break;
        case '\n': out += "\\n"; break;
        case '\r': out += "\\r"; break;
        case '\t': out += "\\t"; break;
        case '\b': out += "\\b"; break;
        case '\f': out += "\\f"; break;
        default:
            out += "\\u00";
            out += k_hex[c >> 4];
            out += k_hex[c & 0xF];
        }
    }
    out.append(s.data() + run, s.size() - run);
    out += '"';
}

} // namespace sion
