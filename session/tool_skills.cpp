// SPDX-License-Identifier: MIT
// skill_read, skill_write and skill_run (seed 000, "Skills' scripts"): a profile's skills
// (lib/skills.hpp), their instructions read and written, and their scripts run in the shell's
// sandbox with the skill's files read-only at /skill, reaching only the hosts the skill names, and
// given the secrets it names, which never reach the model.
#include "lib/confined.hpp"
#include "lib/db_schema.hpp"
#include "lib/redact.hpp"
#include "lib/secrets.hpp"
#include "lib/skills.hpp"
#include "lib/text.hpp"
#include "session/tools.hpp"

#include <algorithm>

namespace sion::session {

namespace {

constexpr size_t k_skill_md_max = size_t{256} << 10;

ToolResult failed(std::string text) {
    ToolResult r;
    r.text = std::move(text);
    r.is_error = true;
    r.changed_nothing = true;
    return r;
}

// The skill named by the call's "name", and its SKILL.md read; or the answer saying why not.
struct Found {
    skills::Skill skill;
    skills::SkillText text;
    std::string md;
};

Result<Found> find(const SkillsContext& at, JsonView input, const char* tool) {
    auto name = input.string("name");
    if (!name)
        return make_error(Exit::data, "%s needs 'name', a skill's name: %s", tool,
                          name.error().message().c_str());
    SION_TRY(Db db, open_state(at.home));
    SION_TRY(skills::Skill skill, skills::find_skill(db, at.profile, *name));
    auto folder = Confined::open(skill.dir, "/skill");
    auto md =
        folder ? folder->read("SKILL.md", k_skill_md_max) : Result<std::string>(folder.error());
    if (!md)
        return make_error(Exit::data, "cannot read the skill %s: %s", skill.name.c_str(),
                          md.error().message().c_str());
    auto text = skills::parse_skill_md(*md);
    if (!text)
        return make_error(Exit::data, "the skill %s cannot be used: %s", skill.name.c_str(),
                          text.error().message().c_str());
    return Found{std::move(skill), std::move(*text), std::move(*md)};
}

class SkillRead final : public Tool {
public:
    [[nodiscard]] models::ToolSpec spec() const override { return tool_spec("skill_read"); }

    [[nodiscard]] Effect effect(JsonView) const override { return Effect::read; }

    [[nodiscard]] bool idempotent() const override { return true; }

    [[nodiscard]] Result<ToolResult> run(JsonView input, ToolContext& context) override {
        if (context.skills == nullptr)
            return failed("this session has no skills");
        auto found = find(*context.skills, input, "skill_read");
        if (!found)
            return failed(found.error().message());
        ToolResult r;
        r.text = found->md;
        // The files its instructions do not name are listed after them.
        std::vector<std::string> others;
        for (const std::string& f :
             skills::skill_files(found->skill.dir).value_or(std::vector<std::string>{}))
            if (f != "SKILL.md" && f != "SHA256SUMS" && found->md.find(f) == std::string::npos)
                others.push_back(f);
        if (!others.empty()) {
            if (!r.text.empty() && r.text.back() != '\n')
                r.text += '\n';
            r.text += "Its other files: ";
            for (size_t i = 0; i < others.size(); ++i)
                r.text += (i == 0 ? "" : ", ") + others[i];
            r.text += ".";
        }
        while (!r.text.empty() && r.text.back() == '\n')
            r.text.pop_back();
        return r;
    }
};

class SkillWrite final : public Tool {
public:
    [[nodiscard]] models::ToolSpec spec() const override { return tool_spec("skill_write"); }

    [[nodiscard]] Effect effect(JsonView) const override { return Effect::write; }

    [[nodiscard]] bool idempotent() const override { return true; }

    [[nodiscard]] Result<ToolResult> run(JsonView input, ToolContext& context) override {
        if (context.skills == nullptr)
            return failed("this session has no skills");
        for (JsonView member : input)
            if (member.key() != "name" && member.key() != "instructions"
                && member.key() != "description")
                return failed("skill_write writes a skill's instructions only, never a script or "
                              "another file: give 'name', 'instructions' and 'description', not '"
                              + one_line(member.key()) + "'");
        auto name = input.string("name");
        auto instructions = input.string("instructions");
        auto description = input.string_or("description", "");
        if (!name || !instructions || !description)
            return failed("skill_write needs 'name' and 'instructions', strings, and may have "
                          "'description', a string");
        SION_TRY(Db db, open_state(context.skills->home));
        auto written = skills::write_instructions(db, context.skills->home, context.skills->profile,
                                                  *name, *description, *instructions);
        if (!written)
            return failed(written.error().message());
        return ToolResult{format("wrote the instructions of %s (%zu bytes)", written->name.c_str(),
                                 instructions->size()),
                          false,
                          false,
                          {}};
    }
};

class SkillRun final : public Tool {
public:
    [[nodiscard]] models::ToolSpec spec() const override { return tool_spec("skill_run"); }

    // A write, as a command is; external when its skill names hosts and the sandbox has a network.
    [[nodiscard]] Effect effect(JsonView input) const override {
        if (m_network)
            if (auto found = find(*m_at, input, "skill_run"); found && !found->text.hosts.empty())
                return Effect::external;
        return Effect::write;
    }

    [[nodiscard]] bool idempotent() const override { return false; }

    [[nodiscard]] bool journaled() const override { return false; }

    SkillRun(const SkillsContext* at, bool network) : m_at(at), m_network(network) {}

    [[nodiscard]] Result<ToolResult> run(JsonView input, ToolContext& context) override {
        if (context.skills == nullptr || context.sandbox == nullptr)
            return failed("skill_run needs a shell, and this session has none");
        auto found = find(*context.skills, input, "skill_run");
        if (!found)
            return failed(found.error().message());
        auto script_name = input.string("script");
        if (!script_name)
            return failed("skill_run needs 'script', the path of a script in the skill's folder");
        auto args = input.strings("args");
        if (!args)
            return failed("skill_run's 'args' are strings: " + args.error().message());
        auto script = skills::check_script(found->skill, *script_name);
        if (!script)
            return failed(script.error().message());
        proto::ExecRequest request;
        request.argv = script->interpreter;
        request.argv.push_back(std::string(proto::k_skill_inside) + "/" + script->path);
        request.argv.insert(request.argv.end(), args->begin(), args->end());
        request.skill = found->skill.dir;
        request.skill_hosts = found->text.hosts;
        std::vector<std::string> values;
        for (const std::string& secret : found->text.secrets) {
            auto value = secrets::lookup(secret);
            if (!value || !*value)
                return failed(format("the skill %s needs the secret %s: keep it with sion agent "
                                     "credential add %s",
                                     found->skill.name.c_str(), secret.c_str(), secret.c_str()));
            request.env.emplace_back(secret, **value);
            values.push_back(**value);
        }
        auto done = context.sandbox->exec(request);
        if (!done)
            return failed(done.error().exit() == Exit::unavailable
                              ? "the sandbox is gone: " + done.error().message()
                              : done.error().message());
        // What it printed, with its secrets taken out before anyone sees it.
        Redactor redactor(values);
        done->stdout_text = redactor.redact(done->stdout_text);
        done->stderr_text = redactor.redact(done->stderr_text);
        bool external = m_network && !found->text.hosts.empty();
        return ToolResult{exec_result_text(*done), false, external,
                          proto::exec_result_to_json(*done)};
    }

private:
    const SkillsContext* m_at;
    bool m_network;
};

} // namespace

std::unique_ptr<Tool> make_skill_read_tool() {
    return std::make_unique<SkillRead>();
}

std::unique_ptr<Tool> make_skill_write_tool() {
    return std::make_unique<SkillWrite>();
}

std::unique_ptr<Tool> make_skill_run_tool(const SkillsContext* at, bool network) {
    return std::make_unique<SkillRun>(at, network);
}

} // namespace sion::session
