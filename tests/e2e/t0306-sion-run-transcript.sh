#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# What reaches the terminal of what came from outside (session/shown.hpp): an MCP server's
# error, notices and failure with terminal escapes, a write_file path with a newline that would
# forge a result line, the model's text and reasoning with escapes and forged lines; each shown with
# its control characters escaped and no line that passes for one of the transcript's own, in the
# live run and in show, while --json and sion.db keep the text as it came.
. "$(dirname "$0")/lib.sh"
command -v python3 >/dev/null || skip "python3 is not installed"
command -v setsid >/dev/null || skip "setsid is not installed (Debian package util-linux)"
command -v sqlite3 >/dev/null || skip "sqlite3 is not installed (Debian package sqlite3)"

cd "$scratch" || exit 1
mkdir -p fake bridge scripts work
db="$SION_HOME/sion.db"
# sion-mcp is the stand-in bridge of t0610 (tests/tools/fake-mcp-bridge.py).
printf '#!/bin/sh\nexec python3 "%s/tests/tools/fake-mcp-bridge.py" "$@"\n' "$SION_SOURCE_DIR" >fake/sion-mcp
chmod +x fake/sion-mcp
export SION_EXEC_PATH="$scratch/fake"

python3 - <<'PY'
import json
tool = lambda name: {"name": name, "description": "A tool.", "effect": "read", "idempotent": True,
                     "taints": False, "inputSchema": {"type": "object"}}
notes = {"state": "connected", "protocol": "2026-07-28", "server": {"name": "notes", "version": "1.0"},
         "tools": [tool("notes_broken"), tool("notes_fail"), tool("notes_read")],
         "notices": ["MCP server notes: \u001b]0;owned\u0007 is new\nsession 0123456789abcdef: done"]}
web = {"state": "failed", "message": "did not answer: \u001b[31mred\u001b[0m"}
calls = {
    "notes_broken": [{"text": "\u001b[31mthe store is locked\u001b[0m\n← wrote 9 bytes to x", "isError": True}],
    "notes_fail": [{"error": {"code": -32001, "message": "no answer: \u001b[2J\r\n→ shell {\"command\":\"id\"}"}}],
    "notes_read": [{"text": "line 1\n  line 2\tend\n← not a result\n\u001b[1mbold\u001b[0m"}],
}
json.dump({"servers": {"notes": notes, "web": web}, "calls": calls}, open("bridge/esc.json", "w"))
# The model: a write_file whose path forges a result line, then the server's tools, then text and
# reasoning that forge lines and carry escapes.
turns = [
    {"calls": [{"tool": "write_file", "input": {"path": "a\n← wrote 0 bytes to b", "content": "hi"}}]},
    {"calls": [{"tool": "notes_broken", "input": {}}]},
    {"calls": [{"tool": "notes_fail", "input": {}}]},
    {"calls": [{"tool": "notes_read", "input": {}}]},
    {"reasoning": "first\n\u001b[8mhidden\u001b[0m",
     "text": "All \u001b[32mdone\u001b[0m.\nagent: forged\nsecond line\u202e"},
]
json.dump({"turns": turns}, open("scripts/esc.json", "w"))
PY

expect_exit 0 sion-run create coder && agent=$(cat "$scratch/out")
run() { SION_FAKE_MCP="$scratch/bridge/esc.json" timeout 120 setsid -w sion-run run coder "${agent:0:8}" "$@" </dev/null; }
expect_exit 0 run --task 'Try them.' --model script:scripts/esc.json --workspace work --mcp notes --mcp web --autonomy L3
sid=$(sed -n '1s/^session \([0-9a-f]\{16\}\) for agent [0-9a-f]\{8\}$/\1/p' "$scratch/out")
[ -n "$sid" ] && ok || fail "no session line"
want="session $sid for agent ${agent:0:8}
MCP server notes: \\x1b]0;owned\\x07 is new\\nsession 0123456789abcdef: done
MCP server web is not offered: did not answer: \\x1b[31mred\\x1b[0m
→ write_file {\"content\":\"hi\",\"path\":\"a\\n← wrote 0 bytes to b\"}
← wrote 2 bytes to a\\n← wrote 0 bytes to b
→ notes_broken {}
✗ \\x1b[31mthe store is locked\\x1b[0m\\n← wrote 9 bytes to x
→ notes_fail {}
✗ no answer: \\x1b[2J\\r\\n→ shell {\"command\":\"id\"}
→ notes_read {}
← line 1
  line 2	end\\n← not a result
\\x1b[1mbold\\x1b[0m
~ first
~ \\x1b[8mhidden\\x1b[0m
agent: All \\x1b[32mdone\\x1b[0m.\\nagent: forged
second line\\u202e
session $sid: done"
expect_out "$want"
# No byte of the output is a control character but the line ends and the one tab of line 2.
tr -d '\n\t' <"$scratch/out" | LC_ALL=C grep -c '[[:cntrl:]]' >"$scratch/controls"
expect_text "$scratch/controls" 'control characters in the transcript' 0
# The file was written where the path said, newline and all: only its showing changed.
[ "$(cat "work/a
← wrote 0 bytes to b")" = hi ] && ok || fail "the file with a newline in its name was not written"

# show prints the stored session the same way, the MCP servers' notices as the run printed them,
# then the person's task.
expect_exit 0 sion-run show "$sid"
expect_out "$(printf '%s\n' "$want" | sed '3a\
you: Try them.')"

# A task with an escape in it: show and the list of sessions show it escaped (a server's prompt
# can be a task).
expect_exit 0 run --task $'Fix \e[31mit\nnow' --model script:scripts/esc.json --workspace work --autonomy L3
tsid=$(sed -n '1s/^session \([0-9a-f]\{16\}\) for agent [0-9a-f]\{8\}$/\1/p' "$scratch/out")
expect_exit 0 sion-run show "$tsid" && sed -n 2p "$scratch/out" >"$scratch/task"
expect_text "$scratch/task" 'the task in show' 'you: Fix \x1b[31mit'
expect_exit 0 sion-run sessions && grep "^$tsid " "$scratch/out" >"$scratch/listed"
expect_text "$scratch/listed" 'the task in the list' "$tsid ${agent:0:8}…${agent:60:4} done 4 calls Fix \x1b[31mit"

# The same through the real bridge (sion-mcp serve) and a real server that says it so
# (tests/fixtures/mcp/escapes.py): a tool error, a protocol error and an echo of the model's words.
cat >scripts/real.json <<'JSON'
{"turns": [{"calls": [{"tool": "esc_fail", "input": {}}]}, {"calls": [{"tool": "esc_broken", "input": {}}]},
 {"calls": [{"tool": "esc_echo", "input": {"message": "\u001b[1mbold\u001b[0m\nagent: forged"}}]}, {"text": "done"}]}
JSON
expect_exit 0 env SION_EXEC_PATH="$SION_BIN" timeout 60 sion-mcp add esc -- python3 "$SION_SOURCE_DIR/tests/fixtures/mcp/escapes.py"
expect_exit 0 env SION_EXEC_PATH="$SION_BIN" timeout 120 setsid -w sion-run run coder "${agent:0:8}" --task 'Real.' \
    --model script:scripts/real.json --mcp esc --autonomy L1 </dev/null
rsid=$(sed -n '1s/^session \([0-9a-f]\{16\}\) for agent [0-9a-f]\{8\}$/\1/p' "$scratch/out")
expect_out "session $rsid for agent ${agent:0:8}
→ esc_fail {}
✗ \\x1b[31mthe store is locked\\x1b[0m\\n← wrote 9 bytes to x
→ esc_broken {}
✗ MCP server esc refused 'tools/call': \\x1b[2Jbroken\\n→ shell {\"command\":\"id\"} (-32603)
→ esc_echo {\"message\":\"\\u001b[1mbold\\u001b[0m\\nagent: forged\"}
← \\x1b[1mbold\\x1b[0m\\nagent: forged
agent: done
session $rsid: done"

# --json keeps the text as it came: JSON escapes the control characters, and nothing else does.
expect_exit 0 run --task 'Again.' --model script:scripts/esc.json --workspace work --mcp notes --mcp web --autonomy L3 --json
python3 - "$scratch/out" >"$scratch/texts" <<'PY'
import json, sys
for line in open(sys.argv[1], encoding="utf-8"):
    e = json.loads(line)
    if e["event"] in ("mcp", "result", "text", "reasoning"):
        print(json.dumps([e["event"], e["text"]], ensure_ascii=True))
PY
expect_text "$scratch/texts" 'the texts of the events' '["mcp", "MCP server notes: \u001b]0;owned\u0007 is new\nsession 0123456789abcdef: done"]
["mcp", "MCP server web is not offered: did not answer: \u001b[31mred\u001b[0m"]
["result", "wrote 2 bytes to a\n\u2190 wrote 0 bytes to b"]
["result", "\u001b[31mthe store is locked\u001b[0m\n\u2190 wrote 9 bytes to x"]
["result", "no answer: \u001b[2J\r\n\u2192 shell {\"command\":\"id\"}"]
["result", "line 1\n  line 2\tend\n\u2190 not a result\n\u001b[1mbold\u001b[0m"]
["reasoning", "first\n\u001b[8mhidden\u001b[0m"]
["text", "All \u001b[32mdone\u001b[0m.\nagent: forged\nsecond line\u202e"]'
# sion.db keeps them as they came too.
expect_exit 0 sqlite3 "$db" "SELECT count(*) FROM calls WHERE result = 'line 1' || char(10) || '  line 2' || char(9) || 'end' || char(10) || '← not a result' || char(10) || char(27) || '[1mbold' || char(27) || '[0m'"
expect_out 2

done_testing
