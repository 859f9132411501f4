// SPDX-License-Identifier: MIT
// Tests for lib/web: HTML made text (blocks, headings, lists, tables, links, what is left out,
// malformed and deeply nested pages, charsets), text converted to UTF-8, Content-Type read, and a
// redirect's Location resolved.
#include "lib/utf8.hpp"
#include "lib/web.hpp"

#include <gtest/gtest.h>

#include <string>

namespace sion::web {
namespace {

TEST(Web, ReadsTheMediaTypeAndCharset) {
    auto m = parse_media_type("Text/HTML; charset=\"ISO-8859-1\"; q=1");
    EXPECT_EQ(m.type, "text/html");
    EXPECT_EQ(m.charset, "iso-8859-1");
    EXPECT_EQ(parse_media_type("application/json").charset, "");
    EXPECT_EQ(parse_media_type("").type, "");
}

TEST(Web, HtmlBecomesReadableText) {
    auto h = html_to_text("<html><head><title> The  Page </title><style>p{}</style>"
                          "<script>alert(1)</script></head><body><h1>Top</h1><p>One\n  two"
                          "<br>three</p><ul><li>a</li><li>b<ol><li>c</li><li>d</li></ol></li>"
                          "</ul><table><tr><th>x</th><th>y</th></tr><tr><td>1</td><td>2</td>"
                          "</tr></table><p>See <a href=\"/doc\">the doc</a> and <a "
                          "href=\"https://e.org/\">https://e.org/</a>. <img alt=\"a cat\"></p>"
                          "<form><input value=\"secret\"><button>Go</button></form>"
                          "<pre>  keep\n    this</pre></body></html>",
                          "", "https://example.org/dir/page");
    EXPECT_EQ(h.title, "The Page");
    EXPECT_EQ(h.text, "# Top\n\nOne two\nthree\n\n- a\n- b\n  1. c\n  2. d\n\nx | y\n1 | 2\n\n"
                      "See the doc <https://example.org/doc> and https://e.org/. [a cat]\n\n"
                      "  keep\n    this");
}

TEST(Web, MalformedAndDeepPagesAreRead) {
    EXPECT_EQ(html_to_text("<p>open <b>bold <i>both</p>after", "", "").text,
              "open bold both\n\nafter");
    std::string deep;
    for (int i = 0; i < 5000; ++i)
        deep += "<div>";
    deep += "deep";
    auto h = html_to_text(deep, "", "");
    EXPECT_LE(h.text.size(), 4u); // past the depth bound nothing more is read, and nothing breaks
    EXPECT_EQ(html_to_text("", "", "").text, "");
    // Bytes no page should hold: read as far as the parser takes them, and still UTF-8.
    auto odd = html_to_text(std::string("<p>a\0\xff<p>x\xc3", 10), "", "");
    EXPECT_EQ(invalid_utf8_at(odd.text), std::string::npos) << odd.text;
}

TEST(Web, CharsetsBecomeUtf8) {
    EXPECT_EQ(html_to_text("<p>caf\xe9</p>", "iso-8859-1", "").text, "caf\u00e9");
    EXPECT_EQ(html_to_text("<meta charset=\"windows-1252\"><p>\x93q\x94</p>", "", "").text,
              "\u201cq\u201d");
    EXPECT_EQ(html_to_text("<p>caf\xc3\xa9</p>", "no-such-charset", "").text, "caf\u00e9");
    EXPECT_EQ(*to_utf8("caf\xe9", "ISO-8859-1"), "caf\u00e9");
    EXPECT_EQ(*to_utf8("ok \xff", "utf-8"), "ok \xef\xbf\xbd");
    auto bad = to_utf8("x", "no-such-charset");
    ASSERT_FALSE(bad);
    EXPECT_EQ(bad.error().message(), "unknown charset 'no-such-charset'");
}

TEST(Web, ResolvesLocations) {
    EXPECT_EQ(*resolve_location("https://e.org/a/b?x=1", "c"), "https://e.org/a/c");
    EXPECT_EQ(*resolve_location("https://e.org/a/b", "/d"), "https://e.org/d");
    EXPECT_EQ(*resolve_location("https://e.org/a/b", "//f.org/g"), "https://f.org/g");
    EXPECT_EQ(*resolve_location("https://e.org/", "http://h.org/i j"), "http://h.org/i%20j");
    EXPECT_FALSE(resolve_location("https://e.org/", "ftp://e.org/x"));
    EXPECT_FALSE(resolve_location("https://e.org/", "file:///etc/passwd"));
}

} // namespace
} // namespace sion::web
