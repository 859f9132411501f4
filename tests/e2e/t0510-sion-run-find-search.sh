#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# find_files and search_files in a real session on the scripted model, no shell: globs at any depth
# and anchored, braces, a passed-over directory named on purpose, grep -n's lines with context, a
# glob filter, case, a pattern that takes backtracking engines exponential time, binary files and
# the directories passed over; and hostile paths (../, absolute, links planted to outside, a name
# that is not UTF-8) refused or shown without leaving the workspace. Then a race: a process swaps a
# workspace directory for a link to outside, as fast as it can, while a session writes and reads
# through it; nothing lands outside and nothing is read from there. Checks the transcript line by
# line and the files on disk.
. "$(dirname "$0")/lib.sh"
command -v python3 >/dev/null || skip "python3 is not installed"

cd "$scratch" || exit 1
mkdir -p work/src/deep/x work/web work/node_modules/dep work/.git work/target/debug \
    work/build/cmake work/tools outside
printf 'needle outside\n' >outside/secret.rs
printf 'fn main() {\n    let needle = 1;\n    println!("{}", needle);\n}\n' >work/src/main.rs
printf '// lib\npub fn f() {}\n' >work/src/lib.rs
printf 'one\ntwo\nNeedle three\nfour\nfive\nsix\nneedle seven\n' >work/src/deep/x/y.rs
printf 'export const a = 1;\n' >work/web/app.ts
printf 'export const b = 2;\n' >work/web/app.tsx
printf 'var needle;\n' >work/web/app.js
printf 'needle\n' >work/node_modules/dep/index.js
printf 'needle\n' >work/.git/config
printf 'needle\n' >work/target/debug/build.rs
printf '' >work/build/cmake/CMakeCache.txt
printf 'needle\n' >work/build/cmake/gen.rs
printf 'needle\n' >work/tools/gen.py
printf 'needle\0\1\2\n' >work/data.bin
printf 'x\n' >"work/weird name.rs"
printf 'x\n' >"work/$(printf 'bad\xff').rs"
python3 -c 'print("a" * 100000 + "b")' >work/long.txt
ln -s "$scratch/outside" work/link-out
ln -s "$scratch/outside/secret.rs" work/evil.rs
ln -s src/main.rs work/inside.rs

python3 - >script.json <<'PY'
import json
calls = [
    ("find_files", {"pattern": "*.rs"}),
    ("find_files", {"pattern": "src/**/*.rs"}),
    ("find_files", {"pattern": "*.{ts,tsx}"}),
    ("find_files", {"pattern": "*.js"}),
    ("find_files", {"pattern": "node_modules/**/*.js"}),
    ("find_files", {"pattern": "/workspace/src/*.rs"}),
    ("find_files", {"pattern": "y.rs", "path": "src"}),
    ("find_files", {"pattern": "*.none"}),
    ("find_files", {"pattern": "src/[unclosed"}),
    ("find_files", {"pattern": "*", "path": "../outside"}),
    ("find_files", {"pattern": "../*"}),
    ("find_files", {"pattern": "link-out/*"}),
    ("find_files", {"pattern": "/etc/*"}),
    ("search_files", {"pattern": "needle", "context": 0}),
    ("search_files", {"pattern": "needle", "glob": "*.rs", "context": 1}),
    ("search_files", {"pattern": "^needle", "path": "src", "ignore_case": True}),
    ("search_files", {"pattern": "(a+)+$", "path": "long.txt"}),
    ("search_files", {"pattern": "needle", "path": "tools"}),
    ("search_files", {"pattern": "needle", "path": "link-out"}),
    ("search_files", {"pattern": "needle", "path": "evil.rs"}),
    ("search_files", {"pattern": "needle", "path": "/etc"}),
    ("search_files", {"pattern": "("}),
    ("search_files", {"pattern": "x", "context": 99}),
    ("read_file", {"path": "link-out/secret.rs"}),
    ("write_file", {"path": "link-out/planted.rs", "content": "x"}),
]
turns = [{"calls": [{"tool": t, "input": i}]} for t, i in calls]
turns.append({"text": "Done."})
print(json.dumps({"turns": turns}))
PY
[ -s script.json ] && ok || fail "python3 wrote no script"

expect_exit 0 sion-run create coder && agent=$(cut -c1-8 "$scratch/out")
start=$(date +%s%N)
expect_exit 0 timeout 60 sion-run run coder "$agent" --task 'Find the needles.' \
    --model "script:$scratch/script.json" --workspace work --autonomy L3 </dev/null
took_ms=$((($(date +%s%N) - start) / 1000000))
[ -s "$scratch/err" ] && fail "the session wrote to stderr: $(cat "$scratch/err")" || ok
sed -E -e 's/session [0-9a-f]{16}/session S/' -e "s/agent [0-9a-f]{8}/agent A/" "$scratch/out" |
    python3 -c 'import sys, re; print(re.sub(r"→ (\w+) .*", r"→ \1", sys.stdin.read()), end="")' >got
cat >want <<'TXT'
session S for agent A
→ find_files
← bad�.rs
evil.rs
inside.rs
src/deep/x/y.rs
src/lib.rs
src/main.rs
weird name.rs
→ find_files
← src/deep/x/y.rs
src/lib.rs
src/main.rs
→ find_files
← web/app.ts
web/app.tsx
→ find_files
← web/app.js
→ find_files
← node_modules/dep/index.js
→ find_files
← src/lib.rs
src/main.rs
→ find_files
← src/deep/x/y.rs
→ find_files
← no files match '*.none'
→ find_files
✗ unclosed '[' in pattern 'src/[unclosed'
→ find_files
✗ cannot list '../outside': '../outside' is outside the workspace
→ find_files
✗ cannot list '..': '..' is outside the workspace
→ find_files
✗ cannot list 'link-out': 'link-out' is outside the workspace
→ find_files
✗ cannot list '/etc': '/etc' is outside the workspace
→ search_files
← src/deep/x/y.rs:7:needle seven
src/main.rs:2:    let needle = 1;
src/main.rs:3:    println!("{}", needle);
tools/gen.py:1:needle
web/app.js:1:var needle;
[passed over: 1 binary file]
→ search_files
← src/deep/x/y.rs-6-six
src/deep/x/y.rs:7:needle seven
--
src/main.rs-1-fn main() {
src/main.rs:2:    let needle = 1;
src/main.rs:3:    println!("{}", needle);
src/main.rs-4-}
→ search_files
← src/deep/x/y.rs-1-one
src/deep/x/y.rs-2-two
src/deep/x/y.rs:3:Needle three
src/deep/x/y.rs-4-four
src/deep/x/y.rs-5-five
src/deep/x/y.rs-6-six
src/deep/x/y.rs:7:needle seven
→ search_files
← no line matches '(a+)+$'
→ search_files
← tools/gen.py:1:needle
the conversation is compacted: 24 messages summarized; the model is sent 14 messages, 1908 characters
→ search_files
✗ cannot open 'link-out': 'link-out' is outside the workspace
→ search_files
✗ cannot open 'evil.rs': 'evil.rs' is outside the workspace
→ search_files
✗ cannot open '/etc': '/etc' is outside the workspace
→ search_files
✗ invalid regular expression '(': missing ): (
→ search_files
✗ search_files' 'context' is a whole number from 0 to 20
→ read_file
✗ cannot read 'link-out/secret.rs': 'link-out/secret.rs' is outside the workspace
→ write_file
✗ cannot write 'link-out/planted.rs': 'link-out/planted.rs' is outside the workspace
agent: Done.
session S: done
TXT
if cmp -s want got; then ok; else
    fail "the transcript differs"
    diff want got >&2
fi
# The search over 100,000 a's took no exponential time (the whole session is bounded too).
[ "$took_ms" -lt 20000 ] && ok || fail "the session took ${took_ms} ms"
[ "$(ls outside)" = secret.rs ] && ok || fail "files appeared outside: $(ls outside)"
[ -L work/link-out ] && [ -L work/evil.rs ] && ok || fail "the planted links were replaced"

# The results as the store has them: find_files and search_files only read.
session=$(sed -n '1s/^session \([0-9a-f]\{16\}\) .*/\1/p' "$scratch/out")
expect_exit 0 sion-run show "$session" --json
python3 - "$scratch/out" <<'PY' && ok || fail "show --json: the calls are not reads, or not as run"
import json, sys
events = [json.loads(line) for line in open(sys.argv[1])]
calls = [e for e in events if e["event"] == "call"]
assert all(c["effect"] == "read" and c["decision"] == "run"
           for c in calls if c["tool"] in ("find_files", "search_files")), calls
results = [e for e in events if e["event"] == "result"]
states = [r["state"] for r in results]
assert states.count("error") == 12, states
PY

# The race: a process swaps work/sub for a link to outside and back, atomically (renameat2's
# RENAME_EXCHANGE) and by rename and symlink as a shell would, while a session writes, reads, finds
# and searches through it, call after call.
mkdir -p work/sub race-out
printf 'SECRET\n' >race-out/f.txt
ln -s "$scratch/race-out" work/race-link
python3 - >race.json <<'PY'
import json
turns = []
for i in range(150):
    turns.append({"calls": [
        {"tool": "write_file", "input": {"path": "sub/f.txt", "content": "mine\n"}},
        {"tool": "read_file", "input": {"path": "sub/f.txt"}},
        {"tool": "write_file", "input": {"path": f"sub/new/deep/{i % 5}.txt", "content": "x"}},
        {"tool": "search_files", "input": {"pattern": "S[E]CRET", "path": "sub", "context": 0}},
        {"tool": "find_files", "input": {"pattern": "sub/**"}},
    ]})
turns.append({"text": "Done."})
print(json.dumps({"turns": turns}))
PY
python3 - "$scratch/work" "$scratch/race-out" >swapper.log 2>&1 <<'PY' &
import ctypes, os, sys, time
work, out = sys.argv[1], sys.argv[2]
libc = ctypes.CDLL(None, use_errno=True)
AT_FDCWD, RENAME_EXCHANGE = -100, 2
sub, link, held = (os.path.join(work, n).encode() for n in ("sub", "race-link", "held"))
swaps = 0
deadline = time.time() + 120
while time.time() < deadline and not os.path.exists(os.path.join(work, "stop")):
    libc.renameat2(AT_FDCWD, sub, AT_FDCWD, link, RENAME_EXCHANGE)
    libc.renameat2(AT_FDCWD, sub, AT_FDCWD, link, RENAME_EXCHANGE)
    try:
        os.rename(sub, held)
        os.symlink(out, sub)
        os.unlink(sub)
        os.rename(held, sub)
    except OSError:
        pass
    swaps += 2
print(swaps)
PY
swapper=$!
expect_exit 0 timeout 300 sion-run run coder "$agent" --task 'Race.' --model "script:$scratch/race.json" \
    --workspace work --autonomy L3 </dev/null
touch work/stop
wait "$swapper"
swaps=$(cat swapper.log)
[ "$swaps" -gt 100 ] 2>/dev/null && ok || fail "the swapper did not run: $swaps"
[ "$(ls -A race-out)" = f.txt ] && ok || fail "files appeared outside: $(ls -A race-out)"
[ "$(cat race-out/f.txt)" = SECRET ] && ok || fail "race-out/f.txt was changed"
python3 - "$scratch/out" <<'PY' && ok || fail "a result showed what is outside"
import sys
shown = [l for l in open(sys.argv[1]) if not l.startswith("→") and "SECRET" in l]
assert not shown, shown
PY
expect_grep '^← wrote 5 bytes to sub/f.txt$' "$scratch/out"
expect_grep "^✗ cannot (write|read) 'sub/f.txt': 'sub/f.txt' is outside the workspace$" "$scratch/out"

done_testing
