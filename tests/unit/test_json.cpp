// SPDX-License-Identifier: MIT
// lib/json and lib/utf8: parsing exactly one strict JSON text, typed accessors that answer errors
// (never crash) on missing members and wrong types, builders, string escaping, canonical text,
// UTF-8 validation.
#include "lib/json.hpp"
#include "lib/utf8.hpp"

#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <memory>
#include <string>
#include <utility>
#include <vector>

namespace sion {
namespace {

// Parses from a heap copy of exactly text.size() bytes, so that reading past the end of the view
// is an AddressSanitizer error, not a silent read of a terminating NUL.
Result<Json> parse_exact(std::string_view text) {
    auto copy = std::make_unique<char[]>(text.size() + 1);
    std::memcpy(copy.get(), text.data(), text.size());
    return Json::parse(std::string_view(copy.get(), text.size()));
}

std::string parse_error(std::string_view text) {
    auto r = parse_exact(text);
    if (r)
        return "parsed: " + r->dump();
    EXPECT_EQ(r.error().exit(), Exit::data) << text;
    return r.error().message();
}

TEST(JsonParse, ObjectsArraysAndScalars) {
    auto r = parse_exact(
        R"( {"s":"text","i":42,"n":-1.5e2,"t":true,"f":false,"z":null,"a":[1,"x",{}],"o":{"k":"v"}} )");
    ASSERT_TRUE(r) << r.error().message();
    JsonView v = r->view();
    EXPECT_TRUE(v.is_object());
    EXPECT_EQ(v.size(), 8u);
    EXPECT_EQ(*v.string("s"), "text");
    EXPECT_EQ(*v.integer("i"), 42);
    EXPECT_DOUBLE_EQ(*v.number("n"), -150.0);
    EXPECT_TRUE(*v.boolean("t"));
    EXPECT_FALSE(*v.boolean("f"));
    EXPECT_TRUE(v.get("z").exists());
    EXPECT_TRUE(v.get("z").is_null());
    EXPECT_EQ(v.get("a").size(), 3u);
    EXPECT_EQ(*v.get("a").at(1).as_string(), "x");
    EXPECT_TRUE(v.get("a").at(2).is_object());
    EXPECT_EQ(*(*v.object("o")).string("k"), "v");
    EXPECT_EQ(v.get("o").key(), "o");
}

TEST(JsonParse, ScalarsAtTheTop) {
    EXPECT_EQ(*parse_exact("\"x\"")->view().as_string(), "x");
    EXPECT_EQ(*parse_exact("7")->view().as_int(), 7);
    EXPECT_TRUE(parse_exact("null")->view().is_null());
    EXPECT_TRUE(*parse_exact("true")->view().as_bool());
    EXPECT_TRUE(parse_exact(" \t\r\n[]\r\n")->view().is_array());
}

TEST(JsonParse, NumbersAsJsonWritesThem) {
    for (const char* good :
         {"0", "-0", "10", "-12", "0.5", "-0.5", "1e5", "1E+2", "2.5e-3", "123456789"})
        EXPECT_TRUE(parse_exact(good)) << good;
    // cJSON alone takes several of these; they are not JSON.
    for (const char* bad : {"01", "-01", "00", "1.", "0.", ".5", "+1", "-", "1e", "1e+", "1.e5",
                            "--1", "0x10", "1+2", "NaN", "Infinity", "-Infinity"})
        EXPECT_TRUE(parse_error(bad).starts_with("invalid JSON at byte ")) << bad;
    EXPECT_EQ(parse_error("[01]"), "invalid JSON at byte 2");
    EXPECT_EQ(parse_error("[1.]"), "invalid JSON at byte 3");
}

TEST(JsonParse, SyntaxErrorsSayWhere) {
    EXPECT_EQ(parse_error(""), "invalid JSON at byte 0");
    EXPECT_EQ(parse_error("   "), "invalid JSON at byte 3");
    EXPECT_EQ(parse_error("{"), "invalid JSON at byte 1");
    EXPECT_EQ(parse_error("["), "invalid JSON at byte 1");
    EXPECT_EQ(parse_error("[1,]"), "invalid JSON at byte 3");
    EXPECT_EQ(parse_error("{\"a\":1,}"), "invalid JSON at byte 7");
    EXPECT_EQ(parse_error("{\"a\"}"), "invalid JSON at byte 4");
    EXPECT_EQ(parse_error("{a:1}"), "invalid JSON at byte 1");
    EXPECT_EQ(parse_error("{'a':1}"), "invalid JSON at byte 1");
    EXPECT_EQ(parse_error("[1 2]"), "invalid JSON at byte 3");
    EXPECT_EQ(parse_error("nul"), "invalid JSON at byte 0");
    EXPECT_EQ(parse_error("\"abc"), "invalid JSON at byte 4");
    EXPECT_EQ(parse_error("\"\\x\""), "invalid JSON at byte 2");
    EXPECT_EQ(parse_error("\"\\u12g4\""), "invalid JSON at byte 5");
    EXPECT_EQ(parse_error("\"\\u12"), "invalid JSON at byte 5");
    EXPECT_EQ(parse_error("\"\\"), "invalid JSON at byte 2");
    EXPECT_EQ(parse_error("[\"a\":1]"), "invalid JSON at byte 4");
    EXPECT_EQ(parse_error("{\"a\":1]"), "invalid JSON at byte 6");
    EXPECT_EQ(parse_error("[1}"), "invalid JSON at byte 2");
}

TEST(JsonParse, TrailingTextIsAnError) {
    EXPECT_EQ(parse_error("{} {}"), "invalid JSON at byte 3");
    EXPECT_EQ(parse_error("{}x"), "invalid JSON at byte 2");
    EXPECT_EQ(parse_error("true false"), "invalid JSON at byte 5");
    EXPECT_EQ(parse_error("1 2"), "invalid JSON at byte 2");
    EXPECT_EQ(parse_error("[1]]"), "invalid JSON at byte 3");
    EXPECT_EQ(parse_error("\"a\"\"b\""), "invalid JSON at byte 3");
    EXPECT_EQ(parse_error(std::string_view("{}\0", 3)), "invalid JSON at byte 2");
}

TEST(JsonParse, OnlyJsonWhitespace) {
    // cJSON takes any byte up to 0x20 as whitespace, a NUL included.
    EXPECT_EQ(parse_error("\x01 1"), "invalid JSON at byte 0");
    EXPECT_EQ(parse_error("[1\x02,2]"), "invalid JSON at byte 2");
    EXPECT_EQ(parse_error(std::string_view("[1,\0 2]", 7)), "invalid JSON at byte 3");
    EXPECT_EQ(parse_error("\f1"), "invalid JSON at byte 0");
    EXPECT_EQ(parse_error("\xef\xbb\xbf{}"), "invalid JSON at byte 0"); // a byte order mark
}

TEST(JsonParse, NoRawControlBytesInStrings) {
    EXPECT_EQ(parse_error("\"a\x01\""), "invalid JSON at byte 2");
    EXPECT_EQ(parse_error("\"a\tb\""), "invalid JSON at byte 2");
    // A raw NUL would cut the string short without a word.
    EXPECT_EQ(parse_error(std::string_view("{\"m\":\"a\0b\"}", 11)), "invalid JSON at byte 7");
    EXPECT_EQ(parse_error(std::string_view("{\"a\0\":1}", 8)), "invalid JSON at byte 3");
    // DEL is not a control character for JSON.
    EXPECT_EQ(*parse_exact("\"\x7f\"")->view().as_string(), "\x7f");
}

TEST(JsonParse, Escapes) {
    auto r = parse_exact(R"(["\"\\\/\b\f\n\r\t", "\u00e9\u20ac", "\ud83d\ude00"])");
    ASSERT_TRUE(r) << r.error().message();
    EXPECT_EQ(*r->view().at(0).as_string(), "\"\\/\b\f\n\r\t");
    EXPECT_EQ(*r->view().at(1).as_string(), "\xc3\xa9\xe2\x82\xac");
    EXPECT_EQ(*r->view().at(2).as_string(), "\xf0\x9f\x98\x80");
    // Half a surrogate pair is syntax JSON allows and text UTF-8 cannot hold.
    EXPECT_TRUE(parse_error(R"("\ud800")").starts_with("invalid JSON at byte "));
    EXPECT_TRUE(parse_error(R"("\udc00")").starts_with("invalid JSON at byte "));
    EXPECT_TRUE(parse_error(R"("\ud800\u0041")").starts_with("invalid JSON at byte "));
}

TEST(JsonParse, InvalidUtf8) {
    struct Case {
        std::string text;
        size_t at;
    };

    const std::vector<Case> cases = {
        {"\"\xff\"", 1}, // never in UTF-8
        {"\"\xfe\"", 1},
        {"\"ab\x80\"", 3},           // a lone continuation byte
        {"\"\xc0\xaf\"", 1},         // overlong '/'
        {"\"\xc1\xbf\"", 1},         // overlong
        {"\"\xe0\x80\xaf\"", 1},     // overlong, three bytes
        {"\"\xe0\x9f\xbf\"", 1},     // overlong, three bytes, the highest
        {"\"\xf0\x80\x80\xaf\"", 1}, // overlong, four bytes
        {"\"\xf0\x8f\xbf\xbf\"", 1}, // overlong, four bytes, the highest
        {"\"\xed\xa0\x80\"", 1},     // U+D800, a surrogate
        {"\"\xed\xbf\xbf\"", 1},     // U+DFFF
        {"\"\xf4\x90\x80\x80\"", 1}, // U+110000, past the last code point
        {"\"\xf5\x80\x80\x80\"", 1},
        {"\"\xc3\"", 1}, // truncated: the quote is no continuation
        {"\"\xe2\x82\"", 1},
        {"\"\xf0\x9f\x98\"", 1},
        {"\"\xe2\x28\xa1\"", 1},          // a bad second byte
        {"\"\xe2\x82\x28\"", 1},          // a bad third byte
        {"\"\xf0\x9f\x98\x28\"", 1},      // a bad fourth byte
        {"{\"k\":\"abcdefgh\xc3\"}", 14}, // after the eight-byte fast path
        {"[\"ok\xc3\xa9\", \"\xc3\x28\"]", 10},
    };
    for (const Case& c : cases) {
        EXPECT_EQ(invalid_utf8_at(c.text), c.at) << c.text;
        EXPECT_EQ(parse_error(c.text), "invalid UTF-8 at byte " + std::to_string(c.at)) << c.text;
    }
    // Truncated at the very end of the text, where a read past it would go unnoticed.
    for (std::string_view tail : {"\xc3", "\xe2\x82", "\xf0\x9f\x98", "\xf4"}) {
        std::string text = "abcdefg" + std::string(tail);
        auto copy = std::make_unique<char[]>(text.size());
        std::memcpy(copy.get(), text.data(), text.size());
        EXPECT_EQ(invalid_utf8_at(std::string_view(copy.get(), text.size())), 7u);
    }
}

TEST(Utf8, WellFormed) {
    EXPECT_EQ(invalid_utf8_at(""), std::string_view::npos);
    EXPECT_EQ(invalid_utf8_at("plain ascii, longer than eight bytes"), std::string_view::npos);
    for (const char* good :
         {"\xc2\x80", "\xdf\xbf", "\xe0\xa0\x80", "\xed\x9f\xbf", "\xee\x80\x80", "\xef\xbf\xbf",
          "\xf0\x90\x80\x80", "\xf4\x8f\xbf\xbf", "\xc3\xa9t\xc3\xa9"})
        EXPECT_EQ(invalid_utf8_at(good), std::string_view::npos) << good;
    // Every code point round the edges, as the encoder would write it.
    auto encode = [](char32_t cp) {
        std::string s;
        if (cp < 0x80) {
            s += static_cast<char>(cp);
        } else if (cp < 0x800) {
            s += static_cast<char>(0xC0 | (cp >> 6));
            s += static_cast<char>(0x80 | (cp & 0x3F));
        } else if (cp < 0x10000) {
            s += static_cast<char>(0xE0 | (cp >> 12));
            s += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
            s += static_cast<char>(0x80 | (cp & 0x3F));
        } else {
            s += static_cast<char>(0xF0 | (cp >> 18));
            s += static_cast<char>(0x80 | ((cp >> 12) & 0x3F));
            s += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
            s += static_cast<char>(0x80 | (cp & 0x3F));
        }
        return s;
    };
    for (char32_t cp = 0; cp <= 0x10FFFF; cp += (cp < 0x11000 ? 1 : 0x101)) {
        bool surrogate = cp >= 0xD800 && cp <= 0xDFFF;
        EXPECT_EQ(invalid_utf8_at(encode(cp)) == std::string_view::npos, !surrogate)
            << std::hex << static_cast<uint32_t>(cp);
    }
    EXPECT_EQ(invalid_utf8_at(encode(0x10FFFF)), std::string_view::npos);
}

TEST(JsonParse, DeepNestingIsAnErrorNotACrash) {
    auto nested = [](size_t depth, char open, char close) {
        return std::string(depth, open) + std::string(depth, close);
    };
    EXPECT_TRUE(parse_exact(nested(1000, '[', ']')));
    EXPECT_EQ(parse_error(nested(1001, '[', ']')),
              "invalid JSON at byte 1000: nested deeper than 1000");
    EXPECT_EQ(parse_error(nested(200000, '[', ']')),
              "invalid JSON at byte 1000: nested deeper than 1000");
    // Unclosed, so nothing is built at all.
    EXPECT_EQ(parse_error(std::string(1 << 20, '[')),
              "invalid JSON at byte 1000: nested deeper than 1000");
    std::string objects;
    for (int i = 0; i < 5000; ++i)
        objects += "{\"a\":";
    objects += "1" + std::string(5000, '}');
    EXPECT_TRUE(parse_error(objects).ends_with(": nested deeper than 1000"));
    // Deep but allowed: the tree is printed, copied and freed without trouble.
    auto deep = parse_exact(nested(1000, '[', ']'));
    ASSERT_TRUE(deep);
    Json copy = Json::copy_of(deep->view());
    EXPECT_EQ(copy.dump(), nested(1000, '[', ']'));
}

TEST(JsonAccess, MissingAndWrongTypesAreErrors) {
    auto r = parse_exact(R"({"s":"x","n":1.5,"i":3,"b":true,"z":null,"a":[],"o":{}})");
    ASSERT_TRUE(r);
    JsonView v = r->view();
    EXPECT_EQ(v.string("nope").error().message(), "member 'nope' is missing");
    EXPECT_EQ(v.string("nope").error().exit(), Exit::data);
    EXPECT_EQ(v.string("n").error().message(), "member 'n' is a number, not a string");
    EXPECT_EQ(v.integer("s").error().message(), "member 's' is a string, not an integer");
    EXPECT_EQ(v.integer("n").error().message(), "member 'n' is not an integer");
    EXPECT_EQ(v.number("b").error().message(), "member 'b' is a boolean, not a number");
    EXPECT_EQ(v.boolean("z").error().message(), "member 'z' is null, not a boolean");
    EXPECT_EQ(v.object("a").error().message(), "member 'a' is an array, not an object");
    EXPECT_EQ(v.array("o").error().message(), "member 'o' is an object, not an array");
    EXPECT_EQ(v.get("s").as_int().error().message(), "a string is not a number");
    EXPECT_EQ(v.get("n").as_int().error().message(), "1.5 is not an integer");
    EXPECT_EQ(v.get("i").as_bool().error().message(), "a number is not a boolean");
    EXPECT_EQ(v.get("o").as_number().error().message(), "an object is not a number");
    EXPECT_EQ(v.get("a").as_string().error().message(), "an array is not a string");
    // Optional members: the fallback when absent or null, an error for another type.
    EXPECT_EQ(*v.string_or("nope", "dflt"), "dflt");
    EXPECT_EQ(*v.string_or("z", "dflt"), "dflt");
    EXPECT_EQ(*v.string_or("s", "dflt"), "x");
    EXPECT_FALSE(v.string_or("n", "dflt"));
    EXPECT_EQ(*v.integer_or("nope", 9), 9);
    EXPECT_EQ(*v.integer_or("i", 9), 3);
    EXPECT_FALSE(v.integer_or("n", 9));
    EXPECT_TRUE(*v.boolean_or("nope", true));
    EXPECT_FALSE(v.boolean_or("s", true));
}

TEST(JsonAccess, EmptyViewsNeverCrash) {
    JsonView none;
    EXPECT_FALSE(none.exists());
    EXPECT_FALSE(static_cast<bool>(none));
    EXPECT_STREQ(none.type_name(), "nothing");
    EXPECT_FALSE(none.is_null() || none.is_bool() || none.is_number() || none.is_string()
                 || none.is_array() || none.is_object());
    EXPECT_FALSE(none.get("x").exists());
    EXPECT_FALSE(none.at(0).exists());
    EXPECT_EQ(none.size(), 0u);
    EXPECT_EQ(none.dump(), "");
    EXPECT_EQ(none.string("x").error().message(), "member 'x' is missing");
    EXPECT_EQ(none.as_string().error().message(), "nothing is not a string");
    EXPECT_FALSE(none.as_int());
    EXPECT_FALSE(none.as_number());
    EXPECT_FALSE(none.as_bool());
    EXPECT_EQ(*none.integer_or("x", 5), 5);
    int n = 0;
    for (JsonView child : none) {
        (void)child;
        ++n;
    }
    EXPECT_EQ(n, 0);
    // Chains through absent and wrong-typed values.
    auto r = parse_exact(R"({"a":[1,{"b":"c"}],"s":"str"})");
    JsonView v = r->view();
    EXPECT_EQ(*v.get("a").at(1).string("b"), "c");
    EXPECT_FALSE(v.get("a").at(7).get("b").at(0).exists());
    EXPECT_FALSE(v.get("s").get("b").exists());
    EXPECT_FALSE(v.get("s").at(0).exists());
    EXPECT_EQ(v.get("s").size(), 0u);
    EXPECT_FALSE(v.get("a").get("0").exists());
    EXPECT_FALSE(v.at(0).exists());
    Json empty;
    EXPECT_FALSE(empty.exists());
    EXPECT_EQ(empty.dump(), "");
    EXPECT_FALSE(empty.get("x").exists());
    EXPECT_FALSE(empty.take("x").exists());
}

TEST(JsonAccess, Integers) {
    auto r = parse_exact(
        R"([9007199254740992, -9007199254740992, 9007199254740994, 1e300, 1e999, -0, 2.0, 3.000001])");
    ASSERT_TRUE(r);
    JsonView a = r->view();
    EXPECT_EQ(*a.at(0).as_int(), 9007199254740992);
    EXPECT_EQ(*a.at(1).as_int(), -9007199254740992);
    EXPECT_FALSE(a.at(2).as_int()); // 2^53 + 2: past the safe range
    EXPECT_FALSE(a.at(3).as_int());
    EXPECT_FALSE(a.at(4).as_int()); // infinity
    EXPECT_EQ(*a.at(5).as_int(), 0);
    EXPECT_EQ(*a.at(6).as_int(), 2);
    EXPECT_FALSE(a.at(7).as_int());
}

TEST(JsonAccess, ListsOfStrings) {
    auto r = parse_exact(
        R"({"a": ["x", "", "y"], "e": [], "z": null, "n": 3, "o": {"x": "y"}, "m": ["x", 1]})");
    ASSERT_TRUE(r);
    JsonView v = r->view();
    EXPECT_EQ(*v.strings("a"), (std::vector<std::string>{"x", "", "y"}));
    EXPECT_TRUE(v.strings("e")->empty());
    EXPECT_EQ(v.strings("z").error().message(), "member 'z' is null, not an array of strings");
    EXPECT_TRUE(v.strings("absent")->empty());
    auto n = v.strings("n");
    ASSERT_FALSE(n);
    EXPECT_EQ(n.error().message(), "member 'n' is a number, not an array of strings");
    EXPECT_EQ(n.error().exit(), Exit::data);
    EXPECT_EQ(v.strings("o").error().message(),
              "member 'o' is an object, not an array of strings");
    EXPECT_EQ(v.strings("m").error().message(), "member 'm' holds a number, not only strings");
}

TEST(JsonAccess, IteratesMembersAndElements) {
    auto r = parse_exact(R"({"x":1,"y":[true,null],"z":"w"})");
    std::vector<std::string> keys;
    for (JsonView m : r->view())
        keys.emplace_back(m.key());
    EXPECT_EQ(keys, (std::vector<std::string>{"x", "y", "z"}));
    std::vector<std::string> types;
    for (JsonView e : r->view().get("y"))
        types.emplace_back(e.type_name());
    EXPECT_EQ(types, (std::vector<std::string>{"a boolean", "null"}));
    int n = 0;
    for (JsonView e : r->view().get("z")) { // a string has no elements
        (void)e;
        ++n;
    }
    EXPECT_EQ(n, 0);
}

TEST(JsonBuild, ObjectsAndArrays) {
    Json o = Json::object();
    o.set("s", "text").set("i", 42).set("l", int64_t{1} << 40).set("b", true);
    o.set("sv", std::string_view("view")).set("d", Json::number(0.25)).set("z", Json::null());
    Json a = Json::array();
    a.push(Json::integer(1)).push(Json::string("two")).push(Json::object());
    o.set("a", std::move(a));
    EXPECT_EQ(
        o.dump(),
        R"({"s":"text","i":42,"l":1099511627776,"b":true,"sv":"view","d":0.25,"z":null,"a":[1,"two",{}]})");
    // set replaces a member of the same name, in place.
    o.set("i", "forty-two");
    EXPECT_EQ(*o.get("i").as_string(), "forty-two");
    EXPECT_EQ(o.view().size(), 8u);
    // take removes and returns.
    Json taken = o.take("a");
    EXPECT_EQ(taken.dump(), R"([1,"two",{}])");
    EXPECT_FALSE(o.get("a").exists());
    EXPECT_FALSE(o.take("a").exists());
    // The output parses back to the same text.
    auto back = Json::parse(o.dump());
    ASSERT_TRUE(back);
    EXPECT_EQ(back->dump(), o.dump());
}

TEST(JsonBuild, WrongShapesAreIgnored) {
    Json empty_object;
    empty_object.set("k", 1); // an empty Json becomes an object
    EXPECT_EQ(empty_object.dump(), R"({"k":1})");
    Json empty_array;
    empty_array.push(Json::boolean(false));
    EXPECT_EQ(empty_array.dump(), "[false]");
    Json arr = Json::array();
    arr.set("k", 1); // not an object: nothing happens
    EXPECT_EQ(arr.dump(), "[]");
    Json obj = Json::object();
    obj.push(Json::integer(1)); // not an array: nothing happens
    EXPECT_EQ(obj.dump(), "{}");
    obj.set("k", Json()); // nothing to set
    EXPECT_EQ(obj.dump(), "{}");
    Json str = Json::string("s");
    EXPECT_FALSE(str.take("k").exists());
    Json moved = std::move(obj);
    EXPECT_EQ(moved.dump(), "{}");
}

TEST(JsonBuild, CopiesAreDeep) {
    auto src = Json::parse(R"({"a":{"b":[1,2]}})");
    Json copy = Json::copy_of(src->get("a"));
    src = Json::parse("null"); // the original is gone
    EXPECT_EQ(copy.dump(), R"({"b":[1,2]})");
    EXPECT_FALSE(Json::copy_of(JsonView()).exists());
}

TEST(JsonString, EscapesRoundTripThroughParse) {
    std::string all;
    for (int c = 1; c < 0x80; ++c)
        all += static_cast<char>(c);
    all += "\xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80\xf4\x8f\xbf\xbf";
    for (const std::string& s : {all, std::string(), std::string("\"\\"), std::string("a\nb\r\n"),
                                 std::string("\x1f\x7f"), std::string(100000, '"')}) {
        std::string out = "prefix:";
        append_json_string(out, s);
        ASSERT_TRUE(out.starts_with("prefix:\""));
        std::string_view lit = std::string_view(out).substr(7);
        EXPECT_EQ(lit.find('\n'), std::string_view::npos) << "an escaped string is one line";
        for (char c : lit)
            EXPECT_GE(static_cast<unsigned char>(c), 0x20) << "no raw control byte";
        auto back = parse_exact(lit);
        ASSERT_TRUE(back) << back.error().message();
        EXPECT_EQ(*back->view().as_string(), s);
    }
    std::string out;
    append_json_string(out, "q\"b\\n\nt\tc\x01");
    EXPECT_EQ(out, R"("q\"b\\n\nt\tc\u0001")");
    // cJSON's own printer writes what parses back too.
    auto printed = parse_exact(Json::string(all).dump());
    ASSERT_TRUE(printed);
    EXPECT_EQ(*printed->view().as_string(), all);
}

TEST(JsonString, EmbeddedNulIsEscapedAndRefusedWhenParsed) {
    std::string out;
    append_json_string(out, std::string_view("a\0b", 3));
    EXPECT_EQ(out, R"("a\u0000b")");
    EXPECT_FALSE(Json::parse(out));
}

} // namespace
} // namespace sion

namespace sion {
namespace {

// cJSON ends strings at a NUL: a \u0000 escape is refused rather than silently cut, so that no peer
// reads "tools/call\u0000/../admin" as "tools/call".
TEST(JsonNul, EscapedNulIsRefusedWithItsPlace) {
    auto j = Json::parse(R"({"method":"tools/call\u0000/../admin"})");
    ASSERT_FALSE(j);
    EXPECT_EQ(j.error().exit(), Exit::data);
    EXPECT_EQ(j.error().message(), "invalid JSON at byte 21: \\u0000 is not supported");
    EXPECT_TRUE(Json::parse(R"({"a":"\u0001\u00e9"})"));
}

} // namespace
} // namespace sion

namespace sion {
namespace {

// canonical_json() of a JSON text.
std::string canonical(std::string_view text) {
    auto j = parse_exact(text);
    EXPECT_TRUE(j) << text;
    return j ? canonical_json(j->view()) : "parse failed";
}

TEST(JsonCanonical, MembersAreSortedAndSpacesGone) {
    EXPECT_EQ(canonical(R"({"b":2,"a":1})"), R"({"a":1,"b":2})");
    EXPECT_EQ(canonical(R"({"a":1,"b":2})"), R"({"a":1,"b":2})");
    EXPECT_EQ(canonical(" {\n \"b\" : [ 1 , 2 ] ,\t\"a\" : { } } "), R"({"a":{},"b":[1,2]})");
}

TEST(JsonCanonical, NestedObjectsAreSortedAtEveryDepth) {
    EXPECT_EQ(canonical(R"({"z":{"y":1,"x":[{"d":1,"c":{"f":0,"e":0}}]},"a":null})"),
              R"({"a":null,"z":{"x":[{"c":{"e":0,"f":0},"d":1}],"y":1}})");
    EXPECT_EQ(canonical(R"([{"b":1,"a":2},[{"d":3,"c":4}]])"),
              R"([{"a":2,"b":1},[{"c":4,"d":3}]])");
}

TEST(JsonCanonical, ArraysKeepTheirOrder) {
    EXPECT_EQ(canonical("[3,1,2]"), "[3,1,2]");
    EXPECT_EQ(canonical(R"(["b","a",{"b":1,"a":0},null,true])"),
              R"(["b","a",{"a":0,"b":1},null,true])");
    EXPECT_EQ(canonical("[]"), "[]");
}

TEST(JsonCanonical, KeysCompareBytewise) {
    // 'B' (0x42) < '_' (0x5f) < 'a' < "aa" < "b" < "é" (0xc3 0xa9): bytes, not letters or locale.
    EXPECT_EQ(canonical("{\"\xc3\xa9\":6,\"b\":5,\"aa\":4,\"a\":3,\"_\":2,\"B\":1,\"\":0}"),
              "{\"\":0,\"B\":1,\"_\":2,\"a\":3,\"aa\":4,\"b\":5,\"\xc3\xa9\":6}");
}

TEST(JsonCanonical, EqualValuesGiveEqualText) {
    EXPECT_EQ(canonical(R"({"n":1.0,"m":{"q":[1e2,-0.5],"p":"x"}})"),
              canonical(R"({"m":{"p":"x","q":[100,-5e-1]},"n":1})"));
    EXPECT_EQ(canonical(R"({"n":1.0})"), R"({"n":1})");
    EXPECT_NE(canonical(R"({"a":[1,2]})"), canonical(R"({"a":[2,1]})"));
    EXPECT_NE(canonical(R"({"a":1})"), canonical(R"({"a":"1"})"));
}

TEST(JsonCanonical, ScalarsAndStrings) {
    EXPECT_EQ(canonical("null"), "null");
    EXPECT_EQ(canonical("true"), "true");
    EXPECT_EQ(canonical("-1.5"), "-1.5");
    EXPECT_EQ(canonical("42"), "42");
    EXPECT_EQ(canonical(R"("quote \" back \\ nl \n")"), R"("quote \" back \\ nl \n")");
    EXPECT_EQ(canonical("\"caf\xc3\xa9\""), "\"caf\xc3\xa9\"");
}

TEST(JsonCanonical, AnEmptyViewGivesNothing) {
    EXPECT_EQ(canonical_json(JsonView()), "");
    Json empty;
    EXPECT_EQ(canonical_json(empty), "");
    auto j = parse_exact(R"({"a":1})");
    ASSERT_TRUE(j);
    EXPECT_EQ(canonical_json(j->get("missing")), "");
    EXPECT_EQ(canonical_json(j->view().at(3)), "");
}

TEST(JsonCanonical, AMemberIsGivenWithoutItsName) {
    auto j = parse_exact(R"({"outer":{"b":1,"a":2},"list":[{"d":0,"c":1}]})");
    ASSERT_TRUE(j);
    EXPECT_EQ(canonical_json(j->get("outer")), R"({"a":2,"b":1})");
    EXPECT_EQ(canonical_json(j->get("list").at(0)), R"({"c":1,"d":0})");
}

TEST(JsonCanonical, TheOriginalIsLeftAsItWas) {
    auto j = parse_exact(R"({"b":{"d":1,"c":2},"a":1})");
    ASSERT_TRUE(j);
    EXPECT_EQ(canonical_json(j->view()), R"({"a":1,"b":{"c":2,"d":1}})");
    EXPECT_EQ(j->dump(), R"({"b":{"d":1,"c":2},"a":1})");
    // Still a well-formed tree: members are found and iterated as before.
    EXPECT_EQ(*j->get("b").integer("c"), 2);
    std::string keys;
    for (JsonView member : j->view())
        keys += std::string(member.key());
    EXPECT_EQ(keys, "ba");
}

TEST(JsonCanonical, BuiltValuesAndTheirParsedTextAgree) {
    Json inner = Json::object();
    inner.set("y", true).set("b", false);
    Json list = Json::array();
    list.push(std::move(inner));
    Json built = Json::object();
    built.set("z", 1).set("a", "x").set("m", std::move(list));
    EXPECT_EQ(canonical_json(built), R"({"a":"x","m":[{"b":false,"y":true}],"z":1})");
    EXPECT_EQ(canonical(built.dump()), canonical_json(built));
}

TEST(JsonCanonical, ASortedTreeCanBeSortedAgainAndParsedBack) {
    std::string once = canonical(R"({"c":[3,{"z":0,"y":1}],"b":{"k":"v","j":null},"a":[]})");
    EXPECT_EQ(canonical(once), once);
    auto back = parse_exact(once);
    ASSERT_TRUE(back);
    EXPECT_EQ(back->dump(), once);
}

} // namespace
} // namespace sion

namespace sion {
namespace {

TEST(JsonDuplicates, AMemberGivenTwiceIsRefusedAtAnyDepth) {
    for (const char* text : {R"({"path":"a","path":"b"})", R"({"x":[{"k":1,"k":2}]})",
                             R"([{"a":{"b":0,"c":1,"b":2}}])"}) {
        auto r = Json::parse(text);
        ASSERT_FALSE(r) << text;
        EXPECT_EQ(r.error().exit(), Exit::data);
        EXPECT_NE(r.error().message().find("is given twice"), std::string::npos)
            << r.error().message();
    }
    auto r = Json::parse(R"({"path":"a","command":"rm","path":"b"})");
    ASSERT_FALSE(r);
    EXPECT_EQ(r.error().message(), "invalid JSON: member 'path' is given twice");
    r = Json::parse(R"({"input":{"edits":[{"a":1},{"b":1,"b":2}]}})");
    ASSERT_FALSE(r);
    EXPECT_EQ(r.error().message(), "invalid JSON: member 'input.edits[1].b' is given twice");
    r = Json::parse(R"([0,[{"x":{"y":1,"y":1}}]])");
    ASSERT_FALSE(r);
    EXPECT_EQ(r.error().message(), "invalid JSON: member '[1][0].x.y' is given twice");
    EXPECT_TRUE(Json::parse(R"({"a":{"k":1},"b":{"k":1},"k":[{"k":2}]})"));
}

TEST(JsonDuplicates, ALargeObjectIsCheckedInLinearithmicTime) {
    std::string text = "{";
    for (int i = 0; i < 200000; ++i)
        text += (i ? ",\"" : "\"") + std::to_string(i) + "\":0";
    auto ok = Json::parse(text + "}");
    EXPECT_TRUE(ok) << ok.error().message();
    auto twice = Json::parse(text + ",\"7\":1}");
    ASSERT_FALSE(twice);
    EXPECT_EQ(twice.error().message(), "invalid JSON: member '7' is given twice");
}

TEST(JsonRewrite, EveryStringAndMemberNameAtAnyDepth) {
    auto json =
        Json::parse(R"({"a":"x","b":[1,"xx",{"x":"y","c":true}],"x":null,"d":"long text"})");
    ASSERT_TRUE(json);
    std::vector<std::string> seen;
    json->rewrite_strings([&](std::string_view s) {
        seen.emplace_back(s);
        return s == "x"           ? std::string("renamed, and longer than it was")
               : s == "long text" ? "t"
                                  : std::string(s);
    });
    EXPECT_EQ(
        json->dump(),
        R"({"a":"renamed, and longer than it was","b":[1,"xx",)"
        R"({"renamed, and longer than it was":"y","c":true}],)"
        R"("renamed, and longer than it was":null,"d":"t"})");
    EXPECT_EQ(seen.size(), 10U);
    EXPECT_TRUE(Json::parse(json->dump()));
}

TEST(JsonRewrite, AMemberRenamedToAnotherMembersNameIsRemoved) {
    auto json = Json::parse(R"({"a":1,"b":2,"c":{"a":3,"keep":4},"d":5})");
    ASSERT_TRUE(json);
    json->rewrite_strings([](std::string_view s) {
        return s == "b" || s == "keep" ? std::string("a") : std::string(s);
    });
    EXPECT_EQ(json->dump(), R"({"a":1,"c":{"a":3},"d":5})");
    auto both = Json::parse(R"({"p":1,"q":2})");
    ASSERT_TRUE(both);
    both->rewrite_strings([](std::string_view) { return std::string("same"); });
    EXPECT_EQ(both->dump(), R"({"same":1})");
    Json built = Json::object();
    built.set("k", "v");
    built.rewrite_strings([](std::string_view s) { return std::string(s) + "!"; });
    EXPECT_EQ(built.dump(), R"({"k!":"v!"})");
    Json none;
    none.rewrite_strings([](std::string_view) { return std::string("x"); });
    EXPECT_FALSE(none.exists());
}

} // namespace
TEST(Json, WholeNumbersArePrintedWithAllTheirDigits) {
    Json o = Json::object();
    o.set("us", int64_t{1796644857181360});
    o.set("odd", int64_t{1796644857181363});
    o.set("max", int64_t{9007199254740992});
    o.set("neg", int64_t{-1000000000000000});
    o.set("small", int64_t{42});
    o.set("half", Json::number(0.5));
    o.set("big", Json::number(1e300));
    Json list = Json::array();
    list.push(Json::integer(1796644857181360));
    o.set("list", std::move(list));
    EXPECT_EQ(o.dump(), R"({"us":1796644857181360,"odd":1796644857181363,"max":9007199254740992,)"
                        R"("neg":-1000000000000000,"small":42,"half":0.5,"big":1e+300,)"
                        R"("list":[1796644857181360]})");
    EXPECT_EQ(Json::integer(1796644857181360).dump(), "1796644857181360");
    // Read back, the same numbers.
    auto back = Json::parse(o.dump());
    ASSERT_TRUE(back);
    EXPECT_EQ(back->view().integer("us").value_or(0), 1796644857181360);
    EXPECT_EQ(back->dump(), o.dump());
    // What was printed is untouched.
    EXPECT_TRUE(o.view().get("us").is_number());
}

TEST(Utf8, ABoundaryIsNeverPastTheText) {
    EXPECT_EQ(utf8_boundary("abc", 2), 2U);
    EXPECT_EQ(utf8_boundary("abc", 3), 3U);
    EXPECT_EQ(utf8_boundary("abc", 200), 3U);
    EXPECT_EQ(utf8_boundary("", 5), 0U);
    EXPECT_EQ(utf8_boundary("a\xc3\xa9", 2), 1U); // not inside the é
    EXPECT_EQ(utf8_boundary("a\xc3\xa9", 9), 3U);
    EXPECT_EQ(utf8_boundary("a\xc3", 9), 1U); // a text that ends inside a character
    EXPECT_EQ(utf8_boundary("a\xc3", 2), 1U);
}

} // namespace sion
