#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# sion-hooks and its schemas agree where they meet: every event of tests/fixtures/hooks-event/ is
# fired (exit 0) and every one of hooks-event-invalid/ refused (exit 65); what each hook read passes
# schemas/hooks-event.schema.json, every verdict printed (allowed, blocked, added to, failed) passes
# schemas/hooks-verdict.schema.json, and the hooks file add writes passes schemas/hooks.schema.json.
. "$(dirname "$0")/lib.sh"

py=/usr/bin/python3
[ -x "$py" ] || skip "$py is missing (Debian package python3)"
"$py" -c 'import jsonschema; jsonschema.Draft202012Validator' 2>/dev/null ||
    skip "$py cannot import jsonschema with draft 2020-12 (Debian package python3-jsonschema)"
fixtures="$SION_SOURCE_DIR/tests/fixtures"

# valid SCHEMA FILE: every line of FILE passes schemas/SCHEMA.
valid() {
    "$py" - "$SION_SOURCE_DIR/schemas/$1" "$2" <<'PY'
import json, sys, jsonschema
schema = json.load(open(sys.argv[1]))
validator = jsonschema.Draft202012Validator(schema)
bad = 0
for number, line in enumerate(open(sys.argv[2], encoding="utf-8"), start=1):
    for error in validator.iter_errors(json.loads(line)):
        print(f"{sys.argv[2]}:{number}: {error.message}")
        bad += 1
sys.exit(1 if bad else 0)
PY
}

mkdir -p "$scratch/hooks"
seen="$scratch/seen.jsonl"
verdicts="$scratch/verdicts.jsonl"
: >"$verdicts"
printf '#!/bin/sh\ncat >> "%s"; echo "read it"\n' "$seen" >"$scratch/hooks/read.sh"
printf '#!/bin/sh\necho "no" >&2; exit 2\n' >"$scratch/hooks/block.sh"
printf '#!/bin/sh\nexit 1\n' >"$scratch/hooks/fail.sh"
printf '#!/bin/sh\nsleep 30\n' >"$scratch/hooks/hang.sh"
chmod +x "$scratch/hooks/"*.sh

# No hooks: each kind of verdict of none.
for f in "$fixtures"/hooks-event/*.json; do
    event=$(sed -n 's/.*"event": *"\([a-z-]*\)".*/\1/p' "$f" | head -n 1)
    expect_exit 0 sion-hooks fire "$event" <"$f" && cat "$scratch/out" >>"$verdicts"
done

# A hook for every event that reads the event; fire each fixture.
for e in before-tool after-tool run-start run-end; do
    sion-hooks add --event "$e" -- "$scratch/hooks/read.sh" >/dev/null
done
sion-hooks add --event after-tool --tool 'github_*' -- "$scratch/hooks/fail.sh" >/dev/null
sion-hooks add --event run-end -- "$scratch/hooks/fail.sh" >/dev/null
# (The workspace of a fixture that names one, /home/me/work, is not here: its hooks cannot start.)
n=0
for f in "$fixtures"/hooks-event/*.json; do
    event=$(sed -n 's/.*"event": *"\([a-z-]*\)".*/\1/p' "$f" | head -n 1)
    expect_exit 0 sion-hooks fire "$event" <"$f" && cat "$scratch/out" >>"$verdicts"
    if grep -q '"workspace"' "$f"; then
        expect_grep "could not run \\(cannot change directory to '/home/me/work': No such file or directory\\)" "$scratch/out"
    else
        n=$((n + 1))
    fi
done
[ "$n" -ge 4 ] && ok || fail "too few event fixtures without a workspace in $fixtures/hooks-event"
[ "$(wc -l <"$seen")" -eq "$n" ] && ok || fail "the hooks read $(wc -l <"$seen") events, want $n"
valid hooks-event.schema.json "$seen" && ok || fail "what the hooks read fails hooks-event.schema.json"

# Each invalid event is refused, and runs nothing.
: >"$seen"
for f in "$fixtures"/hooks-event-invalid/*.json; do
    event=$(sed -n 's/.*"event": *"\(before-tool\|after-tool\|run-start\|run-end\)".*/\1/p' "$f" | head -n 1)
    expect_exit 65 sion-hooks fire "${event:-before-tool}" <"$f" || echo "  in: $f" >&2
done
[ ! -s "$seen" ] && ok || fail "a hook ran for an invalid event"

# Blocked, timed out, failed: their verdicts too.
sion-hooks add --event before-tool --tool shell -- "$scratch/hooks/block.sh" >/dev/null
sion-hooks add --event before-tool --tool hang --timeout 1 -- "$scratch/hooks/hang.sh" >/dev/null
for tool in shell hang read_file; do
    printf '{"event":"before-tool","session":"s","tool":"%s","input":{}}\n' "$tool" >"$scratch/event"
    expect_exit 0 sion-hooks fire before-tool <"$scratch/event" && cat "$scratch/out" >>"$verdicts"
done
grep -q '"allow":false,"reason":"no"' "$verdicts" && ok || fail "no blocked verdict was made"
grep -q 'ran out of time' "$verdicts" && ok || fail "no timed-out verdict was made"
grep -q '"failures":\["hook 5 ' "$verdicts" && ok || fail "no verdict with a failure was made"
grep -q '"added":"\[hook 2: ' "$verdicts" && ok || fail "no verdict with an addition was made"
valid hooks-verdict.schema.json "$verdicts" && ok || fail "a verdict fails hooks-verdict.schema.json"

# The file add wrote.
tr -d '\n' <"$SION_HOME/agents/hooks.json" >"$scratch/hooks.jsonl" && echo >>"$scratch/hooks.jsonl"
valid hooks.schema.json "$scratch/hooks.jsonl" && ok || fail "the hooks file fails hooks.schema.json"

done_testing
