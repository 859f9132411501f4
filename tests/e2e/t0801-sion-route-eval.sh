#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# sion-route eval (seed 001, "A model for each task"): two scripted models as agents on the same
# 20 cases, each run a real sion-run session in a workspace and bubblewrap sandbox of its own and
# checked there after it; the report's rates and intervals (Wilson, Newcombe) and bars; the model
# whose difference clears zero moved first in the route, and nothing moved when none does; runs
# not made (a provider down, a check that cannot start) counted apart; --json against its schema,
# --plot; bad input refused with nothing stored changed; Ctrl-C ending the runs under way and
# reporting what finished. And examples/eval/fixes.json: each check fails as given, passes fixed.
. "$(dirname "$0")/lib.sh"
need_bwrap
need_jsonschema

cd "$scratch" || exit 1
mkdir -p scripts

# Model a writes "a", model b writes "b"; a case passes when its want.txt has the letter written:
# 10 cases want either, 8 want b, 2 want a. So a passes 12 of 20, b 18.
for m in a b; do
    printf '{"turns": [{"calls": [{"tool": "write_file", "input": {"path": "answer.txt", "content": "%s"}}], "usage": {"input_tokens": 100, "output_tokens": 10}}, {"text": "Done.", "usage": {"input_tokens": 120, "output_tokens": 2}}]}\n' "$m" >"scripts/$m.json"
done
printf '{"turns": [{"fail": {"status": 503, "message": "Unavailable"}}]}\n' >scripts/down.json
python3 - <<'PY'
import json
cases = []
for i in range(20):
    want = "ab" if i < 10 else ("b" if i < 18 else "a")
    cases.append({"name": f"case-{i:02}", "task": f"Write the answer of case {i} to answer.txt.",
                  "files": {"want.txt": want + "\n", "notes/readme.txt": "the answer is a letter\n"},
                  "check": 'test -f answer.txt && grep -qF "$(cat answer.txt)" want.txt'})
json.dump({"cases": cases}, open("set.json", "w"))
json.dump({"cases": cases[:2] + [{"name": "no-checker", "task": "Write it.", "check": "no-such-checker --run"}]},
          open("small.json", "w"))
json.dump({"cases": cases[:2] + [{"name": "slow", "task": "Write it.", "check": "sleep 60"}] + cases[2:4]},
          open("slow.json", "w"))
PY
sion agent create lead --model "script:scripts/a.json" >/dev/null || exit 1
sion agent routes set lead code --model "script:scripts/a.json" --model "script:scripts/b.json" --about "Writing code" >/dev/null || exit 1
a="script:$scratch/scripts/a.json"
b="script:$scratch/scripts/b.json"

# --- bad input: one line, its status, nothing stored changed -------------------------------------
stored() { sqlite3 "$SION_HOME/sion.db" 'SELECT * FROM routes; SELECT count(*) FROM agents'; }
stored >before.txt
bad() { # STATUS MESSAGE ARGS...
    local status=$1 message=$2
    shift 2
    expect_exit "$status" sion-route eval "$@" && expect_err "sion-route: $message"
}
bad 64 "give the cases: --set CASES.json" lead code
bad 66 "cannot read set 'none.json': No such file or directory" lead code --set none.json
printf '{"cases": [{"name": "x", "task": "t"}]}' >broken.json
bad 65 "set 'broken.json': case 1: case 'x': member 'check' is missing" lead code --set broken.json
bad 1 "no route 'chat' in profile 'lead' (sion-route list lead)" lead chat --set set.json
bad 66 "no profile 'leed': make it with sion agent create leed" leed code --set set.json
bad 64 "invalid --runs '0': give a number of runs, 1 to 1000" lead code --set set.json --runs 0
bad 64 "invalid --jobs 'x': give a number of runs at once, 1 to 256" lead code --set set.json -j x
bad 64 "unknown autonomy level 'L9': give L0 to L6" lead code --set set.json --autonomy L9
mkdir taken
bad 64 "cannot make 'taken' for the runs: give another --dir: File exists" lead code --set set.json --dir taken
bad 64 "--dir '$SION_HOME/evals' is within \$SION_HOME ('$SION_HOME'): give a directory outside it" \
    lead code --set set.json --dir "$SION_HOME/evals"
[ "$(cat before.txt)" = "$(stored)" ] && ok || fail "a refused evaluation changed what is stored"

# --- the evaluation: b earns first place ---------------------------------------------------------
expect_exit 0 sion agent routes eval lead code --set set.json --dir ev1 -j 2 --plot ev1.svg &&
    cp "$scratch/out" ev1.txt
expect_text ev1.txt report "evaluating route code of lead: 2 models, 20 cases, 3 runs each: 120 sessions in $scratch/ev1

model$(printf '%*s' $((${#a} - 5)) '')  passes    rate  95% interval      0%                  50%              100%
$a   36/60   60.0%  (47.4%, 71.4%)                       [----*----]
$b   54/60   90.0%  (79.9%, 95.3%)                                    [---*-]

difference from $a, with Newcombe's 95% interval:
model$(printf '%*s' $((${#a} - 5)) '')  difference  95% interval      -100%               0               +100%
$b      +30.0%  (+14.7%, +43.7%)                      |  [--*--]

$b earns first place in route code: its difference from $a is +30.0% (+14.7%, +43.7%), above zero; the route's models are now $b, $a"
expect_exit 0 sion-route list lead --json && expect_grep "\"models\":\[\"$b\",\"$a\"\]" "$scratch/out"
[ "$(find ev1/runs -name result.json | wc -l)" = 120 ] && ok || fail "not 120 results in ev1/runs"
[ -f ev1/runs/m2-case-11-3/workspace/answer.txt ] && [ "$(cat ev1/runs/m2-case-11-3/workspace/answer.txt)" = b ] &&
    [ -f ev1/runs/m2-case-11-3/workspace/notes/readme.txt ] && ok || fail "a run's workspace is not as its session left it"
head -c 5 ev1.svg | grep -q '^<svg' && grep -q '</svg>' ev1.svg && ok || fail "--plot wrote no SVG"
# Each run is a session of the agent its model has, in the user's store: show works for it.
session=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["session"])' ev1/runs/m1-case-00-1/result.json)
expect_exit 0 sion agent show "$session" && expect_grep '^→ write_file \{"content":"a","path":"answer.txt"\}$' "$scratch/out"
# The agents: one a model, made for the evaluation.
[ "$(sqlite3 "$SION_HOME/sion.db" "SELECT count(DISTINCT agent) FROM sessions")" = 2 ] && ok ||
    fail "the runs' sessions are not of two agents"

# Again, with b first: a's difference is below zero, nothing moves. --json against its schema.
expect_exit 0 sion-route eval lead code --set set.json --dir ev2 --runs 1 -j 3 --json &&
    expect_json_lines route.event.json 44 && cp "$scratch/out" ev2.jsonl
python3 - ev2.jsonl "$a" "$b" >ev2-check.txt <<'PY'
import json, sys
events = [json.loads(l) for l in open(sys.argv[1])]
kinds = [e["event"] for e in events]
assert kinds == ["eval"] + ["run"] * 40 + ["model", "model", "end"], kinds
a, b = sys.argv[2], sys.argv[3]
assert events[0]["models"] == [b, a], events[0]
models = {e["model"]: e for e in events if e["event"] == "model"}
assert (models[b]["passes"], models[b]["runs"]) == (18, 20), models[b]
assert (models[a]["passes"], models[a]["runs"]) == (12, 20), models[a]
assert abs(models[a]["from_first"]["difference"] + 0.3) < 1e-9, models[a]
assert models[a]["from_first"]["high"] < 0, models[a]
runs = [e for e in events if e["event"] == "run"]
assert all(e["input_tokens"] == 220 and e["output_tokens"] == 12 for e in runs), runs[0]
assert all(e["outcome"] == "pass" or e["why"] == "the check exited 1" for e in runs), runs
end = events[-1]
assert end == {"event": "end", "finished": 40, "planned": 40, "interrupted": False,
               "first_place": None, "models": [b, a]}, end
print("ok")
PY
[ "$(cat ev2-check.txt)" = ok ] && ok || fail "eval --json: $(cat ev2-check.txt)"

# At a terminal, a line on stderr shows the runs done, the passes so far and the time left.
script -qec "sion-route eval lead code --set small.json --dir ev5 --runs 1" terminal.txt >/dev/null 2>&1
grep -aq $'\r\033\[K2 of 6 runs; passes: script:[^ ]*[ab].json [0-9], script:[^ ]*[ab].json [0-9]; [0-9]*s left' terminal.txt && ok ||
    fail "no progress line at a terminal: $(head -c 600 terminal.txt | od -c | head -20)"
grep -aq "^evaluating route code of lead: 2 models, 3 cases, 1 run each" terminal.txt && ok ||
    fail "no report at a terminal"

# --- runs not made: a provider down, a check that cannot start -----------------------------------
expect_exit 0 sion-route set lead code --model "$b" --model "script:scripts/down.json" --about "Writing code"
expect_exit 0 sion-route eval lead code --set small.json --dir ev3 --runs 2 &&
    expect_grep "^script:$scratch/scripts/down.json     0/0  no run made$" "$scratch/out" &&
    expect_grep "^$b +4/4  100.0%  \(51.0%, 100.0%\) " "$scratch/out" &&
    expect_grep "^not made, and counted in no rate: 8 runs \($b 2, script:$scratch/scripts/down.json 6\)$" "$scratch/out" &&
    expect_grep "^no model earns first place: none's difference from $b has its lower end above zero; the route's order stays$" "$scratch/out"
expect_grep '"outcome":"not made","why":"the check could not start \(exit 127\): sh: 1: no-such-checker: not found"' ev3/runs/m1-no-checker-1/result.json
expect_grep '"outcome":"not made","why":"the session failed: ' ev3/runs/m2-case-00-1/result.json

# --- Ctrl-C: the runs under way end, what finished is reported, nothing moves --------------------
expect_exit 0 sion-route set lead code --model "$a" --model "$b" --about "Writing code"
sion-route eval lead code --set slow.json --dir ev4 --runs 1 >ev4.txt 2>ev4.err &
pid=$!
slow_started() { [ -f ev4/runs/m1-slow-1/check.json ] && [ "$(find ev4/runs -name result.json | wc -l)" = 4 ]; }
wait_until 120 slow_started || fail "the slow check never started"
sleep 0.5
stop_job INT "$pid" 60
[ "$status" = 130 ] && ok || fail "eval ended $status after Ctrl-C, want 130: $(cat ev4.err)"
expect_grep "^interrupted: 4 of 10 runs finished; the route's order stays$" ev4.txt
expect_grep "^$a +2/2  100.0%" ev4.txt
wait_until 30 eval '! pgrep -f "sleep 60" >/dev/null' && ok || fail "the check Ctrl-C ended still runs"
[ -f ev4/runs/m1-slow-1/result.json ] && fail "the run Ctrl-C ended has a result" || ok
expect_exit 0 sion-route list lead --json && expect_grep "\"models\":\[\"$a\",\"$b\"\]" "$scratch/out"

# --- the example set: each check fails as given, and passes once its bug is fixed ----------------
set_file="$SION_SOURCE_DIR/examples/eval/fixes.json"
python3 - "$set_file" <<'PY' >example-cases.txt
import json, os, sys
fixes = {"sums.py": ("numbers[1:]", "numbers"), "words.py": ("[::1]", "[::-1]"),
         "stats.py": ("    return ordered[len(ordered) // 2]\n",
                      "    n = len(ordered)\n    return ordered[n // 2] if n % 2 else (ordered[n // 2 - 1] + ordered[n // 2]) / 2\n"),
         "fizz.py": ("    if n % 3 == 0:\n        return \"Fizz\"\n", "    if n % 15 == 0:\n        return \"FizzBuzz\"\n    if n % 3 == 0:\n        return \"Fizz\"\n")}
for case in json.load(open(sys.argv[1]))["cases"]:
    for fixed in (False, True):
        d = os.path.join("example", case["name"] + ("-fixed" if fixed else ""))
        for path, text in case["files"].items():
            os.makedirs(os.path.dirname(os.path.join(d, path)) or d, exist_ok=True)
            if fixed and path in fixes:
                assert fixes[path][0] in text, path
                text = text.replace(fixes[path][0], fixes[path][1])
            open(os.path.join(d, path), "w").write(text)
        print(d, case["check"])
PY
[ "$(wc -l <example-cases.txt)" = 8 ] && ok || fail "the example set is not 4 cases"
while read -r dir check; do
    want=1
    case $dir in *-fixed) want=0 ;; esac
    sion-sandbox exec --workspace "$dir" -- sh -c "$check" >/dev/null 2>&1
    got=$?
    if { [ "$want" = 0 ] && [ "$got" = 0 ]; } || { [ "$want" = 1 ] && [ "$got" != 0 ]; }; then ok; else
        fail "$dir: the check '$check' exited $got"
    fi
done <example-cases.txt

done_testing
