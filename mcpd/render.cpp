// SPDX-License-Identifier: MIT
#include "mcpd/render.hpp"

#include "lib/base64.hpp"
#include "lib/text.hpp"

namespace sion::mcpd {

namespace {

std::string_view str(JsonView v, std::string_view key) {
    return v.string_or(key, "").value_or("");
}

std::string resource_contents(JsonView c) {
    if (c.get("text").is_string())
        return std::string(str(c, "text"));
    if (c.get("blob").is_string())
        return format("[%.*s, %zu bytes, at %.*s]",
                      static_cast<int>(str(c, "mimeType").size()), str(c, "mimeType").data(),
                      base64_size(str(c, "blob")), static_cast<int>(str(c, "uri").size()),
                      str(c, "uri").data());
    return {};
}

std::string content_block(JsonView block) {
    std::string_view type = str(block, "type");
    if (type == "text")
        return std::string(str(block, "text"));
    if (type == "image" || type == "audio")
        return format("[%.*s %.*s, %zu bytes]", static_cast<int>(type.size()), type.data(),
                      static_cast<int>(str(block, "mimeType").size()),
                      str(block, "mimeType").data(), base64_size(str(block, "data")));
    if (type == "resource_link") {
        std::string line = "[resource " + std::string(str(block, "uri"));
        if (!str(block, "name").empty())
            line += ": " + std::string(str(block, "name"));
        return line + "]";
    }
    if (type == "resource")
        return resource_contents(block.get("resource"));
    return format("[content of type '%.*s']", static_cast<int>(type.size()), type.data());
}

// Parts joined by newlines, kept to k_max_rendered bytes (cut at a character's start), with a
// line saying how many bytes of all the parts were cut.
class Parts {
public:
    explicit Parts(std::string_view separator = "\n") : m_separator(separator) {}

    void add(const std::string& part) {
        size_t separator = m_any ? m_separator.size() : 0;
        m_any = true;
        m_total += separator + part.size();
        if (m_text.size() > k_max_rendered)
            return;
        if (separator != 0)
            m_text += m_separator;
        m_text += part;
    }

    std::string take() && {
        if (m_total <= k_max_rendered)
            return std::move(m_text);
        size_t cut = k_max_rendered;
        while (cut > 0 && (static_cast<unsigned char>(m_text[cut]) & 0xC0) == 0x80)
            --cut;
        m_text.resize(cut);
        m_text += format("\n[%zu more bytes were cut]", m_total - cut);
        return std::move(m_text);
    }

private:
    std::string_view m_separator;
    std::string m_text;
    size_t m_total = 0;
    bool m_any = false;
};

} // namespace

std::string render_tool_result(JsonView result) {
    JsonView content = result.get("content");
    if (content.size() == 0 && result.get("structuredContent").exists()) {
        Parts parts;
        parts.add(canonical_json(result.get("structuredContent")));
        return std::move(parts).take();
    }
    Parts parts;
    for (JsonView block : content)
        parts.add(content_block(block));
    return std::move(parts).take();
}

std::string render_resource(JsonView result) {
    Parts parts;
    for (JsonView c : result.get("contents"))
        parts.add(resource_contents(c));
    return std::move(parts).take();
}

std::string render_prompt(JsonView result) {
    Parts parts("\n\n");
    for (JsonView m : result.get("messages")) {
        std::string text = content_block(m.get("content"));
        if (str(m, "role") != "user")
            text = "(" + std::string(str(m, "role")) + ") " + text;
        parts.add(text);
    }
    return std::move(parts).take();
}

} // namespace sion::mcpd
