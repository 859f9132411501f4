// SPDX-License-Identifier: MIT
// shell: a command run with /bin/sh in the session's sandbox. A command that fails is an answer,
// not a broken tool: its exit status leads what the model is shown.
#include "lib/text.hpp"
#include "session/tools.hpp"

#include <string.h>

namespace sion::session {

namespace {

void add_block(std::string& text, const char* name, std::string_view output) {
    if (output.empty())
        return;
    if (output.back() == '\n')
        output.remove_suffix(1);
    text += format("\n--- %s\n", name);
    text.append(output);
}

class Shell final : public Tool {
public:
    explicit Shell(bool external) : m_external(external) {}

    models::ToolSpec spec() const override {
        models::ToolSpec spec = tool_spec("shell");
        if (m_external)
            spec.description += " It has a network: what it prints comes from outside.";
        return spec;
    }

    Effect effect(JsonView) const override { return m_external ? Effect::external : Effect::write; }

    bool idempotent() const override { return false; }

    bool journaled() const override { return false; }

    Result<ToolResult> run(JsonView input, ToolContext& context) override {
        auto command = input.string("command");
        if (!command)
            return ToolResult{
                "shell needs 'command', a string: " + command.error().message(), true, false, {}};
        std::optional<double> timeout;
        if (input.get("timeout").exists() && !input.get("timeout").is_null()) {
            auto t = input.number("timeout");
            if (!t || *t <= 0)
                return ToolResult{
                    "shell's 'timeout' is a number of seconds, more than 0", true, false, {}};
            timeout = *t;
        }
        if (context.sandbox == nullptr)
            return ToolResult{"this session has no shell", true, false, {}};
        auto done = context.sandbox->exec(std::string(*command), timeout);
        if (!done)
            return ToolResult{done.error().exit() == Exit::unavailable
                                  ? "the sandbox is gone: " + done.error().message()
                                  : done.error().message(),
                              true,
                              false,
                              {}};
        std::string text = exec_result_text(*done);
        return ToolResult{std::move(text), false, m_external, proto::exec_result_to_json(*done)};
    }

private:
    bool m_external;
};

} // namespace

std::string exec_result_text(const proto::ExecResult& r) {
    std::string text;
    if (r.timed_out)
        text = format("timed out after %.3g s: the command was killed",
                      static_cast<double>(r.wall_ms) / 1000.0);
    else if (r.out_of_memory)
        text = format("out of memory: the sandbox's memory was full and a process of the "
                      "command was killed (SIGKILL); exit status %d",
                      r.exit);
    else if (r.signal)
        text = format("killed by signal %d (SIG%s)", *r.signal,
                      sigabbrev_np(*r.signal) ? sigabbrev_np(*r.signal) : "?");
    else
        text = format("exit status %d", r.exit);
    add_block(text, "stdout", r.stdout_text);
    add_block(text, "stderr", r.stderr_text);
    return text;
}

std::unique_ptr<Tool> make_shell_tool(bool external) {
    return std::make_unique<Shell>(external);
}

} // namespace sion::session
