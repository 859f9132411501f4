// SPDX-License-Identifier: MIT
// Hooks as people read them: one line each, commands quoted as a shell would take them back.
#include "hooks/describe.hpp"

#include "lib/text.hpp"

namespace sion::hooks {

namespace {

bool plain(char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9')
           || std::string_view("%+,-./:=@_").find(c) != std::string_view::npos;
}

bool control(char c) {
    return static_cast<unsigned char>(c) < 0x20 || c == 0x7f;
}

// $'...', bash's quoting, for a word with control characters: a line stays one line.
std::string ansi_c_quote(std::string_view word) {
    std::string out = "$'";
    for (char c : word) {
        if (c == '\\' || c == '\'')
            out += std::string("\\") + c;
        else if (c == '\n')
            out += "\\n";
        else if (c == '\t')
            out += "\\t";
        else if (control(c))
            out += format("\\x%02x", static_cast<unsigned>(static_cast<unsigned char>(c)));
        else
            out += c;
    }
    return out + "'";
}

} // namespace

std::string shell_quote(std::string_view word) {
    bool bare = !word.empty();
    bool controls = false;
    for (char c : word) {
        bare = bare && plain(c);
        controls = controls || control(c);
    }
    if (bare)
        return std::string(word);
    if (controls)
        return ansi_c_quote(word);
    std::string out = "'";
    for (char c : word) {
        if (c == '\'')
            out += "'\\''";
        else
            out += c;
    }
    return out + "'";
}

std::string command_text(const std::vector<std::string>& command) {
    std::string out;
    for (const auto& w : command) {
        if (!out.empty())
            out += ' ';
        out += shell_quote(w);
    }
    return out;
}

std::string hook_line(const Hook& hook, size_t number) {
    std::string out = format("%zu %s", number, event_name(hook.event));
    if (is_tool_event(hook.event)) {
        if (hook.tools.empty())
            out += " *";
        for (const auto& p : hook.tools)
            out += " " + p;
    }
    if (hook.timeout_s != k_default_timeout_s)
        out += format(" (timeout %d s)", hook.timeout_s);
    return out + ": " + command_text(hook.command);
}

} // namespace sion::hooks
