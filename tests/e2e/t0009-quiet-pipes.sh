#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# A pipeline's reader that leaves: every program that prints ends quietly, killed by SIGPIPE as git
# and coreutils are (141 in the shell), with nothing on stderr; a session whose output closed is
# still recorded, as interrupted. A write error that is not a closed pipe is still reported, exit 74.
. "$(dirname "$0")/lib.sh"
need_bwrap

# closed CMD...: runs CMD with stdout on a pipe whose reader is already gone, so that its first
# write fails (deterministic, unlike `| head`), and checks it died of SIGPIPE and said nothing.
closed() {
    python3 - "$@" >"$scratch/closed" 2>&1 <<'PY'
import os, subprocess, sys
r, w = os.pipe()
os.close(r)
p = subprocess.run(sys.argv[1:], stdout=w, stderr=subprocess.PIPE, stdin=subprocess.DEVNULL)
print(p.returncode, p.stderr.decode(errors="replace").rstrip("\n"))
PY
    local got
    got=$(cat "$scratch/closed")
    [ "$got" = "-13 " ] && ok || fail "$*: want death by SIGPIPE and no message, got status and stderr: $got"
}

cat >"$scratch/turns.json" <<'EOF'
{"turns": [{"calls": [{"tool": "write_file", "arguments": {"path": "a.txt", "content": "a\n"}}]},
           {"text": "done"}]}
EOF
mkdir -p "$scratch/ws"
expect_exit 0 sion-run create coder --model "script:$scratch/turns.json"
agent=$(cut -c1-8 "$scratch/out")
for i in $(seq 1 40); do sion-run create "p$i" --model "script:$scratch/turns.json" >/dev/null; done
expect_exit 0 sion-run run coder "$agent" --task 'write a' --workspace "$scratch/ws"
session=$(sed -n 's/^session \([0-9a-f]*\) for agent.*/\1/p' "$scratch/out" | head -n 1)
[ -n "$session" ] && ok || fail "no session line in: $(cat "$scratch/out")"
expect_exit 0 sion-hooks add --event before-tool -- /bin/true
expect_exit 0 timeout 60 sion-mcp add here -- python3 "$SION_SOURCE_DIR/tests/fixtures/mcp/environ.py"

for program in sion sion-run sion-sandbox sion-mcp sion-hooks; do
    closed "$program" --help
done
closed sion-run list
closed sion-run list --json
closed sion-run sessions
closed sion-run sessions --json
closed sion-run show "$session"
closed sion-run show "$session" --json
closed sion-mcp list
closed sion-mcp list --json
closed sion-hooks list
closed sion-hooks list --json
closed sion-sandbox describe --workspace "$scratch/ws"
closed sion-sandbox exec --workspace "$scratch/ws" -- echo hi
closed sion-sandbox exec --json --workspace "$scratch/ws" -- echo hi
closed sion agent list

# A session whose transcript's reader left: it ends at once, and is recorded as interrupted.
closed sion-run run coder "$agent" --task 'write a again' --workspace "$scratch/ws"
expect_exit 0 sion-run sessions "$agent" --json
python3 - "$scratch/out" <<'PY' && ok || fail "the session whose reader left is not recorded as interrupted: $(cat "$scratch/out")"
import json, sys
rows = [json.loads(l) for l in open(sys.argv[1])]
assert [r["state"] for r in rows if r["task"] == "write a again"] == ["interrupted"], rows
PY

# As a person meets it: `| head -n 1` takes the first line, and nothing is said whether or not the
# program wrote again after head left (that depends on who runs first).
sion-run list 2>"$scratch/err" | head -n 1 >"$scratch/first"
status=("${PIPESTATUS[@]}")
case "${status[0]}" in 0 | 141) ok ;; *) fail "sion-run list | head -n 1: status ${status[0]}" ;; esac
[ ! -s "$scratch/err" ] && ok || fail "sion-run list | head -n 1 said: $(cat "$scratch/err")"
grep -qE '^[0-9a-f]{8}…[0-9a-f]{4} ' "$scratch/first" && ok || fail "head got no agent line: $(cat "$scratch/first")"

# Any other write error is still reported on one line, exit 74.
if [ -w /dev/full ]; then
    expect_exit 74 sh -c 'sion-run list >/dev/full' && expect_err "sion-run: write error: No space left on device"
    expect_exit 74 sh -c 'sion-sandbox describe --workspace "$1" >/dev/full' sh "$scratch/ws" &&
        expect_err "sion-sandbox: write error: No space left on device"
    expect_exit 74 sh -c 'sion-run run coder "$1" --task x --workspace "$2" >/dev/full' sh "$agent" "$scratch/ws" &&
        expect_err "sion-run: write error: No space left on device"
fi

done_testing
