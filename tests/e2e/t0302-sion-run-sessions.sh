#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# sion-run's agents and sessions: create, list, sessions and show; an agent named by its whole id,
# its short form or a unique prefix, and refused when the name is ambiguous, unknown or of another
# profile; a session continued with --session on its stored settings, the model sent the earlier
# conversation, and refused while another run has it; how a run ends: a spent token budget (1), a
# script with no turn left (69), a model that fails and the next one that answers.
. "$(dirname "$0")/lib.sh"

need_bwrap
command -v python3 >/dev/null || skip "python3 is not installed"
python3 -c 'import jsonschema' 2>/dev/null || skip "python3-jsonschema is not installed"
command -v sqlite3 >/dev/null || skip "sqlite3 is not installed (Debian package sqlite3)"

work="$scratch/work"
scripts="$scratch/scripts"
mkdir -p "$work" "$scripts" "$scratch/events"
kept=0
# keep_events: the last command's stdout, JSON events, kept to be checked against their schema.
keep_events() { cp "$scratch/out" "$scratch/events/$((++kept)).jsonl"; }
cd "$scratch" || exit 1
db="$SION_HOME/sion.db"
hex64='[0-9a-f]{64}'

# run PROFILE AGENT ARGS...: a run with nothing on stdin and no one to ask, bounded.
run() { timeout 120 setsid -w sion-run run "$@" </dev/null; }
session_id() { sed -n '1s/^session \([0-9a-f]\{16\}\) for agent [0-9a-f]\{8\}.*$/\1/p' "$scratch/out"; }
short_of() { printf '%s…%s' "${1:0:8}" "${1:60:4}"; }

echo '{"turns": [{"text": "hello"}]}' >"$scripts/hello.json"

# create prints the whole id; list the short form, the profile, its level and models, oldest first.
expect_exit 0 sion-run create coder && expect_grep "^$hex64\$" "$scratch/out" && coder=$(cat "$scratch/out")
expect_exit 0 sion-run create lead --model "script:$scripts/hello.json" --autonomy L4 &&
    expect_grep "^$hex64\$" "$scratch/out" && lead=$(cat "$scratch/out")
expect_exit 0 sion-run list && expect_out "$(short_of "$coder") coder L2
$(short_of "$lead") lead L4 script:$scripts/hello.json"
expect_exit 0 sion-run list lead && expect_out "$(short_of "$lead") lead L4 script:$scripts/hello.json"
expect_exit 66 sion-run list nobody && expect_err "sion-run: no profile 'nobody'"
expect_exit 0 sion-run sessions && expect_out ''
# An agent of lead runs on its profile's model without --model.
expect_exit 0 run lead "${lead:0:6}" --task 'Say hello'
lead_sid=$(session_id)
expect_out "session $lead_sid for agent ${lead:0:8}
agent: hello
session $lead_sid: done"

# An agent by its whole id (in either case), its short form (… or ...), a prefix of 4 or more.
for name in "$coder" "${coder^^}" "$(short_of "$coder")" "${coder:0:8}...${coder:60:4}" "${coder:0:4}" "${coder:0:12}"; do
    expect_exit 0 run coder "$name" --task 'Say hello' --model "script:$scripts/hello.json" &&
        expect_grep "^session [0-9a-f]{16} for agent ${coder:0:8}\$" "$scratch/out"
done
# Refused: a name that is no id, an agent there is not, one of another profile, in each command.
expect_exit 64 run coder xyz --task x --model "script:$scripts/hello.json" &&
    expect_err "sion-run: invalid agent 'xyz': give its id, its short form or a prefix of 4 hex digits"
expect_exit 64 run coder "${coder:0:3}" --task x --model "script:$scripts/hello.json" &&
    expect_err "sion-run: invalid agent '${coder:0:3}': give its id, its short form or a prefix of 4 hex digits"
none=$(printf '%064d' 0) # an agent's id starts with 000000 once in 16 million
expect_exit 66 run coder "${none:0:6}" --task x --model "script:$scripts/hello.json" &&
    expect_err "sion-run: no agent '${none:0:6}' in profile 'coder'"
expect_exit 66 sion-run sessions "$none" && expect_err "sion-run: no agent '$none'"
expect_exit 65 run lead "${coder:0:8}" --task x --model "script:$scripts/hello.json" &&
    expect_err "sion-run: agent $(short_of "$coder") is of profile 'coder', not 'lead'"
expect_exit 65 run nobody "${coder:0:8}" --task x --model "script:$scripts/hello.json" &&
    expect_err "sion-run: agent $(short_of "$coder") is of profile 'coder', not 'nobody'"
expect_exit 64 run Coder "${coder:0:8}" --task x --model "script:$scripts/hello.json" &&
    expect_err "sion-run: invalid profile name 'Coder': use lowercase letters, digits, '-' and '_'"

# Ambiguous names: agents and sessions whose ids share a prefix, put in the store directly.
twin1=abcd0000$(printf '%052d' 0)0001 twin2=abcd0000$(printf '%052d' 1)0001 twin3=abcd9999$(printf '%052d' 2)0002
for id in "$twin1" "$twin2" "$twin3"; do
    expect_exit 0 sqlite3 "$db" "INSERT INTO agents (id, profile, created) VALUES ('$id', 'coder', 1)"
done
expect_exit 65 run coder abcd --task x --model "script:$scripts/hello.json" &&
    expect_err "sion-run: agent 'abcd' is ambiguous: abcd0000…0001, abcd0000…0001, abcd9999…0002"
expect_exit 65 run coder 'abcd0000…0001' --task x --model "script:$scripts/hello.json" &&
    expect_err "sion-run: agent 'abcd0000…0001' is ambiguous: abcd0000…0001, abcd0000…0001"
expect_exit 65 sion-run sessions abcd0000 &&
    expect_err "sion-run: agent 'abcd0000' is ambiguous: abcd0000…0001, abcd0000…0001"
expect_exit 0 run coder abcd9 --task 'Say hello' --model "script:$scripts/hello.json" &&
    expect_grep '^session [0-9a-f]{16} for agent abcd9999$' "$scratch/out"
for id in beef000000000001 beef000000000002; do
    expect_exit 0 sqlite3 "$db" "INSERT INTO sessions (id, agent, profile, task, state, started) VALUES ('$id', '$twin1', 'coder', 'planted', 'done', 1)"
done
expect_exit 65 sion-run show beef && expect_err "sion-run: session 'beef' is ambiguous: beef000000000001, beef000000000002"
expect_exit 65 run coder "$twin1" --task x --session beef00 --model "script:$scripts/hello.json" &&
    expect_err "sion-run: session 'beef00' is ambiguous: beef000000000001, beef000000000002"
expect_exit 64 sion-run show beef0000000000002 &&
    expect_err "sion-run: invalid session 'beef0000000000002': give its id or a prefix of 4 hex digits"
expect_exit 0 sion-run show beef000000000002 && expect_out "session beef000000000002 for agent abcd0000
session beef000000000002: done"

# sessions: newest first, each its id, agent, state, calls and task; of one agent when named.
expect_exit 0 sion-run sessions "${lead:0:8}" && expect_out "$lead_sid $(short_of "$lead") done 0 calls Say hello"
expect_exit 0 sion-run sessions "$twin1" && expect_out "beef000000000002 abcd0000…0001 done 0 calls planted
beef000000000001 abcd0000…0001 done 0 calls planted"
expect_exit 0 sion-run sessions && cut -d' ' -f1 "$scratch/out" | sed -n '8,$p' >"$scratch/ids" &&
    expect_text "$scratch/ids" 'the oldest sessions' "$lead_sid
beef000000000002
beef000000000001"

# --session: a second task in the same session, on the settings it was stored with (the workspace,
# given relative to where the first run was, the shell, the level), from another directory; the
# model is sent the conversation so far.
python3 -c 'import json; print(json.dumps({"turns": [
    {"calls": [{"tool": "write_file", "input": {"path": "notes.txt", "content": "x" * 16000}}]},
    {"text": "wrote notes.txt"}]}))' >"$scripts/first.json"
cat >"$scripts/second.json" <<'JSON'
{"turns": [
  {"calls": [{"tool": "shell", "input": {"command": "wc -c notes.txt"}}]},
  {"text": "notes.txt has 16000 bytes"}
]}
JSON
expect_exit 0 run coder "${coder:0:8}" --task 'Write notes' --model "script:$scripts/first.json" \
    --workspace work --shell --autonomy L3
sid=$(session_id)
cd / || exit 1
expect_exit 0 run coder "${coder:0:8}" --task 'How long are the notes?' --session "$sid" --model "script:$scripts/second.json"
cd "$scratch" || exit 1
expect_out "session $sid for agent ${coder:0:8}, continued
→ shell {\"command\":\"wc -c notes.txt\"}
← exit status 0
--- stdout
16000 notes.txt
agent: notes.txt has 16000 bytes
session $sid: done"
x16000=$(printf '%16000s' '' | tr ' ' x)
expect_exit 0 sion-run show "$sid" && expect_out "session $sid for agent ${coder:0:8}
you: Write notes
→ write_file {\"content\":\"$x16000\",\"path\":\"notes.txt\"}
← wrote 16000 bytes to notes.txt
agent: wrote notes.txt
you: How long are the notes?
→ shell {\"command\":\"wc -c notes.txt\"}
← exit status 0
--- stdout
16000 notes.txt
agent: notes.txt has 16000 bytes
session $sid: done"
expect_exit 0 sion-run sessions "${coder:0:8}" && head -n 1 "$scratch/out" >"$scratch/first" &&
    expect_text "$scratch/first" sessions "$sid $(short_of "$coder") done 2 calls Write notes"
# The stored settings are those of the last run: the workspace resolved, the shell, the level.
expect_exit 0 sion-run show "$sid" --json && keep_events && head -n 1 "$scratch/out" >"$scratch/first"
expect_grep "\"settings\":\\{\"models\":\\[\"script:$scripts/second.json\"\\],\"workspace\":\"$work\",\"shell\":\"bwrap\",\"autonomy\":\"L3\"\\}" "$scratch/first"
# A scripted model's path given relative is made absolute against the directory of the run that
# gives it (sion-run(1), "The scripted model"): kept so in the settings, named so by the run, and
# found again when the session goes on from elsewhere.
mkdir -p "$scratch/here"
echo '{"turns": [{"calls": [{"tool": "missing_tool", "input": {}}]}]}' >"$scratch/here/one.json"
cd "$scratch/here" || exit 1
expect_exit 69 run coder "${coder:0:8}" --task 'Once' --model script:one.json --json
cd "$scratch" || exit 1
cp "$scratch/out" "$scratch/rel.out"
expect_grep '"settings":\{"models":\["script:'"$scratch"'/here/one.json"\]' "$scratch/rel.out"
rsid=$(head -n 1 "$scratch/rel.out" | sed -n 's/.*"session":"\([0-9a-f]\{16\}\)".*/\1/p')
expect_grep "\"why\":\"the model script:$scratch/here/one.json failed: script '$scratch/here/one.json' has no turn left \\(it has 1\\)\"" "$scratch/rel.out"
cd / || exit 1
expect_exit 69 run coder "${coder:0:8}" --task 'Again' --session "$rsid"
cd "$scratch" || exit 1
expect_grep "^✗ there is no tool named missing_tool\$" "$scratch/out"
expect_grep "^session $rsid: failed: the model script:$scratch/here/one.json failed: script '$scratch/here/one.json' has no turn left \\(it has 1\\)\$" "$scratch/out"
# Each call id is the session's own, though each run's script numbers its calls from call_1_1.
grep -o '"event":"call","call":"[^"]*"' "$scratch/out" | sort | uniq -d >"$scratch/dups"
expect_text "$scratch/dups" 'repeated call ids' ''
# What the model is sent: the 16000 bytes of the first run (4000 tokens and more) count in the
# second run's input, where a new session's is a few hundred.
expect_exit 0 run coder "${coder:0:8}" --task 'Say hello' --session "$sid" --model "script:$scripts/hello.json" --json && keep_events
tail -n 1 "$scratch/out" | python3 -c 'import json, sys; sys.exit(0 if json.load(sys.stdin)["usage"]["input_tokens"] >= 4000 else 1)' &&
    ok || fail "the continued run's input was not the earlier conversation: $(tail -n 1 "$scratch/out")"
expect_exit 0 run coder "${coder:0:8}" --task 'Say hello' --model "script:$scripts/hello.json" --json
tail -n 1 "$scratch/out" | python3 -c 'import json, sys; sys.exit(0 if json.load(sys.stdin)["usage"]["input_tokens"] < 1000 else 1)' &&
    ok || fail "a new session's input was not small: $(tail -n 1 "$scratch/out")"
# A flag given again replaces what it names: at L2 the write asks, and no one is there.
echo '{"turns": [{"calls": [{"tool": "write_file", "input": {"path": "l2.txt", "content": "x"}}]}, {"text": "done"}]}' >"$scripts/l2.json"
expect_exit 0 run coder "${coder:0:8}" --task 'Write l2' --session "$sid" --model "script:$scripts/l2.json" --autonomy L2
expect_grep '^✗ write_file is a write, which asks a person at L2, and there is no one to ask here \(no terminal\)$' "$scratch/out"
[ ! -e "$work/l2.txt" ] && ok || fail "l2.txt was written at L2 with no one to ask"
# --sandbox-memory: a command that holds more is killed, and the model is told so (where no memory
# cgroup can be made, RLIMIT_DATA fails its allocation instead); it is kept with the session and
# holds when the session goes on, until it is given again.
cat >"$scripts/hog.json" <<'JSON'
{"turns": [
  {"calls": [{"tool": "shell", "input": {"command": "python3 -c 'x = bytearray(200 << 20); print(len(x))'"}}]},
  {"text": "tried"}
]}
JSON
expect_exit 0 sion-sandbox check --workspace work
if grep -q '^ok: memory bounded: .* in its own cgroup' "$scratch/out"; then
    killed="← out of memory: the sandbox's memory was full and a process of the command was killed \\(SIGKILL\\); exit status 137"
else
    killed='← exit status 1'
fi
expect_exit 0 run coder "${coder:0:8}" --task 'Hog' --model "script:$scripts/hog.json" \
    --workspace work --shell --autonomy L3 --sandbox-memory 64M
hsid=$(session_id)
expect_grep "^$killed\$" "$scratch/out"
expect_exit 0 sion-run show "$hsid" --json && head -n 1 "$scratch/out" >"$scratch/first"
expect_grep '"shell":"bwrap","sandbox_memory":"64M",' "$scratch/first"
expect_exit 0 run coder "${coder:0:8}" --task 'Hog again' --session "$hsid" --model "script:$scripts/hog.json"
expect_grep "^$killed\$" "$scratch/out"
expect_exit 0 run coder "${coder:0:8}" --task 'With more' --session "$hsid" --model "script:$scripts/hog.json" \
    --sandbox-memory 512M
expect_grep '^← exit status 0$' "$scratch/out" && expect_grep '^209715200$' "$scratch/out"

# Another agent's session, or one that is not there.
expect_exit 65 run lead "${lead:0:8}" --task x --session "$sid" &&
    expect_err "sion-run: session $sid is of agent $(short_of "$coder"), not $(short_of "$lead")"
expect_exit 66 run coder "${coder:0:8}" --task x --session 0123456789abcdef --model "script:$scripts/hello.json" &&
    expect_err "sion-run: no session '0123456789abcdef'"

# A session another run has is refused until it ends (75, try again).
echo '{"turns": [{"calls": [{"tool": "shell", "input": {"command": "sleep 4"}}]}, {"text": "slept"}]}' >"$scripts/sleep.json"
run coder "${coder:0:8}" --task 'Sleep' --session "$sid" --model "script:$scripts/sleep.json" --autonomy L3 >"$scratch/sleep.out" 2>&1 &
sleeper=$!
for _ in $(seq 100); do
    [ "$(sqlite3 "$db" "SELECT count(*) FROM calls WHERE session = '$sid' AND state = 'running'")" = 1 ] && break
    sleep 0.1
done
expect_exit 75 run coder "${coder:0:8}" --task x --session "$sid" --model "script:$scripts/hello.json" &&
    owner=$(sqlite3 "$db" "SELECT owner FROM sessions WHERE id = '$sid'") &&
    expect_err "sion-run: session $sid is running (pid ${owner%%:*})"
[ "$(cat "/proc/${owner%%:*}/comm" 2>&1)" = sion-run ] && ok || fail "pid ${owner%%:*} is not the sion-run that has the session"
expect_exit 0 sion-run sessions "${coder:0:8}" && expect_grep "^$sid [^ ]+ running " "$scratch/out"
wait "$sleeper" && ok || fail "the run that slept did not end with 0: $(cat "$scratch/sleep.out")"
expect_exit 0 run coder "${coder:0:8}" --task 'Say hello' --session "$sid" --model "script:$scripts/hello.json"

# A token budget: each turn says it used 11000 tokens; before the third, 22000 and what the request
# would add (the tools alone are more than 500) pass 22500, so the run stops there (1).
cat >"$scripts/budget.json" <<'JSON'
{"turns": [
  {"calls": [{"tool": "write_file", "input": {"path": "b1.txt", "content": "1"}}], "usage": {"input_tokens": 10000, "output_tokens": 1000}},
  {"calls": [{"tool": "write_file", "input": {"path": "b2.txt", "content": "2"}}], "usage": {"input_tokens": 10000, "output_tokens": 1000}},
  {"calls": [{"tool": "write_file", "input": {"path": "b3.txt", "content": "3"}}], "usage": {"input_tokens": 10000, "output_tokens": 1000}},
  {"text": "done", "usage": {"input_tokens": 10000, "output_tokens": 1000}}
]}
JSON
expect_exit 1 run coder "${coder:0:8}" --task 'Spend' --model "script:$scripts/budget.json" --workspace "$work" \
    --autonomy L3 --budget-tokens 22500 && expect_err ''
sid=$(session_id)
expect_out "session $sid for agent ${coder:0:8}
→ write_file {\"content\":\"1\",\"path\":\"b1.txt\"}
← wrote 1 byte to b1.txt
→ write_file {\"content\":\"2\",\"path\":\"b2.txt\"}
← wrote 1 byte to b2.txt
session $sid: stopped: the token budget of 22500 tokens is spent (22000 used)"
[ ! -e "$work/b3.txt" ] && ok || fail "the third call was made past the budget"
expect_exit 0 sion-run show "$sid" --json && keep_events && tail -n 1 "$scratch/out" >"$scratch/last"
expect_text "$scratch/last" 'end event' "{\"event\":\"end\",\"session\":\"$sid\",\"state\":\"stopped\",\"why\":\"the token budget of 22500 tokens is spent (22000 used)\",\"calls\":2,\"tainted\":false,\"usage\":{\"input_tokens\":20000,\"output_tokens\":2000,\"cache_read_tokens\":0,\"cache_write_tokens\":0}}"
expect_exit 0 sion-run sessions "${coder:0:8}" && head -n 1 "$scratch/out" >"$scratch/first" &&
    expect_text "$scratch/first" sessions "$sid $(short_of "$coder") stopped 2 calls Spend"
# A budget too small for the first request: stopped before the model is asked.
expect_exit 1 run coder "${coder:0:8}" --task 'Spend' --model "script:$scripts/budget.json" --budget-tokens 10
sid=$(session_id)
expect_out "session $sid for agent ${coder:0:8}
session $sid: stopped: the token budget of 10 tokens is spent (0 used)"

# A script with no turn left: the run fails (69), saying which model and why.
echo '{"turns": [{"calls": [{"tool": "write_file", "input": {"path": "s.txt", "content": "s"}}]}]}' >"$scripts/short.json"
expect_exit 69 run coder "${coder:0:8}" --task 'Run out' --model "script:$scripts/short.json" --workspace "$work" --autonomy L3 &&
    expect_err ''
sid=$(session_id)
expect_out "session $sid for agent ${coder:0:8}
→ write_file {\"content\":\"s\",\"path\":\"s.txt\"}
← wrote 1 byte to s.txt
session $sid: failed: the model script:$scripts/short.json failed: script '$scripts/short.json' has no turn left (it has 1)"
expect_exit 0 sion-run show "$sid" && tail -n 1 "$scratch/out" >"$scratch/last" &&
    expect_text "$scratch/last" 'end line' "session $sid: failed: the model script:$scripts/short.json failed: script '$scripts/short.json' has no turn left (it has 1)"
expect_exit 0 sion-run sessions "${coder:0:8}" && head -n 1 "$scratch/out" >"$scratch/first" &&
    expect_text "$scratch/first" sessions "$sid $(short_of "$coder") failed 1 call Run out"

# A model that fails as an overloaded provider does (529): a notice, and the next model answers,
# for the rest of the run.
echo '{"turns": [{"fail": {"status": 529, "message": "Overloaded"}}, {"fail": {"status": 529, "message": "Overloaded"}}]}' >"$scripts/busy.json"
cat >"$scripts/spare.json" <<'JSON'
{"turns": [
  {"calls": [{"tool": "write_file", "input": {"path": "spare.txt", "content": "spare"}}]},
  {"text": "the spare model did it"}
]}
JSON
notice="the model script:$scripts/busy.json failed: HTTP 529: Overloaded; asking script:$scripts/spare.json"
expect_exit 0 run coder "${coder:0:8}" --task 'Fall back' --model "script:$scripts/busy.json" --model "script:$scripts/spare.json" \
    --workspace "$work" --autonomy L3 && expect_err ''
sid=$(session_id)
expect_out "session $sid for agent ${coder:0:8}
$notice
→ write_file {\"content\":\"spare\",\"path\":\"spare.txt\"}
← wrote 5 bytes to spare.txt
agent: the spare model did it
session $sid: done"
[ "$(cat "$work/spare.txt")" = spare ] && ok || fail "spare.txt was not written"
expect_exit 0 run coder "${coder:0:8}" --task 'Fall back' --model "script:$scripts/busy.json" --model "script:$scripts/spare.json" \
    --workspace "$work" --autonomy L3 --json && keep_events
expect_grep "^\\{\"event\":\"notice\",\"text\":\"$notice\"\\}\$" "$scratch/out"
# A request refused as malformed (400) or unauthorized (401) would be refused by any model: the
# run fails at once, the next model not asked.
for status in 400 401; do
    echo "{\"turns\": [{\"fail\": {\"status\": $status, \"message\": \"no such thing\"}}]}" >"$scripts/refused.json"
    expect_exit 69 run coder "${coder:0:8}" --task 'Refused' --model "script:$scripts/refused.json" --model "script:$scripts/spare.json"
    sid=$(session_id)
    expect_out "session $sid for agent ${coder:0:8}
session $sid: failed: the model script:$scripts/refused.json failed: HTTP $status: no such thing"
done
# Every model failing: the last one's failure ends the run.
expect_exit 69 run coder "${coder:0:8}" --task 'All busy' --model "script:$scripts/busy.json" --model "script:$scripts/busy.json"
sid=$(session_id)
expect_out "session $sid for agent ${coder:0:8}
the model script:$scripts/busy.json failed: HTTP 529: Overloaded; asking script:$scripts/busy.json
session $sid: failed: the model script:$scripts/busy.json failed: HTTP 529: Overloaded"

expect_exit 0 sqlite3 "$db" 'PRAGMA integrity_check' && expect_out ok

# Every event printed above passes schemas/run.event.json.
expect_exit 0 python3 "$SION_SOURCE_DIR/tests/e2e/check_run_events.py" "$SION_SOURCE_DIR/schemas" "$scratch"/events/*.jsonl &&
    expect_out ''

done_testing
