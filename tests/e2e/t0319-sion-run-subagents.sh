#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Subagents (seed 000, "Spawning subagents together"): a session given --delegate spawns three in
# one turn; each is an agent of <profile>-<name> working in a session of its own, with a sandbox of
# its own, and they work at the same time, shown without timing: each one's command waits until
# all three have started theirs, which only subagents at work together can do (bounded by the
# sandbox's timeout). The seed's lines, budgets out of the parent's, the parent's autonomy, --json's
# events against their schema; a subagent that fails; a parent killed with -9 takes its subagents
# and their sandboxes with it, and continued, it never spawns them again.
. "$(dirname "$0")/lib.sh"
need_bwrap
need_jsonschema
command -v sqlite3 >/dev/null || skip "sqlite3 is not installed (Debian package sqlite3)"

cd "$scratch" || exit 1
mkdir -p work
spawn() { printf '{"tool": "agent_spawn", "input": {"name": "%s", "task": "%s", "budget": %s}}' "$1" "$2" "$3"; }
printf '{"turns": [{"calls": [%s, %s, %s]}, {"text": "Three subagents did their parts."}]}\n' \
    "$(spawn fetch 'Fetch the dataset.' 20000)" "$(spawn clean 'Clean the dataset.' 20000)" \
    "$(spawn label 'Label the dataset.' 20000)" >lead.json
# Each subagent writes its part, marks its start and waits for the others' marks.
cat >child.json <<'EOF'
{"turns": [{"calls": [{"tool": "write_file", "input": {"path": "part.txt", "content": "done\n"}},
                      {"tool": "shell", "input": {"command": "touch /workspace/here-$(cat /proc/sys/kernel/random/uuid); until [ $(ls /workspace | grep -c '^here-') -ge 3 ]; do sleep 0.05; done; echo all three"}}]},
           {"text": "Did my part."}]}
EOF
printf '{"turns": [{"fail": {"status": 503, "message": "Unavailable"}}]}\n' >down.json
agent=$(sion agent create coder --model script:lead.json) || exit 1
run() { timeout 120 setsid -w sion agent run coder "$agent" --model script:lead.json --workspace work --shell \
    --sandbox-timeout 60 "$@" </dev/null; }

# --- three together: the seed's transcript, byte for byte once ids are normalised ----------------
# The ledger's words replaced (seed 000, "Spawning subagents together"): budgets are in tokens, and
# nothing is paid or signed.
expect_exit 0 run --task 'Have the dataset fetched, cleaned and labelled.' --delegate --subagent-model script:child.json --autonomy L6
sed -E -e 's/^session [0-9a-f]{16}/session df7de21c12ac158b/' -e "s/agent ${agent:0:8}\$/agent d85ed254/" \
    -e 's/^(← subagent coder-fetch \(agent )[0-9a-f]{8}(.*session )[0-9a-f]{16}/\175b72e84\2ef4ce3b30adcf70c/' \
    -e 's/^(← subagent coder-clean \(agent )[0-9a-f]{8}(.*session )[0-9a-f]{16}/\19d97dbe0\2d4d5079fe0f091e8/' \
    -e 's/^(← subagent coder-label \(agent )[0-9a-f]{8}(.*session )[0-9a-f]{16}/\11301e5b1\2ae255688feef5b96/' \
    "$scratch/out" >got.txt
cat >want.txt <<'TXT'
session df7de21c12ac158b for agent d85ed254
→ agent_spawn {"budget":20000,"name":"fetch","task":"Fetch the dataset."}
→ agent_spawn {"budget":20000,"name":"clean","task":"Clean the dataset."}
→ agent_spawn {"budget":20000,"name":"label","task":"Label the dataset."}
← subagent coder-fetch (agent 75b72e84, budget 20000 tokens) worked in session ef4ce3b30adcf70c: done; it said: Did my part. Its calls: write_file ok, shell ok.
← subagent coder-clean (agent 9d97dbe0, budget 20000 tokens) worked in session d4d5079fe0f091e8: done; it said: Did my part. Its calls: write_file ok, shell ok.
← subagent coder-label (agent 1301e5b1, budget 20000 tokens) worked in session ae255688feef5b96: done; it said: Did my part. Its calls: write_file ok, shell ok.
agent: Three subagents did their parts.
session df7de21c12ac158b: done
TXT
if cmp -s want.txt got.txt; then ok; else
    fail "the subagents' transcript differs from the seed's"
    diff want.txt got.txt >&2
fi
[ "$(ls work | grep -c '^here-')" = 3 ] && ok || fail "the three subagents did not each mark their start"
# Each is its own agent, of its own profile, at the parent's level, in a session of its own.
expect_exit 0 sion agent list --json
for name in fetch clean label; do
    expect_grep "\"profile\":\"coder-$name\",\"autonomy\":\"L6\",\"models\":\[\"script:$scratch/child.json\"\]" "$scratch/out"
done
[ "$(sqlite3 "$SION_HOME/sion.db" "SELECT count(*) FROM sessions WHERE profile LIKE 'coder-%' AND state = 'done'")" = 3 ] &&
    ok || fail "not three subagents' sessions done in the store"
# Each subagent's run is a trace of its own (sion-run(1), "The trace"), linked to the run of the
# agent_spawn call that started it, whose trace context it was given.
links=$(sqlite3 "$SION_HOME/sion.db" "SELECT c.links FROM spans c JOIN sessions s ON s.id = c.session
    WHERE s.profile LIKE 'coder-%' AND c.name = 'invoke_agent sion' ORDER BY c.links")
spawns=$(sqlite3 "$SION_HOME/sion.db" "SELECT json_array(json_object('trace', r.trace, 'span', r.span))
    FROM spans r JOIN spans t ON r.parent = t.span AND r.session = t.session
    WHERE t.name = 'execute_tool agent_spawn' AND r.name = 'call' ORDER BY 1")
[ -n "$spawns" ] && [ "$(printf '%s\n' "$links" | grep -c .)" = 3 ] && [ "$links" = "$spawns" ] && ok ||
    fail "the subagents' traces are not linked to their spawns: $links, not $spawns"

# --- budgets out of the parent's, --json ---------------------------------------------------------
printf '{"turns": [{"text": "Did my part."}]}\n' >answer.json
expect_exit 0 run --task 'Again.' --delegate --subagent-model script:answer.json --autonomy L6 --budget-tokens 45000 --json &&
    expect_json_lines run.event.json "$(wc -l <"$scratch/out")" && cp "$scratch/out" budget.jsonl
python3 - budget.jsonl >budget-check.txt <<'PY'
import json, sys
events = [json.loads(l) for l in open(sys.argv[1])]
started = [e for e in events if e["event"] == "subagent" and e["state"] == "started"]
ended = [e for e in events if e["event"] == "subagent" and e["state"] == "ended"]
results = [e for e in events if e["event"] == "result"]
assert len(started) == 3 and len(ended) == 3, events
budgets = sorted(e["budget"] for e in started)
# 45000 less the parent's first answer: two of 20000 and the rest, whichever asked first; the rest
# is less than a request of the subagent's, which stops before it.
assert budgets[1:] == [20000, 20000] and 0 < budgets[0] < 5000, budgets
states = sorted((e["budget"], e["ended"]) for e in ended)
assert [s for _, s in states] == ["stopped", "done", "done"], states
assert any("out of budget; it said nothing. It made no calls." in r["text"] for r in results), results
assert all(f"budget {e['budget']} tokens" in r["text"] for e in started for r in results
           if e["subagent"] in r["text"]), results
spent = sum(e["usage"]["input_tokens"] + e["usage"]["output_tokens"] for e in ended)
end = events[-1]
assert end["usage"]["input_tokens"] + end["usage"]["output_tokens"] > spent, (end, spent)
print("ok")
PY
[ "$(cat budget-check.txt)" = ok ] && ok || fail "budgets: $(cat budget-check.txt)"

# --- refusals and failures -----------------------------------------------------------------------
expect_exit 64 sion agent run coder "$agent" --task x --subagent-model script:child.json &&
    expect_err "sion-run: --subagent-model is for a session that delegates: add --delegate"
# Below L3 no one is there to let a write run: agent_spawn is refused, and nothing is spawned.
before=$(sqlite3 "$SION_HOME/sion.db" "SELECT count(*) FROM sessions")
expect_exit 0 run --task 'Refused.' --delegate --subagent-model script:child.json --autonomy L2
expect_grep "^✗ agent_spawn is a write, which asks a person at L2" "$scratch/out"
[ "$(sqlite3 "$SION_HOME/sion.db" "SELECT count(*) FROM sessions")" = $((before + 1)) ] && ok ||
    fail "a refused agent_spawn made a session"
expect_exit 0 run --task 'Fails.' --delegate --subagent-model script:down.json --autonomy L6
expect_grep "^✗ subagent coder-fetch \(agent [0-9a-f]{8}, budget 20000 tokens\) worked in session [0-9a-f]{16}: failed: .*HTTP 503: Unavailable.*; it said nothing\. It made no calls\.$" "$scratch/out"

# --- a parent killed with -9 ---------------------------------------------------------------------
rm -f work/here-*
# Their commands and processes are this suite's own: by its scratch directory, and a sleep of its own.
nap="300.$$"
printf '{"turns": [{"calls": [{"tool": "shell", "input": {"command": "touch /workspace/here-$(cat /proc/sys/kernel/random/uuid); sleep %s"}}]}, {"text": "Slept."}]}\n' "$nap" >slow.json
# sion execs sion-run: $! is the parent session's process.
sion agent run coder "$agent" --model script:lead.json --workspace work --shell --task 'Sleep.' \
    --delegate --subagent-model script:slow.json --autonomy L6 --json </dev/null >killed.jsonl 2>&1 &
parent=$!
wait_until 60 eval '[ "$(ls work | grep -c "^here-")" = 3 ]' && ok || fail "the subagents never started their commands"
children=$(pgrep -f "sion-run run coder-.* --workspace $scratch/work" | wc -l)
[ "$children" = 3 ] && ok || fail "$children subagents' sion-run running, want 3"
kill -KILL "$parent"
wait "$parent" 2>/dev/null
wait_until 30 eval '! pgrep -f "sion-run run coder-.* --workspace $scratch/work" >/dev/null' && ok ||
    fail "the subagents outlived their parent"
wait_until 30 eval '! pgrep -f "sleep $nap" >/dev/null' && ok || fail "the subagents' sandboxes outlived their parent"
session=$(head -1 killed.jsonl | python3 -c 'import json,sys; print(json.load(sys.stdin)["session"])')
spawned=$(sqlite3 "$SION_HOME/sion.db" "SELECT count(*) FROM sessions WHERE profile LIKE 'coder-%'")
expect_exit 0 timeout 120 setsid -w sion agent run coder "$agent" --session "$session" --task 'Again.' \
    --delegate --subagent-model script:slow.json --autonomy L6 </dev/null
[ "$(grep -c "^✗ this call was made before and got no answer" "$scratch/out")" = 3 ] && ok ||
    fail "the continued session's spawns are not each uncertain"
[ "$(sqlite3 "$SION_HOME/sion.db" "SELECT count(*) FROM sessions WHERE profile LIKE 'coder-%'")" = "$spawned" ] &&
    ok || fail "a continued session spawned its subagents again"

done_testing
