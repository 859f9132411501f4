#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# edit_file and apply_patch in a real session on the scripted model, no shell: edits that keep a
# CRLF file's endings, one whose stretch is not there (the nearest lines shown) or is there twice
# (how many, where); patches in both forms adding, updating, deleting and moving several files; a
# patch whose last hunk does not fit, after which every file is as it was and nothing is left
# beside them; and hostile paths (../, absolute outside, links planted to outside) refused with
# nothing outside touched. Checks the transcript line by line and the files on disk.
. "$(dirname "$0")/lib.sh"
command -v python3 >/dev/null || skip "python3 is not installed"

cd "$scratch" || exit 1
mkdir -p work/src outside
printf 'secret\n' >outside/secret
ln -s "$scratch/outside" work/link
ln -s "$scratch/outside/secret" work/evil
printf 'def area(w, h):\r\n    return w * h\r\n\r\ndef perimeter(w, h):\r\n    return 2 * (w + h)\r\n' >work/shapes.py
printf 'x = 1\nprint(x)\nx = 1\n' >work/twice.py
printf 'primes\n' >work/README
printf 'old\n' >work/old.txt
printf 'one\ntwo\nthree' >work/src/nonl.txt

# The script: each turn one call, then the answer.
python3 - >script.json <<'PY'
import json
calls = [
    ("edit_file", {"path": "shapes.py", "old_string": "def area(w, h):\n    return w * h\n",
                   "new_string": "def area(w, h):\n    \"\"\"w by h\"\"\"\n    return w * h\n"}),
    ("edit_file", {"path": "shapes.py", "old_string": "return 2 * (w + hh)", "new_string": "x"}),
    ("edit_file", {"path": "twice.py", "old_string": "x = 1", "new_string": "x = 2"}),
    ("edit_file", {"path": "twice.py", "old_string": "x = 1", "new_string": "x = 2", "replace_all": True}),
    ("apply_patch", {"patch": """*** Begin Patch
*** Add File: tests/test_shapes.py
+from shapes import area
+
+assert area(2, 3) == 6
*** Update File: shapes.py
@@ def perimeter(w, h):
-    return 2 * (w + h)
+    return 2 * w + 2 * h
*** Delete File: old.txt
*** Update File: README
*** Move to: docs/README
@@
-primes
+shapes
*** End Patch
"""}),
    ("apply_patch", {"patch": """diff --git a/src/nonl.txt b/src/nonl.txt
--- a/src/nonl.txt
+++ b/src/nonl.txt
@@ -40,3 +40,3 @@
 one
-two
+TWO
 three
diff --git a/twice.py b/twice.py
--- a/twice.py
+++ b/twice.py
@@ -2 +2 @@
-print(x)
+print(x * 2)
"""}),
    # Fits in shapes.py and docs/README, not in twice.py: nothing changes.
    ("apply_patch", {"patch": """*** Begin Patch
*** Add File: new.txt
+new
*** Update File: docs/README
@@
-shapes
+changed
*** Delete File: tests/test_shapes.py
*** Update File: twice.py
@@
 x = 2
-print(x)
+print(x + 1)
*** End Patch
"""}),
    ("apply_patch", {"patch": "*** Begin Patch\n*** Add File: ../escaped\n+x\n*** End Patch\n"}),
    ("apply_patch", {"patch": "--- /dev/null\n+++ b//tmp/sion-t0500-escaped\n@@ -0,0 +1 @@\n+x\n"}),
    ("apply_patch", {"patch": "*** Begin Patch\n*** Add File: link/planted\n+x\n*** End Patch\n"}),
    ("apply_patch", {"patch": "*** Begin Patch\n*** Update File: evil\n@@\n-secret\n+owned\n*** End Patch\n"}),
    ("apply_patch", {"patch": "*** Begin Patch\n*** Update File: twice.py\n*** Move to: link/twice.py\n*** End Patch\n"}),
    ("apply_patch", {"patch": "*** Begin Patch\n*** Delete File: link/secret\n*** End Patch\n"}),
    ("edit_file", {"path": "evil", "old_string": "secret", "new_string": "owned"}),
    ("edit_file", {"path": "../outside/secret", "old_string": "secret", "new_string": "owned"}),
    ("edit_file", {"path": "/etc/hostname", "old_string": "a", "new_string": "b"}),
]
turns = [{"calls": [{"tool": t, "input": i}]} for t, i in calls]
turns.append({"text": "Done."})
print(json.dumps({"turns": turns}))
PY
[ -s script.json ] && ok || fail "python3 wrote no script"

expect_exit 0 sion-run create coder && agent=$(cut -c1-8 "$scratch/out")
# What the workspace holds before the failing patch is compared with what it holds after.
tree() { (cd work && find . -path ./link -prune -o -type f -print0 | sort -z | xargs -0 sha256sum); }

expect_exit 0 sion-run run coder "$agent" --task 'Edit the shapes.' --model "script:$scratch/script.json" \
    --workspace work --autonomy L3 </dev/null
[ -s "$scratch/err" ] && fail "the session wrote to stderr: $(cat "$scratch/err")" || ok
sed -E -e 's/session [0-9a-f]{16}/session S/' -e "s/agent [0-9a-f]{8}/agent A/" "$scratch/out" |
    python3 -c 'import sys, re; print(re.sub(r"→ (\w+) .*", r"→ \1", sys.stdin.read()), end="")' >got
cat >want <<'TXT'
session S for agent A
→ edit_file
← edited shapes.py: 1 replacement
→ edit_file
✗ cannot edit 'shapes.py': old_string is not in the file; the nearest line of shapes.py is 6:
     6	    return 2 * (w + h)
→ edit_file
✗ cannot edit 'twice.py': old_string is in the file 2 times (lines 1 and 3): quote more of the lines around it so that it is there once, or set replace_all to replace every one
→ edit_file
← edited twice.py: 2 replacements
→ apply_patch
← added tests/test_shapes.py
updated shapes.py (1 hunk)
deleted old.txt
moved README to docs/README (1 hunk)
→ apply_patch
← updated src/nonl.txt (1 hunk)
updated twice.py (1 hunk)
→ apply_patch
✗ cannot apply the patch, so no file was changed: twice.py, hunk 1 of 1 (patch line 10): the lines it keeps and removes are not in the file; the nearest lines of twice.py are 1-2:
     1	x = 2
     2	print(x * 2)
→ apply_patch
✗ cannot apply the patch, so no file was changed: '../escaped' is outside the workspace
→ apply_patch
✗ cannot apply the patch, so no file was changed: '/tmp/sion-t0500-escaped' is outside the workspace
→ apply_patch
✗ cannot apply the patch, so no file was changed: cannot read 'link/planted': 'link/planted' is outside the workspace
→ apply_patch
✗ cannot apply the patch, so no file was changed: cannot read 'evil': 'evil' is outside the workspace
→ apply_patch
✗ cannot apply the patch, so no file was changed: cannot read 'link/twice.py': 'link/twice.py' is outside the workspace
→ apply_patch
✗ cannot apply the patch, so no file was changed: cannot read 'link/secret': 'link/secret' is outside the workspace
→ edit_file
✗ cannot edit 'evil': 'evil' is outside the workspace
→ edit_file
✗ cannot edit '../outside/secret': '../outside/secret' is outside the workspace
→ edit_file
✗ cannot edit '/etc/hostname': '/etc/hostname' is outside the workspace
agent: Done.
session S: done
TXT
if cmp -s want got; then ok; else
    fail "the transcript differs"
    diff want got >&2
fi

# The files on disk: CRLF kept, the final newline that was not there still not there.
has() { # has FILE CONTENT (printf format)
    local want
    want=$(printf "$2" | od -c)
    if [ "$(od -c <"work/$1")" = "$want" ]; then ok; else
        fail "work/$1 is not as it should be"
        od -c "work/$1" | head -n 8 >&2
    fi
}
has shapes.py 'def area(w, h):\r\n    """w by h"""\r\n    return w * h\r\n\r\ndef perimeter(w, h):\r\n    return 2 * w + 2 * h\r\n'
has twice.py 'x = 2\nprint(x * 2)\nx = 2\n'
has tests/test_shapes.py 'from shapes import area\n\nassert area(2, 3) == 6\n'
has docs/README 'shapes\n'
has src/nonl.txt 'one\nTWO\nthree'
[ ! -e work/old.txt ] && [ ! -e work/README ] && ok || fail "old.txt and README are still there"
[ ! -e work/new.txt ] && ok || fail "the failing patch added new.txt"
# Nothing is left beside the files, and nothing outside was touched.
leftovers=$(find work -name '*.sion-*' -o -name '.sion*' | head -n 3)
[ -z "$leftovers" ] && ok || fail "files left beside: $leftovers"
[ "$(cat outside/secret)" = secret ] && ok || fail "outside/secret was changed"
[ "$(ls outside)" = secret ] && ok || fail "files appeared outside: $(ls outside)"
[ -L work/link ] && [ -L work/evil ] && ok || fail "the planted links were replaced"
[ ! -e ../escaped ] && [ ! -e /tmp/sion-t0500-escaped ] && ok || fail "a file escaped the workspace"

# The failing patch left every file as it was: run it again on its own and compare the tree.
python3 - >fail.json <<'PY'
import json
script = json.load(open("script.json"))
print(json.dumps({"turns": [script["turns"][6], {"text": "no"}]}))
PY
tree >before
expect_exit 0 sion-run run coder "$agent" --task 'Try again.' --model "script:$scratch/fail.json" \
    --workspace work --autonomy L3 </dev/null
expect_grep '^✗ cannot apply the patch, so no file was changed: twice.py, hunk 1 of 1' "$scratch/out"
tree >after
cmp -s before after && ok || { fail "the failing patch changed files"; diff before after >&2; }

# The results as the store has them: the refusals are errors, the rest ok.
session=$(sed -n '1s/^session \([0-9a-f]\{16\}\) .*/\1/p' "$scratch/out")
expect_exit 0 sion-run show "$session" --json
python3 - "$scratch/out" <<'PY' && ok || fail "show --json: the failing patch is not an error result"
import json, sys
events = [json.loads(line) for line in open(sys.argv[1])]
results = [e for e in events if e["event"] == "result"]
assert [(r["tool"], r["state"]) for r in results] == [("apply_patch", "error")], results
call = [e for e in events if e["event"] == "call"][0]
assert call["effect"] == "write" and call["decision"] == "run", call
PY

# Below L3 a write asks, and with no one to ask it is refused: the file is not touched.
echo '{"turns": [{"calls": [{"tool": "edit_file", "input": {"path": "twice.py", "old_string": "x = 2\nprint", "new_string": "print"}}]}, {"text": "no"}]}' >ask.json
expect_exit 0 sion-run run coder "$agent" --task 'Edit.' --model "script:$scratch/ask.json" \
    --workspace work --autonomy L2 </dev/null
expect_grep "^✗ edit_file is a write, which asks a person at L2, and there is no one to ask here" "$scratch/out"
has twice.py 'x = 2\nprint(x * 2)\nx = 2\n'

done_testing
