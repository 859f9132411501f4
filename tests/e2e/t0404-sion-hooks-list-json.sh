#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# sion-hooks list --json: one JSON object a hook, in the order they run, that passes
# schemas/hooks.list.json and carries what the text line shows: the number remove takes, the event,
# a tool hook's patterns (empty for every tool, where the text shows *), the timeout always, and the
# command's words unquoted; the text stays as it was; no hooks prints nothing; a malformed
# invocation with --json is still the one-line usage error (64), and an error prints no line.
. "$(dirname "$0")/lib.sh"
need_jsonschema
cd "$scratch" || exit 1

# No hooks file yet: nothing, exit 0.
expect_exit 0 sion-hooks list --json && expect_out ''

expect_exit 0 sion-hooks add --event before-tool --tool shell -- /home/me/guard.sh
expect_exit 0 sion-hooks add --event after-tool --tool 'github_*' --tool 'gitlab_*' --timeout 5 -- \
    /home/me/log-call.sh --to 'my log'
expect_exit 0 sion-hooks add --event run-end -- logger -t sion "$(printf 'two\nlines')"
expect_exit 0 sion-hooks add --event after-tool --timeout 3600 -- /usr/bin/true "it's"

# The text as it was.
expect_exit 0 sion-hooks list && expect_out "1 before-tool shell: /home/me/guard.sh
2 after-tool github_* gitlab_* (timeout 5 s): /home/me/log-call.sh --to 'my log'
3 run-end: logger -t sion \$'two\\nlines'
4 after-tool * (timeout 3600 s): /usr/bin/true 'it'\\''s'"
# The same hooks as JSON lines, in the same order.
expect_exit 0 sion-hooks list --json && expect_json_lines hooks.list.json 4 &&
    expect_out '{"number":1,"event":"before-tool","tools":["shell"],"timeout":30,"command":["/home/me/guard.sh"]}
{"number":2,"event":"after-tool","tools":["github_*","gitlab_*"],"timeout":5,"command":["/home/me/log-call.sh","--to","my log"]}
{"number":3,"event":"run-end","timeout":30,"command":["logger","-t","sion","two\nlines"]}
{"number":4,"event":"after-tool","tools":[],"timeout":3600,"command":["/usr/bin/true","it'"'"'s"]}'
python3 - "$scratch/out" <<'PY' && ok || fail "the members of list --json"
import json, sys
lines = [json.loads(line) for line in open(sys.argv[1], encoding="utf-8")]
assert [l["number"] for l in lines] == [1, 2, 3, 4], lines
assert [l["event"] for l in lines] == ["before-tool", "after-tool", "run-end", "after-tool"], lines
assert [l.get("tools") for l in lines] == [["shell"], ["github_*", "gitlab_*"], None, []], lines
assert [l["timeout"] for l in lines] == [30, 5, 30, 3600], lines
assert lines[2]["command"] == ["logger", "-t", "sion", "two\nlines"], lines
assert lines[3]["command"] == ["/usr/bin/true", "it's"], lines
PY

# Numbers follow a remove, as remove takes them.
expect_exit 0 sion-hooks remove 1
expect_exit 0 sion-hooks list --json && expect_json_lines hooks.list.json 3 &&
    expect_grep '^\{"number":1,"event":"after-tool","tools":\["github_\*","gitlab_\*"\],' "$scratch/out"
for n in 3 2 1; do expect_exit 0 sion-hooks remove "$n"; done
expect_exit 0 sion-hooks list --json && expect_out ''

# Errors: the line on stderr, nothing on stdout.
expect_exit 64 sion-hooks list extra --json && expect_err "sion-hooks: unexpected operand 'extra'" &&
    expect_out ''
expect_exit 64 sion-hooks list --json=yes && expect_err "sion-hooks: option '--json' takes no argument"
expect_exit 64 sion-hooks --json list && expect_err "sion-hooks: unknown option '--json'"
mkdir -p "$SION_HOME/agents" && echo '{"hooks": [{"event": "before-tol", "command": ["x"]}]}' >"$SION_HOME/agents/hooks.json"
expect_exit 65 sion-hooks list --json && expect_out '' && expect_grep "unknown event 'before-tol'" "$scratch/err"

expect_exit 0 sion-hooks list --help && expect_grep '^usage: sion-hooks list \[--json\]$' "$scratch/out"
expect_exit 0 sion-hooks --help && expect_grep '^ +sion-hooks list \[--json\]$' "$scratch/out"

done_testing
