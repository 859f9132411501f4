#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Calls side by side (seed 001, "What a model is sent"): the calls of one answer that only read,
# one after another, each running without anyone, run at once (an MCP server's, played by
# tests/tools/fake-mcp-bridge.py found as sion-mcp, as concurrent requests; the file tools on
# threads); a call that writes runs on its own, after them; the results answer the calls in the
# order they were made, in the transcript, in the store and in the next request (the Anthropic
# stand-in's, which checks it). Shown by overlap, never by timing: the calls' own records (when each
# began and how long it ran, in sion.db) and the server's (when it began and ended each).
. "$(dirname "$0")/lib.sh"
. "$SION_SOURCE_DIR/tests/models/standin.sh"
command -v sqlite3 >/dev/null || skip "sqlite3 is not installed (Debian package sqlite3)"

cd "$scratch" || exit 1
mkdir -p fake work
printf '#!/bin/sh\nexec python3 "%s/tests/tools/fake-mcp-bridge.py" "$@"\n' "$SION_SOURCE_DIR" >fake/sion-mcp
chmod +x fake/sion-mcp
export SION_EXEC_PATH="$scratch/fake" ANTHROPIC_API_KEY=sk-ant-test-0001
unset ANTHROPIC_BASE_URL
for f in a b c; do printf 'the file %s\n' "$f" >"work/$f.txt"; done
python3 - <<'PY'
import json
def tool(name, effect, idempotent):
    return {"name": name, "description": name, "effect": effect, "idempotent": idempotent, "taints": False,
            "inputSchema": {"type": "object", "properties": {"what": {"type": "string"}}}}
notes = {"state": "connected", "protocol": "2025-06-18", "server": {"name": "notes", "version": "1"},
         "tools": [tool("notes_look", "read", True), tool("notes_add", "write", True)]}
json.dump({"servers": {"notes": notes},
           "calls": {"notes_look": [{"sleep": 1, "text": "looked at {what}"}],
                     "notes_add": [{"sleep": 1, "text": "added {what}"}]}}, open("bridge.json", "w"))
look = lambda w: {"name": "notes_look", "input": {"what": w}}
read = lambda f: {"name": "read_file", "input": {"path": f}}
json.dump([{"calls": [look("a"), look("b"), look("c"), {"name": "notes_add", "input": {"what": "d"}}, look("e")]},
           {"calls": [read("a.txt"), read("b.txt"), read("c.txt")]},
           {"text": "Done."}], open("script.json", "w"))
PY
start_standin a anthropic_server script.json
agent=$(sion agent create coder) || exit 1
expect_exit 0 env SION_FAKE_MCP="$scratch/bridge.json" SION_FAKE_MCP_LOG="$scratch/bridge.log" ANTHROPIC_BASE_URL="$a_url" \
    timeout 60 setsid -w sion agent run coder "$agent" --model anthropic:claude-opus-5-5 --mcp notes --workspace work \
    --autonomy L3 --task 'Look at the notes, add one, read the files.' </dev/null
sid=$(session_id)
expect_query "$a_log" '[x for e in r for x in e["violations"]]' '[]'

# The transcript: the three reads' lines as they start, their results in order once all have
# ended; the write alone after them; the read after the write alone again.
grep -E '^(→|←) ' "$scratch/out" >lines
expect_text lines 'the transcript' "$(printf '%s\n' \
    '→ notes_look {"what":"a"}' '→ notes_look {"what":"b"}' '→ notes_look {"what":"c"}' \
    '← looked at a' '← looked at b' '← looked at c' \
    '→ notes_add {"what":"d"}' '← added d' '→ notes_look {"what":"e"}' '← looked at e' \
    '→ read_file {"path":"a.txt"}' '→ read_file {"path":"b.txt"}' '→ read_file {"path":"c.txt"}' \
    '←      1	the file a' '←      1	the file b' '←      1	the file c')"

# The next request answers the calls in the order they were made, each result its call's.
expect_query "$a_log" '[(b["tool_use_id"] == u["id"], b["content"]) for b, u in zip([b for b in r[1]["body"]["messages"][-1]["content"] if b["type"] == "tool_result"], [c for c in r[1]["body"]["messages"][-2]["content"] if c["type"] == "tool_use"])]' \
    '[[true, "looked at a"], [true, "looked at b"], [true, "looked at c"], [true, "added d"], [true, "looked at e"]]'
expect_query "$a_log" '[b["content"] for b in r[2]["body"]["messages"][-1]["content"] if b["type"] == "tool_result"]' \
    '["     1\tthe file a", "     1\tthe file b", "     1\tthe file c"]'

# By overlap: each call's interval as sion.db keeps it ([started_ms, started_ms + wall_ms], in
# the order made) and as the server logged it.
sqlite3 "$SION_HOME/sion.db" "SELECT started_ms, started_ms + wall_ms FROM calls WHERE session = '$sid' AND tool LIKE 'notes_%' ORDER BY seq" >calls
python3 - calls bridge.log >overlap <<'PY'
import json, sys
ours = [tuple(int(x) for x in line.split("|")) for line in open(sys.argv[1])]
theirs = [(e["started"], e["ended"]) for e in map(json.loads, open(sys.argv[2])) if "call" in e]
# sion.db's are whole milliseconds, a start of the wall clock and a length of the steady one: an
# end may be told a millisecond or two late.
for name, spans, late in (("ours", ours, 2), ("the server's", theirs, 0)):
    reads, write, last = spans[:3], spans[3], spans[4]
    print(name, "reads overlap:", max(s for s, _ in reads) < min(e for _, e in reads))
    print(name, "the write after the reads:", write[0] >= max(e for _, e in reads) - late)
    print(name, "the read after the write:", last[0] >= write[1] - late)
PY
expect_text overlap 'the intervals' "$(printf '%s\n' \
    'ours reads overlap: True' 'ours the write after the reads: True' 'ours the read after the write: True' \
    "the server's reads overlap: True" "the server's the write after the reads: True" "the server's the read after the write: True")"

# show tells the session as it was made: each call with its result, in order.
expect_exit 0 sion agent show "$sid"
expect_text_lines() { grep -E '^(→|←) ' "$scratch/out" | head -n 6 >shown; expect_text shown "$1" "$2"; }
expect_text_lines 'show' "$(printf '%s\n' '→ notes_look {"what":"a"}' '← looked at a' '→ notes_look {"what":"b"}' \
    '← looked at b' '→ notes_look {"what":"c"}' '← looked at c')"

# A read a hook stops among those side by side is refused in its place; the others run.
mkdir -p hooks
cat >hooks/no-b.sh <<'SH'
#!/bin/sh
if grep -q '"what":"b"'; then echo "not b" >&2; exit 2; fi
exit 0
SH
chmod +x hooks/no-b.sh
expect_exit 0 sion agent hooks add --event before-tool --tool notes_look -- "$scratch/hooks/no-b.sh"
printf '%s\n' '[{"calls": [{"name": "notes_look", "input": {"what": "a"}}, {"name": "notes_look", "input": {"what": "b"}},
  {"name": "notes_look", "input": {"what": "c"}}]}, {"text": "Done."}]' >hooked.json
start_standin h anthropic_server hooked.json
expect_exit 0 env SION_FAKE_MCP="$scratch/bridge.json" ANTHROPIC_BASE_URL="$h_url" \
    timeout 60 setsid -w sion agent run coder "$agent" --model anthropic:claude-opus-5-5 --mcp notes \
    --autonomy L3 --task 'Look again.' </dev/null
expect_query "$h_log" '[b["content"] for b in r[1]["body"]["messages"][-1]["content"] if b["type"] == "tool_result"]' \
    '["looked at a", "a hook blocked this call: not b", "looked at c"]'

done_testing
