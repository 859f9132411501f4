#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Pictures to every provider, against the stand-ins of tests/models/, which check each picture as
# the provider's documentation says (its block or part, its media type, base64 whose bytes are of
# that type): a session with --picture on the task and a read_file of a picture in the workspace
# for anthropic:, openai:, openai-responses:, gemini:, bedrock: and vertex: (Claude and Gemini),
# each picture where the API takes it, in order, its bytes the file's; a GIF refused before it is
# sent to Gemini; --picture's bad inputs, each with its line and no session stored; `show` and its
# events; and an MCP tool's image content, a real picture sent and a false one only named.
. "$(dirname "$0")/lib.sh"
command -v python3 >/dev/null || skip "python3 is not installed"
python3 -c 'import jsonschema' 2>/dev/null || skip "python3-jsonschema is not installed"
. "$SION_SOURCE_DIR/tests/models/standin.sh"

mkdir -p "$scratch/work" "$scratch/scripts" "$scratch/events"
cd "$scratch" || exit 1
for v in ANTHROPIC_API_KEY ANTHROPIC_BASE_URL OPENAI_API_KEY OPENAI_BASE_URL GEMINI_API_KEY GOOGLE_API_KEY \
    GEMINI_BASE_URL AWS_PROFILE AWS_DEFAULT_PROFILE AWS_ACCESS_KEY_ID AWS_SECRET_ACCESS_KEY AWS_SESSION_TOKEN \
    GOOGLE_APPLICATION_CREDENTIALS CLOUDSDK_CONFIG ANTHROPIC_VERTEX_PROJECT_ID CLOUD_ML_REGION SION_MODEL_TIMEOUT; do
    unset "$v"
done
agent=$(sion agent create coder) && ok || fail "sion agent create coder"
script() { printf '%s\n' "$2" >"$scratch/scripts/$1.json"; }
bytes() { wc -c <"$1" | tr -d ' '; }
sessions() { python3 -c 'import sqlite3, sys; print(sqlite3.connect(sys.argv[1]).execute("SELECT count(*) FROM sessions").fetchone()[0])' "$SION_HOME/sion.db"; }

# Small real pictures: PNGs made with zlib, GIFs of one pixel, and JPEGs and WebPs whose first bytes
# are right (sion knows a picture by them); me.* are the person's, work/* the workspace's.
python3 - <<'PY'
import struct, zlib
def chunk(kind, data):
    return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))
rows = b"".join(b"\0" + bytes([200, 40 * y, 90]) * 3 for y in range(3))
png = b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", 3, 3, 8, 2, 0, 0, 0)) + \
    chunk(b"IDAT", zlib.compress(rows)) + chunk(b"IEND", b"")
gif = b"GIF89a" + struct.pack("<HHBBB", 1, 1, 0x80, 0, 0) + b"\0\0\0\xff\xff\xff" + \
    b"," + struct.pack("<HHHHB", 0, 0, 1, 1, 0) + b"\x02\x02\x44\x01\x00;"
jpeg = b"\xff\xd8\xff\xe0\x00\x10JFIF\x00\x01\x01\x00\x00\x01\x00\x01\x00\x00\xff\xd9"
vp8l = b"\x2f\x00\x00\x00\x00\x07\x10\x11\x11\x88\x88\xfe\x07\x00"
webp = b"RIFF" + struct.pack("<I", 4 + 8 + len(vp8l)) + b"WEBP" + b"VP8L" + struct.pack("<I", len(vp8l)) + vp8l
# The person's GIF, JPEG and WebP differ from the workspace's in a byte that is not their signature.
other = lambda data, at: data[:at] + bytes([data[at] ^ 0xff]) + data[at + 1:]
for name, data in [("me.png", png), ("work/shot.png", png[:-12] + chunk(b"tEXt", b"c\0shot") + png[-12:]),
                   ("work/anim.gif", gif), ("me.gif", other(gif, 13)), ("work/shot.jpg", jpeg),
                   ("me.jpg", other(jpeg, 14)), ("work/shot.webp", webp), ("me.webp", other(webp, 30))]:
    open(name, "wb").write(data)
PY
# pictured LOG EXPRESSION WANT: expect_query with pic(x): the name of the file whose base64 is x
# (or the picture's type and name, of a data URL), "?" for none.
names=$(python3 -c 'import base64, json, sys; print(json.dumps({base64.b64encode(open(f, "rb").read()).decode(): f.split("/")[-1] for f in sys.argv[1:]}))' \
    me.png me.gif me.jpg me.webp work/shot.png work/anim.gif work/shot.jpg work/shot.webp)
# What the second request sent: the Messages API's tool_result content (its blocks' kinds, texts and
# pictures), and Gemini's contents (each part's kind and its text or picture).
tool_result='[(c["type"], c.get("text") or c["source"]["media_type"] + " " + pic(c["source"]["data"])) for c in r[1]["body"]["messages"][2]["content"][0]["content"]]'
gemini_parts='[(c["role"], [next(k for k in p if k != "thoughtSignature") + " " + (p["inlineData"]["mimeType"] + " " + pic(p["inlineData"]["data"]) if "inlineData" in p else p.get("text", "")) for p in c["parts"]]) for c in r[1]["body"]["contents"]]'
pictured() {
    expect_query "$1" "(lambda N: (lambda pic: $2)(lambda d: d.split(';')[0][5:] + ' ' + N.get(d.split(',', 1)[-1], '?') if d.startswith('data:') else N.get(d, '?')))($names)" "$3"
}

# --- --picture's bad inputs: each its line and exit, and no session stored ---------------------
export ANTHROPIC_API_KEY=sk-ant-test-0001
bad_picture() { # bad_picture CODE LINE ARGS...
    local code=$1 line=$2
    shift 2
    expect_exit "$code" sion agent run coder "$agent" --task 'Look' --model anthropic:claude-opus-5-5 "$@" </dev/null &&
        expect_err "$line"
}
printf 'just words\n' >notes.txt
python3 -c 'open("big.png", "wb").write(b"\x89PNG\r\n\x1a\n" + bytes(5 * 1024 * 1024 - 7))'
bad_picture 66 "sion-run: cannot read --picture 'nothing.png': No such file or directory" --picture nothing.png
bad_picture 65 "sion-run: --picture 'notes.txt' is not a PNG, JPEG, GIF or WebP picture" --picture me.png --picture notes.txt
bad_picture 66 "sion-run: --picture 'work' is not a file" --picture work
bad_picture 65 "sion-run: --picture 'big.png' is 5242881 bytes, more than the 5242880 a model is sent" --picture big.png
twenty_one=()
for _ in $(seq 21); do twenty_one+=(--picture me.png); done
bad_picture 64 "sion-run: give at most 20 pictures with --picture" "${twenty_one[@]}"
[ "$(sessions)" = 0 ] && ok || fail "a bad --picture stored a session"

# read_file of a picture too large to send says so, and shows the model nothing of it (a scripted
# model: no provider is asked).
cp big.png work/big.png
printf '%s\n' '{"turns": [{"calls": [{"tool": "read_file", "input": {"path": "big.png"}}]}, {"text": "Too big."}]}' \
    >"$scratch/scripts/big.json"
expect_exit 0 sion agent run coder "$agent" --task 'Look at big.png' --model "script:$scratch/scripts/big.json" \
    --workspace work --autonomy L3 </dev/null
expect_grep '^← big.png is a picture of 5242881 bytes, more than the 5242880 a model is sent: not shown$' "$scratch/out"
[ "$(python3 -c 'import sqlite3, sys; print(sum("images" in c for (c,) in sqlite3.connect(sys.argv[1]).execute("SELECT content FROM messages")))' "$SION_HOME/sion.db")" = 0 ] &&
    ok || fail "a picture too large was kept to be sent"
rm work/big.png

# Twenty are taken, each an image block.
script twenty '[{"text": "Twenty squares."}]'
start_standin t anthropic_server "$scratch/scripts/twenty.json"
expect_exit 0 run_with ANTHROPIC_BASE_URL="$t_url" -- --task 'Count' "${twenty_one[@]:2}" --model anthropic:claude-opus-5-5
expect_clean "$t_log"
pictured "$t_log" '[pic(b["source"]["data"]) for b in r[0]["body"]["messages"][0]["content"] if b["type"] == "image"] == ["me.png"] * 20' 'true'

# --- anthropic: image blocks before the words; a read picture in the tool_result after its text --
script anthropic '[{"calls": [{"name": "read_file", "input": {"path": "shot.webp"}}]}, {"text": "A red square and a dot."}]'
start_standin a anthropic_server "$scratch/scripts/anthropic.json"
expect_exit 0 run_with ANTHROPIC_BASE_URL="$a_url" -- --task 'What do they show?' --picture me.png --picture me.gif \
    --model anthropic:claude-opus-5-5 --workspace work --autonomy L1
asid=$(session_id)
expect_out "session $asid for agent ${agent:0:8}
→ read_file {\"path\":\"shot.webp\"}
← shot.webp is a picture (image/webp, $(bytes work/shot.webp) bytes): shown
agent: A red square and a dot.
session $asid: done"
expect_clean "$a_log"
pictured "$a_log" '[[(b["type"], b["source"]["type"], b["source"]["media_type"], pic(b["source"]["data"])) if b["type"] == "image" else (b["type"], b["text"]) for b in e["body"]["messages"][0]["content"]] for e in r]' \
    '[[["image", "base64", "image/png", "me.png"], ["image", "base64", "image/gif", "me.gif"], ["text", "What do they show?"]], [["image", "base64", "image/png", "me.png"], ["image", "base64", "image/gif", "me.gif"], ["text", "What do they show?"]]]'
pictured "$a_log" '[(b["type"], b["tool_use_id"] == r[1]["body"]["messages"][1]["content"][0]["id"], [(c["type"], c.get("text") or c["source"]["media_type"] + " " + pic(c["source"]["data"])) for c in b["content"]]) for b in r[1]["body"]["messages"][2]["content"]]' \
    "[[\"tool_result\", true, [[\"text\", \"shot.webp is a picture (image/webp, $(bytes work/shot.webp) bytes): shown\"], [\"image\", \"image/webp shot.webp\"]]]]"

# show: the person's pictures, named, under the words; --json: the task's and the result's.
expect_exit 0 sion agent show "$asid"
expect_out "session $asid for agent ${agent:0:8}
you: What do they show?
you: [picture me.png, image/png, $(bytes me.png) bytes]
you: [picture me.gif, image/gif, $(bytes me.gif) bytes]
→ read_file {\"path\":\"shot.webp\"}
← shot.webp is a picture (image/webp, $(bytes work/shot.webp) bytes): shown
agent: A red square and a dot.
session $asid: done"
expect_exit 0 sion agent show "$asid" --json && cp "$scratch/out" events/show.jsonl
expect_query events/show.jsonl '[(e["event"], e.get("pictures")) for e in entries if e["event"] in ("task", "result")]' \
    "[[\"task\", [{\"bytes\": $(bytes me.png), \"media_type\": \"image/png\", \"name\": \"me.png\"}, {\"bytes\": $(bytes me.gif), \"media_type\": \"image/gif\", \"name\": \"me.gif\"}]], [\"result\", [{\"bytes\": $(bytes work/shot.webp), \"media_type\": \"image/webp\", \"name\": \"shot.webp\"}]]]"
start_standin aj anthropic_server "$scratch/scripts/anthropic.json"
expect_exit 0 run_with ANTHROPIC_BASE_URL="$aj_url" -- --task 'What do they show?' --picture me.png \
    --model anthropic:claude-opus-5-5 --workspace work --autonomy L1 --json && cp "$scratch/out" events/run.jsonl
expect_query events/run.jsonl '[(e["event"], e.get("pictures")) for e in entries if e["event"] in ("task", "result")]' \
    "[[\"result\", [{\"bytes\": $(bytes work/shot.webp), \"media_type\": \"image/webp\", \"name\": \"shot.webp\"}]]]"

# --- openai: image_url parts; a call's pictures in a user message after the turn's results -----
script openai '[{"calls": [{"name": "read_file", "input": {"path": "shot.jpg"}}]}, {"text": "A photo."}]'
start_standin o openai_server "$scratch/scripts/openai.json"
expect_exit 0 run_with OPENAI_BASE_URL="$o_url/v1" OPENAI_API_KEY=sk-openai-0001 -- --task 'And this?' \
    --picture me.png --model openai:gpt-5 --workspace work --autonomy L1
expect_grep '^agent: A photo\.$' "$scratch/out"
expect_clean "$o_log"
pictured "$o_log" '[(m["role"], [(p["type"], p.get("text") or pic(p["image_url"]["url"])) for p in m["content"]] if isinstance(m["content"], list) else (m["content"] or "")[:40]) for m in r[1]["body"]["messages"][1:]]' \
    "[[\"user\", [[\"text\", \"And this?\"], [\"image_url\", \"image/png me.png\"]]], [\"assistant\", \"\"], [\"tool\", \"shot.jpg is a picture (image/jpeg, $(bytes work/shot.jpg) by\"], [\"user\", [[\"text\", \"The pictures of call call_1 (read_file):\"], [\"image_url\", \"image/jpeg shot.jpg\"]]]]"

# --- openai-responses: input_image parts; the call's output as input_text then input_image -----
script responses '[{"calls": [{"name": "read_file", "input": {"path": "shot.png"}}]}, {"text": "Two squares."}]'
start_standin s responses_server "$scratch/scripts/responses.json"
expect_exit 0 run_with OPENAI_BASE_URL="$s_url/v1" OPENAI_API_KEY=sk-resp-1 -- --task 'Compare' \
    --picture me.webp --model openai-responses:gpt-5 --workspace work --autonomy L1
expect_grep '^agent: Two squares\.$' "$scratch/out"
expect_clean "$s_log"
pictured "$s_log" '[(i["type"], [(p["type"], p.get("text") or pic(p["image_url"]) + " " + p["detail"]) for p in i.get("content") or i.get("output") or []]) for i in r[1]["body"]["input"]]' \
    "[[\"message\", [[\"input_text\", \"Compare\"], [\"input_image\", \"image/webp me.webp auto\"]]], [\"function_call\", []], [\"function_call_output\", [[\"input_text\", \"shot.png is a picture (image/png, $(bytes work/shot.png) bytes): shown\"], [\"input_image\", \"image/png shot.png auto\"]]]]"

# --- gemini: inlineData after the words, and after the call's functionResponse ------------------
gemini='gemini-3-pro-preview'
cat >scripts/gemini.json <<'JSON'
{"turns": [
  {"parts": [{"functionCall": {"name": "read_file", "args": {"path": "shot.png"}}, "thoughtSignature": "c2lnLXBpY3M="}]},
  {"parts": [{"text": "Squares."}]}
]}
JSON
start_standin g gemini_server "$scratch/scripts/gemini.json" --model "$gemini" --api-key gm-key-1
expect_exit 0 run_with GEMINI_BASE_URL="$g_url" GEMINI_API_KEY=gm-key-1 -- --task 'Look' --picture me.jpg \
    --model "gemini:$gemini" --workspace work --autonomy L1
expect_grep '^agent: Squares\.$' "$scratch/out"
expect_exit 0 verdicts g && expect_out 'answered
answered'
pictured "$g_log" "$gemini_parts" \
    '[["user", ["text Look", "inlineData image/jpeg me.jpg"]], ["model", ["functionCall "]], ["user", ["functionResponse ", "inlineData image/png shot.png"]]]'
# A GIF is refused before anything is sent: the run fails, as when no model answers.
script none '{"turns": []}'
start_standin gg gemini_server "$scratch/scripts/none.json" --model "$gemini" --api-key gm-key-1
expect_exit 69 run_with GEMINI_BASE_URL="$gg_url" GEMINI_API_KEY=gm-key-1 -- --task 'Look' --picture me.gif \
    --model "gemini:$gemini"
expect_grep "^session [0-9a-f]{16}: failed: the model gemini:$gemini failed: cannot send a picture of type 'image/gif': the Gemini API takes only image/png, image/jpeg, image/webp, image/heic and image/heif$" "$scratch/out"
[ ! -s "$gg_log" ] && ok || fail "the Gemini stand-in was sent a GIF"

# --- bedrock: image blocks after the words, and in the toolResult's content ---------------------
claude_bedrock='us.anthropic.claude-sonnet-4-5-20250929-v1:0'
cat >scripts/bedrock.json <<'JSON'
{"turns": [
  {"content": [{"toolUse": {"toolUseId": "tooluse_P1", "name": "read_file", "input": {"path": "anim.gif"}}}], "stopReason": "tool_use"},
  {"content": [{"text": "A dot."}]}
]}
JSON
start_standin b bedrock_server "$scratch/scripts/bedrock.json" --model "$claude_bedrock" --api-key br-key-1
expect_exit 0 run_with AWS_ENDPOINT_URL_BEDROCK_RUNTIME="$b_url" AWS_BEARER_TOKEN_BEDROCK=br-key-1 AWS_REGION=us-east-1 \
    -- --task 'See' --picture me.png --model "bedrock:$claude_bedrock" --workspace work --autonomy L1
expect_grep '^agent: A dot\.$' "$scratch/out"
expect_exit 0 verdicts b && expect_out 'answered
answered'
# "(lambda D: EXPRESSION$converse": EXPRESSION with D(x), a Converse block's kind and its text or
# picture (its format and file).
converse=')(lambda x: next(iter(x)) + " " + (x["image"]["format"] + " " + pic(x["image"]["source"]["bytes"]) if "image" in x else x.get("text", "")))'
pictured "$b_log" '(lambda D: [(m["role"], [D(x) for x in m["content"]]) for m in r[1]["body"]["messages"]]'"$converse" \
    '[["user", ["text See", "image png me.png"]], ["assistant", ["toolUse "]], ["user", ["toolResult ", "cachePoint "]]]'
pictured "$b_log" '(lambda D: [D(x) for x in r[1]["body"]["messages"][2]["content"][0]["toolResult"]["content"]]'"$converse" \
    "[\"text anim.gif is a picture (image/gif, $(bytes work/anim.gif) bytes): shown\", \"image gif anim.gif\"]"

# --- vertex: Claude as the Messages API takes pictures, Gemini as Gemini does -----------------
export GOOGLE_CLOUD_PROJECT=sion-test GOOGLE_CLOUD_LOCATION=us-east5 GOOGLE_OAUTH_ACCESS_TOKEN=ya29.given-pics-1
claude_vertex='claude-sonnet-4-5@20250929'
cat >scripts/vclaude.json <<'JSON'
{"turns": [
  {"content": [{"type": "tool_use", "id": "toolu_P1", "name": "read_file", "input": {"path": "shot.png"}}], "stop_reason": "tool_use"},
  {"content": [{"type": "text", "text": "Claude saw them."}]}
]}
JSON
start_standin vc vertex_server "$scratch/scripts/vclaude.json" --project sion-test --location us-east5 \
    --model "$claude_vertex" --token ya29.given-pics-1
expect_exit 0 run_with VERTEX_BASE_URL="$vc_url" -- --task 'Vertex, look' --picture me.webp \
    --model "vertex:$claude_vertex" --workspace work --autonomy L1
expect_grep '^agent: Claude saw them\.$' "$scratch/out"
expect_exit 0 verdicts vc && expect_out 'answered
answered'
pictured "$vc_log" '[(m["role"], [(b["type"], b.get("text") or b.get("source", {}).get("media_type", "") + " " + (pic(b["source"]["data"]) if "source" in b else "")) for b in m["content"]]) for m in r[1]["body"]["messages"]]' \
    '[["user", [["image", "image/webp me.webp"], ["text", "Vertex, look"]]], ["assistant", [["tool_use", " "]]], ["user", [["tool_result", " "]]]]'
pictured "$vc_log" "$tool_result" \
    "[[\"text\", \"shot.png is a picture (image/png, $(bytes work/shot.png) bytes): shown\"], [\"image\", \"image/png shot.png\"]]"
start_standin vg vertex_server "$scratch/scripts/gemini.json" --project sion-test --location us-east5 \
    --model "$gemini" --token ya29.given-pics-1
expect_exit 0 run_with VERTEX_BASE_URL="$vg_url" -- --task 'Look' --picture me.png \
    --model "vertex:$gemini" --workspace work --autonomy L1
expect_grep '^agent: Squares\.$' "$scratch/out"
expect_exit 0 verdicts vg && expect_out 'answered
answered'
pictured "$vg_log" "$gemini_parts" \
    '[["user", ["text Look", "inlineData image/png me.png"]], ["model", ["functionCall "]], ["user", ["functionResponse ", "inlineData image/png shot.png"]]]'
unset GOOGLE_CLOUD_PROJECT GOOGLE_CLOUD_LOCATION GOOGLE_OAUTH_ACCESS_TOKEN

# --- MCP: a tool's image content; the real picture sent after the text, the false one only named --
expect_exit 0 sion agent mcp add pics -- python3 "$SION_SOURCE_DIR/tests/fixtures/mcp/picture.py" "$scratch/me.png"
script mcp '[{"calls": [{"name": "pics_shot", "input": {}}]}, {"text": "One screenshot."}]'
start_standin m anthropic_server "$scratch/scripts/mcp.json"
expect_exit 0 run_with ANTHROPIC_BASE_URL="$m_url" -- --task 'Take a screenshot' --mcp pics \
    --model anthropic:claude-opus-5-5 --autonomy L1 --json && cp "$scratch/out" events/mcp.jsonl
expect_clean "$m_log"
screen="The screen:\\n[image image/png, $(bytes me.png) bytes]\\n[image image/png, 25 bytes]"
pictured "$m_log" "$tool_result" \
    "[[\"text\", \"$screen\"], [\"image\", \"image/png me.png\"]]"
expect_query events/mcp.jsonl '[(e["text"], e.get("pictures")) for e in entries if e["event"] == "result"]' \
    "[[\"$screen\", [{\"bytes\": $(bytes me.png), \"media_type\": \"image/png\"}]]]"

# --- the stand-ins' own checks: a picture that is not what it says is named --------------------
post() { # post URL HEADERS BODY: the HTTP status of a POST of the JSON BODY with the JSON HEADERS
    python3 - "$@" <<'PY'
import json, sys, urllib.error, urllib.request
req = urllib.request.Request(sys.argv[1], sys.argv[3].encode(), dict(json.loads(sys.argv[2]), **{"Content-Type": "application/json"}))
try:
    print(urllib.request.urlopen(req, timeout=30).status)
except urllib.error.HTTPError as e:
    print(e.code)
PY
}
png=$(base64 -w0 me.png) gif=$(base64 -w0 me.gif)
script spare '[{"text": "unused"}]'
start_standin ca anthropic_server "$scratch/scripts/spare.json"
expect_text <(post "$ca_url/v1/messages" '{"x-api-key": "k", "anthropic-version": "2023-06-01"}' \
    '{"model": "m", "max_tokens": 100, "stream": true, "messages": [{"role": "user", "content": [{"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": "'"$gif"'"}}, {"type": "text", "text": "x"}]},
      {"role": "assistant", "content": [{"type": "tool_use", "id": "t1", "name": "f", "input": {}}]},
      {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t1", "content": [{"type": "image", "source": {"type": "url", "url": "https://example.com/a.png"}}, {"type": "document"}]}]}]}') status 400
expect_query "$ca_log" 'r[0]["violations"]' '["messages.0.content.0: the data is image/gif, not image/png", "messages.2.content.0.content.0: an image'"'"'s source is not {type: base64, media_type, data}", "messages.2.content.0.content.1: a tool_result may not hold '"'"'document'"'"'"]'
start_standin co openai_server "$scratch/scripts/spare.json"
expect_text <(post "$co_url/v1/chat/completions" '{"Authorization": "Bearer k"}' \
    '{"model": "m", "stream": true, "stream_options": {"include_usage": true}, "max_completion_tokens": 100, "messages": [{"role": "user", "content": [{"type": "image_url", "image_url": {"url": "data:image/jpeg;base64,'"$png"'"}}, {"type": "image_url", "image_url": {"url": "https://example.com/a.png"}}]}]}') status 400
expect_query "$co_log" 'r[0]["violations"]' '["messages.0.content.0: the data is image/png, not image/jpeg", "messages.0.content.1: not a data URL of base64"]'
start_standin cs responses_server "$scratch/scripts/spare.json"
expect_text <(post "$cs_url/v1/responses" '{"Authorization": "Bearer k"}' \
    '{"model": "m", "stream": true, "store": false, "max_output_tokens": 100, "input": [{"type": "message", "role": "user", "content": [{"type": "input_text", "text": "x"}]},
      {"type": "function_call", "call_id": "c1", "name": "f", "arguments": "{}"}, {"type": "function_call_output", "call_id": "c1", "output": [{"type": "input_image", "image_url": "data:image/png;base64,bm90IGEgcGljdHVyZQ==", "detail": "auto"}, {"type": "output_text", "text": "x"}]}]}') status 400
expect_query "$cs_log" 'r[0]["violations"]' '["input.2.output.0: image_url is not a data URL of a picture: the data is no picture, not image/png", "input.2.output.1 is not input_text"]'
script nothing '{"turns": [{"parts": [{"text": "unused"}]}]}'
start_standin cg gemini_server "$scratch/scripts/nothing.json" --api-key gm-key-1
expect_text <(post "$cg_url/v1beta/models/m:streamGenerateContent?alt=sse" '{"x-goog-api-key": "gm-key-1"}' \
    '{"contents": [{"role": "user", "parts": [{"inlineData": {"mimeType": "image/gif", "data": "'"$gif"'"}}]}]}') status 400
expect_text <(post "$cg_url/v1beta/models/m:streamGenerateContent?alt=sse" '{"x-goog-api-key": "gm-key-1"}' \
    '{"contents": [{"role": "user", "parts": [{"inlineData": {"mimeType": "image/webp", "data": "'"$png"'"}}]}]}') status 400
expect_exit 0 verdicts cg && expect_out '400 INVALID_ARGUMENT: contents[0].parts[0]: Unsupported MIME type: image/gif
400 INVALID_ARGUMENT: contents[0].parts[0]: the data is image/png, not image/webp'
echo '{"turns": [{"content": [{"text": "unused"}]}]}' >scripts/nothing.json
start_standin cb bedrock_server "$scratch/scripts/nothing.json" --api-key br-key-1
expect_text <(post "$cb_url/model/meta.llama3/converse" '{"Authorization": "Bearer br-key-1"}' \
    '{"inferenceConfig": {"maxTokens": 100}, "messages": [{"role": "user", "content": [{"image": {"format": "png", "source": {"bytes": "not base64!"}}}]}]}') status 400
expect_text <(post "$cb_url/model/meta.llama3/converse" '{"Authorization": "Bearer br-key-1"}' \
    '{"inferenceConfig": {"maxTokens": 100}, "toolConfig": {"tools": [{"toolSpec": {"name": "f", "inputSchema": {"json": {"type": "object"}}}}]}, "messages": [{"role": "user", "content": [{"text": "x"}]},
      {"role": "assistant", "content": [{"toolUse": {"toolUseId": "t1", "name": "f", "input": {}}}]}, {"role": "user", "content": [{"toolResult": {"toolUseId": "t1", "content": [{"image": {"format": "gif", "source": {"bytes": "'"$png"'"}}}]}}]}]}') status 400
expect_exit 0 verdicts cb && expect_out '400 ValidationException: messages[0].content[0]: the data is not base64
400 ValidationException: messages[2].content[0].toolResult.content[0]: the data is image/png, not image/gif'

expect_exit 0 python3 "$SION_SOURCE_DIR/tests/e2e/check_run_events.py" "$SION_SOURCE_DIR/schemas" "$scratch"/events/*.jsonl &&
    expect_out ''

done_testing
