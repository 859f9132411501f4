#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# sion-run killed with SIGKILL at random points of a session of file writes and shell commands:
# each time the database is intact, the session (if it was stored) shows as interrupted after the
# calls it finished, or as done, and --session continues it to done, every call left open answered
# as interrupted. In every other round the continuing run is killed as well, and continued again.
# No sandbox outlives the runs that were killed.
. "$(dirname "$0")/lib.sh"

need_bwrap
command -v python3 >/dev/null || skip "python3 is not installed"
python3 -c 'import jsonschema' 2>/dev/null || skip "python3-jsonschema is not installed"
command -v sqlite3 >/dev/null || skip "sqlite3 is not installed (Debian package sqlite3)"

rounds=${SION_KILL_ROUNDS:-40}
work="$scratch/work"
mkdir -p "$work" "$scratch/s" "$scratch/events"
kept=0
# keep_events: the last command's stdout, JSON events, kept to be checked against their schema.
keep_events() { cp "$scratch/out" "$scratch/events/$((++kept)).jsonl"; }
cd "$scratch" || exit 1
db="$SION_HOME/sion.db"

# Six writes, each followed by a shell command that reads what was written, then the end.
python3 - >s/long.json <<'PY'
import json
turns = []
for i in range(1, 7):
    turns.append({"calls": [{"tool": "write_file", "input": {"path": "k/f%d.txt" % i, "content": ("line %d\n" % i) * 200}}]})
    turns.append({"calls": [{"tool": "shell", "input": {"command": "wc -l < k/f%d.txt; sleep 0.02" % i}}]})
turns.append({"text": "all written"})
print(json.dumps({"turns": turns}))
PY
cat >s/finish.json <<'JSON'
{"turns": [
  {"calls": [{"tool": "write_file", "input": {"path": "k/end.txt", "content": "end\n"}}]},
  {"text": "finished"}
]}
JSON

expect_exit 0 sion-run create coder && agent=$(cut -c1-8 "$scratch/out")
started=$(date +%s%N)
expect_exit 0 sion-run run coder "$agent" --task 'Uninterrupted' --model script:s/long.json --workspace work --shell --autonomy L3 </dev/null
# Kills fall anywhere in a run's life at this machine's present pace: up to the uninterrupted run's
# time, and at least 300 ms (a loaded machine starts runs late; a fixed 300 ms once killed every
# run of 40 before its session was stored).
span=$((($(date +%s%N) - started) / 1000000))
[ "$span" -ge 300 ] || span=300
expect_grep '^session [0-9a-f]{16}: done$' "$scratch/out"
[ "$(grep -c '^→ ' "$scratch/out")" -eq 12 ] && ok || fail "the uninterrupted session did not make its 12 calls"

q() { sqlite3 "$db" "$1" 2>&1; }
intact() { [ "$(q 'PRAGMA integrity_check')" = ok ] && ok || fail "round $r ($1): integrity_check says $(q 'PRAGMA integrity_check' | head -n 3)"; }
# killed ARGS...: starts sion-run run ARGS in the background, kills it after 0 to $span ms, and
# waits for it; its status is in $status, its output in $scratch/run.out.
killed() {
    sion-run run coder "$agent" "$@" </dev/null >"$scratch/run.out" 2>"$scratch/run.err" &
    local pid=$!
    local ms=$(((RANDOM * 32768 + RANDOM) % span))
    sleep "$((ms / 1000)).$(printf '%03d' $((ms % 1000)))"
    kill -9 "$pid" 2>/dev/null
    { wait "$pid"; } 2>/dev/null # without the shell's "Killed" line
    status=$?
}
# after_kill SID WHAT: how show tells the session after a run of it was killed.
after_kill() {
    local sid=$1 what=$2 calls open
    expect_exit 0 sion-run show "$sid" --json && keep_events
    expect_exit 0 sion-run show "$sid" || return
    calls=$(q "SELECT count(*) FROM calls WHERE session = '$sid'")
    open=$(q "SELECT count(*) FROM calls WHERE session = '$sid' AND state = 'running'")
    tail -n 1 "$scratch/out" >"$scratch/end"
    if [ "$status" -eq 0 ]; then
        expect_text "$scratch/end" "round $r ($what): end line of a run that ended" "session $sid: done"
        finished=$((finished + 1))
    elif grep -q ': done$' "$scratch/end"; then
        ok
        ends=$((ends + 1))
    else
        expect_text "$scratch/end" "round $r ($what): end line" \
            "session $sid: interrupted: it stopped after $calls call$([ "$calls" = 1 ] || echo s)"
        interrupted=$((interrupted + 1))
    fi
    # sessions says the same, with the calls made.
    local state=interrupted
    grep -q ': done$' "$scratch/end" && state='done'
    sion-run sessions "$agent" 2>&1 | grep "^$sid " | cut -d' ' -f3-5 >"$scratch/line"
    expect_text "$scratch/line" "round $r ($what): sessions" "$state $calls call$([ "$calls" = 1 ] || echo s)"
    # At most the one call in flight was left open, and show says so.
    [ "$open" -le 1 ] && ok || fail "round $r ($what): $open calls left running"
    [ "$(grep -c '^✗ no answer: the session stopped during this call$' "$scratch/out")" -eq "$open" ] &&
        ok || fail "round $r ($what): show does not tell the $open open calls"
}
# continued SID: the session continued to done, every call answered.
continued() {
    local sid=$1
    expect_exit 0 timeout 120 sion-run run coder "$agent" --task 'Finish' --session "$sid" --model script:s/finish.json </dev/null ||
        return
    head -n 1 "$scratch/out" >"$scratch/first"
    expect_text "$scratch/first" "round $r: first line" "session $sid for agent $agent, continued"
    tail -n 1 "$scratch/out" >"$scratch/end"
    expect_text "$scratch/end" "round $r: end line" "session $sid: done"
    [ "$(cat "$work/k/end.txt" 2>&1)" = end ] && ok || fail "round $r: the continued run did not write k/end.txt"
    rm -f "$work/k/end.txt"
    [ "$(q "SELECT count(*) FROM calls WHERE session = '$sid' AND state = 'running'")" = 0 ] && ok ||
        fail "round $r: calls of $sid are still running"
    [ "$(q "SELECT count(*) FROM calls WHERE session = '$sid' AND state = 'interrupted' AND result != 'the session stopped before this call was answered: it may have taken effect'")" = 0 ] &&
        ok || fail "round $r: an interrupted call of $sid is answered otherwise"
    # Every call the model asked for has its answer in the conversation.
    local asked answered
    asked=$(q "SELECT count(*) FROM messages, json_each(messages.content, '\$.calls') WHERE session = '$sid'")
    answered=$(q "SELECT count(*) FROM messages WHERE session = '$sid' AND json_extract(content, '\$.role') = 'tool'")
    [ "$asked" = "$answered" ] && ok || fail "round $r: $sid asked for $asked calls and has $answered answers"
    expect_exit 0 sion-run show "$sid" --json || return
    keep_events
    [ "$(grep -c '^{"event":"call",' "$scratch/out")" = "$(grep -c '^{"event":"result",' "$scratch/out")" ] &&
        ok || fail "round $r: show --json of $sid has a call without its result"
    expect_grep "^\\{\"event\":\"end\",\"session\":\"$sid\",\"state\":\"done\"," "$scratch/out"
}

before=0 interrupted=0 ends=0 finished=0
for r in $(seq "$rounds"); do
    killed --task "Kill round $r" --model script:s/long.json --workspace work --shell --autonomy L3
    [ "$status" -eq 137 ] || [ "$status" -eq 0 ] && ok || fail "round $r: the run exited $status: $(head -n 3 "$scratch/run.err")"
    intact 'killed'
    expect_exit 0 sion-run sessions || continue
    sid=$(grep " Kill round $r\$" "$scratch/out" | cut -d' ' -f1)
    if [ -z "$sid" ]; then
        # Killed before the session was stored: nothing of it is there, not even its line.
        [ ! -s "$scratch/run.out" ] && ok || fail "round $r: the run printed $(head -n 1 "$scratch/run.out") of a session not stored"
        before=$((before + 1))
        continue
    fi
    after_kill "$sid" 'killed'
    if [ $((r % 2)) -eq 0 ]; then
        # The continuing run killed too, then continued again.
        killed --task "Once more $r" --session "$sid" --model script:s/long.json
        [ "$status" -eq 137 ] || [ "$status" -eq 0 ] && ok || fail "round $r: the second run exited $status: $(head -n 3 "$scratch/run.err")"
        intact 'killed again'
        after_kill "$sid" 'killed again'
    fi
    continued "$sid"
    intact 'continued'
done
printf 'rounds: %d; runs killed before the session was stored: %d, shown interrupted: %d, killed once done: %d, done before the kill: %d\n' \
    "$rounds" "$before" "$interrupted" "$ends" "$finished"

# No sandbox of a killed run is left: each ends once its input closes.
alive() {
    local p n=0
    for p in /proc/[0-9]*; do
        tr '\0' ' ' <"$p/cmdline" 2>/dev/null | grep -qF -- "--workspace $work " && n=$((n + 1))
    done
    echo "$n"
}
for _ in $(seq 50); do
    [ "$(alive)" -eq 0 ] && break
    sleep 0.2
done
[ "$(alive)" -eq 0 ] && ok || fail "$(alive) sandboxes of killed runs are still running"
expect_exit 0 sqlite3 "$db" 'PRAGMA integrity_check' && expect_out ok

# The issue's case: sion-run killed during `shell "sleep 91 & sleep 92"`, at 30 random points. Each
# time the sandbox and both sleeps end with it (sion-sandbox serve is told by its parent's death,
# and ends what runs: SIGTERM, then SIGKILL), within the second and a half waited here.
sleeper="$scratch/sleeper"
mkdir -p "$sleeper"
left_after_kill=0
for round in $(seq 30); do
    a="91.$round$RANDOM" b="92.$round$RANDOM"
    printf '{"turns": [{"calls": [{"tool": "shell", "input": {"command": "sleep %s & sleep %s"}}]}, {"text": "slept"}]}\n' \
        "$a" "$b" >s/sleep.json
    sion-run run coder "$agent" --task "Sleep." --model script:s/sleep.json --workspace "$sleeper" \
        --shell --autonomy L3 </dev/null >/dev/null 2>&1 &
    run=$!
    sleep "0.$((RANDOM % 10))$((RANDOM % 10))"
    kill -9 "$run" 2>/dev/null
    wait "$run" 2>/dev/null
    sleeps() { pgrep -f -- "^sleep (${a/./\\.}|${b/./\\.})\$" | wc -l; }
    serves() { pgrep -f -- "sion-sandbox serve .*--workspace $sleeper( |\$)" | wc -l; }
    for _ in $(seq 15); do
        [ "$(sleeps)" -eq 0 ] && [ "$(serves)" -eq 0 ] && break
        sleep 0.1
    done
    if [ "$(sleeps)" -ne 0 ] || [ "$(serves)" -ne 0 ]; then
        left_after_kill=$((left_after_kill + 1))
        pkill -9 -f -- "^sleep (${a/./\\.}|${b/./\\.})\$"
        pkill -9 -f -- "sion-sandbox serve .*--workspace $sleeper( |\$)"
    fi
done
[ "$left_after_kill" -eq 0 ] && ok ||
    fail "in $left_after_kill of 30 rounds a sleep or the sandbox outlived the killed sion-run by 1.5 s"

# Every event printed above passes schemas/run.event.json.
expect_exit 0 python3 "$SION_SOURCE_DIR/tests/e2e/check_run_events.py" "$SION_SOURCE_DIR/schemas" "$scratch"/events/*.jsonl &&
    expect_out ''

done_testing
