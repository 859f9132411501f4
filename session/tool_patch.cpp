// SPDX-License-Identifier: MIT
// apply_patch: a patch parsed and planned against the workspace (session/code/patch), every new text
// staged beside its file (lib/confined) before any file changes, then renamed into place, and the
// files it deletes removed last.
#include "session/tools.hpp"
#include "session/code/patch.hpp"
#include "lib/confined.hpp"
#include "lib/text.hpp"

namespace sion::session {

namespace {

constexpr size_t k_max_file = size_t{16} << 20; // bytes of a file apply_patch changes
constexpr const char* k_unchanged = "cannot apply the patch, so no file was changed: ";

ToolResult failed(std::string text) {
    return {std::move(text), true, false, {}};
}

std::string joined(const std::vector<std::string>& lines) {
    std::string out;
    for (const std::string& line : lines)
        out += (out.empty() ? "" : "\n") + line;
    return out;
}

// The patch's paths made the workspace's ("./a" and "/workspace/a" are "a"); one that leads
// outside refuses the whole patch.
Status confine(code::Patch& patch, const Confined& root) {
    for (code::FilePatch& f : patch.files) {
        for (std::string* path : {&f.path, &f.move_to, &f.other_path}) {
            if (path->empty())
                continue;
            auto rel = root.relative(*path);
            if (!rel)
                return Error(rel.error().exit(), k_unchanged + rel.error().message());
            if (*rel == ".")
                return make_error(Exit::data, "%s'%s' is the workspace itself, not a file",
                                  k_unchanged, path->c_str());
            *path = std::move(*rel);
        }
    }
    return {};
}

class ApplyPatch final : public Tool {
public:
    models::ToolSpec spec() const override { return tool_spec("apply_patch"); }

    Effect effect(JsonView) const override { return Effect::write; }

    // A patch applied twice does not fit the second time, or fits somewhere else: the journal
    // keeps a call from being made again.
    bool idempotent() const override { return false; }

    bool fails_cleanly() const override { return true; }

    Result<ToolResult> run(JsonView input, ToolContext& context) override {
        auto text = input.string("patch");
        if (!text)
            return failed("apply_patch needs 'patch', a string: " + text.error().message());
        if (context.files == nullptr)
            return failed("this session has no workspace");
        auto patch = code::parse_patch(*text);
        if (!patch)
            return failed(patch.error().message());
        const Confined& files = *context.files;
        if (Status ok = confine(*patch, files); !ok)
            return failed(ok.error().message());
        auto read = [&files](const std::string& path) -> Result<std::optional<std::string>> {
            auto got = files.read(path, k_max_file);
            if (got)
                return std::optional<std::string>(std::move(*got));
            if (got.error().exit() == Exit::no_input)
                return std::optional<std::string>();
            return std::move(got).error();
        };
        auto plan = code::plan_patch(*patch, read);
        if (!plan)
            return failed(plan.error().message());
        return apply(files, *plan);
    }

private:
    // Every new text staged first: one that cannot be written stops the patch with nothing
    // changed (the staged files are removed as they are dropped).
    static Result<ToolResult> apply(const Confined& root, const code::PatchPlan& plan) {
        std::vector<Confined::Staged> staged;
        std::vector<const std::string*> removed;
        for (const code::FileChange& c : plan.changes) {
            if (!c.text) {
                removed.push_back(&c.path);
                continue;
            }
            auto s = root.stage(c.path, *c.text);
            if (!s)
                return failed(k_unchanged + s.error().message());
            staged.push_back(std::move(*s));
        }
        std::vector<std::string> changed;
        auto partly = [&](const Error& e) {
            return failed(
                "the patch was applied only in part: " + e.message()
                + (changed.empty() ? std::string() : "; changed before that: " + joined(changed)));
        };
        size_t at = 0;
        for (const code::FileChange& c : plan.changes) {
            if (!c.text)
                continue;
            if (Status ok = staged[at++].commit(); !ok)
                return partly(ok.error());
            changed.push_back(c.path);
        }
        for (const std::string* path : removed) {
            if (Status ok = root.remove(*path); !ok)
                return partly(ok.error());
            changed.push_back(*path);
        }
        return ToolResult{joined(plan.done), false, false, {}};
    }
};

} // namespace

std::unique_ptr<Tool> make_apply_patch_tool() {
    return std::make_unique<ApplyPatch>();
}

} // namespace sion::session
