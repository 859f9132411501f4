// SPDX-License-Identifier: MIT
// hooks/hooks_file and hooks/event against their schemas' fixtures: every file of
// tests/fixtures/hooks/ and hooks-event/ parses, and every file of hooks-invalid/ and
// hooks-event-invalid/ is refused for the reason it was written for (the schemas and the parsers
// agree both ways; tests/validate_fixtures.py checks the schemas' side).
#include "hooks/event.hpp"
#include "hooks/hooks_file.hpp"

#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <string>

namespace sion::hooks {
namespace {

namespace fs = std::filesystem;

fs::path source_dir() {
    const char* dir = std::getenv("SION_TEST_SOURCE_DIR"); // NOLINT(concurrency-mt-unsafe)
    return dir != nullptr ? fs::path(dir) : fs::path(".");
}

// Name and text of each .json file in tests/fixtures/<sub>, sorted by name.
std::map<std::string, std::string> fixtures(const std::string& sub) {
    std::map<std::string, std::string> out;
    std::error_code ec;
    for (const auto& entry : fs::directory_iterator(source_dir() / "tests/fixtures" / sub, ec)) {
        if (entry.path().extension() != ".json")
            continue;
        std::ifstream in(entry.path(), std::ios::binary);
        out[entry.path().filename().string()] =
            std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
    }
    return out;
}

// The event a fixture says it is for, so that it is parsed as fire EVENT would; before-tool for one
// that names none it knows.
Event event_of(const std::string& text) {
    auto json = Json::parse(text);
    if (!json || !json->view().is_object())
        return Event::before_tool;
    auto name = json->view().get("event").as_string();
    if (!name)
        return Event::before_tool;
    return parse_event_name(*name).value_or(Event::before_tool);
}

// Checks that each invalid fixture is refused with the message `why` names for it, and that each
// message named has its fixture.
template <class Parse>
void expect_refusals(const std::string& sub, const std::map<std::string, std::string>& why,
                     Parse parse) {
    auto files = fixtures(sub);
    ASSERT_GE(files.size(), 3U) << "fixtures not found under " << source_dir();
    for (const auto& [name, text] : files) {
        Status r = parse(text);
        if (r) {
            ADD_FAILURE() << name << " parsed";
            continue;
        }
        EXPECT_EQ(r.error().exit(), Exit::data) << name;
        auto it = why.find(name);
        if (it == why.end()) {
            ADD_FAILURE() << name << ": say here why it is refused; the parser says: "
                          << r.error().message();
            continue;
        }
        EXPECT_EQ(r.error().message(), it->second) << name;
    }
    for (const auto& [name, message] : why)
        EXPECT_TRUE(files.contains(name)) << "no fixture " << name;
}

TEST(HooksFixtures, EveryValidHooksFileParsesAndRendersBack) {
    auto files = fixtures("hooks");
    ASSERT_GE(files.size(), 3U) << "fixtures not found under " << source_dir();
    for (const auto& [name, text] : files) {
        auto hooks = parse_hooks(text);
        ASSERT_TRUE(hooks) << name << ": " << hooks.error().message();
        auto again = parse_hooks(render_hooks(*hooks));
        ASSERT_TRUE(again) << name << ": " << again.error().message();
        EXPECT_EQ(render_hooks(*again), render_hooks(*hooks)) << name;
    }
}

TEST(HooksFixtures, TheSeedsHooksAreAsTheSeedAddsThem) {
    auto files = fixtures("hooks");
    ASSERT_TRUE(files.contains("seed.json"));
    auto hooks = parse_hooks(files["seed.json"]);
    ASSERT_TRUE(hooks) << hooks.error().message();
    ASSERT_EQ(hooks->size(), 2U);
    EXPECT_EQ((*hooks)[0].event, Event::before_tool);
    EXPECT_EQ((*hooks)[0].tools, std::vector<std::string>{"shell"});
    EXPECT_EQ((*hooks)[0].timeout_s, 30);
    EXPECT_EQ((*hooks)[0].command, std::vector<std::string>{"/home/me/guard.sh"});
    EXPECT_EQ((*hooks)[1].event, Event::after_tool);
    EXPECT_EQ((*hooks)[1].tools, std::vector<std::string>{"github_*"});
    // What sion-hooks writes is the fixture, byte for byte.
    EXPECT_EQ(render_hooks(*hooks), files["seed.json"]);
}

TEST(HooksFixtures, EveryInvalidHooksFileIsRefusedForItsReason) {
    const std::map<std::string, std::string> why = {
        {"command-dot-relative.json", "hook 1: the command './log.sh' is a relative path: give an "
                                      "absolute path, or a bare name found on PATH"},
        {"command-empty.json", "hook 1: the command is empty"},
        {"command-first-empty.json", "hook 1: the command's first word is empty"},
        {"command-number-word.json", "hook 1: member 'command' holds a number, not only strings"},
        {"command-relative.json", "hook 1: the command 'bin/log.sh' is a relative path: give an "
                                  "absolute path, or a bare name found on PATH"},
        {"command-string.json", "hook 1: member 'command' is a string, not an array of strings"},
        {"event-number.json", "hook 1: member 'event' is a number, not a string"},
        {"event-unknown.json", "hook 1: member 'event': unknown event 'before-tol' (give "
                               "before-tool, after-tool, run-start or run-end)"},
        {"hook-string.json", "hook 1: it is a string, not an object"},
        {"hooks-null.json", "member 'hooks' is null, not an array"},
        {"hooks-object.json", "member 'hooks' is an object, not an array"},
        {"no-command.json", "hook 1: member 'command' is missing"},
        {"no-event.json", "hook 1: member 'event' is missing"},
        {"no-hooks.json", "member 'hooks' is missing"},
        {"not-object.json", "it is an array, not an object with a member 'hooks'"},
        {"pattern-comma.json", "hook 1: invalid pattern 'shell,read_file': it has a ',' (give "
                               "--tool once for each pattern)"},
        {"pattern-empty.json", "hook 1: invalid pattern '': it is empty"},
        {"pattern-newline.json", "hook 1: invalid pattern: it has a control character"},
        {"pattern-non-ascii.json",
         "hook 1: invalid pattern 'caf\u00e9': tool names are printable ASCII"},
        {"pattern-space.json", "hook 1: invalid pattern 'read file': it has a space"},
        {"pattern-too-long.json", "hook 1: invalid pattern: it is longer than 256 characters"},
        {"run-end-tools.json", "hook 1: a run-end hook is for no tool, yet it has tool patterns"},
        {"run-start-tools.json",
         "hook 1: a run-start hook is for no tool, yet it has tool patterns"},
        {"second-hook-bad.json", "hook 2: the command is empty"},
        {"timeout-fraction.json", "hook 1: member 'timeout' is 2.5, not a whole number of seconds"},
        {"timeout-high.json", "hook 1: member 'timeout' is 3601, not 1 to 3600 seconds"},
        {"timeout-negative.json", "hook 1: member 'timeout' is -5, not 1 to 3600 seconds"},
        {"timeout-null.json", "hook 1: member 'timeout' is null, not a whole number of seconds"},
        {"timeout-string.json",
         "hook 1: member 'timeout' is a string, not a whole number of seconds"},
        {"timeout-zero.json", "hook 1: member 'timeout' is 0, not 1 to 3600 seconds"},
        {"tools-null.json", "hook 1: member 'tools' is null, not an array of strings"},
        {"tools-number.json", "hook 1: member 'tools' holds a number, not only strings"},
        {"tools-string.json", "hook 1: member 'tools' is a string, not an array of strings"},
        {"unknown-member.json",
         "hook 1: unknown member 'tool' (a hook has event, tools, timeout and command)"},
        {"unknown-top.json", "unknown member 'version' (the file has only 'hooks')"},
    };
    expect_refusals("hooks-invalid", why, [](const std::string& text) -> Status {
        auto r = parse_hooks(text);
        if (!r)
            return r.error();
        return {};
    });
}

TEST(HooksFixtures, EveryValidEventParses) {
    auto files = fixtures("hooks-event");
    ASSERT_GE(files.size(), 4U) << "fixtures not found under " << source_dir();
    for (const auto& [name, text] : files) {
        auto e = parse_event_input(text, event_of(text));
        EXPECT_TRUE(e) << name << ": " << (e ? std::string() : e.error().message());
    }
}

TEST(HooksFixtures, EveryInvalidEventIsRefusedForItsReason) {
    const std::map<std::string, std::string> why = {
        {"after-tool-no-outcome.json", "invalid event: member 'outcome' is missing"},
        {"after-tool-outcome-no-state.json", "invalid event: member 'outcome.state' is missing"},
        {"after-tool-outcome-no-text.json", "invalid event: member 'outcome.text' is missing"},
        {"after-tool-outcome-state-unknown.json",
         "invalid event: member 'outcome.state' is 'fine', not ok, error, refused, uncertain or "
         "interrupted"},
        {"after-tool-outcome-string.json",
         "invalid event: member 'outcome' is a string, not an object"},
        {"after-tool-outcome-text-null.json",
         "invalid event: member 'outcome.text' is null, not a string"},
        {"before-tool-no-input.json", "invalid event: member 'input' is missing"},
        {"before-tool-no-tool.json", "invalid event: member 'tool' is missing"},
        {"before-tool-tool-empty.json", "invalid event: member 'tool' is empty"},
        {"before-tool-tool-number.json", "invalid event: member 'tool' is a number, not a string"},
        {"call-number.json", "invalid event: member 'call' is a number, not a string"},
        {"effect-unknown.json",
         "invalid event: member 'effect' is 'delete', not read, write, external or spend"},
        {"event-number.json", "invalid event: member 'event' is a number, not a string"},
        {"event-unknown.json",
         "invalid event: member 'event' is 'before-call', but fire was given 'before-tool'"},
        {"no-event.json", "invalid event: member 'event' is missing"},
        {"no-session.json", "invalid event: member 'session' is missing"},
        {"not-object.json", "invalid event: it is a string, not an object"},
        {"run-end-ended-string.json", "invalid event: member 'ended' is a string, not an object"},
        {"run-end-no-ended.json", "invalid event: member 'ended' is missing"},
        {"run-end-outcome-bad.json", "invalid event: member 'outcome.text' is missing"},
        {"run-end-state-unknown.json", "invalid event: member 'ended.state' is 'running', not "
                                       "done, stopped, failed or interrupted"},
        {"run-end-why-number.json", "invalid event: member 'ended.why' is a number, not a string"},
        {"run-start-no-said.json", "invalid event: member 'said' is missing"},
        {"run-start-said-array.json", "invalid event: member 'said' is an array, not a string"},
        {"run-start-tool-empty.json", "invalid event: member 'tool' is empty"},
        {"session-empty.json", "invalid event: member 'session' is empty"},
        {"session-newline.json", "invalid event: member 'session' has a control character"},
        {"session-number.json", "invalid event: member 'session' is a number, not a string"},
        {"workspace-empty.json", "invalid event: member 'workspace' is '', not an absolute path"},
        {"workspace-number.json", "invalid event: member 'workspace' is a number, not a string"},
        {"workspace-relative.json",
         "invalid event: member 'workspace' is 'work', not an absolute path"},
    };
    expect_refusals("hooks-event-invalid", why, [](const std::string& text) -> Status {
        auto r = parse_event_input(text, event_of(text));
        if (!r)
            return r.error();
        return {};
    });
}

// What a schema cannot say: a member given twice, which JSON readers resolve differently (cJSON the
// first, jq and Python the last), so that a guard could read one command while the tool runs
// another. lib/json refuses them wherever JSON is read.
TEST(HooksFixtures, MembersGivenTwiceAreRefused) {
    auto hooks =
        parse_hooks(R"({"hooks": [], "hooks": [{"event": "run-end", "command": ["/g"]}]})");
    ASSERT_FALSE(hooks);
    EXPECT_EQ(hooks.error().message(), "invalid JSON: member 'hooks' is given twice");
    hooks = parse_hooks(
        R"({"hooks": [{"event": "run-end", "command": ["/g"]},
                      {"event": "before-tool", "tools": ["shell"], "tools": [], "command": ["/g"]}]})");
    ASSERT_FALSE(hooks);
    EXPECT_EQ(hooks.error().message(), "invalid JSON: member 'hooks[1].tools' is given twice");
    auto e = parse_event_input(
        R"({"event":"before-tool","session":"s","tool":"shell","input":{"command":"rm -rf /","command":"ls"}})",
        Event::before_tool);
    ASSERT_FALSE(e);
    EXPECT_EQ(e.error().exit(), Exit::data);
    EXPECT_EQ(e.error().message(),
              "invalid event: invalid JSON: member 'input.command' is given twice");
    e = parse_event_input(
        R"({"event":"before-tool","session":"s","tool":"read_file","tool":"shell","input":{}})",
        Event::before_tool);
    ASSERT_FALSE(e);
    EXPECT_EQ(e.error().message(), "invalid event: invalid JSON: member 'tool' is given twice");
    e = parse_event_input(
        R"({"event":"after-tool","session":"s","tool":"t","input":{"edits":[{"a":1},{"b":2,"b":3}]},"outcome":{"state":"ok","text":""}})",
        Event::after_tool);
    ASSERT_FALSE(e);
    EXPECT_EQ(e.error().message(),
              "invalid event: invalid JSON: member 'input.edits[1].b' is given twice");
    // The same name in different objects is not twice.
    e = parse_event_input(
        R"({"event":"before-tool","session":"s","tool":"t","input":{"a":{"x":1},"b":{"x":1}}})",
        Event::before_tool);
    EXPECT_TRUE(e) << e.error().message();
}

} // namespace
} // namespace sion::hooks
