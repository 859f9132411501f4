#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# sion agent credential add, list, remove: values read from standard input or, unseen, from a
# terminal, kept sealed (never in the clear on disk), names listed without values, bad names and
# values refused, a store that was changed refused without loss; providers find their variables
# there, the environment's value winning; and after sessions that use keys (one whose provider
# echoes the key back, one whose shell prints its environment), no key appears anywhere: not in
# the transcript, the JSON events, an error, sion.db or anything else under $SION_HOME.
. "$(dirname "$0")/lib.sh"
command -v python3 >/dev/null || skip "python3 is not installed"
need_bwrap
. "$SION_SOURCE_DIR/tests/models/standin.sh"

mkdir -p "$scratch/work" "$scratch/scripts" "$scratch/outputs"
cd "$scratch" || exit 1
unset ANTHROPIC_API_KEY ANTHROPIC_BASE_URL OPENAI_API_KEY OPENAI_BASE_URL
sealed_key=sk-ant-sealed-4f9c2a7e1b
env_key=sk-ant-env-93a1d0c7e5
openai_key=sk-openai-sealed-77aa5b
store="$SION_HOME/agents/secrets.bin"
kept=0
# keep: the last command's output, to be searched for keys at the end.
keep() { cat "$scratch/out" "$scratch/err" >"$scratch/outputs/$((++kept))"; }
script() { printf '%s\n' "$2" >"$scratch/scripts/$1.json"; }
# at_terminal ANSWER... -- COMMAND...: runs COMMAND on a pseudo-terminal, typing the next ANSWER
# each time the terminal shows a question ending in ": "; what it showed goes to $scratch/tty.
at_terminal() {
    python3 - "$@" >"$scratch/tty" 2>&1 <<'PY'
import os, pty, select, sys, time
at = sys.argv.index("--")
answers, command = [a.encode() for a in sys.argv[1:at]], sys.argv[at + 1:]
pid, fd = pty.fork()
if pid == 0:
    os.execvp(command[0], command)
shown, asked, answered_at, deadline = b"", 0, -1, time.time() + 20
while time.time() < deadline:
    if select.select([fd], [], [], 0.1)[0]:
        try:
            data = os.read(fd, 1024)
        except OSError:
            break
        if not data:
            break
        shown += data
    # A question is written whole, and is the last thing shown until it is answered.
    if asked < len(answers) and shown.endswith(b": ") and len(shown) != answered_at:
        os.write(fd, answers[asked] + b"\n")
        asked, answered_at = asked + 1, len(shown)
while True:
    done, status = os.waitpid(pid, os.WNOHANG)
    if done:
        break
    if time.time() > deadline:
        os.kill(pid, 9)
    time.sleep(0.05)
sys.stdout.write(shown.decode().replace("\r\n", "\n"))
sys.exit(os.waitstatus_to_exitcode(status))
PY
}

# Nothing kept yet: an empty list, and nothing made for it.
expect_exit 0 sion agent credential list && expect_out ''
[ ! -e "$store" ] && [ ! -e "$SION_HOME/agents/secrets.key" ] && ok || fail "list made a store"

# add reads one line of standard input and says nothing.
printf '%s\n' "$sealed_key" >"$scratch/value"
expect_exit 0 sion agent credential add ANTHROPIC_API_KEY <"$scratch/value" && expect_out '' && expect_err ''
# On a terminal, the value typed is not shown.
at_terminal "$openai_key" -- sion agent credential add OPENAI_API_KEY
[ $? -eq 0 ] && ok || fail "credential add on a terminal failed: $(cat "$scratch/tty")"
expect_text "$scratch/tty" 'the terminal' 'OPENAI_API_KEY: '
expect_exit 0 sion agent credential list && expect_out 'ANTHROPIC_API_KEY
OPENAI_API_KEY'
[ "$(stat -c %a "$store")" = 600 ] && [ "$(stat -c %a "$SION_HOME/agents/secrets.key")" = 600 ] && ok ||
    fail "the store or its key is not mode 600"
for k in "$sealed_key" "$openai_key"; do
    grep -qaF "$k" "$store" && fail "the store holds '$k' in the clear" || ok
done

# Refused: names that are no variable's, values that are none, commands that are not there.
expect_exit 64 sion agent credential add anthropic_key </dev/null &&
    expect_err "sion-run: invalid credential name 'anthropic_key': use uppercase letters, digits and '_', as a variable's name"
expect_exit 64 sion agent credential add 9LIVES </dev/null
expect_exit 65 sion agent credential add EMPTY </dev/null && expect_err "sion-run: no value given for 'EMPTY'"
head -c 70000 /dev/zero | tr '\0' x >"$scratch/long"
expect_exit 65 sion agent credential add LONG <"$scratch/long" &&
    expect_err "sion-run: the value for 'LONG' is not one line of text of at most 64 KiB"
printf 'bad\0value\n' >"$scratch/nul"
expect_exit 65 sion agent credential add NUL <"$scratch/nul"
expect_exit 66 sion agent credential remove NOT_KEPT && expect_err "sion-run: no credential 'NOT_KEPT'"
expect_exit 64 sion agent credential && expect_err 'sion-run: a command is needed: add, list or remove (see --help)'
expect_exit 64 sion agent credential frob && expect_err "sion-run: unknown command 'frob': give add, list or remove (see --help)"
expect_exit 64 sion agent credential add && expect_err 'sion-run: give the credential'"'"'s name: sion-run credential add NAME'
expect_exit 64 sion agent credential list X && expect_err "sion-run: unexpected operand 'X'"
expect_exit 0 sion agent credential list && expect_out 'ANTHROPIC_API_KEY
OPENAI_API_KEY'
# A store that was changed is refused, and is there as it was once put back.
cp "$store" "$scratch/store.bak"
python3 -c 'import sys; p = sys.argv[1]; b = bytearray(open(p, "rb").read()); b[-1] ^= 1; open(p, "wb").write(b)' "$store"
expect_exit 65 sion agent credential list && expect_grep "^sion-run: cannot read credentials '$store': " "$scratch/err"
expect_exit 65 sion agent credential add OTHER <"$scratch/value"
cp "$scratch/store.bak" "$store"
expect_exit 0 sion agent credential list && expect_out 'ANTHROPIC_API_KEY
OPENAI_API_KEY'

# Providers look their variables up there: the key, and the base URL too.
agent=$(sion agent create coder) || exit 1
run() { timeout 60 setsid -w sion agent run coder "$agent" "$@" </dev/null; }
script sealed '[{"text": "Sealed works."}, {"text": "The environment wins."}]'
start_standin a anthropic_server "$scratch/scripts/sealed.json" --keys "$sealed_key,$env_key"
printf '%s\n' "$a_url" | sion agent credential add ANTHROPIC_BASE_URL
expect_exit 0 run --task 'Hi' --model anthropic:claude-a && expect_grep '^agent: Sealed works\.$' "$scratch/out" && keep
printf '%s\n' "$env_key" >"$scratch/env-value"
expect_exit 0 env ANTHROPIC_API_KEY="$env_key" sion agent credential add ANTHROPIC_API_KEY <"$scratch/env-value" &&
    expect_err 'sion-run: note: ANTHROPIC_API_KEY is set in the environment too, and its value is the one used'
printf '%s\n' "$sealed_key" | sion agent credential add ANTHROPIC_API_KEY
expect_exit 0 env ANTHROPIC_API_KEY="$env_key" timeout 60 setsid -w sion agent run coder "$agent" --task 'Hi' \
    --model anthropic:claude-a --json </dev/null && keep
expect_query "$a_log" '[e["key"] for e in r]' "[\"$sealed_key\", \"$env_key\"]"

# A provider that echoes the key in its error: the message shows it redacted.
script echo "[{\"status\": 401, \"message\": \"Invalid API key: $sealed_key\"}]"
start_standin e anthropic_server "$scratch/scripts/echo.json"
expect_exit 69 env ANTHROPIC_BASE_URL="$e_url" timeout 60 setsid -w sion agent run coder "$agent" --task 'Hi' \
    --model anthropic:claude-a </dev/null &&
    expect_grep '^session [0-9a-f]{16}: failed: the model anthropic:claude-a failed: HTTP 401: Invalid API key: \[redacted\]$' "$scratch/out"
keep
expect_exit 69 env ANTHROPIC_BASE_URL="$e_url" timeout 60 setsid -w sion agent run coder "$agent" --task 'Hi' \
    --model anthropic:claude-a --json </dev/null
keep

# A shell in the sandbox prints its environment: no key is in it.
script shell '[{"calls": [{"name": "shell", "input": {"command": "env; cat /proc/self/environ | tr \"\\\\0\" \"\\\\n\""}}]}, {"text": "Printed."}]'
start_standin s anthropic_server "$scratch/scripts/shell.json"
expect_exit 0 env ANTHROPIC_BASE_URL="$s_url" ANTHROPIC_API_KEY="$env_key" OPENAI_API_KEY="$openai_key" timeout 120 setsid -w \
    sion agent run coder "$agent" --task 'Print the environment' --model anthropic:claude-a --workspace work --shell \
    --autonomy L3 </dev/null && keep
expect_grep '^PATH=' "$scratch/out"
sid=$(sed -n '1s/^session \([0-9a-f]\{16\}\) for agent .*$/\1/p' "$scratch/out")
expect_exit 0 sion agent show "$sid" --json && keep
expect_exit 0 sion agent show "$sid" && keep
expect_exit 0 sion agent sessions && keep

# Nowhere: not in anything a run printed, nor under $SION_HOME (sion.db, its WAL, logs).
for k in "$sealed_key" "$env_key" "$openai_key"; do
    found=$(grep -rlaF -- "$k" "$SION_HOME" "$scratch/outputs" "$scratch/work" 2>/dev/null)
    [ -z "$found" ] && ok || fail "'$k' is in: $found"
done

# remove forgets one; the rest are kept.
expect_exit 0 sion agent credential remove ANTHROPIC_API_KEY && expect_out ''
expect_exit 0 sion agent credential list && expect_out 'ANTHROPIC_BASE_URL
OPENAI_API_KEY'
expect_exit 78 run --task x --model anthropic:claude-a &&
    expect_err "sion-run: anthropic:claude-a needs a key: set ANTHROPIC_API_KEY, or keep it with 'sion agent credential add ANTHROPIC_API_KEY'"

# sion setup asks for the common keys in turn: one line of standard input answers each, an empty
# one or the end of the input leaves a key as it is; each key kept is named, never shown.
export SION_HOME="$scratch/setup-home"
mkdir -m 700 "$SION_HOME"
setup_a=sk-ant-setup-5d0e9b21 setup_g=AIza-setup-c81f07
printf '%s\n\n%s\n' "$setup_a" "$setup_g" >"$scratch/answers"
expect_exit 0 sion setup <"$scratch/answers" && expect_out 'kept ANTHROPIC_API_KEY
kept GEMINI_API_KEY'
expect_err 'The keys of the model providers, kept sealed on this machine. Press Enter to leave one as it is.
ANTHROPIC_API_KEY, for anthropic: (not kept): 
OPENAI_API_KEY, for openai: and openai-responses: (not kept): 
GEMINI_API_KEY, for gemini: (not kept): 
OPENROUTER_API_KEY, for openrouter: (not kept): '
keep
expect_exit 0 sion agent credential list && expect_out 'ANTHROPIC_API_KEY
GEMINI_API_KEY'
# Where each stands, and nothing changed by answering nothing.
GEMINI_API_KEY=from-env expect_exit 0 sion setup </dev/null && expect_out ''
expect_err 'The keys of the model providers, kept sealed on this machine. Press Enter to leave one as it is.
ANTHROPIC_API_KEY, for anthropic: (kept): 
OPENAI_API_KEY, for openai: and openai-responses: (not kept): 
GEMINI_API_KEY, for gemini: (set in the environment, which wins): 
OPENROUTER_API_KEY, for openrouter: (not kept): '
# A value that is no key stops it; those answered before are kept.
{ printf '\nsk-openai-setup-1\n'; head -c 70000 /dev/zero | tr '\0' k; printf '\n'; } >"$scratch/answers"
expect_exit 65 sion setup <"$scratch/answers" && expect_out 'kept OPENAI_API_KEY'
tail -n 1 "$scratch/err" >"$scratch/last"
expect_text "$scratch/last" 'the refusal' "sion-run: the value for 'GEMINI_API_KEY' is not one line of text of at most 64 KiB"
keep
expect_exit 0 sion agent credential list && expect_out 'ANTHROPIC_API_KEY
GEMINI_API_KEY
OPENAI_API_KEY'
expect_exit 64 sion setup now </dev/null && expect_err "sion-run: unexpected operand 'now'"
# At a terminal, the keys typed are not shown.
at_terminal '' '' '' sk-or-typed-0c4e -- sion setup
[ $? -eq 0 ] && ok || fail "setup on a terminal failed: $(cat "$scratch/tty")"
tail -n 2 "$scratch/tty" >"$scratch/last"
expect_text "$scratch/last" 'the terminal' 'OPENROUTER_API_KEY, for openrouter: (not kept): 
kept OPENROUTER_API_KEY'
grep -qF sk-or-typed "$scratch/tty" && fail "setup showed the key typed at the terminal" || ok
for k in "$setup_a" "$setup_g" sk-openai-setup-1 sk-or-typed-0c4e; do
    grep -rqaF "$k" "$SION_HOME" "$scratch/outputs" && fail "'$k' is in the clear" || ok
done

done_testing
