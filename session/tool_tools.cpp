// SPDX-License-Identifier: MIT
// tools_search and tools_call: the MCP servers' tools, past 40 of them, found by asking
// (session/ranking) and called by name.
#include "session/tools.hpp"

#include "lib/text.hpp"

#include <algorithm>

namespace sion::session {

namespace {

ToolResult failed(std::string text) {
    return {std::move(text), true, false, {}};
}

class ToolsSearch final : public Tool {
public:
    explicit ToolsSearch(FoundTools& found) : m_found(found) {}

    models::ToolSpec spec() const override { return tool_spec("tools_search"); }

    Effect effect(JsonView) const override { return Effect::read; }

    bool idempotent() const override { return true; }

    Result<ToolResult> run(JsonView input, ToolContext&) override {
        auto query = input.string("query");
        if (!query)
            return failed("tools_search needs 'query', a string: " + query.error().message());
        auto limit = input.integer_or("limit", k_found_default);
        if (!limit || *limit < 1 || *limit > static_cast<int64_t>(k_found_most))
            return failed("tools_search's 'limit' is a whole number from 1 to 10");
        std::vector<size_t> hits = m_found.index.search(*query, static_cast<size_t>(*limit));
        if (hits.empty())
            return ToolResult{query->starts_with("select:")
                                  ? "no tool of those names: tools_search finds names by what "
                                    "the tools do"
                                  : "no tool matches '" + std::string(*query)
                                        + "': try other words, or select:NAME,NAME",
                              false,
                              false,
                              {}};
        std::string text = format("%zu %s found and loaded: call %s by name from now on.\n",
                                  hits.size(), hits.size() == 1 ? "tool" : "tools",
                                  hits.size() == 1 ? "it" : "them");
        for (size_t hit : hits) {
            models::ToolSpec spec = m_found.tools[hit]->spec();
            text += "\n" + spec.name + ": " + spec.description + "\n  input schema: "
                    + canonical_json(spec.input_schema.view()) + "\n";
            load(spec.name);
        }
        return ToolResult{std::move(text), false, false, {}};
    }

private:
    // The tool loaded last of all, or kept where it is when it is loaded already (the list's start
    // stays as it was); the oldest leaves past 24.
    void load(const std::string& name) {
        std::vector<std::string>& loaded = m_found.loaded;
        if (std::find(loaded.begin(), loaded.end(), name) != loaded.end())
            return;
        loaded.push_back(name);
        if (loaded.size() > k_tools_loaded)
            loaded.erase(loaded.begin());
        m_found.changed = true;
    }

    FoundTools& m_found;
};

class ToolsCall final : public Tool {
public:
    models::ToolSpec spec() const override { return tool_spec("tools_call"); }

    Effect effect(JsonView) const override { return Effect::read; }

    bool idempotent() const override { return true; }

    Result<ToolResult> run(JsonView input, ToolContext&) override {
        if (auto name = input.string("name"); name && (*name == "tools_call" || *name == "tools_search"))
            return failed("tools_call calls the MCP servers' tools, not " + std::string(*name));
        return failed("tools_call needs 'name', a string, and 'arguments', an object: the tool's "
                      "name and its input");
    }
};

} // namespace

std::unique_ptr<Tool> make_tools_search_tool(FoundTools& found) {
    return std::make_unique<ToolsSearch>(found);
}

std::unique_ptr<Tool> make_tools_call_tool() {
    return std::make_unique<ToolsCall>();
}

} // namespace sion::session
