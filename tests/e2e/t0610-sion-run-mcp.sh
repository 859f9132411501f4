#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# sion-run's side of the MCP bridge (`sion-mcp serve`), against the stand-in bridge
# tests/tools/fake-mcp-bridge.py, found as sion-mcp through SION_EXEC_PATH: the servers' tools
# offered and called as the seed shows, and not offered when the bridge says so; the journal (a
# call neither read-only nor idempotent made once, a call with no answer uncertain and never made
# again, also when sion-run is killed during it); taint from an external tool's result; a bridge
# that dies costing the session its tools, not the session; the servers kept with the session and
# the profile's standing ones; the model told each turn which servers it has, at the end of what it
# is sent (a stand-in chat server records it), and tools that change between turns; a server's
# questions asked at a terminal (a pseudo-terminal here) and declined with no one to ask; sampling
# written by the session's model, counted in the run's token budget and refused past it; a prompt
# as the task, tainting the session; and the bad inputs, each with its message.
. "$(dirname "$0")/lib.sh"
command -v python3 >/dev/null || skip "python3 is not installed"
python3 -c 'import jsonschema' 2>/dev/null || skip "python3-jsonschema is not installed"
command -v setsid >/dev/null || skip "setsid is not installed (Debian package util-linux)"
command -v sqlite3 >/dev/null || skip "sqlite3 is not installed (Debian package sqlite3)"

cd "$scratch" || exit 1
mkdir -p fake bridge scripts events
kept=0
db="$SION_HOME/sion.db"
# sion-mcp is the stand-in here; sion-sandbox and sion-hooks are found on PATH.
printf '#!/bin/sh\nexec python3 "%s/tests/tools/fake-mcp-bridge.py" "$@"\n' "$SION_SOURCE_DIR" >fake/sion-mcp
chmod +x fake/sion-mcp
export SION_EXEC_PATH="$scratch/fake" SION_FAKE_MCP_LOG="$scratch/bridge.log"

# The bridge's scripts: notes.json offers every tool below; changed.json is the seed's server after
# a tool changed (notices, add_note not offered), with a server that did not answer beside it.
python3 - <<'PY'
import json
def tool(name, effect, idempotent, taints, description):
    return {"name": name, "description": description, "effect": effect, "idempotent": idempotent,
            "taints": taints, "inputSchema": {"type": "object"}}
tools = [
    tool("notes_add_note", "write", True, False, "Keep a note under a name."),
    tool("notes_list_notes", "read", True, False, "List the notes kept, by name."),
    tool("notes_read_note", "read", True, False, "Read a note by its name."),
    tool("notes_delete_note", "write", False, False, "Delete a note by its name."),
    tool("notes_send_note", "external", False, True, "Send a note to an address."),
    tool("notes_fetch", "external", True, True, "Fetch a page."),
    tool("notes_broken", "read", True, False, "Fail."),
    tool("notes_ask", "write", True, False, "Ask for a name."),
    tool("notes_login", "write", True, False, "Ask to sign in."),
    tool("notes_password", "write", True, False, "Ask for a password."),
    tool("notes_summarize", "read", True, False, "Summarise the notes."),
    tool("notes_crash", "write", False, False, "Crash."),
    tool("notes_slow", "write", False, False, "Take long."),
    tool("notes_change", "write", True, False, "Change the tools."),
]
def ask(method, params):
    return {"ask": [{"method": method, "params": dict(params, server="notes")}], "text": "answered {replies}"}
form = {"type": "object", "properties": {"name": {"type": "string", "maxLength": 8}}, "required": ["name"]}
sampling = {"messages": [{"role": "user", "content": {"type": "text", "text": "Summarise: ship on Friday."}}],
            "systemPrompt": "You summarise notes.", "maxTokens": 1000, "model": ""}
calls = {
    "notes_add_note": [{"text": "kept note {name}"}],
    "notes_list_notes": [{"text": "release"}],
    "notes_read_note": [{"text": "Ship the shell and MCP tools on Friday."}],
    "notes_delete_note": [{"text": "deleted note {name}"}],
    "notes_send_note": [{"error": {"code": -32001, "message": "no answer from MCP server notes: it exited"}}],
    "notes_fetch": [{"text": "a page from outside"}],
    "notes_broken": [{"text": "the note store is locked", "isError": True}],
    "notes_ask": [ask("elicitation/create", {"mode": "form", "message": "Name the note.", "requestedSchema": form})],
    "notes_login": [ask("elicitation/create", {"mode": "url", "message": "Sign in.", "elicitationId": "e1",
                                               "url": "https://me@login.example:8443/a?b=1"})],
    "notes_password": [ask("elicitation/create", {"mode": "form", "message": "Your password?", "requestedSchema":
                           {"type": "object", "properties": {"password": {"type": "string"}}}})],
    "notes_summarize": [dict(ask("sampling/createMessage", sampling), text="summary {replies}")],
    "notes_crash": [{"die": 1}],
    "notes_slow": [{"sleep": 60, "text": "slow"}],
    "notes_change": [{"text": "changed", "servers": {"notes": {"state": "connected", "tools": [
        tool("notes_read_note", "read", True, False, "Read a note by its name."),
        tool("notes_export", "external", False, True, "Send every note to an address.")]}}}],
    "notes_export": [{"text": "exported"}],
}
prompts = {"notes": {"release": {"text": "Write the release notes of version {version}."}}}
notes = {"state": "connected", "protocol": "2026-07-28", "server": {"name": "notes", "version": "1.0"}, "tools": tools}
json.dump({"servers": {"notes": notes}, "calls": calls, "prompts": prompts}, open("bridge/notes.json", "w"))
changed = dict(notes, tools=[t for t in tools if t["name"] != "notes_add_note"], notices=[
    "MCP server notes: export_notes is new and was not reviewed, so it is not offered (`sion agent mcp review notes`)",
    "MCP server notes: add_note changed since it was reviewed, so it is not offered (`sion agent mcp review notes`)"])
web = {"state": "failed", "message": "did not answer: the program exited with status 1"}
json.dump({"servers": {"notes": changed, "web": web}, "calls": calls}, open("bridge/changed.json", "w"))
PY

# model NAME TURN...: a scripted model's file, scripts/NAME.json, each TURN a JSON turn or a tool's
# name (a call of it with no input).
model() {
    local name=$1
    shift
    python3 - "$@" >"scripts/$name.json" <<'PY'
import json, sys
turns = [json.loads(t) if t.startswith("{") else {"calls": [{"tool": t, "input": {}}]} for t in sys.argv[1:]]
print(json.dumps({"turns": turns}))
PY
}

expect_exit 0 sion-run create coder && agent=$(cat "$scratch/out")
short=${agent:0:8}
# run BRIDGE ARGS...: a run of the agent with no terminal, the stand-in playing bridge/BRIDGE, its log
# in bridge.log (this run's only).
run() {
    local b=$1
    shift
    : >"$scratch/bridge.log"
    SION_FAKE_MCP="$scratch/bridge/$b" timeout 120 setsid -w sion-run run coder "$short" "$@" </dev/null
}
session_id() { sed -n '1s/^session \([0-9a-f]\{16\}\) for agent [0-9a-f]\{8\}.*$/\1/p' "$scratch/out"; }
# calls TOOL: the tools/call requests of TOOL the bridge got in the last run.
calls() { grep -cE "\"method\":\"tools/call\",.*\"name\":\"$1\",\"traceparent\":\"00-[0-9a-f]{32}-[0-9a-f]{16}-01\"}}\$" "$scratch/bridge.log"; }
expect_calls() {
    local got
    got=$(calls "$1")
    [ "$got" -eq "$2" ] && ok || fail "the bridge got $got calls of $1, want $2"
}
# argv: how the bridge was started in the last run, its words a line each.
argv() { python3 -c 'import json,sys; print("\n".join(json.loads(open(sys.argv[1]).readline())["argv"]))' "$scratch/bridge.log"; }
keep_events() { cp "$scratch/out" "$scratch/events/$((++kept)).jsonl"; }

# The seed's session: the server's tools, named <server>_<tool>, offered and called. No one can be
# asked, so the bridge is started without --ask; the session's first model may write completions.
model notes notes_add_note notes_list_notes notes_read_note '{"text": "The note release says to ship on Friday."}'
python3 - scripts/notes.json <<'PY'
import json, sys
s = json.load(open(sys.argv[1]))
s["turns"][0]["calls"][0]["input"] = {"name": "release", "text": "Ship the shell and MCP tools on Friday."}
s["turns"][2]["calls"][0]["input"] = {"name": "release"}
json.dump(s, open(sys.argv[1], "w"))
PY
seed_calls='→ notes_add_note {"name":"release","text":"Ship the shell and MCP tools on Friday."}'
seed_rest='→ notes_list_notes {}
← release
→ notes_read_note {"name":"release"}
← Ship the shell and MCP tools on Friday.
agent: The note release says to ship on Friday.'
expect_exit 0 run notes.json --task 'Keep a note about the release.' --model script:scripts/notes.json --mcp notes --autonomy L3
sid=$(session_id)
expect_out "session $sid for agent $short
$seed_calls
← kept note release
$seed_rest
session $sid: done" && expect_err ''
expect_text <(argv) argv "serve
--sampling-model
script:$scratch/scripts/notes.json
notes"
expect_calls notes_add_note 1
expect_grep '"method":"mcp/close"' "$scratch/bridge.log"
# The servers are kept with the session: continued without --mcp, it has them again.
model again notes_list_notes '{"text": "done"}'
expect_exit 0 run notes.json --task 'Again.' --model script:scripts/again.json --session "$sid"
expect_grep '^← release$' "$scratch/out"
expect_text <(argv | tail -n 1) argv notes
expect_exit 0 sion-run show "$sid" --json && keep_events
expect_grep '^\{"event":"session",.*"settings":\{.*"mcp":\["notes"\]' "$scratch/out"

# The seed's server after a tool changed: the bridge's notices right after the first line, and the
# tool it does not offer answered as no tool at all. A server that did not answer is named too.
expect_exit 0 run changed.json --task 'Keep a note about the release.' --model script:scripts/notes.json --mcp notes --autonomy L3
sid=$(session_id)
expect_out "session $sid for agent $short
MCP server notes: export_notes is new and was not reviewed, so it is not offered (\`sion agent mcp review notes\`)
MCP server notes: add_note changed since it was reviewed, so it is not offered (\`sion agent mcp review notes\`)
$seed_calls
✗ there is no tool named notes_add_note
$seed_rest
session $sid: done"
expect_calls notes_add_note 0
# show shows the notices where the run printed them, and --json has them as mcp events.
expect_exit 0 sion-run show "$sid"
expect_out "session $sid for agent $short
MCP server notes: export_notes is new and was not reviewed, so it is not offered (\`sion agent mcp review notes\`)
MCP server notes: add_note changed since it was reviewed, so it is not offered (\`sion agent mcp review notes\`)
you: Keep a note about the release.
$seed_calls
✗ there is no tool named notes_add_note
$seed_rest
session $sid: done"
expect_exit 0 sion-run show "$sid" --json && keep_events
expect_text <(grep -c '^{"event":"mcp","server":"notes","text":"MCP server notes: ' "$scratch/out") "mcp events" 2
# Kept as the session's messages: continued, the session goes on (they are not the model's), and
# the new run's are kept beside the first's.
model once '{"text": "done"}'
expect_exit 0 run changed.json --task 'Once more.' --model script:scripts/once.json --session "$sid"
expect_exit 0 sqlite3 "$db" "SELECT count(*) FROM messages WHERE session = '$sid' AND content LIKE '{\"role\":\"mcp\"%'"
expect_out 4
expect_exit 0 run changed.json --task x --model script:scripts/again.json --mcp notes --mcp web --json && keep_events
expect_grep '^\{"event":"mcp","server":"notes","text":"MCP server notes: export_notes is new' "$scratch/out"
expect_grep '^\{"event":"mcp","server":"web","text":"MCP server web is not offered: did not answer: the program exited with status 1"\}$' "$scratch/out"

# The journal: a call neither read-only nor idempotent is made once, and answered from the record
# after, in the run and in the next; an idempotent one ("repeats run again") runs each time.
input='{"name": "release"}'
model journal "{\"calls\": [{\"tool\": \"notes_delete_note\", \"input\": $input}]}" \
    "{\"calls\": [{\"tool\": \"notes_delete_note\", \"input\": $input}]}" \
    "{\"calls\": [{\"tool\": \"notes_add_note\", \"input\": $input}]}" \
    "{\"calls\": [{\"tool\": \"notes_add_note\", \"input\": $input}]}" '{"text": "done"}'
expect_exit 0 run notes.json --task 'Delete it twice.' --model script:scripts/journal.json --mcp notes --autonomy L3
sid=$(session_id)
expect_out "session $sid for agent $short
→ notes_delete_note {\"name\":\"release\"}
← deleted note release
→ notes_delete_note {\"name\":\"release\"}
← [made before in this session: not made again; its answer then]
deleted note release
→ notes_add_note {\"name\":\"release\"}
← kept note release
→ notes_add_note {\"name\":\"release\"}
← kept note release
agent: done
session $sid: done"
expect_calls notes_delete_note 1
expect_calls notes_add_note 2
expect_exit 0 run notes.json --task 'Once more.' --model script:scripts/journal.json --session "$sid"
expect_calls notes_delete_note 0
expect_grep '^← \[made before in this session: not made again; its answer then\]$' "$scratch/out"

# A call that got no answer (-32001: the server died or its time ran out) is uncertain: the model is
# told, and the same call is never made again, in this session.
model uncertain "{\"calls\": [{\"tool\": \"notes_send_note\", \"input\": $input}]}" '{"text": "done"}'
expect_exit 0 run notes.json --task 'Send it.' --model script:scripts/uncertain.json --mcp notes --autonomy L5
sid=$(session_id)
expect_out "session $sid for agent $short
→ notes_send_note {\"name\":\"release\"}
✗ no answer from MCP server notes: it exited
agent: done
session $sid: done"
expect_calls notes_send_note 1
[ "$(sqlite3 "$db" "SELECT state FROM journal WHERE session = '$sid' AND tool = 'notes_send_note'")" = uncertain ] &&
    ok || fail "the call with no answer is not uncertain in the journal"
expect_exit 0 run notes.json --task 'Send it again.' --model script:scripts/uncertain.json --session "$sid" --json && keep_events
expect_calls notes_send_note 0
expect_grep '"state":"uncertain","text":"this call was made before and got no answer \(no answer from MCP server notes: it exited\): it may have taken effect, so it is not made again"' "$scratch/out"

# Taint: what an external tool returns taints the session, and the next external call needs one
# level more (L5 asks, and no one is here). A tool's own error is an answer, marked as one.
model taint notes_fetch "{\"calls\": [{\"tool\": \"notes_send_note\", \"input\": $input}]}" notes_broken '{"text": "done"}'
expect_exit 0 run notes.json --task 'Fetch.' --model script:scripts/taint.json --mcp notes --autonomy L5
sid=$(session_id)
expect_out "session $sid for agent $short
→ notes_fetch {}
← a page from outside
the session is tainted: what notes_fetch returned came from outside
→ notes_send_note {\"name\":\"release\"}
✗ notes_send_note is external, which asks a person at L5, since the session is tainted, and there is no one to ask here (no terminal)
→ notes_broken {}
✗ the note store is locked
agent: done
session $sid: done"
expect_calls notes_send_note 0

# A bridge that dies costs the session its servers' tools, not the session: the call it died in has
# no answer (and is uncertain), the model is told the servers did not answer, and the run goes on.
model crash notes_crash notes_list_notes '{"text": "done"}'
expect_exit 0 run notes.json --task 'Crash.' --model script:scripts/crash.json --mcp notes --autonomy L3
sid=$(session_id)
expect_out "session $sid for agent $short
→ notes_crash {}
✗ no answer: sion-mcp exited with status 1
the MCP servers did not answer: sion-mcp exited with status 1
→ notes_list_notes {}
✗ there is no tool named notes_list_notes: MCP server notes did not answer: sion-mcp exited with status 1
agent: done
session $sid: done"
expect_exit 0 run notes.json --task 'Again.' --model script:scripts/crash.json --session "$sid"
expect_calls notes_crash 0
expect_grep '^✗ this call was made before and got no answer \(no answer: sion-mcp exited with status 1\): it may have taken effect, so it is not made again$' "$scratch/out"
expect_grep '^← release$' "$scratch/out"

# sion-run killed during a journaled call: continued, the call is closed as interrupted and never made
# again. The bridge it left is stopped here.
model slow notes_slow '{"text": "done"}'
: >"$scratch/bridge.log"
SION_FAKE_MCP="$scratch/bridge/notes.json" setsid sion-run run coder "$short" --task 'Slow.' \
    --model script:scripts/slow.json --mcp notes --autonomy L3 </dev/null >"$scratch/slow.out" 2>&1 &
runner=$!
for _ in $(seq 300); do [ "$(calls notes_slow)" -eq 1 ] && break; sleep 0.1; done
expect_calls notes_slow 1
kill -KILL "$runner"
wait "$runner" 2>/dev/null
kill "$(python3 -c 'import json,sys; print(json.loads(open(sys.argv[1]).readline())["pid"])' "$scratch/bridge.log")"
sid=$(sed -n '1s/^session \([0-9a-f]\{16\}\) .*/\1/p' "$scratch/slow.out")
expect_exit 0 run notes.json --task 'Go on.' --model script:scripts/slow.json --session "$sid"
expect_calls notes_slow 0
expect_grep '^✗ this call was made before and got no answer \(the session stopped before this call was answered\): it may have taken effect, so it is not made again$' "$scratch/out"

# The profile's standing servers (sion agent mcp give coder notes) are the session's without --mcp.
sqlite3 "$db" "INSERT INTO profile_mcp (profile, server) VALUES ('coder', 'notes')" && ok || fail "cannot give coder notes"
expect_exit 0 run notes.json --task 'List.' --model script:scripts/again.json
expect_grep '^← release$' "$scratch/out"
expect_text <(argv | tail -n 1) argv notes
sqlite3 "$db" "DELETE FROM profile_mcp" && ok || fail "cannot drop notes"

# A model of a stand-in chat server on loopback (local:, OpenAI's wire format) records what it is
# sent: the servers' paragraph ends every request, fresh each turn (the tools changed after
# notes_change), never stored, and the system prompt the same in every request. After the task it
# is a message of its own; after calls, the end of the last result's text, so that the task goes on
# for the server (the reasoning of its calls is given back: t0705).
cat >chat.py <<'PY'
import http.server, json, sys
answers, log = json.load(open(sys.argv[1])), sys.argv[2]
asked = []
class Chat(http.server.BaseHTTPRequestHandler):
    def log_message(self, *a):
        pass
    def do_POST(self):
        body = self.rfile.read(int(self.headers["Content-Length"]))
        with open(log, "ab") as f:
            f.write(body + b"\n")
        a = answers[min(len(asked), len(answers) - 1)]
        asked.append(1)
        chunks = [{"choices": [{"index": 0, "delta": {"role": "assistant", "content": a.get("text", "")}}]}]
        for i, c in enumerate(a.get("calls", [])):
            chunks.append({"choices": [{"index": 0, "delta": {"tool_calls": [{"index": i, "id": "c%d" % len(asked),
                "type": "function", "function": {"name": c, "arguments": "{}"}}]}}]})
        chunks.append({"choices": [{"index": 0, "delta": {}, "finish_reason": "tool_calls" if a.get("calls") else "stop"}]})
        chunks.append({"choices": [], "usage": {"prompt_tokens": 10, "completion_tokens": 5}})
        out = b"".join(b"data: " + json.dumps(c).encode() + b"\n\n" for c in chunks) + b"data: [DONE]\n\n"
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Content-Length", str(len(out)))
        self.end_headers()
        self.wfile.write(out)
server = http.server.HTTPServer(("127.0.0.1", 0), Chat)
print(server.server_address[1], flush=True)
server.serve_forever()
PY
# chat ANSWERS ARGS...: a run whose model is the stand-in playing ANSWERS, its requests in chat.log.
chat() {
    local answers=$1
    shift
    echo "$answers" >answers.json
    rm -f chat.log
    coproc CHAT { exec python3 chat.py answers.json chat.log; }
    local port
    read -r port <&"${CHAT[0]}"
    SION_LOCAL_MODEL_URL="http://127.0.0.1:$port/v1" SION_LOCAL_MODEL_KEY=k expect_exit 0 run "$@"
    kill "$CHAT_PID" && wait "$CHAT_PID" 2>/dev/null
}
chat '[{"calls": ["notes_change"]}, {"calls": ["notes_export"]}, {"text": "done"}]' \
    notes.json --task 'Change.' --model local:m --mcp notes --autonomy L5
sid=$(session_id)
expect_grep '^← exported$' "$scratch/out"
python3 - chat.log >requests.txt <<'PY'
import json, sys
for n, line in enumerate(open(sys.argv[1]), 1):
    body = json.loads(line)
    m = body["messages"]
    print(n, "system", "same" if m[0] == json.loads(open(sys.argv[1]).readline())["messages"][0] else "differs")
    print(n, "last", m[-1]["role"], m[-1]["content"].split("\n")[-1])
    print(n, "tools", " ".join(t["function"]["name"] for t in body["tools"] if t["function"]["name"] in ("notes_list_notes", "notes_export")))
PY
expect_text requests.txt requests '1 system same
1 last user - `notes` — connected. 14 tools, named `notes_*`.
1 tools notes_list_notes
2 system same
2 last tool - `notes` — connected. 2 tools, named `notes_*`.
2 tools notes_export
3 system same
3 last tool - `notes` — connected. 2 tools, named `notes_*`.
3 tools notes_export'
expect_grep '"role":"tool","tool_call_id":"c1","content":"changed\\n\\n## The MCP servers you have\\n' chat.log
expect_grep '^\{.*"role":"user","content":"## The MCP servers you have\\nRead at the start of this turn\. A server'"'"'s tools can change between turns, and a server can stop answering, so this is the list that is true now — not whatever was said about them earlier in the conversation\.\\n- `notes` — connected\. 14 tools, named `notes_\*`\."\}\]' chat.log
[ "$(sqlite3 "$db" "SELECT count(*) FROM messages WHERE session = '$sid' AND content LIKE '%The MCP servers you have%'")" -eq 0 ] &&
    ok || fail "the servers' paragraph was stored as a message"
# With the bridge gone, the paragraph says so.
chat '[{"calls": ["notes_crash"]}, {"text": "done"}]' notes.json --task 'Crash.' --model local:m --mcp notes --autonomy L3
expect_grep '"content":"[^"]*\\n- `notes` — did not answer: sion-mcp exited with status 1"\}\]' chat.log
# A completion for a server is written from its messages alone: nothing of the session's.
chat '[{"calls": ["notes_summarize"]}, {"text": "Ship on Friday."}, {"text": "done"}]' \
    notes.json --task 'Summarise.' --model local:m --mcp notes --autonomy L3
expect_grep '^← summary \[\{"content":\{"text":"Ship on Friday\.","type":"text"\},"model":"local:m","role":"assistant","stopReason":"endTurn"\}\]$' "$scratch/out"
expect_grep '^MCP server notes had local:m write a completion \(10 tokens read, 5 written\)$' "$scratch/out"
python3 - chat.log >sampled.txt <<'PY'
import json, sys
body = json.loads(open(sys.argv[1]).readlines()[1])
print(json.dumps(body["messages"]), "tools" in body and len(body["tools"]))
PY
expect_text sampled.txt sampled '[{"role": "system", "content": "You summarise notes."}, {"role": "user", "content": "Summarise: ship on Friday."}] False'

# Sampling with the scripted model: its usage is the run's, and a completion that would pass the
# token budget is refused with an error reply.
model sample '{"calls": [{"tool": "notes_summarize"}], "usage": {"input_tokens": 100, "output_tokens": 20}}' \
    '{"text": "Ship on Friday.", "usage": {"input_tokens": 40, "output_tokens": 10}}' \
    '{"text": "done", "usage": {"input_tokens": 200, "output_tokens": 5}}'
expect_exit 0 run notes.json --task 'Summarise.' --model script:scripts/sample.json --mcp notes --json && keep_events
expect_grep '"text":"MCP server notes had script:[^"]*/scripts/sample.json write a completion \(40 tokens read, 10 written\)"' "$scratch/out"
expect_grep '^\{"event":"end",.*"usage":\{"input_tokens":340,"output_tokens":35,"cache_read_tokens":0,"cache_write_tokens":0\}\}$' "$scratch/out"
expect_exit 0 run notes.json --task 'Summarise.' --model script:scripts/sample.json --mcp notes --budget-tokens 700
sid=$(session_id)
expect_out "session $sid for agent $short
→ notes_summarize {}
← summary [{\"code\":-32603,\"message\":\"the run's token budget of 700 tokens would be passed: 120 are used, and this completion may take 1018\"}]
agent: Ship on Friday.
session $sid: done"

# A server's questions at a terminal (a pseudo-terminal): asked, checked, answered; a secret declined
# without asking; an address shown with its host, never opened. With --json, or no terminal, no one
# is asked: the bridge is started without --ask, and a question that comes is declined.
cat >pty_lines.py <<'PY'
# pty_lines.py LOG ANSWER... -- COMMAND...: COMMAND with a pseudo-terminal, each ANSWER typed at its
# next question ("> " at a line's start, or "[y/N] "); EOF types the end of input.
import os, re, select, signal, sys, termios, time
log, rest = sys.argv[1], sys.argv[2:]
cut = rest.index("--")
answers, command = rest[:cut], rest[cut + 1:]
pid, master = os.forkpty()
if pid == 0:
    os.execvp(command[0], command)
seen, asked, deadline = b"", 0, time.monotonic() + 120
while time.monotonic() < deadline:
    if select.select([master], [], [], 0.2)[0]:
        try:
            chunk = os.read(master, 4096)
        except OSError:
            chunk = b""
        if not chunk:
            break
        seen += chunk
        while len(re.findall(rb"(?:^|\n)> |\[y/N\] ", seen)) > asked:
            a = answers[asked] if asked < len(answers) else "EOF"
            os.write(master, bytes([termios.tcgetattr(master)[6][termios.VEOF][0]]) if a == "EOF" else a.encode() + b"\n")
            asked += 1
else:
    os.kill(pid, signal.SIGKILL)
_, status = os.waitpid(pid, 0)
open(log, "wb").write(seen.replace(b"\r\n", b"\n"))
sys.exit(os.waitstatus_to_exitcode(status))
PY
# pty BRIDGE ANSWER... -- ARGS...: a run at a terminal; stdout is the terminal too, so the transcript
# and the questions are in tty.log in the order they came (without colour: t0313 tries that).
pty() {
    local b=$1 answers=()
    shift
    while [ "$1" != -- ]; do answers+=("$1") && shift; done
    shift
    : >"$scratch/bridge.log"
    expect_exit 0 env SION_FAKE_MCP="$scratch/bridge/$b" python3 pty_lines.py tty.log "${answers[@]}" -- \
        sion-run run coder "$short" --task 'Ask me.' --mcp notes --autonomy L3 --color never "$@"
}
model ask notes_ask notes_login notes_password notes_ask '{"text": "done"}'
pty notes.json much-too-long release y EOF -- --model script:scripts/ask.json
sid=$(sed -n '1s/^session \([0-9a-f]\{16\}\) .*/\1/p' tty.log)
expect_text tty.log terminal "session $sid for agent $short
→ notes_ask {}
MCP server notes asks: \"Name the note.\"
  name (text of at most 8 characters, required)
Answer with the value; an empty line declines, the end of input cancels.
> much-too-long
name: give text of at most 8 characters, not 'much-too-long'
Answer again.
> release
MCP server notes asked for input: accepted
← answered [{\"action\":\"accept\",\"content\":{\"name\":\"release\"}}]
→ notes_login {}
MCP server notes asks: \"Sign in.\"
MCP server notes wants you to open https://me@login.example:8443/a?b=1 (host login.example)
It is not opened for you. Did you open it? [y/N] y
MCP server notes asked for input: accepted: the person says they opened it
← answered [{\"action\":\"accept\"}]
→ notes_password {}
MCP server notes asked for input: declined without asking: it asks for a password (field 'password')
← answered [{\"action\":\"decline\"}]
→ notes_ask {}
MCP server notes asks: \"Name the note.\"
  name (text of at most 8 characters, required)
Answer with the value; an empty line declines, the end of input cancels.
> 
MCP server notes asked for input: cancelled
← answered [{\"action\":\"cancel\"}]
agent: done
session $sid: done"
expect_grep '^--ask$' <(argv)
pty notes.json -- --model script:scripts/ask.json --json
expect_grep '^\{"event":"mcp","server":"notes","text":"MCP server notes asked for input: declined, since there is no one to ask here \(--json\)"\}$' tty.log
expect_text <(argv | grep -c -- --ask) ask 0
expect_exit 0 run notes.json --task 'Ask.' --model script:scripts/ask.json --mcp notes --autonomy L3
expect_grep '^MCP server notes asked for input: declined, since there is no one to ask here \(no terminal\)$' "$scratch/out"
expect_grep '^← answered \[\{"action":"decline"\}\]$' "$scratch/out"
# show puts what a server asked during a call between the call and its result, as the run did.
sed -n '2,$p' "$scratch/out" >live
expect_exit 0 sion-run show "$(session_id)"
expect_text <(sed -n '3,$p' "$scratch/out") "show of the asking session" "$(cat live)"

# A prompt as the task: its text is the person's message, and its words are the server's, so the
# session is tainted from its start. Its server is connected for it.
model text '{"text": "done"}'
expect_exit 0 run notes.json --prompt notes:release version=1.2 --model script:scripts/text.json --autonomy L3
sid=$(session_id)
expect_out "session $sid for agent $short
the session is tainted: its task is the prompt notes:release, whose words are the server's
agent: done
session $sid: done"
expect_text <(argv | tail -n 1) argv notes
expect_exit 0 sion-run show "$sid"
expect_grep '^you: Write the release notes of version 1\.2\.$' "$scratch/out"
expect_exit 0 sion-run show "$sid" --json && keep_events
expect_grep '^\{"event":"end",.*"tainted":true,' "$scratch/out"

# Bad input: each refused with its line and code, and no session stored.
sessions=$(sqlite3 "$db" 'SELECT count(*) FROM sessions')
bad() {
    local code=$1 message=$2
    shift 2
    expect_exit "$code" run notes.json "$@" --model script:scripts/text.json && expect_err "$message"
}
bad 64 "sion-run: invalid server name 'Notes': give 1 to 32 lowercase letters, digits and hyphens" --task x --mcp Notes
bad 64 "sion-run: invalid server name '-x': give 1 to 32 lowercase letters, digits and hyphens" --task x --mcp=-x
bad 64 "sion-run: give the task with --task or --prompt, not both" --task x --prompt notes:release
bad 64 "sion-run: --prompt takes SERVER:PROMPT, not 'notes'" --prompt notes
bad 64 "sion-run: give the prompt's arguments as NAME=VALUE, not 'version'" --prompt notes:release version
bad 64 "sion-run: unexpected operand 'version=1'" --task x version=1
bad 1 "error: cannot get the prompt nope of MCP server notes: MCP server notes has no prompt nope" --prompt notes:nope
: >"$scratch/bridge.log"
expect_exit 1 env SION_FAKE_MCP="$scratch/none.json" setsid -w sion-run run coder "$short" --task x \
    --model script:scripts/text.json --mcp notes </dev/null
expect_grep '^sion-mcp: cannot read the script SION_FAKE_MCP names: ' "$scratch/err"
expect_grep '^error: sion-mcp serve does not work: sion-mcp exited with status 66$' "$scratch/err"
expect_exit 1 env SION_EXEC_PATH="$scratch/nowhere" PATH=/usr/bin:/bin "$SION_BIN/sion-run" run coder "$short" \
    --task x --model script:scripts/text.json --mcp notes </dev/null && expect_err 'error: cannot start sion-mcp serve: sion-mcp not found'
[ "$(sqlite3 "$db" 'SELECT count(*) FROM sessions')" -eq "$sessions" ] && ok || fail "a refused run stored a session"

# Every event printed above passes schemas/run.event.json.
expect_exit 0 python3 "$SION_SOURCE_DIR/tests/e2e/check_run_events.py" "$SION_SOURCE_DIR/schemas" "$scratch"/events/*.jsonl &&
    expect_out ''

done_testing
