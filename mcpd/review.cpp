// SPDX-License-Identifier: MIT
#include "mcpd/review.hpp"

#include "lib/hash.hpp"
#include "mcpd/http_headers.hpp"

#include <set>

namespace sion::mcpd {

namespace {

bool name_char(char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_'
           || c == '-';
}

// The parts of a tool its pin covers, as the server gave them.
Json pinned_parts(JsonView tool) {
    Json parts = Json::object();
    for (std::string_view key : {"name", "description", "inputSchema", "annotations"})
        if (JsonView v = tool.get(key); v.exists())
            parts.set(key, Json::copy_of(v));
    return parts;
}

} // namespace

Effect effect_of_annotations(JsonView annotations) {
    auto hint = [&](std::string_view key) -> std::optional<bool> {
        JsonView v = annotations.get(key);
        if (!v.is_bool())
            return std::nullopt;
        return *v.as_bool();
    };
    if (hint("openWorldHint").value_or(true))
        return Effect::external;
    if (hint("readOnlyHint").value_or(false))
        return Effect::read;
    return Effect::write;
}

std::string shown_name(std::string_view name) {
    constexpr size_t k_shown = 64;
    std::string line = one_line(name);
    size_t characters = 0;
    for (size_t i = 0; i < line.size(); ++i) {
        // A character starts at every byte that is not a UTF-8 continuation byte.
        if ((static_cast<unsigned char>(line[i]) & 0xC0) != 0x80 && ++characters > k_shown) {
            line.resize(i);
            return line + "\u2026";
        }
    }
    return line;
}

bool offerable_name(std::string_view server, std::string_view tool) {
    if (tool.empty() || server.size() + 1 + tool.size() > 64)
        return false;
    for (char c : tool)
        if (!name_char(c))
            return false;
    return true;
}

std::vector<ToolDef> tool_defs(JsonView tools, const std::map<std::string, Effect>& effects,
                               std::string_view server, const std::set<std::string>& local) {
    std::vector<ToolDef> defs;
    std::set<std::string, std::less<>> seen;
    for (JsonView t : tools) {
        auto name = t.string("name");
        if (!t.is_object() || !name)
            continue;
        ToolDef d;
        d.name = std::string(*name);
        d.description = std::string(t.string_or("description", "").value_or(""));
        d.definition = Json::copy_of(t);
        d.digest = sha256_hex(canonical_json(pinned_parts(t)));
        JsonView annotations = t.get("annotations");
        d.effect = effect_of_annotations(annotations);
        d.idempotent = annotations.get("idempotentHint").is_bool()
                       && *annotations.get("idempotentHint").as_bool();
        if (auto o = effects.find(d.name); o != effects.end())
            d.effect = o->second;
        if (d.effect == Effect::read)
            d.idempotent = true;
        d.local = local.contains(d.name) && (d.effect == Effect::read || d.effect == Effect::write);
        if (!offerable_name(server, d.name))
            d.unusable = "its name is not 1 to 64 letters, digits, '_' and '-' with the server's "
                         "name before it";
        else if (!seen.insert(d.name).second)
            d.unusable = "the server lists it twice";
        else if (auto marks = header_marks(t.get("inputSchema")); !marks)
            d.unusable = marks.error().message();
        defs.push_back(std::move(d));
    }
    return defs;
}

bool taints(const ToolDef& tool, bool from_outside) {
    return !tool.local
           && (from_outside || tool.effect == Effect::external
               || effect_of_annotations(tool.definition.get("annotations")) == Effect::external);
}

std::string effect_label(const ToolDef& tool) {
    std::string label = std::string(effect_name(tool.effect)) + (tool.local ? "-local" : "");
    if (tool.idempotent && tool.effect != Effect::read)
        label += ", repeats run again";
    return label;
}

std::vector<Reviewed> compare(const std::vector<ToolDef>& tools, const std::vector<Pin>& pins) {
    std::vector<Reviewed> out;
    std::set<std::string, std::less<>> listed;
    for (const ToolDef& t : tools) {
        listed.insert(t.name);
        const Pin* pin = nullptr;
        for (const Pin& p : pins)
            if (p.tool == t.name)
                pin = &p;
        PinState state = !pin                      ? PinState::added
                         : pin->digest == t.digest ? PinState::unchanged
                                                   : PinState::changed;
        out.push_back({state, &t, pin});
    }
    for (const Pin& p : pins)
        if (!listed.contains(p.tool))
            out.push_back({PinState::removed, nullptr, &p});
    return out;
}

std::string review_line(const ToolDef& tool) {
    std::string line = one_line(tool.name) + " (" + effect_label(tool) + ")";
    std::string description = one_line(tool.description);
    if (!description.empty())
        line += ": " + description;
    return line;
}

std::string unusable_notice(std::string_view server, const ToolDef& tool) {
    return "MCP server " + std::string(server) + ": the tool \"" + shown_name(tool.name)
           + "\" is not offered: " + tool.unusable;
}

std::string not_offered_notice(std::string_view server, const Reviewed& r) {
    std::string head = "MCP server " + std::string(server) + ": ";
    std::string review = " (`sion agent mcp review " + std::string(server) + "`)";
    switch (r.state) {
    case PinState::added:
        return head + shown_name(r.tool->name)
               + " is new and was not reviewed, so it is not offered" + review;
    case PinState::changed:
        return head + shown_name(r.tool->name)
               + " changed since it was reviewed, so it is not offered" + review;
    case PinState::unchanged:
    case PinState::removed:
        break;
    }
    return {};
}

} // namespace sion::mcpd
