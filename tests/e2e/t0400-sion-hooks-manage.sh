#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# sion-hooks add, list and remove: the seed's examples through the front door, the file they write,
# the lines list prints, and each bad command line refused with its message, the file unchanged.
. "$(dirname "$0")/lib.sh"

hooks_file="$SION_HOME/agents/hooks.json"

# No hooks yet: list prints nothing, and nothing is made.
expect_exit 0 sion-hooks list && expect_out ""
[ ! -e "$SION_HOME" ] && ok || fail "list made $SION_HOME"

# The seed's examples, through the front door.
expect_exit 0 sion agent hooks add --event before-tool --tool shell -- /home/me/guard.sh &&
    expect_out "added hook 1 before-tool shell: /home/me/guard.sh"
expect_err "sion-hooks: note: cannot run '/home/me/guard.sh' now: No such file or directory; until it can, the hook fails and blocks the calls it is for"
expect_exit 0 sion agent hooks add --event after-tool --tool 'github_*' -- /home/me/log-call.sh &&
    expect_out "added hook 2 after-tool github_*: /home/me/log-call.sh"
expect_err "sion-hooks: note: cannot run '/home/me/log-call.sh' now: No such file or directory; until it can, the hook fails"
expect_exit 0 sion agent hooks list && expect_out "1 before-tool shell: /home/me/guard.sh
2 after-tool github_*: /home/me/log-call.sh"
# The file is the seed's fixture, byte for byte, mode 0600 in a directory of mode 0700.
cmp -s "$hooks_file" "$SION_SOURCE_DIR/tests/fixtures/hooks/seed.json" && ok ||
    fail "hooks.json is not tests/fixtures/hooks/seed.json: $(cat "$hooks_file")"
[ "$(stat -c %a "$hooks_file")" = 600 ] && ok || fail "hooks.json has mode $(stat -c %a "$hooks_file")"
[ "$(stat -c %a "$SION_HOME/agents")" = 700 ] && ok || fail "agents/ has mode $(stat -c %a "$SION_HOME/agents")"
[ "$(stat -c %a "$SION_HOME")" = 700 ] && ok || fail "SION_HOME has mode $(stat -c %a "$SION_HOME")"
expect_exit 0 sion agent hooks remove 2 && expect_out "removed hook 2 after-tool github_*: /home/me/log-call.sh"
expect_exit 0 sion agent hooks list && expect_out "1 before-tool shell: /home/me/guard.sh"

# More: options end at the command, patterns, timeouts, quoting, bare names, every event.
mkdir -p "$scratch/bin" && printf '#!/bin/sh\nexit 0\n' >"$scratch/bin/ok.sh" && chmod +x "$scratch/bin/ok.sh"
expect_exit 0 sion-hooks add --event run-end --timeout 5 logger -t sion 'run ended' &&
    expect_out "added hook 2 run-end (timeout 5 s): logger -t sion 'run ended'" && expect_err ""
expect_exit 0 sion-hooks add --event after-tool --tool 'read_*' --tool write_file "$scratch/bin/ok.sh" -v &&
    expect_out "added hook 3 after-tool read_* write_file: $scratch/bin/ok.sh -v" && expect_err ""
expect_exit 0 sion-hooks add --event before-tool -- -dash &&
    expect_out "added hook 4 before-tool *: -dash"
expect_err "sion-hooks: note: '-dash' is not on PATH now; until it is, the hook fails and blocks the calls it is for"
# A relative path is made absolute against the current directory, by name.
cd "$scratch/bin" || exit 1
expect_exit 0 sion-hooks add --event run-start -- ./ok.sh "it's" &&
    expect_out "added hook 5 run-start: $scratch/bin/ok.sh 'it'\\''s'"
expect_exit 0 sion-hooks add --event run-start -- ../bin/./ok.sh &&
    expect_out "added hook 6 run-start: $scratch/bin/ok.sh"
cd "$scratch" || exit 1
expect_exit 0 sion-hooks list && expect_out "1 before-tool shell: /home/me/guard.sh
2 run-end (timeout 5 s): logger -t sion 'run ended'
3 after-tool read_* write_file: $scratch/bin/ok.sh -v
4 before-tool *: -dash
5 run-start: $scratch/bin/ok.sh 'it'\\''s'
6 run-start: $scratch/bin/ok.sh"
expect_exit 0 sion-hooks remove 6 && expect_exit 0 sion-hooks remove 4 && expect_exit 0 sion-hooks remove 1 &&
    expect_out "removed hook 1 before-tool shell: /home/me/guard.sh"
expect_exit 0 sion-hooks list && expect_out "1 run-end (timeout 5 s): logger -t sion 'run ended'
2 after-tool read_* write_file: $scratch/bin/ok.sh -v
3 run-start: $scratch/bin/ok.sh 'it'\\''s'"

# Bad command lines: exit 64, the message, the file as it was.
cp "$hooks_file" "$scratch/before.json"
refused() { # refused MESSAGE ARGS...: sion-hooks ARGS exits 64 with MESSAGE and changes nothing
    local want=$1
    shift
    expect_exit 64 sion-hooks "$@" && expect_err "sion-hooks: $want"
    cmp -s "$hooks_file" "$scratch/before.json" && ok || fail "sion-hooks $* changed hooks.json"
}
refused "unknown event 'before-tol' (give before-tool, after-tool, run-start or run-end)" add --event before-tol -- /x
refused "give the event: --event before-tool|after-tool|run-start|run-end" add -- /x
refused "--tool is for before-tool and after-tool hooks, not run-start" add --event run-start --tool shell -- /x
refused "--tool is for before-tool and after-tool hooks, not run-end" add --event run-end --tool '*' -- /x
refused "give the hook's command: sion-hooks add --event EVENT [--] COMMAND [ARGS...]" add --event before-tool
refused "give the hook's command: sion-hooks add --event EVENT [--] COMMAND [ARGS...]" add --event before-tool --
refused "the hook's command is empty" add --event before-tool -- ''
refused "invalid pattern 'read file': it has a space" add --event before-tool --tool 'read file' -- /x
refused "invalid pattern 'a,b': it has a ',' (give --tool once for each pattern)" add --event before-tool --tool a,b -- /x
refused "invalid pattern '': it is empty" add --event before-tool --tool '' -- /x
refused "invalid --timeout '0': give 1 to 3600 seconds" add --event before-tool --timeout 0 -- /x
refused "invalid --timeout '3601': give 1 to 3600 seconds" add --event before-tool --timeout 3601 -- /x
refused "invalid --timeout '1.5': give 1 to 3600 seconds" add --event before-tool --timeout 1.5 -- /x
refused "invalid --timeout '+5': give 1 to 3600 seconds" add --event before-tool --timeout +5 -- /x
refused "invalid --timeout ' 5': give 1 to 3600 seconds" add --event before-tool --timeout ' 5' -- /x
refused "option '--event' needs an argument" add --event
refused "unknown option '--frob'" add --frob --event run-end -- /x
refused "give the hook's number: sion-hooks remove N" remove
refused "invalid hook number 'two': give the number list shows (1, 2, ...)" remove two
refused "invalid hook number '0': give the number list shows (1, 2, ...)" remove 0
refused "invalid hook number '-1': give the number list shows (1, 2, ...)" remove -- -1
refused "invalid hook number '01': give the number list shows (1, 2, ...)" remove 01
refused "unexpected operand '2'" remove 1 2
refused "unexpected operand 'x'" list x
refused "unknown option '--event'" --event run-end add -- /x
refused "a command is needed: add, list, remove, fire or check (see --help)"
refused "unknown command 'frob': give add, list, remove, fire or check (see --help)" frob
# A number that is no hook's is a plain no.
expect_exit 1 sion-hooks remove 4 && expect_err "sion-hooks: no hook 4: there are 3 (sion-hooks list)"
cmp -s "$hooks_file" "$scratch/before.json" && ok || fail "remove 4 changed hooks.json"
expect_exit 0 sion-hooks remove 1 && expect_exit 0 sion-hooks remove 1 && expect_exit 0 sion-hooks remove 1
expect_exit 1 sion-hooks remove 1 && expect_err "sion-hooks: no hook 1: there are no hooks"
expect_exit 0 sion-hooks list && expect_out ""

# Two adds at once both land.
for i in 1 2 3 4 5 6 7 8; do
    sion-hooks add --event run-end -- "/bin/echo" "$i" >/dev/null 2>&1 &
done
wait
expect_exit 0 sion-hooks list
[ "$(wc -l <"$scratch/out")" -eq 8 ] && ok || fail "8 adds at once left $(wc -l <"$scratch/out") hooks"
ls "$SION_HOME/agents" | grep -q tmp && fail "a temporary file was left in agents/" || ok

# --help of each command.
expect_exit 0 sion-hooks add --help && expect_grep '^usage: sion-hooks add --event EVENT' "$scratch/out"
expect_exit 0 sion-hooks --help && expect_grep '^       sion-hooks fire EVENT < EVENT.json$' "$scratch/out"

done_testing
