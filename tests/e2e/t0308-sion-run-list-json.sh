#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# sion-run list --json: one JSON object an agent, oldest first, that passes schemas/run.list.json
# and carries what the text line shows (the whole id, the profile, its level and models); the text
# stays as it was; an empty list prints nothing; a malformed invocation with --json is still the
# one-line usage error (64), and an error prints no line.
. "$(dirname "$0")/lib.sh"
need_jsonschema
cd "$scratch" || exit 1

short_of() { printf '%s…%s' "${1:0:8}" "${1:60:4}"; }
echo '{"turns": [{"text": "hello"}]}' >"$scratch/hello.json"

# No agent yet: nothing, exit 0; of a profile, or every one.
expect_exit 0 sion-run list --json && expect_out ''
expect_exit 0 sion-run list && expect_out ''

expect_exit 0 sion-run create coder && coder=$(cat "$scratch/out")
expect_exit 0 sion-run create lead --model "script:$scratch/hello.json" --model openai:gpt-5 --autonomy L4 &&
    lead=$(cat "$scratch/out")
expect_exit 0 sion-run create coder --autonomy L6 && coder2=$(cat "$scratch/out")

# The text as it was, and the same agents as JSON, in the same order.
expect_exit 0 sion-run list && expect_out "$(short_of "$coder") coder L6
$(short_of "$lead") lead L4 script:$scratch/hello.json openai:gpt-5
$(short_of "$coder2") coder L6"
expect_exit 0 sion-run list --json && expect_json_lines run.list.json 3 &&
    expect_out "{\"agent\":\"$coder\",\"profile\":\"coder\",\"autonomy\":\"L6\",\"models\":[]}
{\"agent\":\"$lead\",\"profile\":\"lead\",\"autonomy\":\"L4\",\"models\":[\"script:$scratch/hello.json\",\"openai:gpt-5\"]}
{\"agent\":\"$coder2\",\"profile\":\"coder\",\"autonomy\":\"L6\",\"models\":[]}"
# The members, read as JSON: the whole id of each, its profile, its level, its models as an array.
python3 - "$scratch/out" "$coder" "$lead" "$coder2" "$scratch/hello.json" <<'PY' && ok || fail "the members of list --json"
import json, sys
lines = [json.loads(line) for line in open(sys.argv[1], encoding="utf-8")]
coder, lead, coder2, hello = sys.argv[2:6]
assert [l["agent"] for l in lines] == [coder, lead, coder2], lines
assert [l["profile"] for l in lines] == ["coder", "lead", "coder"], lines
assert [l["autonomy"] for l in lines] == ["L6", "L4", "L6"], lines
assert lines[1]["models"] == ["script:" + hello, "openai:gpt-5"], lines
assert lines[0]["models"] == [] and lines[2]["models"] == [], lines
PY
# Of one profile; --json anywhere after the command word.
expect_exit 0 sion-run list lead --json && expect_json_lines run.list.json 1 &&
    expect_grep "^\\{\"agent\":\"$lead\"," "$scratch/out"
expect_exit 0 sion-run list --json coder && expect_json_lines run.list.json 2 &&
    expect_grep "^\\{\"agent\":\"$coder2\",\"profile\":\"coder\"," "$scratch/out"

# Errors: the line on stderr, nothing on stdout.
expect_exit 66 sion-run list nobody --json && expect_err "sion-run: no profile 'nobody'" && expect_out ''
expect_exit 64 sion-run list coder lead --json && expect_err "sion-run: unexpected operand 'lead'" &&
    expect_out ''
expect_exit 64 sion-run list --json=yes && expect_err "sion-run: option '--json' takes no argument"
expect_exit 64 sion-run list --jsn && expect_err "sion-run: unknown option '--jsn'"
expect_exit 64 sion-run list Coder --json &&
    expect_err "sion-run: invalid profile name 'Coder': use lowercase letters, digits, '-' and '_'"
expect_exit 64 sion-run --json list &&
    expect_err "sion-run: option '--json' goes after the command: sion-run run|chat|create|list|sessions|show|credential|skills|setup|chatgpt"

# --help names the option, as the man page does.
expect_exit 0 sion-run list --help && expect_grep '^usage: sion-run list \[PROFILE\] \[--json\]$' "$scratch/out" &&
    expect_grep '^ +--json +print one JSON object a line instead of text$' "$scratch/out"
expect_exit 0 sion-run --help && expect_grep '^ +sion-run list \[PROFILE\] \[--json\]$' "$scratch/out"

done_testing
