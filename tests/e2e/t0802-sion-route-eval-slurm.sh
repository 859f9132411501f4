#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# sion-route eval --on slurm against a real single-node Slurm cluster (tests/slurm/cluster.sh): the
# runs as one job array, each task a sion-run session in a $SION_HOME of its own under the node's
# TMPDIR, removed after; a key kept sealed reaching the tasks in the job's environment and written
# nowhere under the evaluation's directory; one array task cancelled mid-run counted as not made,
# with what Slurm said; the report; the sessions brought into the user's store, where show works;
# Ctrl-C cancelling the whole array.
. "$(dirname "$0")/lib.sh"
. "$SION_SOURCE_DIR/tests/models/standin.sh"
need_bwrap
need_jsonschema
[ "$(id -u)" = 0 ] || skip "the cluster's slurmd runs jobs as their users: run as root"

cluster="$scratch/cluster"
trap 'for p in $standin_pids; do kill "$p" 2>/dev/null; done; "$SION_SOURCE_DIR/tests/slurm/cluster.sh" stop "$cluster"; rm -rf "$scratch"' EXIT
"$SION_SOURCE_DIR/tests/slurm/cluster.sh" start "$cluster" || { status=$?; [ "$status" = 125 ] && skip "Slurm is not installed"; fail "the cluster did not start"; done_testing; exit 1; }
set -a
. "$cluster/env"
set +a
cd "$scratch" || exit 1
mkdir -p scripts tmp
export TMPDIR="$scratch/tmp"

# Model a writes "a"; the second model is Anthropic's stand-in, which only says "Done.". A case
# passes when answer.txt holds a letter want.txt has; the case "slow" keeps a's check waiting.
printf '{"turns": [{"calls": [{"tool": "write_file", "input": {"path": "answer.txt", "content": "a"}}]}, {"text": "Done."}]}\n' >scripts/a.json
python3 - <<'PY'
import json
check = 'test -f answer.txt && grep -qF "$(cat answer.txt)" want.txt'
cases = [{"name": f"case-{i}", "task": f"Write the answer of case {i}.", "files": {"want.txt": "ab\n"}, "check": check}
         for i in range(4)]
cases.append({"name": "slow", "task": "Write the answer.", "files": {"want.txt": "ab\n"},
              "check": "if test -f answer.txt; then sleep 300; fi; false"})
json.dump({"cases": cases}, open("set.json", "w"))
json.dump({"cases": cases[:2] + [{"name": "slow", "task": "Write it.", "check": "sleep 300"}]},
          open("slow.json", "w"))
json.dump([{"text": "Done."}] * 20, open("replies.json", "w"))
PY
start_standin anthropic anthropic_server replies.json
key=sk-ant-sealed-$$-0001
unset ANTHROPIC_API_KEY
export ANTHROPIC_BASE_URL=$anthropic_url
printf '%s\n' "$key" | sion agent credential add ANTHROPIC_API_KEY >/dev/null || fail "credential add"
sion agent create lead --model "script:scripts/a.json" >/dev/null || exit 1
sion agent routes set lead code --model "script:scripts/a.json" --model anthropic:claude-haiku-5-5 --about "Writing code" >/dev/null || exit 1
a="script:$scratch/scripts/a.json"
c=anthropic:claude-haiku-5-5

# --- the evaluation, one array task cancelled mid-run -------------------------------------------
sion-route eval lead code --set set.json --dir ev1 --runs 1 --on slurm --time 10 >ev1.txt 2>ev1.err &
pid=$!
# Run 8 is a's run of "slow": once its check runs, Slurm cancels that task alone.
wait_until 180 eval '[ -f ev1/runs/m1-slow-1/check.json ] && [ -s ev1/slurm/job ]' && ok ||
    fail "the slow run's check never started"
job=$(cat ev1/slurm/job 2>/dev/null)
scancel "${job}_8" && ok || fail "scancel ${job}_8"
wait_until 180 eval '! kill -0 '"$pid"' 2>/dev/null' || { fail "eval --on slurm did not end"; kill -KILL "$pid"; }
wait "$pid"
status=$?
[ "$status" = 0 ] && ok || fail "eval --on slurm exited $status: $(cat ev1.err)"
expect_grep "^evaluating route code of lead: 2 models, 5 cases, 1 run each: 10 sessions in $scratch/ev1$" ev1.txt
expect_grep "^submitted Slurm job $job: an array of 10 tasks, one a run$" ev1.txt
expect_grep "^$a +4/4  100.0%  \(51.0%, 100.0%\) " ev1.txt
expect_grep "^$c +0/5    0.0%  \(0.0%, 43.4%\) " ev1.txt
expect_grep "^not made, and counted in no rate: 1 run \($a 1\)$" ev1.txt
expect_grep "^no model earns first place: " ev1.txt
expect_grep '"outcome":"not made","why":"Slurm.s task ended with no result: \*\*\* JOB [0-9]+ ON .* CANCELLED AT ' ev1/runs/m1-slow-1/result.json
[ -f ev1/runs/m1-slow-1/session.json ] && fail "the cancelled task exported a session" || ok
# The sessions came home: 9 of them, each one show can print.
[ "$(sqlite3 "$SION_HOME/sion.db" "SELECT count(*) FROM sessions")" = 9 ] && ok ||
    fail "$(sqlite3 "$SION_HOME/sion.db" "SELECT count(*) FROM sessions") sessions in the store, want 9"
session=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["session"])' ev1/runs/m1-case-2-1/result.json)
expect_exit 0 sion agent show "$session" && expect_grep '^→ write_file \{"content":"a","path":"answer.txt"\}$' "$scratch/out" &&
    expect_grep "^session $session: done$" "$scratch/out"
# The key reached every task of the stand-in's model, from the job's environment, and nothing under
# the evaluation's directory holds it; the tasks' own stores are gone.
expect_query "$anthropic_log" "sorted(set(x['key'] for x in r))" "[\"$key\"]"
expect_query "$anthropic_log" "len(r)" "5"
grep -rqF "$key" ev1 && fail "the key is written under the evaluation's directory" || ok
[ -z "$(ls tmp)" ] && ok || fail "the tasks' stores are left in TMPDIR: $(ls tmp)"

# --- Ctrl-C: the whole array is cancelled -------------------------------------------------------
sion-route eval lead code --set slow.json --dir ev2 --runs 1 --on slurm >ev2.txt 2>ev2.err &
pid=$!
wait_until 180 eval '[ -f ev2/runs/m1-slow-1/check.json ] && [ -f ev2/runs/m2-slow-1/check.json ]' ||
    fail "the slow checks never started"
job=$(cat ev2/slurm/job 2>/dev/null)
stop_job INT "$pid" 120
[ "$status" = 130 ] && ok || fail "eval --on slurm exited $status after Ctrl-C, want 130: $(cat ev2.err)"
expect_grep "^interrupted: 4 of 6 runs finished; the route's order stays$" ev2.txt
[ -z "$(squeue -h -j "$job" 2>/dev/null)" ] && ok || fail "job $job is still in squeue: $(squeue -h -j "$job")"
expect_exit 0 sion-route list lead --json && expect_grep "\"models\":\[\"$a\",\"$c\"\]" "$scratch/out"

done_testing
