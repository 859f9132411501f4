// SPDX-License-Identifier: MIT
// mcpd/review: effects from annotations and overrides, the digest a pin keeps (what changes it and
// what does not), names a model can be given, names as messages show them, the comparison against
// pins, and the seed's lines.
#include "lib/proto/mcp_names.hpp"
#include "mcpd/config.hpp"
#include "mcpd/review.hpp"

#include <gtest/gtest.h>

#include <string>

namespace sion::mcpd {
namespace {

Json parse(std::string_view text) {
    auto json = Json::parse(text);
    EXPECT_TRUE(json) << text;
    return json ? std::move(*json) : Json::array();
}

Effect effect_of(std::string_view annotations) {
    return effect_of_annotations(parse(annotations).view());
}

std::vector<ToolDef> defs(std::string_view tools, const std::map<std::string, Effect>& effects = {},
                          std::string_view server = "notes") {
    return tool_defs(parse(tools).view(), effects, server);
}

ToolDef one(std::string_view tool, const std::map<std::string, Effect>& effects = {}) {
    auto d = defs("[" + std::string(tool) + "]", effects);
    EXPECT_EQ(d.size(), 1U);
    return d.empty() ? ToolDef{} : std::move(d.front());
}

TEST(McpdReview, AToolThatSaysNothingReachesTheOpenWorld) {
    EXPECT_EQ(effect_of("{}"), Effect::external);
    EXPECT_EQ(effect_of("null"), Effect::external);
    EXPECT_EQ(effect_of(R"({"readOnlyHint":true})"), Effect::external);
    EXPECT_EQ(effect_of(R"({"openWorldHint":true,"readOnlyHint":true})"), Effect::external);
    // Hints that are not booleans say nothing.
    EXPECT_EQ(effect_of(R"({"openWorldHint":"false","readOnlyHint":true})"), Effect::external);
}

TEST(McpdReview, OnlyAClosedReadOnlyToolIsARead) {
    EXPECT_EQ(effect_of(R"({"readOnlyHint":true,"openWorldHint":false})"), Effect::read);
    EXPECT_EQ(effect_of(R"({"openWorldHint":false})"), Effect::write);
    EXPECT_EQ(effect_of(R"({"readOnlyHint":false,"openWorldHint":false})"), Effect::write);
    EXPECT_EQ(effect_of(R"({"readOnlyHint":"yes","openWorldHint":false})"), Effect::write);
}

TEST(McpdReview, IdempotentWritesRepeatAndReadsAlwaysDo) {
    ToolDef add =
        one(R"({"name":"add_note","annotations":{"idempotentHint":true,"openWorldHint":false}})");
    EXPECT_EQ(add.effect, Effect::write);
    EXPECT_TRUE(add.idempotent);
    EXPECT_EQ(effect_label(add), "write, repeats run again");
    ToolDef del = one(
        R"({"name":"delete_note","annotations":{"idempotentHint":false,"openWorldHint":false}})");
    EXPECT_FALSE(del.idempotent);
    EXPECT_EQ(effect_label(del), "write");
    ToolDef read =
        one(R"({"name":"list","annotations":{"readOnlyHint":true,"openWorldHint":false}})");
    EXPECT_TRUE(read.idempotent);
    EXPECT_EQ(effect_label(read), "read");
}

TEST(McpdReview, EffectOverridesWinOverAnnotations) {
    std::map<std::string, Effect> effects{{"export_notes", Effect::spend}, {"peek", Effect::read}};
    ToolDef spend =
        one(R"({"name":"export_notes","annotations":{"idempotentHint":true}})", effects);
    EXPECT_EQ(spend.effect, Effect::spend);
    EXPECT_EQ(effect_label(spend), "spend, repeats run again");
    ToolDef peek = one(R"({"name":"peek"})", effects);
    EXPECT_EQ(peek.effect, Effect::read);
    EXPECT_TRUE(peek.idempotent);
    EXPECT_EQ(one(R"({"name":"other"})", effects).effect, Effect::external);
}

TEST(McpdReview, ALocalToolDoesNotTaintAndKeepsItsEffect) {
    ServerConfig c;
    ASSERT_TRUE(set_effect(c, "query=read-local"));
    ASSERT_TRUE(set_effect(c, "save=write-local"));
    ASSERT_TRUE(set_effect(c, "send=external"));
    auto d =
        tool_defs(parse(R"([{"name":"query"},{"name":"save","annotations":{"idempotentHint":true}},
                                 {"name":"send"},{"name":"other"}])")
                      .view(),
                  c.effects, "db", c.local);
    ASSERT_EQ(d.size(), 4U);
    EXPECT_EQ(d[0].effect, Effect::read);
    EXPECT_TRUE(d[0].local);
    EXPECT_FALSE(taints(d[0]));
    EXPECT_EQ(effect_label(d[0]), "read-local");
    EXPECT_EQ(d[1].effect, Effect::write);
    EXPECT_FALSE(taints(d[1]));
    EXPECT_EQ(effect_label(d[1]), "write-local, repeats run again");
    EXPECT_TRUE(taints(d[2]));
    EXPECT_TRUE(taints(d[3])); // says nothing: external
    // A server whose data is from outside (sion's mail): its reads taint, unless made local.
    auto own = tool_defs(parse(R"([{"name":"read_mail","annotations":{"readOnlyHint":true,
                                    "openWorldHint":false}}])")
                             .view(),
                         {}, "mail");
    ASSERT_EQ(own.size(), 1U);
    EXPECT_EQ(own[0].effect, Effect::read);
    EXPECT_FALSE(taints(own[0]));
    EXPECT_TRUE(taints(own[0], true));
    EXPECT_FALSE(taints(d[0], true));
    // Made external again, a tool is no longer local.
    ASSERT_TRUE(set_effect(c, "query=read"));
    EXPECT_EQ(c.local, (std::set<std::string>{"save"}));
    EXPECT_EQ(set_effect(c, "query=external-local").error().message(),
              "unknown effect 'external-local': give read, read-local, write, write-local, "
              "external or spend");
    EXPECT_EQ(set_effect(c, "=read").error().exit(), Exit::usage);
}

TEST(McpdReview, TheDigestCoversWhatTheModelIsToldAndWhatTheToolClaims) {
    std::string base =
        one(R"({"name":"t","description":"d","inputSchema":{"type":"object"},"annotations":{"readOnlyHint":true}})")
            .digest;
    EXPECT_EQ(base.size(), 64U);
    // Member order and whitespace do not matter.
    EXPECT_EQ(
        one(R"({ "annotations":{"readOnlyHint":true}, "inputSchema":{"type":"object"}, "description":"d", "name":"t" })")
            .digest,
        base);
    // Members outside the pin do not either.
    EXPECT_EQ(
        one(R"({"name":"t","description":"d","inputSchema":{"type":"object"},"annotations":{"readOnlyHint":true},"title":"T","_meta":{"x":1}})")
            .digest,
        base);
    // Each part the pin covers does.
    for (
        std::string_view changed : {
            R"({"name":"t","description":"d!","inputSchema":{"type":"object"},"annotations":{"readOnlyHint":true}})",
            R"({"name":"t","description":"d","inputSchema":{"type":"object","properties":{}},"annotations":{"readOnlyHint":true}})",
            R"({"name":"t","description":"d","inputSchema":{"type":"object"},"annotations":{"readOnlyHint":false}})",
            R"({"name":"t","description":"d","inputSchema":{"type":"object"}})",
            R"({"name":"t","description":"d","inputSchema":{"type":"object"},"annotations":{}})",
            R"({"name":"u","description":"d","inputSchema":{"type":"object"},"annotations":{"readOnlyHint":true}})",
        })
        EXPECT_NE(one(changed).digest, base) << changed;
}

TEST(McpdReview, NamesAModelCannotBeGivenAreKeptUnusable) {
    auto d = defs(R"([{"name":"ok"},{"name":"get weather"},{"name":"files/read"},{"name":"café"},
                     {"name":""},{"name":"ok"},"not a tool",{"description":"no name"},{"name":7}])");
    ASSERT_EQ(d.size(), 6U);
    EXPECT_EQ(d[0].name, "ok");
    EXPECT_TRUE(d[0].unusable.empty());
    for (size_t i = 1; i < 5; ++i)
        EXPECT_EQ(d[i].unusable, "its name is not 1 to 64 letters, digits, '_' and '-' with the "
                                 "server's name before it")
            << d[i].name;
    EXPECT_EQ(d[5].unusable, "the server lists it twice");
}

TEST(McpdReview, AToolWhoseHeaderMarksBreakTheRulesIsKeptUnusable) {
    auto defs = tool_defs(parse(R"([
        {"name":"ok","inputSchema":{"properties":{"r":{"type":"string","x-mcp-header":"Region"}}}},
        {"name":"twice","inputSchema":{"properties":{"a":{"type":"string","x-mcp-header":"X"},
                                                     "b":{"type":"string","x-mcp-header":"x"}}}}])"),
                          {}, "web");
    ASSERT_EQ(defs.size(), 2U);
    EXPECT_EQ(defs[0].unusable, "");
    EXPECT_EQ(
        unusable_notice("web", defs[1]),
        "MCP server web: the tool \"twice\" is not offered: its x-mcp-header 'x' is given twice");
}

TEST(McpdReview, APrefixedNameIsSixtyFourCharactersAtMost) {
    // "notes_" is six: 58 more fit.
    EXPECT_TRUE(offerable_name("notes", std::string(58, 'a')));
    EXPECT_FALSE(offerable_name("notes", std::string(59, 'a')));
    EXPECT_TRUE(offerable_name("n", "A-b_9"));
    EXPECT_FALSE(offerable_name("n", ""));
    EXPECT_FALSE(offerable_name("n", "a.b"));
}

TEST(McpdReview, ServerNames) {
    for (std::string_view good : {"notes", "a", "1x", "a-1", "abcdefghijklmnopqrstuvwxyz012345"})
        EXPECT_TRUE(proto::check_server_name(good)) << good;
    for (std::string_view bad :
         {"", "Notes", "a_b", "-a", "a b", "a/b", "abcdefghijklmnopqrstuvwxyz0123456"}) {
        auto s = proto::check_server_name(bad);
        ASSERT_FALSE(s) << bad;
        EXPECT_EQ(s.error().exit(), Exit::usage);
    }
    EXPECT_EQ(proto::check_server_name("a\nB").error().message(),
              "invalid server name 'a B': give 1 to 32 lowercase letters, digits and hyphens");
}

TEST(McpdReview, OneLineForATerminal) {
    EXPECT_EQ(one_line("  Keep\ta note.\n\nIt stays.  "), "Keep a note. It stays.");
    EXPECT_EQ(one_line("bell\a\x1b[31mred"), "bell[31mred");
    EXPECT_EQ(one_line("\r\n"), "");
    EXPECT_EQ(one_line("café ☕"), "café ☕");
}

TEST(McpdReview, LongNamesAreShownCut) {
    std::string exact(64, 'l');
    EXPECT_EQ(shown_name(exact), exact);
    EXPECT_EQ(shown_name(exact + "oo"), exact + "…");
    // Characters, not bytes: a name of 70 'é' is cut after 64 of them, never inside one.
    std::string accents;
    for (int i = 0; i < 70; ++i)
        accents += "é";
    EXPECT_EQ(shown_name(accents), accents.substr(0, 128) + "…");
    EXPECT_EQ(shown_name("new\nline"), "new line");
}

TEST(McpdReview, ToolsAgainstTheirPins) {
    auto now = defs(R"([{"name":"export_notes","description":"Send."},{"name":"list_notes"},
                       {"name":"add_note","description":"Keep, and forward."}])");
    auto then = defs(R"([{"name":"list_notes"},{"name":"add_note","description":"Keep."},
                        {"name":"delete_note"}])");
    std::vector<Pin> pins;
    for (const ToolDef& t : then)
        pins.push_back({t.name, t.digest, Json::copy_of(t.definition)});
    auto r = compare(now, pins);
    ASSERT_EQ(r.size(), 4U);
    EXPECT_EQ(r[0].state, PinState::added);
    EXPECT_EQ(r[0].tool->name, "export_notes");
    EXPECT_EQ(r[0].pin, nullptr);
    EXPECT_EQ(r[1].state, PinState::unchanged);
    EXPECT_EQ(r[2].state, PinState::changed);
    EXPECT_EQ(r[2].pin->tool, "add_note");
    EXPECT_EQ(r[3].state, PinState::removed);
    EXPECT_EQ(r[3].tool, nullptr);
    EXPECT_EQ(r[3].pin->tool, "delete_note");
}

TEST(McpdReview, TheSeedsLines) {
    ToolDef add = one(
        R"({"name":"add_note","description":"Keep a note under a name (lowercase letters, digits and hyphens), replacing one of that name.","annotations":{"readOnlyHint":false,"destructiveHint":true,"idempotentHint":true,"openWorldHint":false}})");
    EXPECT_EQ(review_line(add),
              "add_note (write, repeats run again): Keep a note under a name "
              "(lowercase letters, digits and hyphens), replacing one of that name.");
    EXPECT_EQ(review_line(one(R"({"name":"bare","description":" \n "})")), "bare (external)");
    ToolDef exported = one(R"({"name":"export_notes"})");
    EXPECT_EQ(not_offered_notice("notes", {PinState::added, &exported, nullptr}),
              "MCP server notes: export_notes is new and was not reviewed, so it is not offered "
              "(`sion agent mcp review notes`)");
    Pin pin{"add_note", "0", Json::object()};
    EXPECT_EQ(not_offered_notice("notes", {PinState::changed, &add, &pin}),
              "MCP server notes: add_note changed since it was reviewed, so it is not offered "
              "(`sion agent mcp review notes`)");
    EXPECT_EQ(not_offered_notice("notes", {PinState::unchanged, &add, &pin}), "");
    EXPECT_EQ(not_offered_notice("notes", {PinState::removed, nullptr, &pin}), "");
}

TEST(McpdReview, UnusableNoticesShowTheNameCut) {
    auto d = defs(R"([{"name":")" + std::string(200, 'l') + R"("}])", {}, "hostile");
    ASSERT_EQ(d.size(), 1U);
    EXPECT_EQ(unusable_notice("hostile", d[0]),
              "MCP server hostile: the tool \"" + std::string(64, 'l')
                  + "…\" is not offered: its name is not 1 to 64 letters, digits, '_' and '-' "
                    "with the server's name before it");
}

} // namespace
} // namespace sion::mcpd
