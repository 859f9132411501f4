// SPDX-License-Identifier: MIT
// session/code/patch: both forms parsed into one structure and planned against files in memory — adds,
// deletes, moves, several files, hunks found by their lines whatever their numbers say, CRLF files,
// final newlines, ambiguous and missing hunks refused with their file, number and nearest lines, a
// failing patch that changes nothing, and malformed patches (cut short, headers missing, binary,
// huge) refused by line.
#include "session/code/patch.hpp"

#include <gtest/gtest.h>

#include <map>
#include <string>

namespace sion::code {
namespace {

using Files = std::map<std::string, std::string>;

// A workspace in memory: the patch planned against `files`, and on success its changes made.
struct Applied {
    bool ok = false;
    std::string said; // the done lines joined, or the error
    Files files;
};

Applied apply(Files files, std::string_view patch_text) {
    Applied out;
    out.files = files;
    auto patch = parse_patch(patch_text);
    if (!patch) {
        EXPECT_EQ(patch.error().exit(), Exit::data);
        out.said = patch.error().message();
        return out;
    }
    auto plan =
        plan_patch(*patch, [&](const std::string& path) -> Result<std::optional<std::string>> {
            if (path.rfind("../", 0) == 0)
                return make_error(Exit::no_perm, "cannot read '%s': it is outside the workspace",
                                  path.c_str());
            auto found = files.find(path);
            if (found == files.end())
                return std::optional<std::string>();
            return std::optional<std::string>(found->second);
        });
    if (!plan) {
        out.said = plan.error().message();
        return out;
    }
    for (const FileChange& c : plan->changes) {
        if (c.text)
            out.files[c.path] = *c.text;
        else
            out.files.erase(c.path);
    }
    for (const std::string& line : plan->done)
        out.said += (out.said.empty() ? "" : "\n") + line;
    out.ok = true;
    return out;
}

// The patch applies: what it said, and the files after.
Files applied(const Files& files, std::string_view patch, std::string_view want_said = {}) {
    Applied a = apply(files, patch);
    EXPECT_TRUE(a.ok) << a.said;
    if (!want_said.empty()) {
        EXPECT_EQ(a.said, want_said);
    }
    return a.files;
}

// The patch is refused: the error, and no file changed.
std::string refused(const Files& files, std::string_view patch) {
    Applied a = apply(files, patch);
    EXPECT_FALSE(a.ok) << a.said;
    EXPECT_EQ(a.files, files);
    const std::string prefix = "cannot apply the patch, so no file was changed: ";
    EXPECT_EQ(a.said.rfind(prefix, 0), 0U) << a.said;
    return a.said.substr(std::min(a.said.size(), prefix.size()));
}

const Files k_primes = {
    {"primes.py", "def is_prime(n):\n    if n < 2:\n        return False\n"
                  "    for d in range(2, n):\n        if n % d == 0:\n            return False\n"
                  "    return True\n\n\nprint([n for n in range(60) if is_prime(n)])\n"},
    {"README", "primes\n"},
    {"old.txt", "old\n"},
};

// --- *** Begin Patch ---------------------------------------------------------------------------

TEST(CodePatchCodex, AddsUpdatesDeletesAndMovesSeveralFiles) {
    Files after =
        applied(k_primes, R"(*** Begin Patch
*** Update File: primes.py
@@ def is_prime(n):
     if n < 2:
         return False
-    for d in range(2, n):
+    for d in range(2, int(n ** 0.5) + 1):
         if n % d == 0:
@@
-print([n for n in range(60) if is_prime(n)])
+print(sum(1 for n in range(60) if is_prime(n)))
*** Add File: tests/test_primes.py
+from primes import is_prime
+
+assert is_prime(59)
*** Delete File: old.txt
*** Update File: README
*** Move to: docs/README
@@
-primes
+primes, up to 60
*** End Patch
)",
                "updated primes.py (2 hunks)\nadded tests/test_primes.py\ndeleted old.txt\n"
                "moved README to docs/README (1 hunk)");
    EXPECT_EQ(after.at("primes.py"),
              "def is_prime(n):\n    if n < 2:\n        return False\n"
              "    for d in range(2, int(n ** 0.5) + 1):\n        if n % d == 0:\n"
              "            return False\n    return True\n\n\n"
              "print(sum(1 for n in range(60) if is_prime(n)))\n");
    EXPECT_EQ(after.at("tests/test_primes.py"),
              "from primes import is_prime\n\nassert is_prime(59)\n");
    EXPECT_EQ(after.at("docs/README"), "primes, up to 60\n");
    EXPECT_EQ(after.count("old.txt"), 0U);
    EXPECT_EQ(after.count("README"), 0U);
}

TEST(CodePatchCodex, AnchorsPickTheirFunction) {
    Files files = {{"a.py", "class A:\n    def f(self):\n        return 1\n\n"
                            "class B:\n    def f(self):\n        return 1\n"}};
    Files after = applied(files, "*** Begin Patch\n*** Update File: a.py\n@@ class B:\n"
                                 "@@     def f(self):\n-        return 1\n+        return 2\n"
                                 "*** End Patch\n");
    EXPECT_EQ(after.at("a.py"), "class A:\n    def f(self):\n        return 1\n\n"
                                "class B:\n    def f(self):\n        return 2\n");
    // Without an anchor the same lines are there twice: refused, saying where.
    EXPECT_EQ(refused(files, "*** Begin Patch\n*** Update File: a.py\n@@\n     def f(self):\n"
                             "-        return 1\n+        return 2\n*** End Patch\n"),
              "a.py, hunk 1 of 1 (patch line 3): the lines it keeps and removes are in the file 2 "
              "times (at lines 2 and 6): give more lines of context around the change, or an "
              "'@@ …' line naming the function or class it is in, so that they are there once");
    // An anchor that is not there names the nearest line.
    EXPECT_EQ(refused(files, "*** Begin Patch\n*** Update File: a.py\n@@ class C:\n"
                             "-        return 1\n+        return 2\n*** End Patch\n"),
              "a.py, hunk 1 of 1 (patch line 3): its @@ line 'class C:' is not in the file; the "
              "nearest line of a.py is 1:\n     1\tclass A:");
}

TEST(CodePatchCodex, EndOfFileAndPureAdditions) {
    Files files = {{"a", "x\ny\nx\n"}};
    EXPECT_EQ(applied(files, "*** Begin Patch\n*** Update File: a\n@@\n-x\n+z\n*** End of File\n"
                             "*** End Patch")
                  .at("a"),
              "x\ny\nz\n");
    // Only added lines: at the end, or after the anchor.
    EXPECT_EQ(
        applied(files, "*** Begin Patch\n*** Update File: a\n@@\n+end\n*** End Patch").at("a"),
        "x\ny\nx\nend\n");
    EXPECT_EQ(applied(files, "*** Begin Patch\n*** Update File: a\n@@ y\n+after y\n*** End Patch")
                  .at("a"),
              "x\ny\nafter y\nx\n");
}

TEST(CodePatchCodex, TheFirstHunkMayLackItsAtAtLine) {
    Files after = applied({{"a", "1\n2\n3\n"}},
                          "*** Begin Patch\n*** Update File: a\n 1\n-2\n+two\n*** End Patch\n");
    EXPECT_EQ(after.at("a"), "1\ntwo\n3\n");
}

TEST(CodePatchCodex, PureMoveAndWrappedInAHeredocOrFence) {
    EXPECT_EQ(applied({{"a", "1\n"}},
                      "apply_patch <<'EOF'\n*** Begin Patch\n*** Update File: a\n*** Move to: b/c\n"
                      "*** End Patch\nEOF\n",
                      "moved a to b/c"),
              (Files{{"b/c", "1\n"}}));
    EXPECT_EQ(applied({}, "```\n*** Begin Patch\n*** Add File: n\n+x\n*** End Patch\n```\n"),
              (Files{{"n", "x\n"}}));
}

TEST(CodePatchCodex, BlankLinesAsEmptyContextAndSeparators) {
    Files files = {{"a", "x\n\ny\n"}};
    // The blank line inside is an empty kept line; the one before the next marker separates.
    Files after = applied(files, "*** Begin Patch\n*** Update File: a\n@@\n x\n\n-y\n+z\n\n"
                                 "*** End Patch\n");
    EXPECT_EQ(after.at("a"), "x\n\nz\n");
}

// --- unified diffs -----------------------------------------------------------------------------

TEST(CodePatchUnified, GitDiffOfSeveralFiles) {
    Files after = applied(k_primes, R"(diff --git a/primes.py b/primes.py
index 3b18e51..a9c4f2b 100644
--- a/primes.py
+++ b/primes.py
@@ -3,5 +3,5 @@ def is_prime(n):
         return False
-    for d in range(2, n):
+    for d in range(2, int(n ** 0.5) + 1):
         if n % d == 0:
             return False
     return True
diff --git a/old.txt b/old.txt
deleted file mode 100644
index 3367afd..0000000
--- a/old.txt
+++ /dev/null
@@ -1 +0,0 @@
-old
diff --git a/new.txt b/new.txt
new file mode 100644
index 0000000..3e75765
--- /dev/null
+++ b/new.txt
@@ -0,0 +1,2 @@
+new
+file
diff --git a/README b/docs/README.md
similarity index 50%
rename from README
rename to docs/README.md
index 1..2 100644
--- a/README
+++ b/docs/README.md
@@ -1 +1,2 @@
 primes
+(below 60)
)",
                          "updated primes.py (1 hunk)\ndeleted old.txt\nadded new.txt\n"
                          "moved README to docs/README.md (1 hunk)");
    EXPECT_NE(after.at("primes.py").find("int(n ** 0.5)"), std::string::npos);
    EXPECT_EQ(after.at("new.txt"), "new\nfile\n");
    EXPECT_EQ(after.at("docs/README.md"), "primes\n(below 60)\n");
    EXPECT_EQ(after.count("old.txt") + after.count("README"), 0U);
}

TEST(CodePatchUnified, GitHeadersWithoutHunks) {
    Files files = {{"run.sh", "echo\n"}, {"a", "1\n"}};
    Files after = applied(files,
                          "diff --git a/run.sh b/run.sh\nold mode 100644\nnew mode 100755\n"
                          "diff --git a/a b/b\nsimilarity index 100%\nrename from a\n"
                          "rename to b\ndiff --git a/empty b/empty\nnew file mode 100644\n"
                          "index 0000000..e69de29\n",
                          "left run.sh as it is (mode changes are not applied)\nmoved a to b\n"
                          "added empty");
    EXPECT_EQ(after, (Files{{"run.sh", "echo\n"}, {"b", "1\n"}, {"empty", ""}}));
}

TEST(CodePatchUnified, PlainDiffWithTimestampsAndNoPrefixes) {
    Files after = applied({{"notes.txt", "a\nb\nc\n"}},
                          "--- notes.txt\t2024-05-01 10:00:00.000000000 +0200\n"
                          "+++ notes.txt\t2024-05-01 10:01:00.000000000 +0200\n"
                          "@@ -1,3 +1,3 @@\n a\n-b\n+B\n c\n",
                          "updated notes.txt (1 hunk)");
    EXPECT_EQ(after.at("notes.txt"), "a\nB\nc\n");
}

TEST(CodePatchUnified, NamesThatDifferWithoutGitPickTheFileThatIsThere) {
    const char* patch = "--- a.py.orig\t2024-05-01\n+++ a.py\t2024-05-02\n@@ -1 +1 @@\n-x\n+y\n";
    EXPECT_EQ(applied({{"a.py", "x\n"}}, patch, "updated a.py (1 hunk)"), (Files{{"a.py", "y\n"}}));
    EXPECT_EQ(applied({{"a.py.orig", "x\n"}}, patch, "updated a.py.orig (1 hunk)"),
              (Files{{"a.py.orig", "y\n"}}));
    EXPECT_EQ(refused({}, patch), "cannot update a.py.orig: there is no such file (a new file is "
                                  "added, not updated)");
}

TEST(CodePatchUnified, QuotedPathsAndCommitMessages) {
    Files after = applied({{"my file", "x\n"}},
                          "From 1234 Mon Sep 17 00:00:00 2001\nSubject: [PATCH] change\n\n"
                          "- a list item in the message\n---\n my file | 2 +-\n\n"
                          "diff --git \"a/my file\" \"b/my file\"\n--- \"a/my file\"\n"
                          "+++ \"b/my file\"\n@@ -1 +1 @@\n-x\n+y\n-- \n2.39.0\n");
    EXPECT_EQ(after.at("my file"), "y\n");
}

TEST(CodePatchUnified, LineNumbersAreOnlyAHint) {
    std::string text;
    for (int i = 1; i <= 200; ++i)
        text += "line " + std::to_string(i) + "\n";
    // Both hunks' numbers are 50 lines off: each is found by its lines.
    Files after = applied({{"f", text}}, "--- a/f\n+++ b/f\n@@ -60,3 +60,3 @@\n line 10\n-line 11\n"
                                         "+eleven\n line 12\n@@ -150,2 +150,2 @@\n-line 100\n"
                                         "+hundred\n line 101\n");
    EXPECT_NE(after.at("f").find("line 10\neleven\nline 12\n"), std::string::npos);
    EXPECT_NE(after.at("f").find("line 99\nhundred\nline 101\n"), std::string::npos);
}

TEST(CodePatchUnified, AStatedLineChoosesBetweenEqualStretches) {
    Files files = {{"f", "a\nx\nb\na\nx\nb\n"}};
    EXPECT_EQ(applied(files, "--- a/f\n+++ b/f\n@@ -4,3 +4,3 @@\n a\n-x\n+y\n b\n").at("f"),
              "a\nx\nb\na\ny\nb\n");
    EXPECT_EQ(applied(files, "--- a/f\n+++ b/f\n@@ -2,2 +2,2 @@\n a\n-x\n+y\n b\n").at("f"),
              "a\ny\nb\na\nx\nb\n");
    // Numbers far from both: which one was meant cannot be told.
    std::string far = "a\nx\nb\na\nx\nb\n" + std::string(40, '\n');
    EXPECT_EQ(refused({{"f", far}}, "--- a/f\n+++ b/f\n@@ -40,3 +40,3 @@\n a\n-x\n+y\n b\n"),
              "f, hunk 1 of 1 (patch line 3): the lines it keeps and removes are in the file 2 "
              "times (at lines 1 and 4), none of them at or near line 40: give more lines of "
              "context around the change, so that they are there once");
}

TEST(CodePatchUnified, WrongCountsAndMissingSpacesAreTolerated) {
    Files files = {{"f", "a\n\nb\nc\n"}, {"g", "1\n2\n"}};
    // Counts too large, too small, and an empty kept line written without its space.
    Files after = applied(files, "--- a/g\n+++ b/g\n@@ -1,9 +1,9 @@\n 1\n-2\n+two\n"
                                 "--- a/f\n+++ b/f\n@@ -1,2 +1,2 @@\n a\n\n-b\n+B\n c\n");
    EXPECT_EQ(after.at("f"), "a\n\nB\nc\n");
    EXPECT_EQ(after.at("g"), "1\ntwo\n");
}

TEST(CodePatchUnified, BareAtAtLinesAndInsertions) {
    Files files = {{"f", "1\n2\n3\n"}};
    EXPECT_EQ(applied(files, "--- f\n+++ f\n@@\n 2\n+2.5\n 3\n").at("f"), "1\n2\n2.5\n3\n");
    EXPECT_EQ(applied(files, "--- f\n+++ f\n@@ -1,0 +2 @@\n+1.5\n").at("f"), "1\n1.5\n2\n3\n");
    EXPECT_EQ(applied(files, "--- f\n+++ f\n@@ -0,0 +1 @@\n+0\n").at("f"), "0\n1\n2\n3\n");
}

TEST(CodePatchUnified, NoNewlineAtEndOfFile) {
    // Kept when the patch does not mention it.
    EXPECT_EQ(applied({{"f", "a\nb"}}, "--- a/f\n+++ b/f\n@@ -1,2 +1,2 @@\n a\n-b\n+c\n").at("f"),
              "a\nc");
    // Taken away, and given, when the markers say so.
    EXPECT_EQ(applied({{"f", "a\nb"}}, "--- a/f\n+++ b/f\n@@ -1,2 +1,2 @@\n a\n-b\n"
                                       "\\ No newline at end of file\n+b\n")
                  .at("f"),
              "a\nb\n");
    EXPECT_EQ(applied({{"f", "a\nb\n"}}, "--- a/f\n+++ b/f\n@@ -1,2 +1,2 @@\n a\n-b\n+b\n"
                                         "\\ No newline at end of file\n")
                  .at("f"),
              "a\nb");
    EXPECT_EQ(
        applied({}, "--- /dev/null\n+++ b/n\n@@ -0,0 +1 @@\n+x\n\\ No newline at end of file\n")
            .at("n"),
        "x");
}

// --- both forms --------------------------------------------------------------------------------

TEST(CodePatch, CrlfFilesStayCrlf) {
    Files files = {{"w.txt", "one\r\ntwo\r\nthree\r\n"}};
    EXPECT_EQ(
        applied(files, "--- a/w.txt\n+++ b/w.txt\n@@ -1,3 +1,4 @@\n one\n-two\n+2\n+2.5\n three\n")
            .at("w.txt"),
        "one\r\n2\r\n2.5\r\nthree\r\n");
    EXPECT_EQ(applied(files, "*** Begin Patch\r\n*** Update File: w.txt\r\n@@\r\n-three\r\n+3\r\n"
                             "*** End Patch\r\n")
                  .at("w.txt"),
              "one\r\ntwo\r\n3\r\n");
    // A CRLF file without a final newline, lines added at its end.
    EXPECT_EQ(
        applied({{"v", "a\r\nb"}}, "*** Begin Patch\n*** Update File: v\n b\n+c\n*** End Patch")
            .at("v"),
        "a\r\nb\r\nc");
}

TEST(CodePatch, TrailingWhitespaceIsToleratedAsAFallback) {
    Files files = {{"f", "x = 1   \ny = 2\t\n"}};
    EXPECT_EQ(applied(files, "*** Begin Patch\n*** Update File: f\n x = 1\n-y = 2\n+y = 3\n"
                             "*** End Patch")
                  .at("f"),
              "x = 1   \ny = 3\n"); // the kept line is the file's, spaces and all
}

TEST(CodePatch, AFailingHunkChangesNoFileAndQuotesTheNearestLines) {
    std::string why = refused(k_primes, R"(*** Begin Patch
*** Add File: new.py
+print(1)
*** Delete File: old.txt
*** Update File: primes.py
@@
-    if n < 2:
+    if n <= 1:
@@
     for d in range(2, n):
-        if n % d = 0:
+        if not n % d:
*** End Patch)");
    EXPECT_EQ(why, "primes.py, hunk 2 of 2 (patch line 9): the lines it keeps and removes are not "
                   "in the file; the nearest lines of primes.py are 4-5:\n"
                   "     4\t    for d in range(2, n):\n"
                   "     5\t        if n % d == 0:");
}

TEST(CodePatch, FilesThatAreNotAsThePatchSays) {
    EXPECT_EQ(refused(k_primes, "*** Begin Patch\n*** Add File: README\n+x\n*** End Patch"),
              "cannot add README: it is there already (update it instead)");
    EXPECT_EQ(
        refused(k_primes, "*** Begin Patch\n*** Update File: nope\n@@\n-x\n+y\n*** End Patch"),
        "cannot update nope: there is no such file (a new file is added, not updated)");
    EXPECT_EQ(refused(k_primes, "*** Begin Patch\n*** Delete File: nope\n*** End Patch"),
              "cannot delete nope: there is no such file");
    EXPECT_EQ(refused(k_primes, "*** Begin Patch\n*** Update File: old.txt\n*** Move to: README\n"
                                "*** End Patch"),
              "cannot move old.txt to README: README is there already");
    EXPECT_EQ(refused(k_primes, "--- a/README\n+++ /dev/null\n@@ -1 +0,0 @@\n-other\n"),
              "README, hunk 1 of 1 (patch line 3): the lines it keeps and removes are not in the "
              "file; nothing in README is like them");
    EXPECT_EQ(refused(k_primes, "--- a/README\n+++ /dev/null\n@@ -1 +0,0 @@\n-prime\n"),
              "README, hunk 1 of 1 (patch line 3): the lines it keeps and removes are not in the "
              "file; the nearest line of README is 1:\n     1\tprimes");
    EXPECT_EQ(refused({{"b", "1\n2\n"}}, "--- a/b\n+++ /dev/null\n@@ -1 +0,0 @@\n-1\n"),
              "cannot delete b: it has 1 lines the patch does not delete");
    EXPECT_EQ(refused({{"bin", std::string("a\0b", 3)}}, "--- a/bin\n+++ b/bin\n@@\n-a\n+b\n"),
              "bin is a binary file: apply_patch changes text files only");
    EXPECT_EQ(refused(k_primes, "*** Begin Patch\n*** Add File: ../x\n+x\n*** End Patch"),
              "cannot read '../x': it is outside the workspace");
}

TEST(CodePatch, SectionsOnOneFileApplyInTurn) {
    Files done = applied({{"f", "1\n2\n"}, {"g", ""}},
                         "*** Begin Patch\n*** Update File: f\n-1\n+one\n*** Update File: f\n"
                         "*** Move to: h\n-2\n+two\n*** Delete File: g\n*** Add File: g\n+new\n"
                         "*** End Patch",
                         "updated f (1 hunk)\nmoved f to h (1 hunk)\ndeleted g\nadded g");
    EXPECT_EQ(done, (Files{{"g", "new\n"}, {"h", "one\ntwo\n"}}));
}

TEST(CodePatch, HunksOutOfOrderApplyButOverlapsAreRefused) {
    Files files = {{"f", "a\nb\nc\nd\n"}};
    EXPECT_EQ(applied(files, "--- f\n+++ f\n@@\n-d\n+D\n@@\n-a\n+A\n").at("f"), "A\nb\nc\nD\n");
    EXPECT_EQ(refused(files, "--- f\n+++ f\n@@\n a\n-b\n+B\n@@\n-a\n+A\n"),
              "f: hunk 1 and hunk 2 change the same lines (1-2)");
}

TEST(CodePatch, AThousandHunks) {
    std::string text;
    std::string patch = "--- a/big\n+++ b/big\n";
    for (int i = 0; i < 10000; ++i)
        text += "value_" + std::to_string(i) + " = " + std::to_string(i % 7) + "\n";
    for (int i = 5; i < 10000; i += 10)
        patch += "@@ -" + std::to_string(i) + ",3 +" + std::to_string(i) + ",3 @@\n value_"
                 + std::to_string(i - 1) + " = " + std::to_string((i - 1) % 7) + "\n-value_"
                 + std::to_string(i) + " = " + std::to_string(i % 7) + "\n+value_"
                 + std::to_string(i) + " = changed\n value_" + std::to_string(i + 1) + " = "
                 + std::to_string((i + 1) % 7) + "\n";
    Applied a = apply({{"big", text}}, patch);
    ASSERT_TRUE(a.ok) << a.said.substr(0, 500);
    EXPECT_EQ(a.said, "updated big (1000 hunks)");
    EXPECT_NE(a.files.at("big").find("value_9995 = changed\n"), std::string::npos);
}

// --- malformed patches -------------------------------------------------------------------------

std::string unreadable(std::string_view patch) {
    auto r = parse_patch(patch);
    if (r) {
        ADD_FAILURE() << "parsed " << r->files.size() << " files";
        return "";
    }
    EXPECT_EQ(r.error().exit(), Exit::data);
    const std::string prefix = "cannot apply the patch, so no file was changed: ";
    EXPECT_EQ(r.error().message().rfind(prefix, 0), 0U) << r.error().message();
    return r.error().message().substr(prefix.size());
}

TEST(CodePatchMalformed, CutShort) {
    EXPECT_EQ(unreadable("*** Begin Patch\n*** Update File: a\n@@\n-x\n+y\n"),
              "line 5 of the patch: the patch ends without '*** End Patch': it may be cut short");
    EXPECT_EQ(
        unreadable("--- a/f\n+++ b/f\n@@ -1,4 +1,4 @@\n a\n-b\n+B\n"),
        "line 3 of the patch: the patch ends inside the hunk '@@ -1,4 +1,4 @@', which says it "
        "has 4 old and 4 new lines, not 2 and 2: it may be cut short (give the rest, or "
        "correct the counts)");
    EXPECT_EQ(unreadable("--- a/f\n+++ b/f\n"),
              "line 1 of the patch: '--- f' and '+++ f' are followed by no hunk");
}

TEST(CodePatchMalformed, HeadersMissing) {
    EXPECT_EQ(
        unreadable("@@ -1 +1 @@\n-a\n+b\n"),
        "line 1 of the patch: a hunk before the '--- a/path' and '+++ b/path' lines that name "
        "its file");
    EXPECT_EQ(unreadable("--- a/f\n+++ b/f\n@@ -1 +1 @@\n-a\n+b\n--- a/g\n@@ -1 +1 @@\n"),
              "line 6 of the patch: '--- a/g' is not followed by a '+++ b/path' line");
    EXPECT_EQ(unreadable("just some text\n"),
              "this is neither a unified diff ('--- a/path', '+++ b/path', '@@' hunks) nor a "
              "'*** Begin Patch' patch");
    EXPECT_EQ(unreadable(""), "the patch is empty");
    EXPECT_EQ(unreadable("*** Begin Patch\n*** Frobnicate: a\n*** End Patch"),
              "line 2 of the patch: '*** Frobnicate: a' is not '*** Add File: path', '*** Update "
              "File: path', '*** Delete File: path' or '*** End Patch'");
    EXPECT_EQ(unreadable("*** Begin Patch\n*** Update File: a\n@@\nx\n*** End Patch"),
              "line 4 of the patch: 'x' is not a line of a hunk: each starts with ' ' (kept), '-' "
              "(removed) or '+' (added)");
    EXPECT_EQ(unreadable("*** Begin Patch\n*** Update File: a\n*** End Patch"),
              "line 2 of the patch: '*** Update File: a' has no hunk");
    EXPECT_EQ(unreadable("*** Begin Patch\n*** Add File:\n+x\n*** End Patch"),
              "line 2 of the patch: '*** Add File:' names no file");
    EXPECT_EQ(unreadable("*** Begin Patch\n*** End Patch"),
              "line 2 of the patch: the patch changes no file");
    EXPECT_EQ(unreadable("--- a/f\n+++ b/f\n@@ -x +y @@\n-a\n"),
              "line 3 of the patch: '@@ -x +y @@' is not a hunk's line: write '@@ -12,5 +12,6 @@' "
              "(or '@@' alone)");
    EXPECT_EQ(unreadable("--- a/f\n+++ b/f\n@@\n@@ -1 +1 @@\n-a\n+b\n"),
              "line 3 of the patch: the hunk '@@' has no lines");
    EXPECT_EQ(unreadable("--- a/f\n+++ b/f\n@@ -1,1 +1 oops\n-a\n"),
              "line 3 of the patch: '@@ -1,1 +1 oops' is not a hunk's line: write '@@ -12,5 +12,6 "
              "@@' (or '@@' alone)");
    EXPECT_EQ(
        unreadable("--- a/f\n+++ b/f\n@@ -1 +1 @@\n-a\n+b\nstray text\n+c\n"),
        "line 7 of the patch: '+c' is outside any hunk: every line of a hunk starts with ' ', "
        "'-' or '+', and hunks start with '@@'");
}

TEST(CodePatchMalformed, BinaryAndCopiesAreRefused) {
    EXPECT_EQ(unreadable("diff --git a/x.png b/x.png\nindex 1..2 100644\nGIT binary patch\n"
                         "literal 5\nMcmZQzKm~8t\n"),
              "line 3 of the patch: a binary patch: apply_patch changes text files only");
    EXPECT_EQ(unreadable("diff --git a/x.png b/x.png\nindex 1..2 100644\n"
                         "Binary files a/x.png and b/x.png differ\n"),
              "line 3 of the patch: a binary patch: apply_patch changes text files only");
    EXPECT_EQ(unreadable("diff --git a/x b/y\nsimilarity index 100%\ncopy from x\ncopy to y\n"),
              "line 3 of the patch: copies are not supported: add the new file instead");
    EXPECT_EQ(unreadable(std::string("*** Begin Patch\n*** Add File: z\n+\0\n*** End Patch", 41)),
              "the patch holds a NUL byte: apply_patch changes text files only");
}

TEST(CodePatchMalformed, HugeIsRefusedBeforeItIsRead) {
    std::string huge = "--- a/f\n+++ b/f\n@@ -1 +1 @@\n";
    huge.resize(k_max_patch + 1, '+');
    EXPECT_EQ(unreadable(huge),
              "the patch is 8388609 bytes, more than 8 MiB: split it into several");
    // Big but within the limit: a million lines of nonsense is an answer, quickly.
    std::string big(k_max_patch - 1, '\n');
    for (size_t i = 0; i < big.size(); i += 4)
        big[i] = 'x';
    EXPECT_NE(unreadable(big).find("neither a unified diff"), std::string::npos);
}

TEST(CodePatchParse, OneStructureForBothForms) {
    auto codex = parse_patch("*** Begin Patch\n*** Update File: a\n*** Move to: b\n@@ def f():\n"
                             "@@ inner\n x\n-y\n+z\n*** End of File\n*** End Patch\n");
    ASSERT_TRUE(codex) << codex.error().message();
    EXPECT_EQ(codex->format, PatchFormat::codex);
    ASSERT_EQ(codex->files.size(), 1U);
    const FilePatch& f = codex->files[0];
    EXPECT_EQ(f.path, "a");
    EXPECT_EQ(f.move_to, "b");
    ASSERT_EQ(f.hunks.size(), 1U);
    EXPECT_EQ(f.hunks[0].anchors, (std::vector<std::string>{"def f():", "inner"}));
    EXPECT_TRUE(f.hunks[0].at_end);
    EXPECT_EQ(f.hunks[0].lines.size(), 3U);

    auto unified =
        parse_patch("diff --git a/a b/b\n--- a/a\n+++ b/b\n@@ -3,2 +3,2 @@ def f():\n x\n-y\n+z\n");
    ASSERT_TRUE(unified) << unified.error().message();
    EXPECT_EQ(unified->format, PatchFormat::unified);
    const FilePatch& u = unified->files[0];
    EXPECT_EQ(u.path, "a");
    EXPECT_EQ(u.move_to, "b");
    EXPECT_EQ(u.patch_line, 2U);
    EXPECT_TRUE(u.hunks[0].stated);
    EXPECT_EQ(u.hunks[0].old_start, 3);
    EXPECT_EQ(u.hunks[0].old_count, 2);
    EXPECT_TRUE(u.hunks[0].anchors.empty()); // git's function heading is not an anchor
}

} // namespace
} // namespace sion::code
