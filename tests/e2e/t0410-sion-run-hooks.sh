#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Hooks around a session's calls and runs, as sion-run fires them through sion-hooks: a before-tool
# hook that blocks with exit 2 (its stderr is the model's reason), one that hangs past its timeout
# (which blocks too), after-tool output added to what the model sees, run-start output added to the
# person's message, run-end told how the run ended, the calls a run_code program makes (hooks fire
# for them too), and a hooks file others may change, which keeps every session from running.
. "$(dirname "$0")/lib.sh"
need_bwrap

cd "$scratch" || exit 1
mkdir work
id=$(sion agent create coder) && ok || fail "sion agent create coder"
hooks() { sion agent hooks "$@" >/dev/null || fail "sion agent hooks $*"; }
mkdir bin
cat >bin/guard.sh <<'SH'
#!/bin/sh
# Blocks shell commands that mention rm.
if grep -q '"command":"[^"]*rm ' ; then echo "no rm here" >&2; exit 2; fi
exit 0
SH
cat >bin/log.sh <<'SH'
#!/bin/sh
cat >>"$(dirname "$0")/../events.jsonl"; echo >>"$(dirname "$0")/../events.jsonl"
echo "logged $SION_HOOK_EVENT"
SH
cat >bin/hang.sh <<'SH'
#!/bin/sh
sleep 60
SH
chmod +x bin/*.sh
hooks add --event before-tool --tool shell -- "$scratch/bin/guard.sh"
hooks add --event after-tool --tool 'write_*' -- "$scratch/bin/log.sh"
hooks add --event run-start -- "$scratch/bin/log.sh"
hooks add --event run-end -- "$scratch/bin/log.sh"
hooks add --event before-tool --tool read_file --timeout 1 -- "$scratch/bin/hang.sh"

cat >s.json <<'JSON'
{"turns": [
  {"calls": [{"tool": "shell", "input": {"command": "rm -rf x"}}]},
  {"calls": [{"tool": "shell", "input": {"command": "echo fine"}}]},
  {"calls": [{"tool": "write_file", "input": {"path": "a.txt", "content": "a\n"}}]},
  {"calls": [{"tool": "read_file", "input": {"path": "a.txt"}}]},
  {"calls": [{"tool": "run_code", "input": {"code": "try:\n    tools.read_file(path='a.txt')\nexcept ToolError as e:\n    print('code:', e)"}}]},
  {"text": "done"}
]}
JSON
expect_exit 0 sion agent run coder "${id:0:8}" --task 'Tidy up.' --model script:s.json --workspace work \
    --shell --autonomy L3
expect_grep '^✗ a hook blocked this call: no rm here$' "$scratch/out"
expect_grep '^← exit status 0$' "$scratch/out"
expect_grep "^← wrote 2 bytes to a.txt$" "$scratch/out"
expect_grep "^\\[hook 2: $scratch/bin/log.sh\\] logged after-tool$" "$scratch/out"
expect_grep '^✗ a hook blocked this call: hook 5 .*hang.sh.* ran out of time' "$scratch/out"
expect_grep '^  ✗ a hook blocked this call: hook 5 .*ran out of time' "$scratch/out"
expect_grep '^← code: a hook blocked this call: hook 5 ' "$scratch/out"
session=$(sed -n 's/^session \([0-9a-f]\{16\}\) for agent .*/\1/p' "$scratch/out")

# run-start's output is part of the person's message; run-end was told the run was done.
expect_exit 0 sion agent show "$session"
expect_grep '^you: Tidy up.$' "$scratch/out"
expect_grep "^\\[hook 3: $scratch/bin/log.sh\\] logged run-start$" "$scratch/out"
python3 - events.jsonl "$session" <<'PY' && ok || fail "the hooks were not told the events as they happened"
import json, sys
events = [json.loads(l) for l in open(sys.argv[1]) if l.strip()]
kinds = [e["event"] for e in events]
assert kinds == ["run-start", "after-tool", "run-end"], kinds
assert all(e["session"] == sys.argv[2] for e in events)
assert events[0]["said"] == "Tidy up."
assert events[1]["tool"] == "write_file" and events[1]["outcome"] == {"state": "ok", "text": "wrote 2 bytes to a.txt"}
assert events[2]["ended"] == {"state": "done"}
PY
[ ! -e work/x ] && ok || fail "the blocked rm ran"

# A hooks file others may change keeps every session from running, and stores nothing.
before=$(sion agent sessions | wc -l)
chmod o+w "$SION_HOME/agents/hooks.json"
expect_exit 77 sion agent run coder "${id:0:8}" --task x --model script:s.json --workspace work --shell
expect_err "sion-run: refusing hooks file '$SION_HOME/agents/hooks.json': others may write it (chmod go-w '$SION_HOME/agents/hooks.json')"
[ "$(sion agent sessions | wc -l)" -eq "$before" ] && ok || fail "a refused run stored a session"
chmod o-w "$SION_HOME/agents/hooks.json"
chmod o+w "$SION_HOME/agents"
expect_exit 77 sion agent run coder "${id:0:8}" --task x --model script:s.json --workspace work --shell
expect_grep "others may write its directory" "$scratch/err"
chmod o-w "$SION_HOME/agents"

# A malformed file too, left as it was.
cp "$SION_HOME/agents/hooks.json" saved.json
printf '{"hooks": [' >"$SION_HOME/agents/hooks.json"
expect_exit 65 sion agent run coder "${id:0:8}" --task x --model script:s.json --workspace work --shell
[ "$(wc -l <"$scratch/err")" -eq 1 ] && ok || fail "the refusal is not one line"
[ "$(cat "$SION_HOME/agents/hooks.json")" = '{"hooks": [' ] && ok || fail "the malformed file was changed"

done_testing
