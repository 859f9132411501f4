#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# openai-responses: against a stand-in (tests/models/responses_server.py), which checks every
# request: a call and its output, instructions, effort (max is xhigh), store false, include; the
# encrypted reasoning given back without ids before what followed it, to the same model only; a
# model that refuses reasoning not asked again; kept reasoning refused once sent again without it;
# usage with the cached input; keys rotating; the framings, answers whole, failures in the stream,
# cut off and malformed answers; and the stand-in's own check of pictures.
. "$(dirname "$0")/lib.sh"
command -v python3 >/dev/null || skip "python3 is not installed"
. "$SION_SOURCE_DIR/tests/models/standin.sh"

mkdir -p "$scratch/work" "$scratch/scripts"
cd "$scratch" || exit 1
for v in OPENAI_API_KEY OPENAI_BASE_URL SION_MODEL_TIMEOUT; do
    unset "$v"
done
agent=$(sion agent create coder) || exit 1
script() { printf '%s\n' "$2" >"$scratch/scripts/$1.json"; }
write_call='"calls": [{"name": "write_file", "input": {"path": "c.txt", "content": "c"}}]'

# A call, then an answer; the reasoning before the call given back with it, without its id.
script first "[{\"reasoning\": \"Write c first.\", $write_call}, {\"text\": \"Wrote c.txt.\", \"usage\": {\"input_tokens\": 500, \"output_tokens\": 7, \"cached_tokens\": 300}}]"
start_standin r responses_server "$scratch/scripts/first.json" --reasoning-back --keys sk-resp-1
expect_exit 0 run_with OPENAI_BASE_URL="$r_url/v1" OPENAI_API_KEY=sk-resp-1 -- --task 'Write c.txt' \
    --model openai-responses:gpt-5#max --workspace work --autonomy L3 --json
expect_clean "$r_log"
expect_query "$r_log" '[(e["headers"]["authorization"], e["body"]["model"], e["body"]["reasoning"], e["body"]["include"], e["body"]["store"], e["body"]["max_output_tokens"]) for e in r]' \
    '[["Bearer sk-resp-1", "gpt-5", {"effort": "xhigh", "summary": "auto"}, ["reasoning.encrypted_content"], false, 64000], ["Bearer sk-resp-1", "gpt-5", {"effort": "xhigh", "summary": "auto"}, ["reasoning.encrypted_content"], false, 64000]]'
expect_query "$r_log" '[i["type"] for i in r[1]["body"]["input"]]' '["message", "reasoning", "function_call", "function_call_output"]'
expect_query "$r_log" 'r[1]["body"]["input"][1]' '{"encrypted_content": "enc-3-gpt-5", "summary": [{"text": "Write c first.", "type": "summary_text"}], "type": "reasoning"}'
expect_query "$r_log" '[type(r[0]["body"]["instructions"]).__name__, r[1]["body"]["input"][3]["output"]]' '["str", "wrote 1 byte to c.txt"]'
# Usage: the input's tokens with the cached among them, as the session reports them.
tail -n 1 "$scratch/out" | python3 -c 'import json, sys; u = json.load(sys.stdin)["usage"]; print(u["input_tokens"] >= 500, u.get("cache_read_tokens", u.get("cache_read_input_tokens")))' >"$scratch/usage"
expect_text "$scratch/usage" usage "True 300"

# The transcript shows the summary with ~; the session goes on with the same model, which is
# given its reasoning back; a fallback model is not shown another's.
script trans "[{\"reasoning\": \"Small file.\", $write_call}, {\"text\": \"Done.\"}, {\"status\": 503, \"message\": \"busy\"}, {\"text\": \"From mini.\"}]"
start_standin t responses_server "$scratch/scripts/trans.json" --reasoning-back
rm -f work/c.txt
expect_exit 0 run_with OPENAI_BASE_URL="$t_url/v1" OPENAI_API_KEY=sk-resp-1 -- --task 'Write c.txt' \
    --model openai-responses:gpt-5#low --workspace work --autonomy L3
sid=$(session_id)
expect_out "session $sid for agent ${agent:0:8}
~ Small file.
→ write_file {\"content\":\"c\",\"path\":\"c.txt\"}
← wrote 1 byte to c.txt
agent: Done.
session $sid: done"
expect_exit 0 run_with OPENAI_BASE_URL="$t_url/v1" OPENAI_API_KEY=sk-resp-1 -- --task 'And now?' --session "$sid" \
    --model openai-responses:gpt-5#low --model openai-responses:gpt-5-mini
expect_grep '^agent: From mini\.$' "$scratch/out"
expect_clean "$t_log"
expect_query "$t_log" '[(e["body"]["model"], e["body"]["reasoning"].get("effort"), sum(i["type"] == "reasoning" for i in e["body"]["input"])) for e in r]' \
    '[["gpt-5", "low", 0], ["gpt-5", "low", 1], ["gpt-5", "low", 1], ["gpt-5-mini", null, 0]]'

# A model that refuses reasoning is asked once more without it, and not asked again.
script plain '[{"text": "One."}, {"text": "Two."}]'
start_standin p responses_server "$scratch/scripts/plain.json" --no-reasoning
expect_exit 0 run_with OPENAI_BASE_URL="$p_url/v1" OPENAI_API_KEY=sk-resp-1 -- --task 'Hi' --model openai-responses:gpt-4.1
expect_grep '^agent: One\.$' "$scratch/out"
expect_query "$p_log" '[("include" in e["body"], e["refusals"]) for e in r]' \
    '[[true, ["Encrypted content is not supported with this model."]], [false, []]]'

# Kept reasoning refused (sealed under another organization, say) is sent once more without it.
script refused "[{\"reasoning\": \"Think.\", $write_call}, {\"text\": \"Done anyway.\"}]"
start_standin k responses_server "$scratch/scripts/refused.json" --refuse-kept 1
rm -f work/c.txt
expect_exit 0 run_with OPENAI_BASE_URL="$k_url/v1" OPENAI_API_KEY=sk-resp-1 -- --task 'Write c.txt' \
    --model openai-responses:gpt-5 --workspace work --autonomy L3
expect_grep '^agent: Done anyway\.$' "$scratch/out"
expect_clean "$k_log"
expect_query "$k_log" '[(sum(i["type"] == "reasoning" for i in e["body"]["input"]), "include" in e["body"], len(e["refusals"])) for e in r]' \
    '[[0, true, 0], [1, true, 1], [0, true, 0]]'

# Reasoning cut off before its encrypted content came is not kept.
script unsealed "[{\"reasoning\": \"Open thoughts.\", \"encrypted\": false, $write_call}, {\"text\": \"Done.\"}]"
start_standin u responses_server "$scratch/scripts/unsealed.json"
rm -f work/c.txt
expect_exit 0 run_with OPENAI_BASE_URL="$u_url/v1" OPENAI_API_KEY=sk-resp-1 -- --task 'Write c.txt' \
    --model openai-responses:gpt-5 --workspace work --autonomy L3
expect_clean "$u_log"
expect_query "$u_log" '[i["type"] for i in r[1]["body"]["input"]]' '["message", "function_call", "function_call_output"]'

# Keys rotate: each call starts with the next; one refused rests and the call goes on at once.
script keys '[{"text": "1"}, {"text": "2"}]'
start_standin y responses_server "$scratch/scripts/keys.json" --keys sk-b
expect_exit 0 run_with OPENAI_BASE_URL="$y_url/v1" OPENAI_API_KEY=sk-a,sk-b -- --task 'Hi' --model openai-responses:gpt-5
expect_grep '^agent: 1$' "$scratch/out"
expect_query "$y_log" '[e["key"] for e in r]' '["sk-a", "sk-b"]'

# No key: refused before the session starts.
expect_exit 78 run_with -- --task 'Hi' --model openai-responses:gpt-5 &&
    expect_err "sion-run: openai-responses:gpt-5 needs a key: set OPENAI_API_KEY, or keep it with 'sion agent credential add OPENAI_API_KEY'"

# Framings, answers whole; failures: a failed response partway, cut off, malformed, busy, refused.
script framed '[{"text": "Framed.", "reasoning": "Hm.", "crlf": true, "split": true, "comments": true}, {"text": "Whole.", "whole": true}]'
start_standin f responses_server "$scratch/scripts/framed.json"
expect_exit 0 run_with OPENAI_BASE_URL="$f_url/v1" OPENAI_API_KEY=sk-resp-1 -- --task 'Hi' --model openai-responses:gpt-5
expect_grep '^agent: Framed\.$' "$scratch/out"
expect_exit 0 run_with OPENAI_BASE_URL="$f_url/v1" OPENAI_API_KEY=sk-resp-1 -- --task 'Hi' --model openai-responses:gpt-5
expect_grep '^agent: Whole\.$' "$scratch/out"
expect_clean "$f_log"
fails_with() { # fails_with CODE SCRIPT LINE-PATTERN
    start_standin "$2" responses_server "$scratch/scripts/$2.json"
    local url_var="${2}_url"
    expect_exit "$1" run_with OPENAI_BASE_URL="${!url_var}/v1" OPENAI_API_KEY=sk-resp-1 -- --task 'Fail' --model openai-responses:gpt-5 &&
        expect_grep "^session [0-9a-f]{16}: failed: the model openai-responses:gpt-5 failed: $3\$" "$scratch/out"
}
script failed '[{"text": "Partly", "failed": {"code": "server_error", "message": "The model had an error"}}]'
fails_with 69 failed 'the response failed: server_error: The model had an error'
script cut '[{"text": "Cut", "cut": true}]'
fails_with 69 cut 'the answer was cut off before its end'
script garbage '[{"garbage": true}]'
fails_with 69 garbage 'the answer is malformed: invalid JSON at byte 0'
script busy '[{"status": 429, "message": "Rate limit reached", "headers": {"retry-after": "20"}}]'
fails_with 69 busy 'HTTP 429: Rate limit reached'
script toolong '[{"status": 400, "message": "Your input exceeds the context window of this model."}]'
fails_with 69 toolong 'HTTP 400: Your input exceeds the context window of this model\.'

# The stand-in's check of pictures (sion's own body is tests/unit/test_models_responses.cpp's): a
# data URL of a picture with a detail it knows passes, anything else is named.
script pictures '[{"text": "A cat."}, {"text": "unused"}]'
start_standin i responses_server "$scratch/scripts/pictures.json"
post_picture() { # post_picture IMAGE_URL DETAIL: a request with that picture, straight to the stand-in
    python3 - "$i_url/v1/responses" "$1" "$2" <<'PY'
import json, sys, urllib.error, urllib.request
part = {"type": "input_image", "image_url": sys.argv[2], "detail": sys.argv[3]}
body = {"model": "gpt-5", "stream": True, "store": False, "max_output_tokens": 1000, "input": [{"type": "message", "role": "user",
        "content": [{"type": "input_text", "text": "What is it?"}, part]}]}
req = urllib.request.Request(sys.argv[1], json.dumps(body).encode(), {"Authorization": "Bearer sk-resp-1",
                             "Content-Type": "application/json"})
try:
    print(urllib.request.urlopen(req, timeout=30).status)
except urllib.error.HTTPError as e:
    print(e.code)
PY
}
expect_text <(post_picture 'data:image/png;base64,iVBORw0KGgo=' auto) status 200
expect_text <(post_picture 'file:///etc/passwd' huge) status 400
expect_query "$i_log" '[e["violations"] for e in r]' '[[], ["input.0.content.1: image_url is not a data URL of a picture", "input.0.content.1: detail '"'huge'"' is not low, high or auto"]]'

done_testing
