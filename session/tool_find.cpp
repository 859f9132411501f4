// SPDX-License-Identifier: MIT
// find_files: the workspace's files whose paths match a glob (session/code/glob), walked beneath the
// workspace held open (lib/confined), listed sorted and capped.
#include "session/tools.hpp"
#include "session/code/glob.hpp"
#include "session/code/search.hpp"
#include "lib/text.hpp"

namespace sion::session {

namespace {

constexpr size_t k_max_listed = 1000;   // paths shown
constexpr size_t k_max_walked = 500000; // entries a walk visits before it gives up

ToolResult failed(std::string text) {
    return {std::move(text), true, false, {}};
}

// `path` relative to `dir` (both relative to the root, `dir` "." or a prefix of `path`).
std::string_view below(std::string_view path, const std::string& dir) {
    return dir == "." ? path : path.substr(dir.size() + 1);
}

class FindFiles final : public Tool {
public:
    models::ToolSpec spec() const override { return tool_spec("find_files"); }

    Effect effect(JsonView) const override { return Effect::read; }

    bool runs_beside() const override { return true; }

    bool idempotent() const override { return true; }

    Result<ToolResult> run(JsonView input, ToolContext& context) override {
        auto pattern = input.string("pattern");
        if (!pattern)
            return failed("find_files needs 'pattern', a string: " + pattern.error().message());
        auto path = input.string_or("path", ".");
        if (!path)
            return failed("find_files' 'path' is a string: " + path.error().message());
        if (context.files == nullptr)
            return failed("this session has no workspace");
        const Confined& files = *context.files;

        // The walk starts where the pattern's literal directories lead ("src/app/**/*.ts" from
        // src/app), so that a directory passed over is still searched when the pattern names it,
        // and the rest is matched below it, anchored there.
        auto [prefix, rest] = code::split_literal_prefix(*pattern);
        std::string from = std::string(*path);
        if (!prefix.empty())
            from = prefix.front() == '/' || from == "." ? prefix : from + "/" + prefix;
        auto start = files.relative(from);
        if (!start)
            return failed("cannot list '" + from + "': " + start.error().message());
        // Read as given first, so that an error quotes the pattern as the model wrote it.
        auto glob = code::Glob::compile(*pattern);
        if (glob && !prefix.empty())
            glob = code::Glob::compile("./" + rest);
        if (!glob)
            return failed(glob.error().message());

        std::string out;
        size_t listed = 0, more = 0;
        Status walked = files.walk(
            from,
            [&](const Confined::Entry& e) {
                std::string_view sub = below(e.rel, *start);
                if (e.is_dir)
                    return glob->may_match_below(sub) ? Confined::Visit::go_on
                                                      : Confined::Visit::skip_dir;
                if ((e.is_file || e.is_link) && glob->matches(sub)) {
                    if (listed < k_max_listed) {
                        code::append_utf8(out, e.rel);
                        out += '\n';
                        ++listed;
                    } else {
                        ++more;
                    }
                }
                return Confined::Visit::go_on;
            },
            k_max_walked);
        bool cut = false;
        if (!walked) {
            if (walked.error().exit() != Exit::data)
                return failed(walked.error().message());
            cut = true; // the walk's limit: what was found so far is the answer, and says so
        }
        if (listed == 0 && !cut) {
            std::string where = *path == "." ? "" : " in '" + std::string(*path) + "'";
            return ToolResult{
                "no files match '" + std::string(*pattern) + "'" + where, false, false, {}};
        }
        if (more > 0)
            out += format("[%zu more %s: narrow the pattern or the path]\n", more,
                          more == 1 ? "file matches" : "files match");
        if (cut)
            out += format("[the walk stopped after %zu entries: give a narrower path]\n",
                          k_max_walked);
        out.pop_back();
        return ToolResult{std::move(out), false, false, {}};
    }
};

} // namespace

std::unique_ptr<Tool> make_find_files_tool() {
    return std::make_unique<FindFiles>();
}

} // namespace sion::session
