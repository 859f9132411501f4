#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The run's trace (sion-run(1), "The trace"), exported to a receiver that decodes it with
# OpenTelemetry's own protocol definitions (tests/otel/receiver.mjs: the official .proto files read
# with protobufjs; JSON by the protocol's JSON mapping), started on 127.0.0.1 by this test: a
# scripted session with a fallback, a shell call behind a before-tool hook and a call of an MCP
# server over HTTP exports spans that decode, nest as sion-run(1) says and carry GenAI's attributes
# with the right values, in http/protobuf and http/json; the MCP server is sent the call's
# traceparent (header and _meta); with content capture off no prompt, command or result is in any
# span, and with it on they are, but a kept credential a tool printed is not; a collector that is
# not there costs one line and the run ends as before, its spans kept; and `show --trace` of a
# known trace, line by line, and as OTLP JSON.
. "$(dirname "$0")/lib.sh"
need_bwrap
command -v node >/dev/null || skip "node is not installed (Debian package nodejs)"
if ! "$SION_SOURCE_DIR/scripts/install-peers" 2>"$scratch/err"; then
    fail "scripts/install-peers failed: $(cat "$scratch/err")"
    done_testing
    exit 1
fi
export PYTHONDONTWRITEBYTECODE=1

cd "$scratch" || exit 1
mkdir work notes hooks
id=$(sion agent create coder) && ok || fail "sion agent create coder"
short=${id:0:8}

# The receiver, and the notes server over HTTP (logged in to with a client's credentials), each
# ending with this test.
node "$SION_SOURCE_DIR/tests/otel/receiver.mjs" otel.port spans.jsonl --lifetime 600 2>otel.err &
receiver=$!
export CC_SECRET='cs-Trace-Qw3Er5Ty7Ui9'
mkfifo notes.in
python3 "$SION_SOURCE_DIR/tests/fixtures/mcp/notes_http_server.py" --dir notes --client "cc-app:$CC_SECRET" \
    --log "$scratch/notes.log" <notes.in >notes.port 2>notes.err &
server=$!
exec {hold}>notes.in
trap 'exec {hold}>&-; [ -n "${held:-}" ] && exec {held}>&-; kill "$receiver" "$server" 2>/dev/null; rm -rf "$scratch"' EXIT
wait_until 10 test -s otel.port || fail "the receiver did not start: $(cat otel.err)"
wait_until 10 test -s notes.port || fail "the notes server did not start: $(cat notes.err)"
otel=$(cat otel.port)
port=$(head -n 1 notes.port)
expect_exit 0 timeout 60 sion-mcp add web --url "http://127.0.0.1:$port/mcp" \
    --client-id cc-app --client-secret-env CC_SECRET --client-credentials </dev/null
printf 'a note to read\n' >notes/plans.txt

# A before-tool hook on the shell, and a credential the workspace happens to hold.
printf '#!/bin/sh\nexit 0\n' >hooks/allow.sh && chmod +x hooks/allow.sh
expect_exit 0 sion agent hooks add --event before-tool --tool shell -- "$scratch/hooks/allow.sh"
secret='tk-Trace-Zx8Cv6Bn4Mm2Lk0'
printf '%s\n' "$secret" | sion agent credential add TRACE_TOKEN >/dev/null && ok || fail "credential add"
printf '%s\n' "$secret" >work/token.txt

cat >busy.json <<'JSON'
{"turns": [{"fail": {"status": 529, "message": "Overloaded"}}]}
JSON
cat >work.json <<'JSON'
{"turns": [
  {"calls": [{"tool": "shell", "input": {"command": "echo shell-said-hello; cat token.txt"}}],
   "usage": {"input_tokens": 1200, "output_tokens": 30, "cache_read_tokens": 1000, "cache_write_tokens": 150},
   "model": "claude-test-1", "id": "msg_01"},
  {"calls": [{"tool": "web_read_note", "input": {"name": "plans"}}, {"tool": "web_read_note", "input": {"name": "missing-Qz9"}}],
   "usage": {"input_tokens": 1300, "output_tokens": 20}},
  {"text": "All tidy.", "usage": {"input_tokens": 1400, "output_tokens": 5}, "finish_reason": "end_turn"}
]}
JSON
# run ENV...: the session, with ENV (OTEL_* and the like) set for it.
run() {
    env "$@" timeout 120 sion agent run coder "$short" --task 'Tidy the garden-7Qx please' \
        --model script:busy.json --model script:work.json --workspace work --shell --mcp web \
        --autonomy L3 </dev/null
}
session_of() { sed -n 's/^session \([0-9a-f]\{16\}\) for agent .*/\1/p' "$scratch/out"; }

# The spans of the session in http/protobuf, then a second run in http/json.
expect_exit 0 run OTEL_EXPORTER_OTLP_ENDPOINT="http://127.0.0.1:$otel"
expect_grep "^the model script:$scratch/busy.json failed: HTTP 529: Overloaded; asking script:$scratch/work.json$" "$scratch/out"
first=$(session_of)
expect_exit 0 run OTEL_EXPORTER_OTLP_TRACES_ENDPOINT="http://127.0.0.1:$otel/v1/traces" \
    OTEL_EXPORTER_OTLP_PROTOCOL=http/json OTEL_SERVICE_NAME=garden
second=$(session_of)
wait_until 10 test "$(grep -c . spans.jsonl)" -ge 2 || fail "the receiver got nothing"

python3 - spans.jsonl notes.log "$first" "$second" "$scratch" "$secret" <<'PY' && ok || fail "the exported spans are not as sion-run(1) says"
import json, sys
lines = [json.loads(l) for l in open(sys.argv[1])]
errors = [l["error"] for l in lines if "error" in l]
assert not errors, errors
log = [json.loads(l) for l in open(sys.argv[2])]
first, second, scratch, secret = sys.argv[3:7]

def run(session, content_type):
    roots = [s for s in lines if s["name"] == "invoke_agent sion" and s["attributes"]["gen_ai.conversation.id"] == session]
    assert len(roots) == 1, roots
    root = roots[0]
    spans = [s for s in lines if s["traceId"] == root["traceId"]]
    assert all(s["contentType"] == content_type for s in spans), content_type
    by_id = {s["spanId"]: s for s in spans}
    assert len(by_id) == len(spans), "a span id twice"
    for s in spans:
        assert s is root or s["parentSpanId"] in by_id, ("a span whose parent is not in the trace", s["name"])
        assert int(s["start"]) <= int(s["end"]), s["name"]
        if s is not root:
            parent = by_id[s["parentSpanId"]]
            assert int(parent["start"]) <= int(s["start"]) and int(s["end"]) <= int(parent["end"]) + 1000, \
                ("a span outside its parent", s["name"], parent["name"])
    children = lambda p: [s for s in spans if s["parentSpanId"] == p["spanId"]]
    return root, spans, children

for session, content_type, service in ((first, "application/x-protobuf", "sion"), (second, "application/json", "garden")):
    root, spans, children = run(session, content_type)
    assert root["parentSpanId"] == "" and root["kind"] == 1, root
    assert root["resource"]["service.name"] == service, root["resource"]
    assert root["resource"]["service.version"] == root["scope"]["version"] != "", root
    assert root["scope"]["name"] == "sion", root["scope"]
    a = root["attributes"]
    assert a["gen_ai.operation.name"] == "invoke_agent" and a["gen_ai.agent.name"] == "coder", a
    assert a["sion.run.state"] == "done" and a["sion.run.calls"] == 3, a
    assert a["gen_ai.usage.input_tokens"] == 3900 and a["gen_ai.usage.cache_read.input_tokens"] == 1000, a
    assert root["status"]["code"] == 0, root["status"]

    # The model calls: the busy model failed, and the next took over, saying why.
    chats = [s for s in children(root) if s["name"].startswith("chat ")]
    assert [c["attributes"]["sion.model"] for c in chats] == ["script:%s/%s.json" % (scratch, m) for m in ("busy", "work", "work", "work")], chats
    busy, turn1, turn2, turn3 = chats
    assert busy["kind"] == 3 and busy["status"] == {"code": 2, "message": "HTTP 529: Overloaded"}, busy
    assert busy["attributes"]["error.type"] == "unavailable", busy["attributes"]
    t = turn1["attributes"]
    assert t["gen_ai.operation.name"] == "chat" and t["gen_ai.provider.name"] == "script", t
    assert t["gen_ai.request.model"] == scratch + "/work.json" and turn1["name"] == "chat " + scratch + "/work.json", t
    assert t["sion.fallback.from"] == "script:%s/busy.json" % scratch, t
    assert t["sion.fallback.reason"] == "the model script:%s/busy.json failed: HTTP 529: Overloaded" % scratch, t
    assert t["gen_ai.response.model"] == "claude-test-1" and t["gen_ai.response.id"] == "msg_01", t
    assert t["gen_ai.response.finish_reasons"] == ["tool_use"], t
    assert (t["gen_ai.usage.input_tokens"], t["gen_ai.usage.output_tokens"]) == (1200, 30), t
    assert (t["gen_ai.usage.cache_read.input_tokens"], t["gen_ai.usage.cache_write.input_tokens"]) == (1000, 150), t
    assert "sion.fallback.from" not in turn2["attributes"], "the busy model was left alone for the rest of the run"
    assert turn3["attributes"]["gen_ai.response.finish_reasons"] == ["end_turn"], turn3
    assert "gen_ai.response.model" not in turn2["attributes"], turn2

    # The shell call: its steps, its hook, the sandbox's time.
    tools = [s for s in children(root) if s["name"].startswith("execute_tool ")]
    assert [s["name"] for s in tools] == ["execute_tool shell"] + ["execute_tool web_read_note"] * 2, tools
    shell = tools[0]
    note = next(t for t in tools[1:] if t["attributes"]["sion.call.state"] == "ok")
    missing = next(t for t in tools[1:] if t["attributes"]["sion.call.state"] == "error")
    # A call that failed: ERROR, and what it said is not in its span.
    assert missing["status"] == {"code": 2, "message": "error"} and missing["attributes"]["error.type"] == "error", missing
    a = shell["attributes"]
    assert a["gen_ai.operation.name"] == "execute_tool" and a["gen_ai.tool.name"] == "shell", a
    assert a["gen_ai.tool.call.id"].startswith("call_1_"), a
    assert a["sion.policy.decision"] == "run" and a["sion.call.state"] == "ok", a
    assert a["sion.from_outside"] is False and a["sion.tainted"] is False, a
    assert [s["name"] for s in children(shell)] == ["policy", "hooks before-tool", "call", "hooks after-tool"], children(shell)
    policy, before, call, after = children(shell)
    assert policy["attributes"]["sion.policy.decision"] == "run", policy
    hook = children(before)
    assert [h["name"] for h in hook] == ["hook 1"] and hook[0]["attributes"]["sion.hook.command"] == scratch + "/hooks/allow.sh", hook
    assert before["attributes"]["sion.hooks.ran"] == 1 and after["attributes"]["sion.hooks.ran"] == 0, (before, after)
    sandbox = children(call)
    assert [s["name"] for s in sandbox] == ["sandbox"], sandbox
    assert sandbox[0]["attributes"]["sion.sandbox.exit"] == 0 and sandbox[0]["kind"] == 3, sandbox

    # The MCP call: its review says whether it taints (read_note reads what is on this machine);
    # the server's time under its run.
    a = note["attributes"]
    assert a["gen_ai.tool.name"] == "web_read_note" and a["sion.call.state"] == "ok", a
    assert a["sion.tainted"] == a["sion.from_outside"] == root["attributes"]["sion.tainted"], (a, root)
    call = [s for s in children(note) if s["name"] == "call"]
    assert len(call) == 1, children(note)
    server = children(call[0])
    assert [s["name"] for s in server] == ["mcp server"] and server[0]["attributes"]["sion.mcp.tool"] == "web_read_note", server
    # The server was given the call's trace context, as a header and in _meta.
    want = "00-%s-%s-01" % (note["traceId"], call[0]["spanId"])
    asked = [e for e in log if e.get("rpc") == "tools/call" and e.get("traceparent") == want]
    assert len(asked) == 1 and asked[0]["meta_traceparent"] == want, (want, [e for e in log if e.get("rpc") == "tools/call"])

    # Content capture is off: nothing the person, the model or a tool said is in a span.
    text = json.dumps(spans)
    for said in ("garden-7Qx", "shell-said-hello", "a note to read", "All tidy", "missing-Qz9", secret):
        assert said not in text, said
# Nothing another request asked carried a trace context.
assert all(e.get("traceparent") is None for e in log if e.get("rpc") != "tools/call"), log
PY

# The same spans are kept with the session, whether or not they were exported.
expect_exit 0 sion agent show "$first" --trace --json
python3 - "$scratch/out" "$first" spans.jsonl <<'PY' && ok || fail "show --trace --json is not the trace exported"
import json, sys
out = open(sys.argv[1]).read()
assert out.count("\n") == 1, "not one line"
request = json.loads(out)
kept = [s for rs in request["resourceSpans"] for ss in rs["scopeSpans"] for s in ss["spans"]]
exported = [json.loads(l) for l in open(sys.argv[3])]
root = next(s for s in exported if s["attributes"].get("gen_ai.conversation.id") == sys.argv[2])
sent = sorted(s["spanId"] for s in exported if s["traceId"] == root["traceId"])
assert sorted(s["spanId"] for s in kept) == sent, (len(kept), len(sent))
assert all(s["traceId"] == root["traceId"] for s in kept)
assert all(isinstance(s["startTimeUnixNano"], str) for s in kept), "64-bit integers are strings in OTLP JSON"
PY

# Content captured, on the operator's word: the prompt, the command, the results; never the
# credential the command printed.
: >spans.jsonl
expect_exit 0 run OTEL_EXPORTER_OTLP_ENDPOINT="http://127.0.0.1:$otel" OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT=true
captured=$(session_of)
wait_until 10 test "$(grep -c . spans.jsonl)" -ge 1 || fail "the receiver got nothing"
grep -q 'shell-said-hello' spans.jsonl && ok || fail "the shell's result is not in its span with capture on"
grep -q 'garden-7Qx' spans.jsonl && ok || fail "the task is not in the spans with capture on"
grep -q 'echo shell-said-hello' spans.jsonl && ok || fail "the command is not in its span with capture on"
grep -q '\[redacted\]' spans.jsonl && ok || fail "the credential was not redacted"
expect_exit 1 grep -q -- "$secret" spans.jsonl # a kept credential is in no span
expect_exit 0 sion agent show "$captured" --trace --json
cp "$scratch/out" kept.json
expect_exit 1 grep -q -- "$secret" kept.json # nor in one kept

# A collector that is not there (a port held, bound and not listening, so that no other suite's
# server takes it): one line, the run as before, the spans kept.
mkfifo held.in
python3 -c 'import socket, sys
s = socket.socket()
s.bind(("127.0.0.1", 0))
print(s.getsockname()[1], flush=True)
sys.stdin.read()' <held.in >held.port &
exec {held}>held.in
wait_until 10 test -s held.port || fail "no port could be held"
otel=$(cat held.port)
expect_exit 0 run OTEL_EXPORTER_OTLP_ENDPOINT="http://127.0.0.1:$otel"
grep -q '^agent: All tidy.$' "$scratch/out" && ok || fail "the run did not end as before"
[ "$(grep -c "cannot export" "$scratch/err")" -eq 1 ] && ok || fail "not one line about the collector: $(cat "$scratch/err")"
expect_grep "^sion-run: cannot export the run's trace: cannot reach 'http://127.0.0.1:$otel/v1/traces': .*; its spans are kept with the session \\(sion agent show SESSION --trace\\)$" "$scratch/err"
expect_exit 0 sion agent show "$(session_of)" --trace
[ "$(grep -c '^  execute_tool ' "$scratch/out")" -eq 3 ] && ok || fail "the spans were not kept: $(cat "$scratch/out")"
# A variable that is wrong is told, and the trace only kept.
expect_exit 0 run OTEL_EXPORTER_OTLP_ENDPOINT="http://127.0.0.1:$otel" OTEL_EXPORTER_OTLP_PROTOCOL=grpc
expect_grep "^sion-run: the OTLP protocol is 'grpc': sion speaks http/protobuf or http/json; the run's trace is kept with the session, not exported$" "$scratch/err"

# show --trace of a known trace, line by line.
known=$first
expect_exit 0 sqlite3 "$SION_HOME/sion.db" "DELETE FROM spans WHERE session = '$known';
INSERT INTO spans VALUES
 ('$known', '4bf92f3577b34da6a3ce929d0e0e4736', '00000000000000a1', NULL, 'invoke_agent sion', 1, 1796642612000000000, 1796642616120000000, '{}', NULL, NULL),
 ('$known', '4bf92f3577b34da6a3ce929d0e0e4736', '00000000000000a2', '00000000000000a1', 'chat claude-opus-4-5', 3, 1796642612000000000, 1796642612310000000, '{}', 'HTTP 529: Overloaded', NULL),
 ('$known', '4bf92f3577b34da6a3ce929d0e0e4736', '00000000000000a3', '00000000000000a1', 'chat gpt-5', 3, 1796642612310000000, 1796642613950000000, '{}', NULL, NULL),
 ('$known', '4bf92f3577b34da6a3ce929d0e0e4736', '00000000000000a4', '00000000000000a1', 'execute_tool shell', 1, 1796642613950000000, 1796642614360000000, '{}', NULL, NULL),
 ('$known', '4bf92f3577b34da6a3ce929d0e0e4736', '00000000000000a5', '00000000000000a4', 'policy', 1, 1796642613950000000, 1796642613950020000, '{}', NULL, NULL),
 ('$known', '4bf92f3577b34da6a3ce929d0e0e4736', '00000000000000a6', '00000000000000a4', 'call', 1, 1796642613951000000, 1796642614350000000, '{}', NULL, NULL),
 ('$known', '4bf92f3577b34da6a3ce929d0e0e4736', '00000000000000a7', '00000000000000a6', 'sandbox', 3, 1796642613960000000, 1796642614350000000, '{}', NULL, NULL),
 ('$known', '4bf92f3577b34da6a3ce929d0e0e4736', '00000000000000a8', '00000000000000a1', 'chat gpt-5', 3, 1796642614360000000, 1796642616120000000, '{}', NULL, NULL)"
expect_exit 0 sion agent show "$known" --trace
expect_out "trace 4bf92f3577b34da6a3ce929d0e0e4736  2026-12-07 11:23:32 UTC  4.12 s
invoke_agent sion        4.12 s  |████████████████████████████████████████|
  chat claude-opus-4-5   310 ms  |███                                     |  ! HTTP 529: Overloaded
  chat gpt-5             1.64 s  |   ███████████████                      |
  execute_tool shell     410 ms  |                  ████                  |
    policy              0.02 ms  |                  █                     |
    call                 399 ms  |                  ████                  |
      sandbox            390 ms  |                   ███                  |
  chat gpt-5             1.76 s  |                      ██████████████████|"
expect_exit 0 sion agent show "$known" --trace --json
python3 - "$scratch/out" <<'PY' && ok || fail "show --trace --json of the known trace"
import json, sys
request = json.loads(open(sys.argv[1]).read())
spans = request["resourceSpans"][0]["scopeSpans"][0]["spans"]
assert [s["name"] for s in spans][:3] == ["invoke_agent sion", "chat claude-opus-4-5", "chat gpt-5"], spans
chat = spans[1]
assert chat["traceId"] == "4bf92f3577b34da6a3ce929d0e0e4736" and chat["parentSpanId"] == "00000000000000a1", chat
assert chat["kind"] == 3 and chat["startTimeUnixNano"] == "1796642612000000000", chat
assert chat["status"] == {"code": 2, "message": "HTTP 529: Overloaded"}, chat["status"]
PY

# A session from before traces were kept.
expect_exit 0 sqlite3 "$SION_HOME/sion.db" "DELETE FROM spans WHERE session = '$known'"
expect_exit 66 sion agent show "$known" --trace
expect_err "sion-run: session $known has no trace: its runs were made before sion kept traces, or were killed before their first answer"

done_testing
