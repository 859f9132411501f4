// SPDX-License-Identifier: MIT
// session/code/edit and session/code/lines: a quoted stretch replaced once or everywhere, line endings and
// final newlines kept, and what the model is told when the stretch is not there (the nearest
// lines, numbered) or is there several times (how many, where).
#include "session/code/edit.hpp"
#include "session/code/lines.hpp"

#include <gtest/gtest.h>

#include <string>

namespace sion::code {
namespace {

std::string edited(std::string_view text, std::string_view old_string, std::string_view new_string,
                   bool replace_all = false, size_t want_count = 0) {
    auto r = apply_edit(text, {old_string, new_string, replace_all}, "a.py");
    if (!r) {
        ADD_FAILURE() << r.error().message();
        return "";
    }
    if (want_count != 0) {
        EXPECT_EQ(r->replacements, want_count);
    }
    return r->text;
}

std::string refused(std::string_view text, std::string_view old_string, std::string_view new_string,
                    bool replace_all = false) {
    auto r = apply_edit(text, {old_string, new_string, replace_all}, "a.py");
    if (r) {
        ADD_FAILURE() << "edited: " << r->text;
        return "";
    }
    EXPECT_EQ(r.error().exit(), Exit::data);
    return r.error().message();
}

TEST(CodeEdit, ReplacesAStretchThatIsThereOnce) {
    EXPECT_EQ(edited("a = 1\nb = 2\nc = 3\n", "b = 2", "b = 20", false, 1),
              "a = 1\nb = 20\nc = 3\n");
    EXPECT_EQ(edited("one two three", "two ", ""), "one three");
    EXPECT_EQ(edited("x\ny\nz\n", "y\nz\n", "Y\n"), "x\nY\n");
}

TEST(CodeEdit, SeveralTimesIsRefusedWithTheirLinesUnlessReplaceAll) {
    std::string text = "x = 1\nprint(x)\nx = 1\n\nx = 1\n";
    EXPECT_EQ(refused(text, "x = 1", "x = 2"),
              "old_string is in the file 3 times (lines 1, 3 and 5): quote more of the lines "
              "around it so that it is there once, or set replace_all to replace every one");
    EXPECT_EQ(edited(text, "x = 1", "x = 2", true, 3), "x = 2\nprint(x)\nx = 2\n\nx = 2\n");
    // Two on one line.
    EXPECT_EQ(refused("aa\n", "a", "b"),
              "old_string is in the file 2 times (lines 1 and 1): quote more of the lines around "
              "it so that it is there once, or set replace_all to replace every one");
    // Matches do not overlap, and replace_all does not rescan what it put in.
    EXPECT_EQ(edited("aaaa", "aa", "a", true, 2), "aa");
    EXPECT_EQ(edited("ab", "a", "aa", true, 1), "aab");
}

TEST(CodeEdit, ManyTimesListsTheFirstTwenty) {
    std::string text;
    for (int i = 0; i < 30; ++i)
        text += "same\n";
    std::string why = refused(text, "same", "other");
    EXPECT_NE(why.find("30 times (lines 1, 2, 3,"), std::string::npos) << why;
    EXPECT_NE(why.find("19, 20, …)"), std::string::npos) << why;
}

TEST(CodeEdit, NotThereQuotesTheNearestLines) {
    std::string text = "def area(w, h):\n    return w * h\n\n\ndef perimeter(w, h):\n"
                       "    return 2 * (w + h)\n";
    EXPECT_EQ(refused(text, "def perimeter(w, h):\n    return 2 * (w + hh)\n", "x"),
              "old_string is not in the file; the nearest lines of a.py are 5-6:\n"
              "     5\tdef perimeter(w, h):\n"
              "     6\t    return 2 * (w + h)");
    EXPECT_EQ(refused(text, "return w*h", "x"),
              "old_string is not in the file; the nearest line of a.py is 2:\n"
              "     2\t    return w * h");
    EXPECT_EQ(refused(text, "zzz", "x"),
              "old_string is not in the file; nothing in a.py is like them");
    EXPECT_EQ(refused("", "zzz", "x"), "old_string is not in the file; a.py is empty");
}

TEST(CodeEdit, NotThereBecauseOfIndentationSaysSo) {
    std::string text = "if x:\n    y()\n    z()\n";
    EXPECT_EQ(refused(text, "  y()\n  z()", "w()"),
              "old_string is not in the file; the nearest lines of a.py are 2-3 (they differ only "
              "in whitespace):\n"
              "     2\t    y()\n"
              "     3\t    z()");
}

TEST(CodeEdit, CrlfFilesTakeLfStringsAndStayCrlf) {
    std::string text = "one\r\ntwo\r\nthree\r\n";
    EXPECT_EQ(edited(text, "one\ntwo\n", "uno\ndos\n"), "uno\r\ndos\r\nthree\r\n");
    EXPECT_EQ(edited(text, "two", "two\nand a half"), "one\r\ntwo\r\nand a half\r\nthree\r\n");
    // CRLF strings given for a CRLF file are taken as they are.
    EXPECT_EQ(edited(text, "two\r\n", "2\r\n"), "one\r\n2\r\nthree\r\n");
}

TEST(CodeEdit, LfFilesTakeCrlfStringsAndStayLf) {
    EXPECT_EQ(edited("a\nb\nc\n", "a\r\nb\r\n", "x\r\ny\r\n"), "x\ny\nc\n");
}

TEST(CodeEdit, FinalNewlineIsKept) {
    // A file without one: a quote ending in a newline finds its last line, and none is added.
    EXPECT_EQ(edited("a\nb", "b\n", "c\n"), "a\nc");
    EXPECT_EQ(edited("a\r\nb", "a\nb\n", "x\ny\n"), "x\r\ny");
    // A file with one keeps it, even when the edit takes the last line's ending away.
    EXPECT_EQ(edited("a\nb\n", "\nb\n", ""), "a\n");
    EXPECT_EQ(edited("a\r\nb\r\n", "b\r\n", "c"), "a\r\nc\r\n");
    // Deleting every line leaves an empty file, not a newline.
    EXPECT_EQ(edited("a\n", "a\n", ""), "");
}

TEST(CodeEdit, EmptyAndSameAreRefused) {
    EXPECT_EQ(refused("a\n", "", "b"),
              "old_string is empty: quote the text to replace (write_file replaces a whole file)");
    EXPECT_EQ(refused("a\n", "a", "a"),
              "old_string and new_string are the same: there is nothing to change");
    // An empty file takes new_string whole.
    EXPECT_EQ(edited("", "", "hello\n", false, 1), "hello\n");
}

TEST(CodeEdit, UnicodeAndLongLinesAreQuotedCut) {
    std::string long_line(1000, 'x');
    std::string why = refused("é " + long_line + "\n", "é " + long_line + "y", "z");
    EXPECT_NE(why.find("     1\té xx"), std::string::npos) << why;
    EXPECT_NE(why.find(" [… 603 more characters]"), std::string::npos) << why;
}

TEST(CodeLines, SplitsKeepingEndings) {
    Lines l = split_lines("a\r\nb\nc");
    ASSERT_EQ(l.text.size(), 3U);
    EXPECT_EQ(l.text[0], "a");
    EXPECT_TRUE(l.crlf[0]);
    EXPECT_FALSE(l.crlf[1]);
    EXPECT_FALSE(l.final_newline);
    EXPECT_EQ(l.eol, "\n"); // one CRLF, one LF: not most
    EXPECT_EQ(split_lines("a\r\nb\r\nc\n").eol, "\r\n");
    EXPECT_TRUE(split_lines("").text.empty());
    EXPECT_EQ(split_lines("\n").text.size(), 1U);
    EXPECT_EQ(to_crlf("a\nb\r\n"), "a\r\nb\r\n");
    EXPECT_EQ(to_lf("a\r\nb\r"), "a\nb\r");
}

TEST(CodeLines, NearestPrefersTheStretchNearTheHint) {
    std::vector<std::string_view> lines = {"x", "a", "b", "x", "a", "b"};
    EXPECT_EQ(nearest(lines, {"a", "c"}, 0).first, 1U);
    EXPECT_EQ(nearest(lines, {"a", "c"}, 5).first, 4U);
    EXPECT_EQ(quote_lines(lines, 4, 5), "     5\ta\n     6\tb\n");
}

TEST(CodeLines, NearestStaysQuickOnAHugeFile) {
    std::vector<std::string> storage;
    for (int i = 0; i < 200000; ++i)
        storage.push_back("line number " + std::to_string(i));
    std::vector<std::string_view> lines(storage.begin(), storage.end());
    std::vector<std::string_view> wanted(lines.begin() + 150000, lines.begin() + 150300);
    std::string changed = "line number 150100 changed";
    wanted[100] = changed;
    Stretch s = nearest(lines, wanted);
    EXPECT_EQ(s.first, 150000U);
    EXPECT_EQ(s.count, 300U);
}

TEST(CodeLines, ListsNumbers) {
    EXPECT_EQ(list_numbers({4}), "4");
    EXPECT_EQ(list_numbers({4, 10}), "4 and 10");
    EXPECT_EQ(list_numbers({4, 10, 22}), "4, 10 and 22");
    EXPECT_EQ(list_numbers({1, 2, 3}, 2), "1, 2, …");
    EXPECT_EQ(line_of("a\nb\nc", 4), 3U);
}

} // namespace
} // namespace sion::code
