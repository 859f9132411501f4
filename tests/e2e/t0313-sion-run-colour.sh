#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Colour: on a terminal the transcript marks calls (→ cyan), results (← green), failures (✗ red),
# the agent's words and its first and last lines (bold) apart; a pipe, NO_COLOR, TERM=dumb and
# --color=never give the plain text every other suite compares, byte for byte; --color=always
# colours a pipe too, and JSON events are never coloured. run and show alike.
. "$(dirname "$0")/lib.sh"

mkdir -p "$scratch/ws"
cat >"$scratch/turns.json" <<'EOF'
{"turns": [{"text": "Writing it.",
            "calls": [{"tool": "write_file", "input": {"path": "a.txt", "content": "hi\n"}},
                      {"tool": "nosuch", "input": {}}]},
           {"text": "Done."}]}
EOF
expect_exit 0 sion-run create coder --model "script:$scratch/turns.json"
agent=$(cut -c1-8 "$scratch/out")
run() { sion-run run coder "$agent" --task 'write a' --workspace "$scratch/ws" --autonomy L3 "$@"; }
# on_tty CMD...: CMD's stdout on a terminal (a pseudo-terminal), CR LF made LF.
on_tty() {
    python3 - "$@" <<'PY'
import os, pty, sys
pid, fd = pty.fork()
if pid == 0:
    os.execvp(sys.argv[1], sys.argv[1:])
out = b""
while True:
    try:
        data = os.read(fd, 65536)
    except OSError:
        break
    if not data:
        break
    out += data
os.waitpid(pid, 0)
sys.stdout.buffer.write(out.replace(b"\r\n", b"\n"))
PY
}

# Plain, through a pipe: no escape at all.
expect_exit 0 run
plain=$(cat "$scratch/out")
session=$(sed -n 's/^session \([0-9a-f]*\) for agent.*/\1/p' "$scratch/out")
grep -q $'\e' "$scratch/out" && fail "a piped transcript holds an escape" || ok
expect_grep '^→ write_file \{"content":"hi\\n","path":"a.txt"\}$' "$scratch/out"
expect_grep '^← wrote 3 bytes to a.txt$' "$scratch/out"

# --color=always through the pipe: each mark in its colour, the text between as it was.
e=$'\e'
want="${e}[1msession $session for agent $agent${e}[0m
${e}[1magent:${e}[0m Writing it.
${e}[36m→ write_file${e}[0m {\"content\":\"hi\\n\",\"path\":\"a.txt\"}
${e}[32m←${e}[0m wrote 3 bytes to a.txt
${e}[36m→ nosuch${e}[0m {}
${e}[31m✗ there is no tool named nosuch${e}[0m
${e}[1magent:${e}[0m Done.
${e}[1msession $session: done${e}[0m"
expect_exit 0 sion-run show "$session" --color=always
# show adds the person's task, uncoloured, after the first line.
expect_out "$(printf '%s\n' "$want" | sed '1a you: write a')"
# With its escapes taken out it is the plain transcript.
expect_exit 0 run --color=always
sed "s/$e\\[[0-9]*m//g; s/$session/SESSION/; s/session [0-9a-f]\\{16\\}/session SESSION/" "$scratch/out" >"$scratch/stripped"
printf '%s\n' "$plain" | sed "s/session [0-9a-f]\\{16\\}/session SESSION/" >"$scratch/plain"
cmp -s "$scratch/stripped" "$scratch/plain" && ok || fail "--color=always is not the plain transcript with colour: $(diff "$scratch/plain" "$scratch/stripped")"

# On a terminal: coloured unless NO_COLOR (not empty) or TERM=dumb says not, or --color=never.
TERM=xterm on_tty sion-run show "$session" >"$scratch/tty"
[ "$(cat "$scratch/tty")" = "$(printf '%s\n' "$want" | sed '1a you: write a')" ] && ok ||
    fail "show on a terminal is not coloured: $(cat -v "$scratch/tty")"
plain_on_tty() { # plain_on_tty WHAT: the last on_tty's output holds no escape
    grep -q $'\e' "$scratch/tty" && fail "$1: the transcript on a terminal is coloured" || ok
}
NO_COLOR=1 TERM=xterm on_tty sion-run show "$session" >"$scratch/tty"
plain_on_tty NO_COLOR=1
TERM=dumb on_tty sion-run show "$session" >"$scratch/tty"
plain_on_tty TERM=dumb
TERM=xterm on_tty sion-run show "$session" --color=never >"$scratch/tty"
plain_on_tty --color=never
# An empty NO_COLOR is no request, and --color=always wins over NO_COLOR.
NO_COLOR= TERM=xterm on_tty sion-run show "$session" >"$scratch/tty"
grep -q $'\e\\[36m' "$scratch/tty" && ok || fail "an empty NO_COLOR took the colour away"
NO_COLOR=1 expect_exit 0 sion-run show "$session" --color=always
grep -q $'\e\\[36m' "$scratch/out" && ok || fail "--color=always did not win over NO_COLOR"

# JSON events are never coloured.
expect_exit 0 sion-run show "$session" --json --color=always
grep -q $'\e' "$scratch/out" && fail "JSON events hold an escape" || ok

# A WHEN that is none of the three is a usage error, before anything runs.
expect_exit 64 run --color=sometimes && expect_err "sion-run: --color takes auto, always or never, not 'sometimes'"
expect_exit 64 sion-run show "$session" --color && expect_err "sion-run: option '--color' needs an argument"

done_testing
