// SPDX-License-Identifier: MIT
// search_files: a regular expression over the workspace's files (session/code/search), read beneath the
// workspace held open (lib/confined), shown as grep -n shows it.
#include "session/tools.hpp"
#include "session/code/glob.hpp"
#include "session/code/search.hpp"

#include <optional>

namespace sion::session {

namespace {

constexpr int64_t k_default_context = 2;
constexpr int64_t k_max_context = 20;

ToolResult failed(std::string text) {
    return {std::move(text), true, false, {}};
}

class SearchFiles final : public Tool {
public:
    models::ToolSpec spec() const override { return tool_spec("search_files"); }

    Effect effect(JsonView) const override { return Effect::read; }

    bool runs_beside() const override { return true; }

    bool idempotent() const override { return true; }

    Result<ToolResult> run(JsonView input, ToolContext& context) override {
        auto pattern = input.string("pattern");
        if (!pattern)
            return failed("search_files needs 'pattern', a string: " + pattern.error().message());
        auto path = input.string_or("path", ".");
        if (!path)
            return failed("search_files' 'path' is a string: " + path.error().message());
        auto lines = input.integer_or("context", k_default_context);
        if (!lines || *lines < 0 || *lines > k_max_context)
            return failed("search_files' 'context' is a whole number from 0 to 20");
        auto ignore_case = input.boolean_or("ignore_case", false);
        if (!ignore_case)
            return failed("search_files' 'ignore_case' is true or false");
        std::optional<code::Glob> only;
        if (input.get("glob").exists() && !input.get("glob").is_null()) {
            auto text = input.string("glob");
            if (!text)
                return failed("search_files' 'glob' is a string: " + text.error().message());
            auto glob = code::Glob::compile(*text);
            if (!glob)
                return failed(glob.error().message());
            only.emplace(std::move(*glob));
        }
        if (context.files == nullptr)
            return failed("this session has no workspace");

        code::SearchOptions options;
        options.context = static_cast<size_t>(*lines);
        options.ignore_case = *ignore_case;
        auto searcher = code::Searcher::compile(*pattern, options);
        if (!searcher)
            return failed(searcher.error().message());
        code::SearchReport report;
        if (Status ok = searcher->search(*context.files, *path, only ? &*only : nullptr, report);
            !ok)
            return failed(ok.error().message());
        return ToolResult{searcher->render(report), false, false, {}};
    }
};

} // namespace

std::unique_ptr<Tool> make_search_files_tool() {
    return std::make_unique<SearchFiles>();
}

} // namespace sion::session
