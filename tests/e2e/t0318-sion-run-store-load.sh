#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Many sessions at once on one $SION_HOME wait their turn for the store rather than fail (lib/db.hpp:
# every write takes its turn at sion.db-writers): 300 scripted sessions started together, each
# making 10 journaled writes (apply_patch, no shell) in a workspace of its own, every one finishes
# done, every write is made once and recorded once, and the database is intact. Bounded: each run
# has 300 seconds.
. "$(dirname "$0")/lib.sh"
command -v sqlite3 >/dev/null || skip "sqlite3 is not installed (Debian package sqlite3)"

sessions=${SION_LOAD_SESSIONS:-300}
writes=10
cd "$scratch" || exit 1
python3 - "$writes" >s.json <<'PY'
import json, sys
n = int(sys.argv[1])
turns = [{"calls": [{"tool": "apply_patch", "input": {"patch":
          f"*** Begin Patch\n*** Add File: k/f{k:02}.txt\n+write {k}\n*** End Patch"}}]} for k in range(n)]
print(json.dumps({"turns": turns + [{"text": "done"}]}))
PY
agent=$(sion agent create coder | cut -c1-8) || exit 1
for i in $(seq "$sessions"); do mkdir -p "w/$i"; done
pids=()
for i in $(seq "$sessions"); do
    timeout 300 sion agent run coder "$agent" --task "Load $i" --model script:s.json --workspace "w/$i" \
        --autonomy L3 </dev/null >"w/$i.out" 2>"w/$i.err" &
    pids+=($!)
done
failed=0
for i in "${!pids[@]}"; do
    if ! wait "${pids[$i]}"; then
        failed=$((failed + 1))
        [ "$failed" -gt 3 ] || printf 'run %d: %s\n' $((i + 1)) "$(head -c 300 "w/$((i + 1)).err")" >&2
    fi
done
[ "$failed" -eq 0 ] && ok || fail "$failed of $sessions runs did not end well"
if grep -l 'busy' w/*.err >busy 2>/dev/null; then fail "runs said the store was busy: $(head -n 3 busy | tr '\n' ' ')"; else ok; fi
done_runs=$(grep -lx 'session [0-9a-f]\{16\}: done' w/*.out | wc -l)
[ "$done_runs" -eq "$sessions" ] && ok || fail "$done_runs of $sessions sessions ended done"
files=$(find w -name 'f*.txt' | wc -l)
[ "$files" -eq $((sessions * writes)) ] && ok || fail "$files files written, want $((sessions * writes))"
db="$SION_HOME/sion.db"
expect_text_of() { local got; got=$(sqlite3 "$db" "$1" 2>&1); [ "$got" = "$2" ] && ok || fail "$3: want $2, got $got"; }
expect_text_of "SELECT count(*) FROM journal WHERE state = 'done'" "$((sessions * writes))" "the journal's writes"
expect_text_of "SELECT count(*) FROM (SELECT DISTINCT session, input FROM journal)" "$((sessions * writes))" "writes recorded twice"
expect_text_of "SELECT count(*) FROM calls WHERE state = 'ok'" "$((sessions * writes))" "the calls ended ok"
expect_text_of "SELECT count(*) FROM sessions WHERE state = 'done'" "$sessions" "the sessions done"
expect_text_of "PRAGMA integrity_check" "ok" "the database"
[ "$(stat -c %a "$SION_HOME/sion.db-writers")" = 600 ] && ok || fail "sion.db-writers is not 0600"

done_testing
