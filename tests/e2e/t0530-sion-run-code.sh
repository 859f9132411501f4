#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# run_code (seed "Programs that call tools"): a Python program in a sandbox of its own calls the
# session's tools that only read, each call made and recorded as the model's would be and shown
# under its parent; only what it prints comes back. Then its limits: a write refused ("make that
# call yourself"), an exception with its traceback, more than 200 calls, output over 24,000
# characters, no workspace and no network in view, and the sandbox's time limit.
. "$(dirname "$0")/lib.sh"
need_bwrap
[ -x /usr/bin/python3 ] || skip "/usr/bin/python3 is missing (Debian package python3)"

cd "$scratch" || exit 1
mkdir -p work/src
printf 'unsafe { a }\nsafe\n' >work/src/a.rs
printf 'unsafe { b } unsafe { c }\n' >work/src/b.rs
id=$(sion agent create coder) && ok || fail "sion agent create coder"

# script FILE PROGRAM...: a scripted model that runs each PROGRAM with run_code, then says done.
script() {
    local file=$1
    shift
    python3 - "$@" >"$file" <<'PY'
import json, sys
turns = [{"calls": [{"tool": "run_code", "input": {"code": code}}]} for code in sys.argv[1:]]
turns.append({"text": "done"})
print(json.dumps({"turns": turns}))
PY
}
run() { # run SCRIPT [ARGS...]: a session with a shell at L3, its transcript in $scratch/out
    local s=$1
    shift
    expect_exit 0 sion agent run coder "${id:0:8}" --task 'Count unsafe.' --model "script:$s" \
        --workspace work --shell --autonomy L3 "$@"
}
normalise() { sed -E -e 's/session [0-9a-f]{16}/session S/' -e "s/agent ${id:0:8}/agent A/" "$scratch/out"; }

# The seed's program: a loop over the files, filtered before the model sees anything.
script count.json 'total = 0
for line in tools.read_file(path="list.txt").splitlines():
    text = tools.read_file(path=line.split("\t")[1])
    total += text.count("unsafe")
print("unsafe:", total)'
printf 'src/a.rs\nsrc/b.rs\n' >work/list.txt
run count.json
normalise >got
{
    printf '%s\n' 'session S for agent A' \
        '→ run_code {"code":"total = 0\nfor line in tools.read_file(path=\"list.txt\").splitlines():\n    text = tools.read_file(path=line.split(\"\\t\")[1])\n    total += text.count(\"unsafe\")\nprint(\"unsafe:\", total)"}' \
        '  → read_file {"path":"list.txt"}'
    printf '  ←      1\tsrc/a.rs\n       2\tsrc/b.rs\n'
    printf '%s\n' '  → read_file {"path":"src/a.rs"}'
    printf '  ←      1\tunsafe { a }\n       2\tsafe\n'
    printf '%s\n' '  → read_file {"path":"src/b.rs"}'
    printf '  ←      1\tunsafe { b } unsafe { c }\n'
    printf '%s\n' '← unsafe: 3' 'agent: done' 'session S: done'
} >want
if cmp -s want got; then ok; else fail "the run_code transcript differs"; diff want got >&2; fi
session=$(sed -n 's/^session \([0-9a-f]\{16\}\) for agent .*/\1/p' "$scratch/out")
# Stored as run: show gives the same lines, with the nested calls under their parent.
expect_exit 0 sion agent show "$session"
normalise | grep -v '^you: ' >shown
cmp -s got shown && ok || { fail "show differs from the run"; diff got shown >&2; }
expect_exit 0 sion agent show "$session" --json
python3 - "$scratch/out" <<'PY' && ok || fail "the program's calls are not events under their parent"
import json, sys
ev = [json.loads(l) for l in open(sys.argv[1])]
calls = [e for e in ev if e["event"] == "call"]
assert [c["tool"] for c in calls] == ["run_code", "read_file", "read_file", "read_file"], calls
parent = calls[0]["call"]
assert "parent" not in calls[0] and all(c["parent"] == parent for c in calls[1:])
assert all(c["decision"] == "run" and c["effect"] == "read" for c in calls)
res = [e for e in ev if e["event"] == "result"]
assert res[-1]["call"] == parent and res[-1]["text"] == "unsafe: 3" and res[-1]["state"] == "ok"
PY

# A write is refused, and the program is told to leave it to the model; the exception's traceback
# comes back, marked as a failure.
script write.json 'try:
    tools.write_file(path="x.txt", content="no")
except ToolError as e:
    print("refused:", e)
call("read_file", path="nope.txt")'
run write.json
expect_grep '^  ✗ write_file is a write, which runs on its own from L3: a program does not make that call; make it yourself$' "$scratch/out"
expect_grep '^✗ refused: write_file is a write' "$scratch/out"
expect_grep '^--- the program failed \(exit status 1\)$' "$scratch/out"
expect_grep '^  File "<run_code>", line 5, in <module>$' "$scratch/out"
expect_grep '^    call\("read_file", path="nope.txt"\)$' "$scratch/out"
expect_grep '^ToolError: cannot read .nope.txt.' "$scratch/out"
[ ! -e work/x.txt ] && ok || fail "a program's write_file wrote x.txt"

# Nothing of the machine in view: no workspace, no network, no home.
script view.json 'import os, socket
print(sorted(os.listdir("/workspace")))
print(os.path.exists(os.environ.get("HOME", "/x") + "/.sion"), os.path.exists("/root"))
try:
    socket.create_connection(("1.1.1.1", 53), timeout=2)
    print("network")
except OSError as e:
    print("no network")'
run view.json
expect_grep '^← \[\]$' "$scratch/out"
expect_grep '^False False$' "$scratch/out"
expect_grep '^no network$' "$scratch/out"

# At most 200 calls; output cut at 24,000 characters.
script many.json 'n = 0
for i in range(250):
    try:
        tools.read_file(path="list.txt")
        n += 1
    except ToolError as e:
        last = str(e)
print(n, last)' 'print("é" * 30000)'
run many.json
expect_grep '^← 200 a program makes at most 200 calls: make the rest yourself$' "$scratch/out"
expect_grep '^\[… 6000 more characters cut\]$' "$scratch/out"
[ "$(grep -c '^  → read_file' "$scratch/out")" -eq 200 ] && ok || fail "not 200 calls were made"

# The sandbox's time limit holds for a program.
script slow.json 'import time
print("started", flush=True)
time.sleep(60)'
run slow.json --sandbox-timeout 2
expect_grep '^--- the program ran out of time' "$scratch/out"

# Without a shell there is no run_code.
script none.json 'print(1)'
expect_exit 0 sion agent run coder "${id:0:8}" --task x --model script:none.json --workspace work --autonomy L3
expect_grep '^✗ there is no tool named run_code$' "$scratch/out"

done_testing
