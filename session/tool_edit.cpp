// SPDX-License-Identifier: MIT
// edit_file: a quoted stretch of a file replaced (session/code/edit), the file read and written beneath
// the workspace (lib/confined), the new text beside the old and renamed over it.
#include "session/tools.hpp"
#include "session/code/edit.hpp"
#include "lib/confined.hpp"
#include "lib/text.hpp"

namespace sion::session {

namespace {

constexpr size_t k_max_file = size_t{16} << 20; // bytes of a file edit_file changes

ToolResult failed(std::string text) {
    return {std::move(text), true, false, {}};
}

// What an Error of lib/confined says after its own "cannot read 'x': ", for a message of ours.
std::string why(const Error& e) {
    const std::string& m = e.message();
    if (m.rfind("cannot ", 0) == 0) {
        size_t end = m.find("': ");
        if (end != std::string::npos)
            return m.substr(end + 3);
    }
    return m;
}

class EditFile final : public Tool {
public:
    models::ToolSpec spec() const override { return tool_spec("edit_file"); }

    Effect effect(JsonView) const override { return Effect::write; }

    // The same edit made twice is not the same as once (the second finds nothing, or replaces
    // what the first wrote): the journal keeps a call from being made again.
    bool idempotent() const override { return false; }

    bool fails_cleanly() const override { return true; }

    Result<ToolResult> run(JsonView input, ToolContext& context) override {
        auto given = input.string("path");
        if (!given)
            return failed("edit_file needs 'path', a string: " + given.error().message());
        auto old_string = input.string("old_string");
        if (!old_string)
            return failed("edit_file needs 'old_string', a string: "
                          + old_string.error().message());
        auto new_string = input.string("new_string");
        if (!new_string)
            return failed("edit_file needs 'new_string', a string: "
                          + new_string.error().message());
        auto replace_all = input.boolean_or("replace_all", false);
        if (!replace_all)
            return failed("edit_file's 'replace_all' is true or false: "
                          + replace_all.error().message());
        if (context.files == nullptr)
            return failed("this session has no workspace");
        const Confined* root = context.files;
        std::string name(*given);
        auto rel = root->relative(name);
        if (!rel)
            return failed("cannot edit '" + name + "': " + why(rel.error()));
        name = *rel;
        auto text = root->read(name, k_max_file);
        std::string current;
        if (text) {
            current = std::move(*text);
        } else if (text.error().exit() != Exit::no_input || !old_string->empty()) {
            if (text.error().exit() == Exit::no_input)
                return failed("cannot edit '" + name
                              + "': there is no such file (write_file makes a new one)");
            return failed("cannot edit '" + name + "': " + why(text.error()));
        }
        if (current.find('\0') != std::string::npos)
            return failed("cannot edit '" + name + "': it is a binary file");
        code::Edit edit{*old_string, *new_string, *replace_all};
        auto done = code::apply_edit(current, edit, name);
        if (!done)
            return failed("cannot edit '" + name + "': " + done.error().message());
        if (Status written = root->write(name, done->text); !written)
            return failed("cannot edit '" + name + "': " + why(written.error()));
        return ToolResult{format("edited %s: %zu replacement%s", name.c_str(), done->replacements,
                                 done->replacements == 1 ? "" : "s"),
                          false,
                          false,
                          {}};
    }
};

} // namespace

std::unique_ptr<Tool> make_edit_file_tool() {
    return std::make_unique<EditFile>();
}

} // namespace sion::session
