#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The journal in a session: a patch made again is answered from the record and not applied twice; a
# patch that failed changed nothing and runs again once the file fits; and a journaled call left
# without an answer by a session that died (its pending entry and its open call, as a SIGKILL
# between the two leaves them) is closed when the session is continued, and never made again.
. "$(dirname "$0")/lib.sh"
command -v sqlite3 >/dev/null || skip "sqlite3 is not installed (Debian package sqlite3)"

cd "$scratch" || exit 1
mkdir work
printf 'one\ntwo\n' >work/a.txt
id=$(sion agent create coder) && ok || fail "sion agent create coder"
patch=$'*** Begin Patch\n*** Update File: a.txt\n@@\n one\n+one and a half\n two\n*** End Patch'
python3 - "$patch" >s.json <<'PY'
import json, sys
p = sys.argv[1]
bad = p.replace(" one\n", " uno\n")
print(json.dumps({"turns": [
    {"calls": [{"tool": "apply_patch", "input": {"patch": p}}]},
    {"calls": [{"tool": "apply_patch", "input": {"patch": p}}]},
    {"calls": [{"tool": "apply_patch", "input": {"patch": bad}}]},
    {"calls": [{"tool": "write_file", "input": {"path": "b.txt", "content": "uno\ntwo\n"}}]},
    {"text": "done"}]}))
PY
expect_exit 0 sion agent run coder "${id:0:8}" --task 'Patch it.' --model script:s.json --workspace work --autonomy L3
expect_grep '^← updated a.txt \(1 hunk\)$' "$scratch/out"
expect_grep '^← \[made before in this session: not made again; its answer then\]$' "$scratch/out"
[ "$(grep -c 'one and a half' work/a.txt)" -eq 1 ] && ok || fail "the patch was applied twice"
expect_grep '^✗ cannot apply the patch, so no file was changed' "$scratch/out"
session=$(sed -n 's/^session \([0-9a-f]\{16\}\) for agent .*/\1/p' "$scratch/out")
db="$SION_HOME/sion.db"
[ "$(sqlite3 "$db" "SELECT count(*) FROM journal WHERE session = '$session' AND state = 'done'")" -eq 1 ] &&
    ok || fail "the journal does not hold the patch that was made, alone"

# The failed patch is forgotten: once a file it fits exists, the same call applies.
python3 - "$patch" >t.json <<'PY'
import json, sys
bad = sys.argv[1].replace(" one\n", " uno\n")
print(json.dumps({"turns": [
    {"calls": [{"tool": "write_file", "input": {"path": "a.txt", "content": "uno\ntwo\n"}}]},
    {"calls": [{"tool": "apply_patch", "input": {"patch": bad}}]},
    {"text": "done"}]}))
PY
expect_exit 0 sion agent run coder "${id:0:8}" --task 'Again.' --model script:t.json --session "$session"
expect_grep '^← updated a.txt \(1 hunk\)$' "$scratch/out"
[ "$(cat work/a.txt)" = $'uno\none and a half\ntwo' ] && ok || fail "the forgotten patch did not run again"

# A session that died during a journaled call: its entry pending, its call open.
input='{"patch":"*** Begin Patch\n*** Add File: c.txt\n+c\n*** End Patch"}'
sqlite3 "$db" "INSERT INTO journal (session, tool, input, state, started) VALUES ('$session', 'apply_patch', '$input', 'pending', 0);
INSERT INTO messages (session, seq, content, created) VALUES ('$session', (SELECT max(seq) + 1 FROM messages WHERE session = '$session'), '{\"role\":\"assistant\",\"calls\":[{\"id\":\"dead_1\",\"tool\":\"apply_patch\",\"input\":$input}]}', 0);
INSERT INTO calls (session, seq, call_id, tool, input, effect, decision, why, state, started_ms) VALUES ('$session', (SELECT max(seq) + 1 FROM calls WHERE session = '$session'), 'dead_1', 'apply_patch', '$input', 'write', 'run', 'x', 'running', 0);
UPDATE sessions SET state = 'running', owner = '1:0:gone' WHERE id = '$session';" && ok || fail "cannot plant the dead call"
expect_exit 0 sion agent show "$session"
expect_grep '^✗ no answer: the session stopped during this call$' "$scratch/out"
expect_grep "^session $session: interrupted: it stopped after" "$scratch/out"
python3 - "$input" >u.json <<'PY'
import json, sys
print(json.dumps({"turns": [{"calls": [{"tool": "apply_patch", "input": json.loads(sys.argv[1])}]}, {"text": "done"}]}))
PY
expect_exit 0 sion agent run coder "${id:0:8}" --task 'Once more.' --model script:u.json --session "$session"
expect_grep '^✗ this call was made before and got no answer \(the session stopped before this call was answered\): it may have taken effect, so it is not made again$' "$scratch/out"
[ ! -e work/c.txt ] && ok || fail "the uncertain call was made again"
expect_exit 0 sion agent show "$session"
expect_grep '^✗ the session stopped before this call was answered: it may have taken effect$' "$scratch/out"
[ "$(sqlite3 "$db" 'PRAGMA integrity_check')" = ok ] && ok || fail "the store is damaged"

done_testing
