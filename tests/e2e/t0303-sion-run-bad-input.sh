#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# sion-run refusing what it is given: unknown options and commands, missing and extra operands
# (64); malformed values of --autonomy, --budget-tokens, --sandbox-timeout and --sandbox-memory,
# flags that need another (64); a script that is not JSON, has wrong types, is cut short, is not UTF-8 or is over
# 16 MiB (65); a script or session that is not there (66); a workspace or sandbox the sandbox
# refuses, as the seeds show it ("error: …", 1). Each is one line on stderr, nothing on stdout, and
# after each the store is as it was: the same sessions, the same transcript of a stored session, an
# intact database.
. "$(dirname "$0")/lib.sh"

need_bwrap
command -v python3 >/dev/null || skip "python3 is not installed"
command -v sqlite3 >/dev/null || skip "sqlite3 is not installed (Debian package sqlite3)"

mkdir -p "$scratch/work" "$scratch/s"
cd "$scratch" || exit 1
s=$(pwd -P)/s # scripts are named by their whole path in messages
db="$SION_HOME/sion.db"

# Two good sessions to keep: one with calls in a workspace and a shell, one with none.
cat >s/good.json <<'JSON'
{"turns": [
  {"calls": [{"tool": "write_file", "input": {"path": "a.txt", "content": "a\n"}}]},
  {"calls": [{"tool": "shell", "input": {"command": "cat a.txt"}}]},
  {"text": "done"}
]}
JSON
echo '{"turns": [{"text": "hello"}]}' >s/hello.json
expect_exit 0 sion-run create coder && agent=$(cut -c1-8 "$scratch/out")
expect_exit 0 sion-run run coder "$agent" --task 'Write a' --model script:$s/good.json --workspace work --shell --autonomy L3 </dev/null
good=$(sed -n '1s/^session \([0-9a-f]\{16\}\) .*/\1/p' "$scratch/out")
expect_exit 0 sion-run run coder "$agent" --task 'Say hello' --model script:$s/hello.json </dev/null
expect_exit 0 sion-run sessions && cp "$scratch/out" "$scratch/sessions.base"
expect_exit 0 sion-run show "$good" --json && cp "$scratch/out" "$scratch/show.base"
[ "$(wc -l <"$scratch/sessions.base")" -eq 2 ] && ok || fail "want 2 sessions to start with"

# unharmed: the sessions, the good one's events and the database are as they were.
unharmed() {
    sion-run sessions >"$scratch/now" 2>&1
    cmp -s "$scratch/now" "$scratch/sessions.base" && ok || {
        fail "the sessions changed after: $last"
        diff "$scratch/sessions.base" "$scratch/now" | sed 's/^/  /' >&2
    }
    sion-run show "$good" --json >"$scratch/now" 2>&1
    cmp -s "$scratch/now" "$scratch/show.base" && ok || fail "session $good changed after: $last"
    [ "$(sqlite3 "$db" 'PRAGMA integrity_check' 2>&1)" = ok ] && ok || fail "the database is damaged after: $last"
}
# bad CODE MESSAGE ARGS...: `sion-run ARGS` exits CODE with MESSAGE, one line, and nothing on stdout,
# and leaves the store unharmed.
bad() {
    local code=$1 message=$2
    shift 2
    last="sion-run $*"
    expect_exit "$code" timeout 60 sion-run "$@" </dev/null && expect_err "$message" && expect_out ''
    unharmed
}
run=(run coder "$agent" --task x)
m=--model=script:$s/hello.json

# Usage: 64.
bad 64 "sion-run: a command is needed: run, chat, create, list, sessions, show, credential, skills, setup or chatgpt (see --help)"
bad 64 "sion-run: unknown command 'frob': give run, chat, create, list, sessions, show, credential, skills, setup or chatgpt (see --help)" frob
bad 64 "sion-run: unknown option '--frob'" --frob
bad 64 "sion-run: option '--task' goes after the command: sion-run run|chat|create|list|sessions|show|credential|skills|setup|chatgpt" --task x run coder "$agent"
for command in "${run[*]}" 'create coder' list sessions "show $good"; do
    # shellcheck disable=SC2086 # the words of the command
    bad 64 "sion-run: unknown option '--frob'" $command --frob
done
bad 64 "sion-run: option '--json' takes no argument" "${run[@]}" "$m" --json=yes
bad 64 "sion-run: option '--task' needs an argument" run coder "$agent" "$m" --task
bad 64 "sion-run: give the task: --task TEXT" run coder "$agent" "$m"
bad 64 "sion-run: give the task: --task TEXT" run coder "$agent" "$m" --task ''
bad 64 "sion-run: give a profile and an agent: sion-run run PROFILE AGENT --task TEXT" run coder --task x "$m"
bad 64 "sion-run: give a profile and an agent: sion-run run PROFILE AGENT --task TEXT" run
bad 64 "sion-run: unexpected operand 'more'" "${run[@]}" "$m" more
bad 64 "sion-run: give a profile: sion-run create PROFILE" create
bad 64 "sion-run: unexpected operand 'more'" create coder more
bad 64 "sion-run: unexpected operand 'more'" list coder more
bad 64 "sion-run: unexpected operand 'more'" sessions "$agent" more
bad 64 "sion-run: give a session: sion-run show SESSION" show
bad 64 "sion-run: unexpected operand 'more'" show "$good" more
bad 64 "sion-run: invalid profile name 'Coder': use lowercase letters, digits, '-' and '_'" run Coder "$agent" --task x "$m"
bad 64 "sion-run: invalid profile name 'a b': use lowercase letters, digits, '-' and '_'" create 'a b'
bad 64 "sion-run: invalid agent 'xyz': give its id, its short form or a prefix of 4 hex digits" run coder xyz --task x "$m"
for level in L7 L-1 3 '' LL; do
    bad 64 "sion-run: unknown autonomy level '$level': give L0 to L6" "${run[@]}" "$m" --autonomy "$level"
done
bad 64 "sion-run: unknown autonomy level 'L9': give L0 to L6" create coder --autonomy L9
bad 64 "sion-run: option '--autonomy' needs an argument" "${run[@]}" "$m" --autonomy
for n in 0 -5 abc 1e3 12x '' 99999999999999999999; do
    bad 64 "sion-run: --budget-tokens takes a positive whole number, not '$n'" "${run[@]}" "$m" --budget-tokens "$n"
done
bad 64 "sion-run: --sandbox-timeout takes a positive whole number, not '0'" "${run[@]}" "$m" --workspace work --shell --sandbox-timeout 0
bad 64 "sion-run: --shell needs a workspace: add --workspace DIR" "${run[@]}" "$m" --shell
bad 64 "sion-run: --sandbox-network is for a shell: add --shell" "${run[@]}" "$m" --sandbox-network host
bad 64 "sion-run: --sandbox-network is for a shell: add --shell" "${run[@]}" "$m" --workspace work --sandbox-network host
bad 64 "sion-run: --sandbox-read is for a shell: add --shell" "${run[@]}" "$m" --workspace work --sandbox-read /usr
bad 64 "sion-run: --sandbox-timeout is for a shell: add --shell" "${run[@]}" "$m" --workspace work --sandbox-timeout 5
bad 64 "sion-run: option '--sandbox-memory': '8K' is too little: give 16M or more" "${run[@]}" "$m" --workspace work --shell --sandbox-memory 8K
bad 64 "sion-run: option '--sandbox-memory': 'lots' is not a size: give bytes, or a number with K, M or G" "${run[@]}" "$m" --workspace work --shell --sandbox-memory lots
bad 64 "sion-run: --sandbox-memory is for a shell: add --shell" "${run[@]}" "$m" --workspace work --sandbox-memory 1G
bad 64 "sion-run: no model: give --model, or create the agent with one" "${run[@]}"
bad 64 "sion-run: invalid model 'frob': give provider:model" "${run[@]}" --model frob
bad 64 "sion-run: invalid model 'script:': give provider:model" "${run[@]}" --model script:
bad 64 "sion-run: unknown model provider 'frob' in 'frob:x'" "${run[@]}" --model frob:x
bad 64 "sion-run: unknown model provider 'frob' in 'frob:x'" create coder --model frob:x
for id in '' zz 012 0123456789abcdef0 "$good/"; do
    bad 64 "sion-run: invalid session '$id': give its id or a prefix of 4 hex digits" "${run[@]}" "$m" --session "$id"
    bad 64 "sion-run: invalid session '$id': give its id or a prefix of 4 hex digits" show "$id"
done

# Scripts that are not scripts: 65, saying where. A missing one, or a directory: 66.
printf 'not json' >s/not-json.json
printf '{"turns": [{"text": "cut' >s/truncated.json
: >s/empty.json
printf '{"turns": [{"text": "caf\xe9"}]}' >s/latin1.json
printf '[]' >s/array.json
printf '{"turns": "many"}' >s/turns-string.json
printf '{"turns": [{"calls": "shell"}]}' >s/calls-string.json
printf '{"turns": [{"calls": [{"tool": "shell", "input": "ls"}]}]}' >s/input-string.json
printf '{"turns": [{"calls": [{"input": {}}]}]}' >s/no-tool.json
printf '{"turns": [{"text": 7}]}' >s/text-number.json
printf '{"turns": [{}]}' >s/empty-turn.json
printf '{"turns": [3]}' >s/turn-number.json
printf '{"turns": [{"text": "a", "usage": {"input_tokens": -1, "output_tokens": 1}}]}' >s/negative.json
printf '{"turns": [{"fail": {"status": 99, "message": "x"}}]}' >s/status.json
printf '{"turns": [{"fail": {"status": 529, "message": "x"}, "text": "a"}]}' >s/fail-text.json
# One byte over 16 MiB.
python3 -c 'import sys; h, t = "{\"turns\": [{\"text\": \"", "\"}]}"; sys.stdout.write(h + "a" * ((16 << 20) + 1 - len(h) - len(t)) + t)' >s/huge.json
[ "$(stat -c %s s/huge.json)" -eq $(((16 << 20) + 1)) ] && ok || fail "huge.json is not 16 MiB and a byte"
bad 65 "sion-run: script '$s/not-json.json': invalid JSON at byte 0" "${run[@]}" --model script:$s/not-json.json
bad 65 "sion-run: script '$s/truncated.json': invalid JSON at byte 24" "${run[@]}" --model script:$s/truncated.json
bad 65 "sion-run: script '$s/empty.json': invalid JSON at byte 0" "${run[@]}" --model script:$s/empty.json
bad 65 "sion-run: script '$s/latin1.json': invalid UTF-8 at byte 24" "${run[@]}" --model script:$s/latin1.json
bad 65 "sion-run: script '$s/array.json': the document is an array, not an object" "${run[@]}" --model script:$s/array.json
bad 65 "sion-run: script '$s/turns-string.json': member 'turns' is a string, not an array" "${run[@]}" --model script:$s/turns-string.json
bad 65 "sion-run: script '$s/calls-string.json': turn 1: member 'calls' is a string, not an array" "${run[@]}" --model script:$s/calls-string.json
bad 65 "sion-run: script '$s/input-string.json': turn 1: call 1: member 'input' is a string, not an object" "${run[@]}" --model script:$s/input-string.json
bad 65 "sion-run: script '$s/no-tool.json': turn 1: call 1: member 'tool' is missing" "${run[@]}" --model script:$s/no-tool.json
bad 65 "sion-run: script '$s/text-number.json': turn 1: member 'text' is a number, not a string" "${run[@]}" --model script:$s/text-number.json
bad 65 "sion-run: script '$s/empty-turn.json': turn 1 has neither text nor calls" "${run[@]}" --model script:$s/empty-turn.json
bad 65 "sion-run: script '$s/turn-number.json': turn 1 is a number, not an object" "${run[@]}" --model script:$s/turn-number.json
bad 65 "sion-run: script '$s/negative.json': turn 1: usage: member 'input_tokens' is -1, not a count of tokens" "${run[@]}" --model script:$s/negative.json
bad 65 "sion-run: script '$s/status.json': turn 1: fail: member 'status' is 99, not an HTTP status (100 to 599)" "${run[@]}" --model script:$s/status.json
bad 65 "sion-run: script '$s/fail-text.json': turn 1: member 'fail' cannot go with 'text'" "${run[@]}" --model script:$s/fail-text.json
bad 65 "sion-run: script '$s/huge.json': larger than 16 MiB" "${run[@]}" --model script:$s/huge.json
# The second model is checked too, before anything starts.
bad 65 "sion-run: script '$s/not-json.json': invalid JSON at byte 0" "${run[@]}" "$m" --model script:$s/not-json.json
bad 66 "sion-run: cannot read script '$s/none.json': No such file or directory" "${run[@]}" --model script:$s/none.json
bad 66 "sion-run: cannot read script '$s': Is a directory" "${run[@]}" --model "script:$s"
bad 66 "sion-run: cannot read script '$s/none.json': No such file or directory" create coder --model script:$s/none.json

# Agents and sessions that are not there: 66; of another profile or agent: 65.
bad 66 "sion-run: no agent '0000' in profile 'coder'" run coder 0000 --task x "$m"
bad 66 "sion-run: no agent '0000'" sessions 0000
short=$(sion-run list | cut -d' ' -f1)
bad 65 "sion-run: agent $short is of profile 'coder', not 'lead'" run lead "$agent" --task x "$m"
bad 66 "sion-run: no session '0123456789abcdef'" "${run[@]}" "$m" --session 0123456789abcdef
bad 66 "sion-run: no session '0123456789abcdef'" show 0123456789abcdef
bad 66 "sion-run: no session 'ffff'" show ffff
bad 66 "sion-run: no session 'FFFF'" show FFFF

# Workspaces and sandboxes refused before the session starts, as the seeds show: "error: …" and 1.
# (An unreadable workspace would need chmod 000, which does not stop root, who runs CI: a path that
# is a regular file, and one that is not there, are the workspaces that cannot be used here.)
echo file >"$scratch/plain"
bad 1 "error: cannot use the workspace 'plain': not a directory" "${run[@]}" "$m" --workspace plain
bad 1 "error: cannot use the workspace 'plain': not a directory" "${run[@]}" "$m" --workspace plain --shell
bad 1 "error: cannot use the workspace 'none': No such file or directory" "${run[@]}" "$m" --workspace none
bad 1 "error: cannot use the workspace 'none': No such file or directory" "${run[@]}" "$m" --workspace none --shell
bad 1 'error: the workspace ~/.sion/.. and ~/.sion (wallets, sessions, skills) overlap: give a workspace apart from it' \
    "${run[@]}" "$m" --workspace "$SION_HOME/.."
bad 1 'error: the workspace ~/.sion and ~/.sion (wallets, sessions, skills) overlap: give a workspace apart from it' \
    "${run[@]}" "$m" --workspace "$SION_HOME" --shell
bad 1 'error: the directory ~ given with --sandbox-read and ~/.sion (wallets, sessions, skills) overlap: give a directory apart from it' \
    "${run[@]}" "$m" --workspace work --shell --sandbox-read "$HOME"
bad 1 "error: cannot use the directory '$scratch/none': No such file or directory" \
    "${run[@]}" "$m" --workspace work --shell --sandbox-read "$scratch/none"
bad 1 'error: with bubblewrap the network is none, declared or host, not sion-egress' \
    "${run[@]}" "$m" --workspace work --shell --sandbox-network sion-egress
bad 1 'error: alpine:3.20 is not pinned by digest: give name@sha256:<64 hex digits>' \
    "${run[@]}" "$m" --workspace work --shell=docker:alpine:3.20

# A stored session given bad input to continue on: refused, and left as it was.
bad 65 "sion-run: script '$s/not-json.json': invalid JSON at byte 0" "${run[@]}" --session "$good" --model script:$s/not-json.json
bad 64 "sion-run: unknown autonomy level 'L7': give L0 to L6" "${run[@]}" "$m" --session "$good" --autonomy L7
bad 64 "sion-run: --budget-tokens takes a positive whole number, not '0'" "${run[@]}" "$m" --session "$good" --budget-tokens 0
bad 1 "error: cannot use the workspace 'none': No such file or directory" "${run[@]}" "$m" --session "$good" --workspace none
bad 1 'error: with bubblewrap the network is none, declared or host, not bogus' \
    "${run[@]}" "$m" --session "$good" --sandbox-network bogus
bad 64 "sion-run: --sandbox-network is for a shell: add --shell" run coder "$agent" --task x "$m" \
    --session "$(sed -n '1s/ .*//p' "$scratch/sessions.base")" --sandbox-network host
# --json changes nothing of that: the error is a line on stderr, and stdout stays empty.
bad 65 "sion-run: script '$s/not-json.json': invalid JSON at byte 0" "${run[@]}" --model script:$s/not-json.json --json
bad 1 "error: cannot use the workspace 'none': No such file or directory" "${run[@]}" "$m" --workspace none --json

# Text that is not UTF-8 cannot be kept in the session's JSON: a task, a workspace's or a script's
# path given so is refused (65) before anything is stored, so that sessions and show go on working.
mkdir -p "$scratch/$(printf 'w\xff')" && cp s/hello.json "s/$(printf 'h\xff').json"
for args in "--task $(printf 'caf\xe9') $m" "--task x --workspace $(printf 'w\xff') $m" "--task x --model script:$s/$(printf 'h\xff').json"; do
    last="sion-run run coder $agent $args"
    # shellcheck disable=SC2086 # the words of the arguments
    expect_exit 65 timeout 60 sion-run run coder "$agent" $args </dev/null && expect_out ''
    [ "$(wc -l <"$scratch/err")" -eq 1 ] && expect_grep '^sion-run: .*UTF-8' "$scratch/err"
    unharmed
    expect_exit 0 sion-run sessions
done

done_testing
