// SPDX-License-Identifier: MIT
// lib/documents: each kind's text, and every extractor on hostile input — malformed UTF-8, a NUL,
// a DTD with a billion laughs (UTF-8 and UTF-16), XML that is not XML, a container that is not a
// zip, that lacks its part, that holds too many entries or unpacks past the bound, a text past
// its bound — each refused with its one line.
#include "lib/documents.hpp"
#include "lib/fd.hpp"
#include "tests/unit/temp_dir.hpp"
#include "tests/unit/zip_maker.hpp"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <fstream>
#include <string>
#include <utility>
#include <vector>

namespace sion::documents {
namespace {

using test::zip_of;

const char* k_word = R"(<?xml version="1.0" encoding="UTF-8" standalone="yes"?>
<w:document xmlns:w="http://schemas.openxmlformats.org/wordprocessingml/2006/main">
<w:body>
<w:p><w:r><w:t>Quarterly report</w:t></w:r></w:p>
<w:p><w:r><w:t xml:space="preserve">Revenue </w:t></w:r><w:r><w:t>grew</w:t></w:r><w:r><w:tab/><w:t>12%</w:t></w:r></w:p>
<w:p><w:r><w:t>line one</w:t><w:br/><w:t>line two</w:t></w:r><w:r><w:delText>gone</w:delText></w:r></w:p>
</w:body></w:document>)";

const char* k_odt = R"(<?xml version="1.0" encoding="UTF-8"?>
<office:document-content xmlns:office="urn:oasis:names:tc:opendocument:xmlns:office:1.0"
  xmlns:text="urn:oasis:names:tc:opendocument:xmlns:text:1.0">
<office:automatic-styles>  </office:automatic-styles>
<office:body><office:text>
<text:h text:outline-level="1">Minutes</text:h>
<text:p>a<text:s text:c="3"/>b<text:tab/>c<text:line-break/>d</text:p>
</office:text></office:body></office:document-content>)";

std::string slide(const char* text) {
    return std::string(
               R"(<?xml version="1.0"?><p:sld xmlns:p="urn:p" xmlns:a="urn:a"><p:cSld><p:spTree><p:sp><p:txBody><a:p><a:r><a:t>)")
           + text + "</a:t></a:r></a:p></p:txBody></p:sp></p:spTree></p:cSld></p:sld>";
}

const char* k_laughs = R"(<?xml version="1.0"?>
<!DOCTYPE lolz [
 <!ENTITY lol "lol">
 <!ENTITY lol1 "&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;">
 <!ENTITY lol2 "&lol1;&lol1;&lol1;&lol1;&lol1;&lol1;&lol1;&lol1;&lol1;&lol1;">
 <!ENTITY lol3 "&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;">
 <!ENTITY lol4 "&lol3;&lol3;&lol3;&lol3;&lol3;&lol3;&lol3;&lol3;&lol3;&lol3;">
 <!ENTITY lol5 "&lol4;&lol4;&lol4;&lol4;&lol4;&lol4;&lol4;&lol4;&lol4;&lol4;">
 <!ENTITY lol6 "&lol5;&lol5;&lol5;&lol5;&lol5;&lol5;&lol5;&lol5;&lol5;&lol5;">
 <!ENTITY lol7 "&lol6;&lol6;&lol6;&lol6;&lol6;&lol6;&lol6;&lol6;&lol6;&lol6;">
 <!ENTITY lol8 "&lol7;&lol7;&lol7;&lol7;&lol7;&lol7;&lol7;&lol7;&lol7;&lol7;">
 <!ENTITY lol9 "&lol8;&lol8;&lol8;&lol8;&lol8;&lol8;&lol8;&lol8;&lol8;&lol8;">
]>
<w:document xmlns:w="urn:w"><w:body><w:p><w:r><w:t>&lol9;</w:t></w:r></w:p></w:body></w:document>)";

const char* k_dtd_refused =
    "its XML has a DTD (<!DOCTYPE>): entities are not expanded";

Result<std::string> extract_bytes(const std::string& bytes, Kind kind, const Limits& limits = {}) {
    auto fd = memory_file(bytes, "document");
    if (!fd)
        return fd.error();
    return extract(fd->get(), kind, limits);
}

std::string error_of(const Result<std::string>& r) {
    return r ? "(no error: " + *r + ")" : r.error().message();
}

TEST(DocumentKinds, ByExtensionInAnyCase) {
    EXPECT_EQ(kind_of("a/b/Notes.MD"), Kind::markdown);
    EXPECT_EQ(kind_of("x.markdown"), Kind::markdown);
    EXPECT_EQ(kind_of("x.txt"), Kind::text);
    EXPECT_EQ(kind_of("x.HTM"), Kind::html);
    EXPECT_EQ(kind_of("x.docx"), Kind::docx);
    EXPECT_EQ(kind_of("x.odt"), Kind::odt);
    EXPECT_EQ(kind_of("x.pptx"), Kind::pptx);
    EXPECT_EQ(kind_of("x.pdf"), Kind::pdf);
    EXPECT_FALSE(kind_of("x.doc"));
    EXPECT_FALSE(kind_of("README"));
    EXPECT_FALSE(kind_of(".md"));
    EXPECT_FALSE(kind_of("dir.md/file"));
    EXPECT_TRUE(writable(Kind::markdown) && writable(Kind::text));
    EXPECT_FALSE(writable(Kind::html) || writable(Kind::docx) || writable(Kind::pdf));
    EXPECT_EQ(size_words(size_t{64} << 20), "64 MiB");
    EXPECT_EQ(size_words(2048), "2 KiB");
    EXPECT_EQ(size_words(1000), "1000 bytes");
}

TEST(DocumentText, PlainTextIsCheckedAsUtf8) {
    EXPECT_EQ(*plain_text("\xEF\xBB\xBF# Title\nÉtude\n"), "# Title\nÉtude\n");
    EXPECT_EQ(error_of(plain_text("caf\xE9")), "it is not UTF-8 text");
    EXPECT_EQ(error_of(plain_text(std::string("a\0b", 3))), "it is not UTF-8 text");
    EXPECT_EQ(error_of(plain_text("\xED\xA0\x80")), "it is not UTF-8 text"); // a surrogate
    EXPECT_EQ(*extract_bytes("hello\n", Kind::text), "hello\n");
    EXPECT_EQ(error_of(extract_bytes("\xFF\xFE", Kind::markdown)), "it is not UTF-8 text");
}

TEST(DocumentText, SizesAreBounded) {
    Limits small;
    small.text_max = 10;
    EXPECT_EQ(error_of(extract_bytes(std::string(11, 'a'), Kind::text, small)),
              "it is larger than 10 bytes");
    EXPECT_EQ(*extract_bytes(std::string(10, 'a'), Kind::text, small), std::string(10, 'a'));
    Limits tiny;
    tiny.file_max = 100;
    EXPECT_EQ(error_of(extract_bytes(std::string(200, ' '), Kind::pdf, tiny)),
              "it is larger than 100 bytes");
    EXPECT_EQ(error_of(extract_bytes(zip_of({{"word/document.xml", k_word}}), Kind::docx, tiny)),
              "it is larger than 100 bytes");
    Limits short_text;
    short_text.text_max = 20;
    EXPECT_EQ(
        error_of(extract_bytes("<p>" + std::string(30, 'x') + "</p>", Kind::html, short_text)),
        "its text is longer than 20 bytes");
}

TEST(DocumentText, HtmlAsFetchUrlMakesIt) {
    auto text = extract_bytes("<html><head><title>Plan</title><script>evil()</script></head>"
                              "<body><h1>Budget</h1><p>Spend <b>less</b>.</p><ul><li>one</li>"
                              "</ul></body></html>",
                              Kind::html);
    ASSERT_TRUE(text) << text.error().message();
    EXPECT_EQ(*text, "Plan\n\n# Budget\n\nSpend less.\n\n- one");
}

TEST(DocumentText, WordParagraphsTabsAndBreaks) {
    auto text = extract_bytes(
        zip_of({{"[Content_Types].xml", "<Types/>"}, {"word/document.xml", k_word}}), Kind::docx);
    ASSERT_TRUE(text) << text.error().message();
    EXPECT_EQ(*text, "Quarterly report\nRevenue grew\t12%\nline one\nline two");
}

TEST(DocumentText, OpenDocumentSpacesAndHeadings) {
    auto text = extract_bytes(
        zip_of({{"mimetype", "application/vnd.oasis.opendocument.text"}, {"content.xml", k_odt}}),
        Kind::odt);
    ASSERT_TRUE(text) << text.error().message();
    EXPECT_EQ(*text, "Minutes\na   b\tc\nd");
}

TEST(DocumentText, SlidesInTheirOrder) {
    auto text = extract_bytes(zip_of({{"ppt/slides/slide10.xml", slide("ten")},
                                      {"ppt/slides/slide2.xml", slide("two")},
                                      {"ppt/slides/_rels/slide2.xml.rels", "<x/>"},
                                      {"ppt/slides/slide1.xml", slide("one")}}),
                              Kind::pptx);
    ASSERT_TRUE(text) << text.error().message();
    EXPECT_EQ(*text, "[slide 1]\none\n\n[slide 2]\ntwo\n\n[slide 10]\nten");
}

TEST(DocumentHostile, BillionLaughsStopsAtTheDoctype) {
    EXPECT_EQ(error_of(xml_part_text(k_laughs, Kind::docx)), k_dtd_refused);
    EXPECT_EQ(error_of(extract_bytes(zip_of({{"word/document.xml", k_laughs}}), Kind::docx)),
              k_dtd_refused);
    EXPECT_EQ(error_of(extract_bytes(zip_of({{"content.xml", k_laughs}}), Kind::odt)),
              k_dtd_refused);
    EXPECT_EQ(error_of(extract_bytes(zip_of({{"ppt/slides/slide1.xml", slide("fine")},
                                             {"ppt/slides/slide2.xml", k_laughs}}),
                                     Kind::pptx)),
              std::string("slide 2: ") + k_dtd_refused);
}

TEST(DocumentHostile, AnyDoctypeExternalOrInUtf16) {
    EXPECT_EQ(error_of(xml_part_text(
                  R"(<?xml version="1.0"?><!DOCTYPE d SYSTEM "http://127.0.0.1:9/x.dtd"><d/>)",
                  Kind::docx)),
              k_dtd_refused);
    EXPECT_EQ(error_of(xml_part_text(
                  "<!DOCTYPE d [<!ENTITY e SYSTEM \"file:///etc/passwd\">]><d>&e;</d>", Kind::odt)),
              k_dtd_refused);
    // The same in UTF-16 (a byte scan for "<!DOCTYPE" would not see it): the parser's callback
    // does.
    std::string utf8 =
        "<?xml version=\"1.0\" encoding=\"UTF-16\"?><!DOCTYPE d [<!ENTITY a \"b\">]><d>&a;</d>";
    std::string utf16 = "\xFF\xFE";
    for (char c : utf8) {
        utf16 += c;
        utf16 += '\0';
    }
    EXPECT_EQ(error_of(xml_part_text(utf16, Kind::docx)), k_dtd_refused);
}

TEST(DocumentHostile, XmlThatIsNotXml) {
    EXPECT_EQ(error_of(xml_part_text("<w:document><w:t>open", Kind::docx)),
              "its XML is not well-formed");
    EXPECT_EQ(error_of(xml_part_text("", Kind::docx)), "its XML is not well-formed");
    EXPECT_EQ(error_of(xml_part_text("not xml at all", Kind::odt)), "its XML is not well-formed");
    // Nested past libxml2's bound on depth: refused, not a stack overflow.
    std::string deep;
    for (int i = 0; i < 100000; ++i)
        deep += "<a>";
    EXPECT_EQ(error_of(xml_part_text(deep, Kind::docx)), "its XML is not well-formed");
}

TEST(DocumentHostile, ContainersThatAreNotTheirKind) {
    EXPECT_EQ(error_of(extract_bytes("just text", Kind::docx))
                  .rfind("it is not a zip container, as a Word document is (", 0),
              0U);
    EXPECT_EQ(error_of(extract_bytes(zip_of({{"content.xml", k_odt}}), Kind::docx)),
              "it has no word/document.xml, as a Word document has");
    EXPECT_EQ(error_of(extract_bytes(zip_of({{"word/document.xml", k_word}}), Kind::odt)),
              "it has no content.xml, as an OpenDocument text has");
    EXPECT_EQ(error_of(extract_bytes(zip_of({{"ppt/presentation.xml", "<p/>"}}), Kind::pptx)),
              "it has no slides (ppt/slides/slide1.xml), as a PowerPoint presentation has");
    // Cut short: the central directory is gone.
    std::string cut = zip_of({{"word/document.xml", k_word}});
    cut.resize(cut.size() / 2);
    EXPECT_FALSE(extract_bytes(cut, Kind::docx));
}

// Found by tests/fuzz/fuzz_documents: a container cut short where libarchive has no error text.
TEST(DocumentHostile, EveryPrefixOfAContainer) {
    std::string zip = zip_of({{"mimetype", "x"}, {"word/document.xml", k_word}});
    for (size_t n = 0; n < zip.size(); ++n) {
        auto r = extract_bytes(zip.substr(0, n), Kind::docx);
        EXPECT_TRUE(!r || r->find("Quarterly") != std::string::npos) << n;
        if (!r) {
            EXPECT_EQ(r.error().exit(), Exit::data) << n << ": " << r.error().message();
        }
    }
}

TEST(DocumentHostile, ZipBoundsOnEntriesAndUnpackedBytes) {
    Limits limits;
    limits.entries_max = 3;
    EXPECT_EQ(
        error_of(extract_bytes(
            zip_of({{"a", "1"}, {"b", "2"}, {"c", "3"}, {"d", "4"}, {"word/document.xml", k_word}}),
            Kind::docx, limits)),
        "it holds more than 3 entries");
    Limits small;
    small.unpacked_max = 1024;
    std::string big = "<w:document xmlns:w=\"urn:w\"><w:body><w:p><w:r><w:t>"
                      + std::string(2000, 'x') + "</w:t></w:r></w:p></w:body></w:document>";
    EXPECT_EQ(error_of(extract_bytes(zip_of({{"word/document.xml", big}}), Kind::docx, small)),
              "it unpacks to more than 1 KiB");
    // Many slides, each small, past the bound in all.
    std::vector<std::pair<std::string, std::string>> slides;
    for (int i = 1; i <= 20; ++i)
        slides.emplace_back("ppt/slides/slide" + std::to_string(i) + ".xml", slide("some text"));
    EXPECT_EQ(error_of(extract_bytes(zip_of(slides), Kind::pptx, small)),
              "it unpacks to more than 1 KiB");
    // Entries not read are not counted against the bytes, only against the entries.
    EXPECT_TRUE(extract_bytes(
        zip_of({{"word/media/big.bin", std::string(4000, 'z')}, {"word/document.xml", k_word}}),
        Kind::docx, small));
}

TEST(DocumentHostile, PdfThatIsNotOne) {
    if (::access("/usr/bin/pdftotext", X_OK) != 0)
        GTEST_SKIP() << "pdftotext is not installed (Debian package poppler-utils)";
    std::string e = error_of(extract_bytes("%PDF-1.4\nnot really\n", Kind::pdf));
    EXPECT_EQ(e.rfind("pdftotext cannot read it: ", 0), 0U) << e;
}

// pdftotext as this process's PATH finds it: a stand-in of the test's that hangs, that says too
// much, or none at all.
class FakePdftotext : public ::testing::Test {
protected:
    void SetUp() override {
        ASSERT_FALSE(m_tmp.path().empty());
        const char* path = std::getenv("PATH"); // NOLINT(concurrency-mt-unsafe)
        m_path = path != nullptr ? path : "";
        const char* exec_path = std::getenv("SION_EXEC_PATH"); // NOLINT(concurrency-mt-unsafe)
        m_exec_path = exec_path != nullptr ? exec_path : "";
        ::unsetenv("SION_EXEC_PATH");
        ::setenv("PATH", m_tmp.path().c_str(), 1);
    }

    void TearDown() override {
        ::setenv("PATH", m_path.c_str(), 1);
        if (!m_exec_path.empty())
            ::setenv("SION_EXEC_PATH", m_exec_path.c_str(), 1);
    }

    void script(const std::string& body) {
        std::string file = m_tmp.path() + "/pdftotext";
        std::ofstream(file) << "#!/bin/sh\n" << body << "\n";
        ::chmod(file.c_str(), 0755);
    }

private:
    test::TempDir m_tmp;
    std::string m_path;
    std::string m_exec_path;
};

TEST_F(FakePdftotext, Missing) {
    EXPECT_EQ(error_of(extract_bytes("%PDF-1.4\n", Kind::pdf)),
              "reading a PDF takes pdftotext (Debian package poppler-utils), which is not "
              "installed");
}

TEST_F(FakePdftotext, HangsAndIsStopped) {
    script("exec /bin/sleep 30");
    Limits limits;
    limits.pdf_time = std::chrono::milliseconds(1000);
    auto r = extract_bytes("%PDF-1.4\n", Kind::pdf, limits);
    EXPECT_EQ(error_of(r), "pdftotext took longer than 1 s");
    EXPECT_EQ(r.error().exit(), Exit::timeout);
}

TEST_F(FakePdftotext, SaysTooMuch) {
    script("/usr/bin/head -c 100000 /dev/zero | /usr/bin/tr '\\0' a");
    Limits limits;
    limits.text_max = 1000;
    EXPECT_EQ(error_of(extract_bytes("%PDF-1.4\n", Kind::pdf, limits)),
              "its text is longer than 1000 bytes");
}

TEST_F(FakePdftotext, FailsWithItsWords) {
    script("echo 'Syntax Error: broken xref' >&2; exit 1");
    EXPECT_EQ(error_of(extract_bytes("%PDF-1.4\n", Kind::pdf)),
              "pdftotext cannot read it: Syntax Error: broken xref");
}

} // namespace
} // namespace sion::documents
