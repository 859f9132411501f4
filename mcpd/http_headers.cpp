// SPDX-License-Identifier: MIT
#include "mcpd/http_headers.hpp"

#include "lib/base64.hpp"
#include "lib/text.hpp"

#include <set>

namespace sion::mcpd {

namespace {

Status walk(JsonView schema, std::vector<std::string>& path, std::vector<HeaderMark>& marks,
            std::set<std::string>& seen) {
    JsonView properties = schema.get("properties");
    if (!properties.is_object())
        return {};
    for (JsonView property : properties) {
        path.emplace_back(property.key());
        if (JsonView mark = property.get("x-mcp-header"); mark.exists()) {
            auto name = mark.as_string();
            if (!name)
                return Error(Exit::data, "its x-mcp-header on '" + path.back() + "' is not a string");
            if (!is_http_token(*name))
                return Error(Exit::data, "its x-mcp-header '" + std::string(*name)
                                             + "' is not an HTTP token");
            if (!seen.insert(ascii_lower(*name)).second)
                return Error(Exit::data,
                             "its x-mcp-header '" + std::string(*name) + "' is given twice");
            auto type = property.string("type");
            if (!type || (*type != "string" && *type != "integer" && *type != "boolean"))
                return Error(Exit::data, "its x-mcp-header '" + std::string(*name)
                                             + "' marks a property that is not a string, an "
                                               "integer or a boolean");
            marks.push_back({std::string(*name), path});
        }
        SION_CHECK(walk(property, path, marks, seen));
        path.pop_back();
    }
    return {};
}

bool plain(std::string_view text) {
    if (text.empty())
        return true;
    for (unsigned char c : text)
        if (c < 0x20 || c > 0x7e)
            return false;
    if (text.front() == ' ' || text.back() == ' ')
        return false;
    bool looks_encoded = text.starts_with("=?base64?") && text.ends_with("?=");
    return !looks_encoded;
}

} // namespace

Result<std::vector<HeaderMark>> header_marks(JsonView input_schema) {
    std::vector<HeaderMark> marks;
    std::vector<std::string> path;
    std::set<std::string> seen;
    SION_CHECK(walk(input_schema, path, marks, seen));
    return marks;
}

std::string header_value(std::string_view text) {
    if (plain(text))
        return std::string(text);
    return "=?base64?" + base64_encode(text) + "?=";
}

void add_mirror_headers(HttpHeaders& headers, std::string_view method, JsonView params,
                        const std::vector<HeaderMark>& marks) {
    headers.add("Mcp-Method", std::string(method));
    std::string_view key = method == "tools/call"   ? "name"
        : method == "resources/read"                ? "uri"
        : method == "prompts/get"                   ? "name"
                                                    : "";
    if (key.empty())
        return;
    if (auto name = params.string(key))
        headers.add("Mcp-Name", header_value(*name));
    if (method != "tools/call")
        return;
    for (const HeaderMark& mark : marks) {
        JsonView v = params.get("arguments");
        for (const std::string& step : mark.path)
            v = v.get(step);
        std::string value;
        if (auto s = v.as_string(); v.is_string() && s)
            value = header_value(*s);
        else if (auto i = v.as_int(); v.is_number() && i)
            value = std::to_string(*i);
        else if (auto b = v.as_bool(); v.is_bool() && b)
            value = *b ? "true" : "false";
        else
            continue; // absent, null, or not of its type: the server judges the body
        headers.add("Mcp-Param-" + mark.name, std::move(value));
    }
}

} // namespace sion::mcpd
