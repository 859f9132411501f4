#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# sion-run sessions --json: one JSON object a session, newest first, that passes
# schemas/run.sessions.json and carries what the text line shows (the id, the agent's whole id,
# the state as it is now, the calls as a number, the first task whole where the text cuts its first
# line); the text stays as it was; an empty list prints nothing; a malformed invocation with --json
# is still the one-line usage error (64), and an error prints no line.
. "$(dirname "$0")/lib.sh"
need_jsonschema
command -v sqlite3 >/dev/null || skip "sqlite3 is not installed (Debian package sqlite3)"
cd "$scratch" || exit 1

db="$SION_HOME/sion.db"
short_of() { printf '%s…%s' "${1:0:8}" "${1:60:4}"; }
echo '{"turns": [{"text": "hello"}]}' >"$scratch/hello.json"
sql() { expect_exit 0 sqlite3 "$db" "$1"; }

# No session yet (and no store): nothing, exit 0.
expect_exit 0 sion-run sessions --json && expect_out ''
expect_exit 0 sion-run create coder && coder=$(cat "$scratch/out")
expect_exit 0 sion-run create lead && lead=$(cat "$scratch/out")
expect_exit 0 sion-run sessions --json && expect_out ''
expect_exit 0 sion-run sessions "${lead:0:8}" --json && expect_out ''

# A session run to its end, the newest; older ones put in the store: failed with a call, stopped
# with two and a task of two lines, left running by a process that is gone (interrupted), and
# running in a process that runs.
expect_exit 0 timeout 120 setsid -w sion-run run coder "${coder:0:8}" --task 'Say hello' \
    --model "script:$scratch/hello.json" </dev/null
sid=$(sed -n '1s/^session \([0-9a-f]\{16\}\) for agent.*$/\1/p' "$scratch/out")
sleep 600 &
sleeper=$!
trap 'kill "$sleeper" 2>/dev/null; rm -rf "$scratch"' EXIT
owner="$sleeper:$(cut -d' ' -f22 "/proc/$sleeper/stat"):$(cat /proc/sys/kernel/random/boot_id)"
plant() { # ID AGENT STATE STARTED OWNER TASK-SQL
    sql "INSERT INTO sessions (id, agent, profile, task, state, owner, started) VALUES ('$1', '$2', 'coder', $6, '$3', '$5', $4)"
}
plant beef000000000001 "$coder" failed 4 '' "'Run out'"
plant beef000000000002 "$coder" stopped 3 '' "'Spend ' || char(9) || 'it all' || char(10) || 'then stop, says the second line'"
plant beef000000000003 "$lead" running 2 '999999:1:gone' "'Left behind'"
plant beef000000000004 "$lead" running 1 "$owner" "'Still at it'"
call() { # SESSION SEQ
    sql "INSERT INTO calls (session, seq, call_id, tool, input, state, result, started_ms, wall_ms) VALUES ('$1', $2, 'c$2', 'read_file', '{}', 'ok', 'x', 1, 1)"
}
call beef000000000001 1
call beef000000000002 1
call beef000000000002 2

# The text as it was (a tab is shown as it is; the second line is not).
tab=$'\t'
expect_exit 0 sion-run sessions && expect_out "$sid $(short_of "$coder") done 0 calls Say hello
beef000000000001 $(short_of "$coder") failed 1 call Run out
beef000000000002 $(short_of "$coder") stopped 2 calls Spend ${tab}it all
beef000000000003 $(short_of "$lead") interrupted 0 calls Left behind
beef000000000004 $(short_of "$lead") running 0 calls Still at it"
# The same sessions as JSON lines, in the same order.
expect_exit 0 sion-run sessions --json && expect_json_lines run.sessions.json 5 &&
    expect_out "{\"session\":\"$sid\",\"agent\":\"$coder\",\"state\":\"done\",\"calls\":0,\"task\":\"Say hello\"}
{\"session\":\"beef000000000001\",\"agent\":\"$coder\",\"state\":\"failed\",\"calls\":1,\"task\":\"Run out\"}
{\"session\":\"beef000000000002\",\"agent\":\"$coder\",\"state\":\"stopped\",\"calls\":2,\"task\":\"Spend \\tit all\\nthen stop, says the second line\"}
{\"session\":\"beef000000000003\",\"agent\":\"$lead\",\"state\":\"interrupted\",\"calls\":0,\"task\":\"Left behind\"}
{\"session\":\"beef000000000004\",\"agent\":\"$lead\",\"state\":\"running\",\"calls\":0,\"task\":\"Still at it\"}"
# The members, read as JSON: the task whole, with its tab and its second line.
python3 - "$scratch/out" "$sid" "$coder" "$lead" <<'PY' && ok || fail "the members of sessions --json"
import json, sys
lines = [json.loads(line) for line in open(sys.argv[1], encoding="utf-8")]
sid, coder, lead = sys.argv[2:5]
assert [l["session"] for l in lines] == [sid] + ["beef00000000000%d" % n for n in (1, 2, 3, 4)], lines
assert [l["agent"] for l in lines] == [coder, coder, coder, lead, lead], lines
assert [l["state"] for l in lines] == ["done", "failed", "stopped", "interrupted", "running"], lines
assert [l["calls"] for l in lines] == [0, 1, 2, 0, 0], lines
assert lines[2]["task"] == "Spend \tit all\nthen stop, says the second line", lines[2]
PY
# Of one agent; --json anywhere after the command word.
expect_exit 0 sion-run sessions --json "${lead:0:8}" && expect_json_lines run.sessions.json 2 &&
    expect_grep '^\{"session":"beef000000000003",' "$scratch/out"
expect_exit 0 sion-run sessions "$(short_of "$coder")" --json && expect_json_lines run.sessions.json 3

# Errors: the line on stderr, nothing on stdout.
none=$(printf '%064d' 0)
expect_exit 66 sion-run sessions "$none" --json && expect_err "sion-run: no agent '$none'" && expect_out ''
expect_exit 64 sion-run sessions xyz --json &&
    expect_err "sion-run: invalid agent 'xyz': give its id, its short form or a prefix of 4 hex digits" &&
    expect_out ''
expect_exit 64 sion-run sessions "${coder:0:8}" "${lead:0:8}" --json &&
    expect_err "sion-run: unexpected operand '${lead:0:8}'" && expect_out ''
expect_exit 64 sion-run sessions --json=1 && expect_err "sion-run: option '--json' takes no argument"

expect_exit 0 sion-run sessions --help && expect_grep '^usage: sion-run sessions \[AGENT\] \[--json\]$' "$scratch/out"

kill "$sleeper"
done_testing
