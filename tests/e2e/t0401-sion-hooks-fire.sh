#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# sion-hooks fire: real hooks around an event. A before-tool hook lets a call run with exit 0 and
# blocks it with exit 2 and its reason; one that crashes, hangs (killed at its timeout) or cannot
# start blocks it too; after-tool and run-start hooks add what they print, marked, in order, cut at
# 64 KiB; a hook that closes its stdin early is fine; patterns choose tool hooks; hooks run in the
# workspace with SION_HOOK_EVENT and SION_SESSION; failures go to hooks.log; a bad event runs nothing.
. "$(dirname "$0")/lib.sh"

hooks="$scratch/hooks"
work="$scratch/work"
mkdir -p "$hooks" "$work"
log="$SION_HOME/agents/hooks.log"
session=9c32eec224d6ee13

# hook NAME BODY: an executable /bin/sh script in $hooks.
hook() {
    printf '#!/bin/sh\n%s\n' "$2" >"$hooks/$1"
    chmod +x "$hooks/$1"
}

# fire EVENT JSON: sion-hooks fire EVENT with JSON on stdin (expect_exit's files hold what it said).
# fire EVENT JSON: the verdict without its "hooks", once they are checked (one for each hook run,
# each begun before it ended: their times change from run to run).
fire() {
    local event=$1 status
    shift
    printf '%s\n' "$1" | sion-hooks fire "$event" >"$scratch/verdict"
    status=$?
    python3 - "$scratch/verdict" <<'PY' || return 99
import json, sys
text = open(sys.argv[1]).read()
if text:
    v = json.loads(text)
    assert len(v["hooks"]) == v["ran"], v
    assert all(h["hook"] >= 1 and 0 < h["start_us"] <= h["end_us"] and h["start_us"] == int(h["start_us"])
               for h in v["hooks"]), v
PY
    sed -E 's/,"hooks":\[.*\]\}$/}/' "$scratch/verdict"
    return $status
}

before() { printf '{"event":"before-tool","session":"%s","tool":"%s","input":%s}' "$session" "$1" "$2"; }
after() {
    printf '{"event":"after-tool","session":"%s","tool":"%s","input":%s,"outcome":{"state":"ok","text":"done"}}' \
        "$session" "$1" "$2"
}

# No hooks file: the verdict of no hooks.
expect_exit 0 fire before-tool "$(before shell '{"command":"ls"}')" &&
    expect_out '{"event":"before-tool","allow":true,"ran":0,"failures":[]}'
expect_exit 0 fire run-start "{\"event\":\"run-start\",\"session\":\"$session\",\"said\":\"hi\"}" &&
    expect_out '{"event":"run-start","allow":true,"added":"","ran":0,"failures":[]}'
[ ! -e "$SION_HOME" ] && ok || fail "fire made $SION_HOME"

# The man page's guard: exit 2 and a reason on stderr.
hook guard.sh 'if grep -q "rm -rf"; then echo "no rm -rf here: remove files one by one" >&2; exit 2; fi'
sion-hooks add --event before-tool --tool shell -- "$hooks/guard.sh" >/dev/null
expect_exit 0 fire before-tool "$(before shell '{"command":"rm -rf /"}')" &&
    expect_out "{\"event\":\"before-tool\",\"allow\":false,\"reason\":\"no rm -rf here: remove files one by one\",\"hook\":1,\"command\":\"$hooks/guard.sh\",\"ran\":1,\"failures\":[]}"
expect_exit 0 fire before-tool "$(before shell '{"command":"ls"}')" &&
    expect_out '{"event":"before-tool","allow":true,"ran":1,"failures":[]}'
# Another tool is not the guard's.
expect_exit 0 fire before-tool "$(before read_file '{"path":"rm -rf"}')" &&
    expect_out '{"event":"before-tool","allow":true,"ran":0,"failures":[]}'
[ ! -e "$log" ] && ok || fail "a block was logged as a failure: $(cat "$log")"

# Exit 2 with the reason on stdout only; then with nothing at all.
hook stdout.sh 'cat >/dev/null; echo "not on a Friday"; exit 2'
hook mute.sh 'exit 2'
sion-hooks remove 1 >/dev/null
sion-hooks add --event before-tool -- "$hooks/stdout.sh" >/dev/null
expect_exit 0 fire before-tool "$(before write_file '{}')" &&
    expect_grep '"allow":false,"reason":"not on a Friday","hook":1,' "$scratch/out"
sion-hooks remove 1 >/dev/null
sion-hooks add --event before-tool -- "$hooks/mute.sh" --quiet >/dev/null
expect_exit 0 fire before-tool "$(before write_file '{}')" &&
    expect_grep "\"reason\":\"blocked by hook 1 \\($hooks/mute.sh --quiet\\)\"" "$scratch/out"
sion-hooks remove 1 >/dev/null

# A hook that crashes, exits 1, cannot start, or hangs: the call is blocked, and the log says why.
hook crash.sh 'kill -SEGV $$'
hook fail.sh 'echo "guard database is locked" >&2; exit 1'
hook hang.sh 'sleep 60'
for h in crash.sh fail.sh missing.sh; do
    sion-hooks add --event before-tool -- "$hooks/$h" >/dev/null 2>&1
    expect_exit 0 fire before-tool "$(before shell '{"command":"ls"}')"
    expect_grep '^\{"event":"before-tool","allow":false,' "$scratch/out"
    sion-hooks remove 1 >/dev/null
done
expect_grep "\"reason\":\"hook 1 \\($hooks/missing.sh\\) could not run \\(cannot run '$hooks/missing.sh': No such file or directory\\), which blocks the call\"" "$scratch/out"
sion-hooks add --event before-tool --timeout 1 -- "$hooks/hang.sh" >/dev/null
start=$(date +%s)
expect_exit 0 fire before-tool "$(before shell '{"command":"ls"}')" &&
    expect_out "{\"event\":\"before-tool\",\"allow\":false,\"reason\":\"hook 1 ($hooks/hang.sh) ran out of time (1 s) and was killed, which blocks the call\",\"hook\":1,\"command\":\"$hooks/hang.sh\",\"ran\":1,\"failures\":[\"hook 1 ($hooks/hang.sh) ran out of time (1 s) and was killed\"]}"
took=$(($(date +%s) - start))
[ "$took" -lt 10 ] && ok || fail "a hook with --timeout 1 was stopped after $took s"
sion-hooks remove 1 >/dev/null
expect_grep "^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}Z session $session before-tool: hook 1 \\($hooks/crash.sh\\) was killed by SIGSEGV \\(Segmentation fault\\)$" "$log"
expect_grep "Z session $session before-tool: hook 1 \\($hooks/fail.sh\\) exited with status 1: guard database is locked$" "$log"
expect_grep "Z session $session before-tool: hook 1 \\($hooks/hang.sh\\) ran out of time \\(1 s\\) and was killed$" "$log"
[ "$(wc -l <"$log")" -eq 4 ] && ok || fail "hooks.log has $(wc -l <"$log") lines, want 4"
[ "$(stat -c %a "$log")" = 600 ] && ok || fail "hooks.log has mode $(stat -c %a "$log")"

# Several hooks in order: the first to block is the last to run.
hook a.sh "echo a >> '$scratch/trace'"
hook b.sh "echo b >> '$scratch/trace'; echo 'b says no' >&2; exit 2"
hook c.sh "echo c >> '$scratch/trace'"
for h in a.sh b.sh c.sh; do sion-hooks add --event before-tool -- "$hooks/$h" >/dev/null; done
expect_exit 0 fire before-tool "$(before shell '{}')" &&
    expect_grep '"allow":false,"reason":"b says no","hook":2,.*"ran":2,' "$scratch/out"
expect_text "$scratch/trace" "the order hooks ran in" "a
b"
for _ in 1 2 3; do sion-hooks remove 1 >/dev/null; done

# after-tool: each hook's output added, marked, in order; failures logged, not added.
hook log-call.sh 'cat >/dev/null; echo "logged as #41"'
hook quiet.sh 'exit 0'
hook two.sh 'printf "two\nlines\n\n"'
hook broken.sh 'echo "would be added"; exit 3'
sion-hooks add --event after-tool --tool 'github_*' -- "$hooks/log-call.sh" >/dev/null
sion-hooks add --event after-tool -- "$hooks/quiet.sh" >/dev/null
sion-hooks add --event after-tool --tool 'github_*' --tool shell -- "$hooks/two.sh" 'my arg' >/dev/null
sion-hooks add --event after-tool -- "$hooks/broken.sh" >/dev/null
expect_exit 0 fire after-tool "$(after github_create_issue '{"title":"Flaky"}')" &&
    expect_out "{\"event\":\"after-tool\",\"allow\":true,\"added\":\"[hook 1: $hooks/log-call.sh] logged as #41\\n[hook 3: $hooks/two.sh 'my arg'] two\\nlines\",\"ran\":4,\"failures\":[\"hook 4 ($hooks/broken.sh) exited with status 3\"]}"
expect_exit 0 fire after-tool "$(after read_file '{"path":"a"}')" &&
    expect_out "{\"event\":\"after-tool\",\"allow\":true,\"added\":\"\",\"ran\":2,\"failures\":[\"hook 4 ($hooks/broken.sh) exited with status 3\"]}"
expect_grep "Z session $session after-tool: hook 4 \\($hooks/broken.sh\\) exited with status 3$" "$log"
for _ in 1 2 3 4; do sion-hooks remove 1 >/dev/null; done

# A hook that prints megabytes: 64 KiB kept, the rest read and dropped, and said.
hook big.sh 'head -c 5000000 /dev/zero | tr "\0" y'
sion-hooks add --event after-tool -- "$hooks/big.sh" >/dev/null
expect_exit 0 fire after-tool "$(after shell '{}')"
[ "$(wc -l <"$scratch/out")" -eq 1 ] && ok || fail "the verdict is not one line"
size=$(wc -c <"$scratch/out")
[ "$size" -gt 65536 ] && [ "$size" -lt 70000 ] && ok || fail "the verdict of a 5 MB hook is $size bytes"
ys=$(head -c 65536 /dev/zero | tr '\0' y)
[ "$(cat "$scratch/out")" = "{\"event\":\"after-tool\",\"allow\":true,\"added\":\"[hook 1: $hooks/big.sh] $ys\\n[... 4934464 more bytes cut]\",\"ran\":1,\"failures\":[]}" ] &&
    ok || fail "the verdict of a 5 MB hook is not its first 64 KiB and the line that says how much was cut"
sion-hooks remove 1 >/dev/null

# A hook that closes its stdin at once, while a 4 MiB event is written to it.
hook closer.sh 'exec 0<&-; sleep 0.2; echo fine'
sion-hooks add --event before-tool -- "$hooks/closer.sh" >/dev/null
content=$(head -c 4000000 /dev/zero | tr '\0' x)
expect_exit 0 fire before-tool "$(before write_file "{\"path\":\"big\",\"content\":\"$content\"}")" &&
    expect_out '{"event":"before-tool","allow":true,"ran":1,"failures":[]}'
unset content
sion-hooks remove 1 >/dev/null

# What a hook sees: the event on stdin, its environment, the workspace as its directory.
hook seen.sh "{ cat; echo; echo \"\$SION_HOOK_EVENT \$SION_SESSION\"; pwd; } > '$scratch/seen'"
sion-hooks add --event run-end -- "$hooks/seen.sh" >/dev/null
event="{\"event\":\"run-end\",\"session\":\"$session\",\"workspace\":\"$work\",\"ended\":{\"state\":\"stopped\",\"why\":\"the token budget is spent\"}}"
expect_exit 0 fire run-end "$event" && expect_out '{"event":"run-end","allow":true,"ran":1,"failures":[]}'
expect_text "$scratch/seen" "what the hook saw" "$event

run-end $session
$work"
sion-hooks remove 1 >/dev/null

# run-start: what hooks print is added; a bare name is found on PATH.
sion-hooks add --event run-start -- echo 'branch: main' >/dev/null
expect_exit 0 fire run-start "{\"event\":\"run-start\",\"session\":\"$session\",\"said\":\"Fix the parser\"}" &&
    expect_out '{"event":"run-start","allow":true,"added":"[hook 1: echo '"'"'branch: main'"'"'] branch: main","ran":1,"failures":[]}'
sion-hooks remove 1 >/dev/null

# A guard in the workspace is the agent's to rewrite: it is not run, and the call is blocked.
printf '#!/bin/sh\ntouch "%s/planted-ran"\n' "$scratch" >"$work/guard.sh" && chmod +x "$work/guard.sh"
sion-hooks add --event before-tool -- "$work/guard.sh" >/dev/null
expect_exit 0 fire before-tool "{\"event\":\"before-tool\",\"session\":\"$session\",\"workspace\":\"$work\",\"tool\":\"shell\",\"input\":{}}" &&
    expect_grep "\"allow\":false,\"reason\":\"hook 1 \\($work/guard.sh\\) could not run \\(its program '$work/guard.sh' is in the workspace '$work', which the agent can change\\), which blocks the call\"" "$scratch/out"
[ ! -e "$scratch/planted-ran" ] && ok || fail "a hook in the workspace ran"
sion-hooks remove 1 >/dev/null

# A bad event is bad input: exit 65, the reason, and no hook runs.
hook marker.sh "touch '$scratch/marker'"
sion-hooks add --event before-tool -- "$hooks/marker.sh" >/dev/null
sion-hooks add --event run-start -- "$hooks/marker.sh" >/dev/null
expect_exit 65 fire before-tool '{"event":"before-tool","session":"s","input":{}}' &&
    expect_err "sion-hooks: invalid event: member 'tool' is missing"
expect_exit 65 fire before-tool "$(after shell '{}')" &&
    expect_err "sion-hooks: invalid event: member 'event' is 'after-tool', but fire was given 'before-tool'"
# A member given twice: a guard reading the last would judge another command than the tool runs.
expect_exit 65 fire before-tool '{"event":"before-tool","session":"s","tool":"shell","input":{"command":"rm -rf /","command":"ls"}}' &&
    expect_err "sion-hooks: invalid event: invalid JSON: member 'input.command' is given twice"
expect_exit 65 fire run-start '{"event":"run-start","session":"s","said":' &&
    expect_err "sion-hooks: invalid event: invalid JSON at byte 43"
expect_exit 65 sion-hooks fire run-start </dev/null && expect_err "sion-hooks: invalid event: invalid JSON at byte 0"
expect_exit 64 fire before-call '{}' &&
    expect_err "sion-hooks: unknown event 'before-call' (give before-tool, after-tool, run-start or run-end)"
expect_exit 64 sion-hooks fire && expect_err "sion-hooks: give the event: sion-hooks fire before-tool|after-tool|run-start|run-end < EVENT.json"
head -c 17000000 /dev/zero | tr '\0' ' ' >"$scratch/huge.json"
expect_exit 65 sion-hooks fire run-start <"$scratch/huge.json" && expect_err "sion-hooks: invalid event: larger than 16777216 bytes"
[ ! -e "$scratch/marker" ] && ok || fail "a hook ran for a bad event"

done_testing
