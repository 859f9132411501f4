// SPDX-License-Identifier: MIT
// Elicitation at the terminal (session/elicit.hpp): forms read from their schema, answers
// checked against it, secrets declined without asking, addresses shown with their host apart, and
// the conversation with a person played through a Terminal.
#include "session/elicit.hpp"

#include <gtest/gtest.h>

#include <deque>

namespace sion::session {
namespace {

Json parse(std::string_view text) {
    auto j = Json::parse(text);
    EXPECT_TRUE(j) << text;
    return j ? std::move(*j) : Json::object();
}

Form form_of(std::string_view schema) {
    auto form = parse_form(parse(schema));
    EXPECT_TRUE(form) << (form ? "" : form.error().message());
    return form ? std::move(*form) : Form{};
}

// A person who types `lines` in turn (nullopt: the end of input), and everything they were shown.
struct Played {
    std::deque<std::optional<std::string>> lines;
    std::string shown = {};
    int asked = 0;

    Terminal terminal() {
        return {[this](std::string_view text) { shown += text; },
                [this](std::string_view prompt) -> std::optional<std::string> {
                    shown += prompt;
                    ++asked;
                    if (lines.empty())
                        return std::nullopt;
                    auto line = lines.front();
                    lines.pop_front();
                    shown += line.value_or("") + "\n";
                    return line;
                }};
    }
};

const char* const k_note_form = R"({"type":"object","properties":{
    "name":{"type":"string","title":"Name","description":"The note's name","minLength":1,"maxLength":8},
    "priority":{"type":"string","enum":["low","high"],"enumNames":["Low","High"]},
    "count":{"type":"integer","minimum":1,"maximum":10},
    "urgent":{"type":"boolean","default":false}},
  "required":["name","count"]})";

TEST(ParseForm, ReadsEachKindOfField) {
    Form form = form_of(k_note_form);
    ASSERT_EQ(form.fields.size(), 4u);
    EXPECT_EQ(form.fields[0].name, "name");
    EXPECT_TRUE(form.fields[0].required);
    EXPECT_EQ(form.fields[0].title, "Name");
    EXPECT_EQ(form.fields[0].max_length, 8);
    EXPECT_EQ(form.fields[1].choices, (std::vector<std::string>{"low", "high"}));
    EXPECT_EQ(form.fields[1].choice_titles, (std::vector<std::string>{"Low", "High"}));
    EXPECT_FALSE(form.fields[1].required);
    EXPECT_EQ(form.fields[2].type, FormField::Type::integer);
    EXPECT_EQ(form.fields[2].maximum, 10.0);
    EXPECT_EQ(form.fields[3].type, FormField::Type::boolean);
    EXPECT_TRUE(form.fields[3].fallback.exists());
}

TEST(ParseForm, TitledChoices) {
    Form form = form_of(R"({"type":"object","properties":{"size":{"type":"string",
        "oneOf":[{"const":"s","title":"Small"},{"const":"l","title":"Large"}]}}})");
    ASSERT_EQ(form.fields.size(), 1u);
    EXPECT_EQ(form.fields[0].choices, (std::vector<std::string>{"s", "l"}));
    EXPECT_EQ(form.fields[0].choice_titles, (std::vector<std::string>{"Small", "Large"}));
}

TEST(ParseForm, RefusesWhatCannotBeAnswered) {
    auto form = parse_form(parse(R"({"type":"object","properties":{"tags":{"type":"array"}}})"));
    ASSERT_FALSE(form);
    EXPECT_EQ(form.error().message(), "field 'tags': its type is 'array': only text, numbers, yes "
                                      "or no and choices can be answered here");
    EXPECT_FALSE(parse_form(parse(R"([1])")));
    EXPECT_FALSE(parse_form(parse(R"({"properties":{"a":3}})")));
    EXPECT_FALSE(parse_form(parse(R"({"properties":{"a":{"type":"number","enum":["x"]}}})")));
}

TEST(SecretAsked, ByNameTitleDescriptionOrFormat) {
    auto secret = [](std::string_view schema) { return secret_asked(form_of(schema)); };
    EXPECT_EQ(secret(R"({"properties":{"password":{"type":"string"}}})"),
              "it asks for a password (field 'password')");
    EXPECT_EQ(secret(R"({"properties":{"apiKey":{"type":"string"}}})"),
              "it asks for a key (field 'apiKey')");
    EXPECT_EQ(secret(R"({"properties":{"API_TOKEN":{"type":"string"}}})"),
              "it asks for a token (field 'API_TOKEN')");
    EXPECT_EQ(secret(R"({"properties":{"x":{"type":"string","title":"Card number"}}})"),
              "it asks for a card number (field 'x')");
    EXPECT_EQ(
        secret(R"({"properties":{"x":{"type":"string","description":"Your client secret"}}})"),
        "it asks for a secret (field 'x')");
    EXPECT_EQ(secret(R"({"properties":{"x":{"type":"string","format":"password"}}})"),
              "it asks for a password (field 'x')");
    EXPECT_EQ(secret(R"({"properties":{"cvv":{"type":"integer"}}})"),
              "it asks for a card number (field 'cvv')");
    // Words that only hold those letters are not secrets.
    EXPECT_EQ(secret(R"({"properties":{"keyboard":{"type":"string","title":"Monkey tokenizer"}}})"),
              std::nullopt);
    EXPECT_EQ(secret(k_note_form), std::nullopt);
}

TEST(FieldValue, ChecksTypesRangesAndChoices) {
    Form form = form_of(k_note_form);
    const auto& name = form.fields[0];
    const auto& priority = form.fields[1];
    const auto& count = form.fields[2];
    const auto& urgent = form.fields[3];
    EXPECT_EQ(field_value(count, " 7 ")->dump(), "7");
    EXPECT_EQ(field_value(count, "11").error().message(),
              "count: give a whole number from 1 to 10, not '11'");
    EXPECT_EQ(field_value(count, "2.5").error().message(),
              "count: give a whole number from 1 to 10, not '2.5'");
    EXPECT_EQ(field_value(priority, "high")->dump(), "\"high\"");
    EXPECT_EQ(field_value(priority, "Low")->dump(), "\"low\"");
    EXPECT_EQ(field_value(priority, "medium").error().message(),
              "priority: give one of: low (Low), high (High), not 'medium'");
    EXPECT_EQ(field_value(urgent, "Yes")->dump(), "true");
    EXPECT_EQ(field_value(urgent, "n")->dump(), "false");
    EXPECT_EQ(field_value(urgent, "maybe").error().message(),
              "urgent: give yes or no, not 'maybe'");
    EXPECT_EQ(field_value(name, "release")->dump(), "\"release\"");
    EXPECT_EQ(field_value(name, "früh")->dump(), "\"früh\""); // characters, not bytes
    EXPECT_EQ(field_value(name, "much-too-long").error().message(),
              "name: give text of 1 to 8 characters, not 'much-too-long'");
}

TEST(FieldValue, Numbers) {
    Form form = form_of(R"({"properties":{"x":{"type":"number","minimum":0}}})");
    EXPECT_EQ(field_value(form.fields[0], "2.5")->dump(), "2.5");
    EXPECT_FALSE(field_value(form.fields[0], "-1"));
    EXPECT_FALSE(field_value(form.fields[0], "1e999"));
    EXPECT_FALSE(field_value(form.fields[0], "nan"));
    EXPECT_FALSE(field_value(form.fields[0], "2x"));
}

TEST(FieldValue, Formats) {
    Form form = form_of(R"({"properties":{
        "e":{"type":"string","format":"email"},"u":{"type":"string","format":"uri"},
        "d":{"type":"string","format":"date"},"t":{"type":"string","format":"date-time"}}})");
    const auto &e = form.fields[0], &u = form.fields[1], &d = form.fields[2], &t = form.fields[3];
    EXPECT_TRUE(field_value(e, "me@example.org"));
    for (const char* bad : {"me", "me@example", "@example.org", "a@b@c.org", "me@example."})
        EXPECT_FALSE(field_value(e, bad)) << bad;
    EXPECT_EQ(field_value(e, "me").error().message(), "e: give an email address, not 'me'");
    EXPECT_TRUE(field_value(u, "https://x.example/a?b"));
    EXPECT_TRUE(field_value(u, "mailto:me@example.org"));
    EXPECT_FALSE(field_value(u, "x.example/a"));
    EXPECT_FALSE(field_value(u, "1http://x"));
    EXPECT_TRUE(field_value(d, "2024-02-29"));
    for (const char* bad : {"2023-02-29", "2026-13-01", "2026-04-31", "26-01-01", "2026-1-01"})
        EXPECT_FALSE(field_value(d, bad)) << bad;
    EXPECT_TRUE(field_value(t, "2026-12-01T09:30:00Z"));
    EXPECT_TRUE(field_value(t, "2026-12-01T09:30:00.25+01:00"));
    EXPECT_FALSE(field_value(t, "2026-12-01 09:30"));
    EXPECT_FALSE(field_value(t, "2026-12-01T24:00:00Z"));
}

TEST(FormAnswer, NameValueLines) {
    Form form = form_of(k_note_form);
    auto content = form_answer(form, {"name: release", "count:3", "priority: High"});
    ASSERT_TRUE(content) << content.error().message();
    EXPECT_EQ(canonical_json(*content),
              R"({"count":3,"name":"release","priority":"high","urgent":false})");
}

TEST(FormAnswer, EveryProblemALine) {
    Form form = form_of(k_note_form);
    auto content = form_answer(form, {"count: 0", "colour: red", "just words", "urgent: sure"});
    ASSERT_FALSE(content);
    EXPECT_EQ(content.error().message(),
              "count: give a whole number from 1 to 10, not '0'\n"
              "there is no field 'colour': give one of name, priority, count, urgent\n"
              "'just words': give name: value, with a name of name, priority, count, urgent\n"
              "urgent: give yes or no, not 'sure'\n"
              "name is required");
}

TEST(FormAnswer, AnEmptyValueLeavesTheFieldOut) {
    Form form = form_of(R"({"properties":{"a":{"type":"string"},"b":{"type":"string"}}})");
    auto content = form_answer(form, {"a: x", "b: y", "a:"});
    ASSERT_TRUE(content);
    EXPECT_EQ(canonical_json(*content), R"({"b":"y"})");
}

TEST(FormAnswer, OneFieldTakesTheValueAlone) {
    Form form = form_of(R"({"properties":{"name":{"type":"string"}},"required":["name"]})");
    EXPECT_EQ(canonical_json(*form_answer(form, {"release: Friday"})),
              R"({"name":"release: Friday"})");
    EXPECT_EQ(canonical_json(*form_answer(form, {"name: release"})), R"({"name":"release"})");
}

TEST(UrlHost, TheHostApart) {
    EXPECT_EQ(url_host("https://x.example/a?b"), "x.example");
    EXPECT_EQ(url_host("https://Me:pw@X.Example:8443/a"), "x.example");
    EXPECT_EQ(url_host("https://good.example@evil.example/"), "evil.example");
    EXPECT_EQ(url_host("https://evil.example\\@good.example/"), "evil.example");
    EXPECT_EQ(url_host("https://evil.example#@good.example/"), "evil.example");
    EXPECT_EQ(url_host("http://[::1]:8080/x"), "[::1]");
    EXPECT_EQ(url_host("x.example/a"), "");
    EXPECT_EQ(url_host("://x"), "");
    EXPECT_EQ(url_host("ht tp://x"), "");
}

TEST(TerminalText, ControlsAndReorderingShownAsMarks) {
    EXPECT_EQ(terminal_text("a\x1b[2Jb\tc\nd\x7f"), "a?[2Jb c\nd?");
    EXPECT_EQ(terminal_text("x\xc2\x9by"), "x?y"); // C1 CSI
    EXPECT_EQ(terminal_text("evil\xe2\x80\xae"
                            "exe.txt"),
              "evil?exe.txt"); // right-to-left override
    EXPECT_EQ(terminal_text("café — ok"), "café — ok");
}

Json form_request(std::string_view schema, std::string_view message = "Name the note.") {
    Json params = Json::object();
    params.set("server", "notes");
    params.set("mode", "form");
    params.set("message", message);
    params.set("requestedSchema", parse(schema));
    return params;
}

const char* const k_one_field =
    R"({"type":"object","properties":{"name":{"type":"string","maxLength":8}},"required":["name"]})";

TEST(Elicit, AOneFieldFormAnswered) {
    Played person{{"release"}};
    Elicited e = elicit(form_request(k_one_field), person.terminal());
    EXPECT_EQ(canonical_json(e.result), R"({"action":"accept","content":{"name":"release"}})");
    EXPECT_EQ(e.said, "accepted");
    EXPECT_EQ(person.shown, "MCP server notes asks: \"Name the note.\"\n"
                            "  name (text of at most 8 characters, required)\n"
                            "Answer with the value; an empty line declines, the end of input "
                            "cancels.\n"
                            "> release\n");
}

TEST(Elicit, ABadAnswerIsAskedAgain) {
    Played person{{"much-too-long", "short"}};
    Elicited e = elicit(form_request(k_one_field), person.terminal());
    EXPECT_EQ(canonical_json(e.result), R"({"action":"accept","content":{"name":"short"}})");
    EXPECT_EQ(person.asked, 2);
    EXPECT_NE(person.shown.find("> much-too-long\n"
                                "name: give text of at most 8 characters, not 'much-too-long'\n"
                                "Answer again.\n> short\n"),
              std::string::npos)
        << person.shown;
}

TEST(Elicit, AnEmptyLineDeclinesTheEndOfInputCancels) {
    Played declining{{""}};
    EXPECT_EQ(canonical_json(elicit(form_request(k_one_field), declining.terminal()).result),
              R"({"action":"decline"})");
    Played gone{{}};
    Elicited e = elicit(form_request(k_one_field), gone.terminal());
    EXPECT_EQ(canonical_json(e.result), R"({"action":"cancel"})");
    EXPECT_EQ(e.said, "cancelled");
    // After a bad answer too.
    Played late{{"much-too-long", std::nullopt}};
    EXPECT_EQ(canonical_json(elicit(form_request(k_one_field), late.terminal()).result),
              R"({"action":"cancel"})");
}

TEST(Elicit, AFormOfSeveralFields) {
    // The answer ends once every field is named, or at an empty line.
    Played all{{"name: release", "count: 2", "priority: low", "urgent: yes"}};
    Elicited e = elicit(form_request(k_note_form), all.terminal());
    EXPECT_EQ(
        canonical_json(e.result),
        R"({"action":"accept","content":{"count":2,"name":"release","priority":"low","urgent":true}})");
    EXPECT_EQ(all.asked, 4);
    Played some{{"name: release", "count: 2", ""}};
    e = elicit(form_request(k_note_form), some.terminal());
    EXPECT_EQ(canonical_json(e.result),
              R"({"action":"accept","content":{"count":2,"name":"release","urgent":false}})");
    EXPECT_NE(some.shown.find("  priority (one of: low (Low), high (High))\n"
                              "  count (a whole number from 1 to 10, required)\n"
                              "  urgent (yes or no, false if left out)\n"
                              "Answer with name: value lines, then an empty line; an empty line "
                              "first declines, the end of input cancels.\n"),
              std::string::npos)
        << some.shown;
    // A required field left out: the form is asked again, whole.
    Played missing{{"name: release", "", "count: 1", "name: x", ""}};
    e = elicit(form_request(k_note_form), missing.terminal());
    EXPECT_EQ(canonical_json(e.result),
              R"({"action":"accept","content":{"count":1,"name":"x","urgent":false}})");
    EXPECT_NE(missing.shown.find("count is required\nAnswer again.\n"), std::string::npos);
}

TEST(Elicit, ASecretIsDeclinedWithoutAsking) {
    Played person{{"hunter2"}};
    Elicited e =
        elicit(form_request(R"({"properties":{"user":{"type":"string"},"pass":{"type":"string",
            "title":"Password"}}})"),
               person.terminal());
    EXPECT_EQ(canonical_json(e.result), R"({"action":"decline"})");
    EXPECT_EQ(e.said, "declined without asking: it asks for a password (field 'pass')");
    EXPECT_EQ(person.asked, 0);
    EXPECT_EQ(person.shown, "");
}

TEST(Elicit, AFormThatCannotBeAnsweredIsDeclinedWithoutAsking) {
    Played person{{"x"}};
    Elicited e =
        elicit(form_request(R"({"properties":{"tags":{"type":"array"}}})"), person.terminal());
    EXPECT_EQ(canonical_json(e.result), R"({"action":"decline"})");
    EXPECT_EQ(person.asked, 0);
    Json params = form_request(k_one_field);
    params.set("mode", "telepathy");
    EXPECT_EQ(elicit(params, person.terminal()).said,
              "declined without asking: its mode 'telepathy' cannot be answered here");
}

TEST(Elicit, TheMessageIsMadeSafeForTheTerminal) {
    Played person{{""}};
    (void)elicit(form_request(k_one_field, "Name it\x1b]0;owned\x07 now"), person.terminal());
    EXPECT_NE(person.shown.find("MCP server notes asks: \"Name it?]0;owned? now\"\n"),
              std::string::npos)
        << person.shown;
}

Json url_request(std::string_view url) {
    Json params = Json::object();
    params.set("server", "notes");
    params.set("mode", "url");
    params.set("message", "Sign in to continue.");
    params.set("url", url);
    params.set("elicitationId", "e1");
    return params;
}

TEST(Elicit, AnAddressIsShownWithItsHostAndNeverOpened) {
    Played person{{"y"}};
    Elicited e = elicit(url_request("https://good.example@x.example/a?b"), person.terminal());
    EXPECT_EQ(canonical_json(e.result), R"({"action":"accept"})");
    EXPECT_EQ(person.shown, "MCP server notes asks: \"Sign in to continue.\"\n"
                            "MCP server notes wants you to open "
                            "https://good.example@x.example/a?b (host x.example)\n"
                            "It is not opened for you. Did you open it? [y/N] y\n");
    Played no{{"n"}};
    EXPECT_EQ(canonical_json(elicit(url_request("https://x.example/"), no.terminal()).result),
              R"({"action":"decline"})");
    Played gone{{}};
    EXPECT_EQ(canonical_json(elicit(url_request("https://x.example/"), gone.terminal()).result),
              R"({"action":"cancel"})");
    Played odd{{""}};
    (void)elicit(url_request("file:/etc/passwd"), odd.terminal());
    EXPECT_NE(odd.shown.find("open file:/etc/passwd (it names no host)\n"), std::string::npos);
}

TEST(Elicit, AFormWithNoFieldsIsAYesOrNo) {
    Played person{{"yes"}};
    Elicited e = elicit(form_request(R"({"type":"object","properties":{}})"), person.terminal());
    EXPECT_EQ(canonical_json(e.result), R"({"action":"accept","content":{}})");
}

} // namespace
} // namespace sion::session
