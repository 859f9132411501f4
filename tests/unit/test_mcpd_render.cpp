// SPDX-License-Identifier: MIT
// mcpd/render: tool results, resources and prompts as text — text as it came, pictures, sound and
// binary named with their type and size, links and embedded resources, structured content, and a
// cap that says how much was cut and never cuts inside a character.
#include "mcpd/render.hpp"

#include "lib/base64.hpp"

#include <gtest/gtest.h>

#include <string>

namespace sion::mcpd {
namespace {

Json parse(std::string_view text) {
    auto json = Json::parse(text);
    EXPECT_TRUE(json) << text;
    return json ? std::move(*json) : Json::object();
}

std::string tool(std::string_view result) {
    return render_tool_result(parse(result).view());
}

TEST(McpdRender, TextBlocksOnTheirOwnLines) {
    EXPECT_EQ(tool(R"({"content":[{"type":"text","text":"kept note release"}]})"),
              "kept note release");
    EXPECT_EQ(tool(R"({"content":[{"type":"text","text":"a"},{"type":"text","text":"b\n"}]})"),
              "a\nb\n");
    EXPECT_EQ(tool(R"({"content":[]})"), "");
    EXPECT_EQ(tool(R"({})"), "");
}

TEST(McpdRender, PicturesAndSoundAreNamedWithTheirSize) {
    std::string png = base64_encode(std::string(68, 'x'));
    EXPECT_EQ(tool(R"({"content":[{"type":"image","mimeType":"image/png","data":")" + png + R"("}]})"),
              "[image image/png, 68 bytes]");
    std::string wav = base64_encode(std::string(10, 'x'));
    EXPECT_EQ(tool(R"({"content":[{"type":"audio","mimeType":"audio/wav","data":")" + wav + R"("}]})"),
              "[audio audio/wav, 10 bytes]");
    for (size_t n : {0, 1, 2, 3, 100}) {
        std::string data = base64_encode(std::string(n, 'y'));
        EXPECT_EQ(tool(R"({"content":[{"type":"image","mimeType":"image/gif","data":")" + data + R"("}]})"),
                  "[image image/gif, " + std::to_string(n) + " bytes]");
    }
}

TEST(McpdRender, LinksEmbeddedResourcesAndTheUnknown) {
    EXPECT_EQ(tool(R"({"content":[{"type":"resource_link","uri":"note:///a","name":"a"}]})"),
              "[resource note:///a: a]");
    EXPECT_EQ(tool(R"({"content":[{"type":"resource_link","uri":"note:///a"}]})"),
              "[resource note:///a]");
    EXPECT_EQ(tool(R"({"content":[{"type":"resource","resource":{"uri":"note:///a","text":"hi"}}]})"),
              "hi");
    EXPECT_EQ(tool(R"({"content":[{"type":"resource","resource":{"uri":"f:///b","mimeType":"application/pdf","blob":"AAAA"}}]})"),
              "[application/pdf, 3 bytes, at f:///b]");
    EXPECT_EQ(tool(R"({"content":[{"type":"hologram"}]})"), "[content of type 'hologram']");
}

TEST(McpdRender, StructuredContentWhenThereIsNoContent) {
    EXPECT_EQ(tool(R"({"structuredContent":{"sum":3,"a":[1,2]}})"), R"({"a":[1,2],"sum":3})");
    // Content, when there is some, is what is shown.
    EXPECT_EQ(tool(R"({"content":[{"type":"text","text":"3"}],"structuredContent":{"sum":3}})"), "3");
}

TEST(McpdRender, ResourcesAndPrompts) {
    EXPECT_EQ(render_resource(parse(R"({"contents":[{"uri":"note:///a","text":"one"},
        {"uri":"note:///b","mimeType":"image/png","blob":"AAAAAA=="}]})").view()),
              "one\n[image/png, 4 bytes, at note:///b]");
    EXPECT_EQ(render_prompt(parse(R"({"messages":[
        {"role":"user","content":{"type":"text","text":"Summarize it."}},
        {"role":"assistant","content":{"type":"text","text":"Sure."}}]})").view()),
              "Summarize it.\n\n(assistant) Sure.");
}

TEST(McpdRender, LongTextIsCutSayingHowMuchOfAllOfIt) {
    // Fifty blocks of 100 KiB: the cut counts every block, not only the one it fell in.
    std::string block(100 << 10, '0');
    Json result = Json::object();
    Json content = Json::array();
    for (int i = 0; i < 50; ++i) {
        Json b = Json::object();
        b.set("type", "text");
        b.set("text", std::string_view(block));
        content.push(std::move(b));
    }
    result.set("content", std::move(content));
    std::string text = render_tool_result(result.view());
    size_t total = 50 * block.size() + 49;
    std::string note = "\n[" + std::to_string(total - k_max_rendered) + " more bytes were cut]";
    ASSERT_EQ(text.size(), k_max_rendered + note.size());
    EXPECT_EQ(text.substr(k_max_rendered), note);
    // Exactly at the cap: nothing cut.
    std::string exact(k_max_rendered, 'x');
    Json r = Json::object();
    Json one = Json::array();
    Json b = Json::object();
    b.set("type", "text");
    b.set("text", std::string_view(exact));
    one.push(std::move(b));
    r.set("content", std::move(one));
    EXPECT_EQ(render_tool_result(r.view()), exact);
}

TEST(McpdRender, TheCutNeverSplitsACharacter) {
    std::string text = "a";
    while (text.size() < k_max_rendered + 10)
        text += "é";
    Json r = Json::object();
    Json content = Json::array();
    Json b = Json::object();
    b.set("type", "text");
    b.set("text", std::string_view(text));
    content.push(std::move(b));
    r.set("content", std::move(content));
    std::string got = render_tool_result(r.view());
    std::string kept = got.substr(0, got.find("\n["));
    // "a" then two bytes a character: the cap falls inside one, and the cut goes before it.
    EXPECT_EQ(kept.size(), k_max_rendered - 1);
    EXPECT_EQ(kept, text.substr(0, k_max_rendered - 1));
}

} // namespace
} // namespace sion::mcpd
