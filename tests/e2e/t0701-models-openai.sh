#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The chat completions family against a stand-in (tests/models/openai_server.py), which checks every
# request: openai: with calls, effort and usage; with no key; local: (no key, its default address,
# private addresses reached); deepseek: reasoning given back within its task only; azure: api-key
# and the v1 path; mistral: its tool ids; every provider known by name at its own variables;
# framings, answers whole, a stream's error, cut off and malformed answers, addresses refused.
. "$(dirname "$0")/lib.sh"
command -v python3 >/dev/null || skip "python3 is not installed"
. "$SION_SOURCE_DIR/tests/models/standin.sh"

mkdir -p "$scratch/work" "$scratch/scripts"
cd "$scratch" || exit 1
for v in OPENAI_API_KEY OPENAI_BASE_URL SION_LOCAL_MODEL_URL SION_LOCAL_MODEL_KEY AZURE_OPENAI_API_KEY \
    AZURE_OPENAI_ENDPOINT AZURE_OPENAI_BASE_URL SION_MODEL_TIMEOUT; do
    unset "$v"
done
agent=$(sion agent create coder) || exit 1
script() { printf '%s\n' "$2" >"$scratch/scripts/$1.json"; }
# end_usage FILE: the usage of the end event that closes FILE (--json events), keys sorted.
end_usage() { tail -n 1 "$1" | python3 -c 'import json, sys; print(json.dumps(json.load(sys.stdin)["usage"], sort_keys=True))'; }
write_call='{"calls": [{"name": "write_file", "input": {"path": "c.txt", "content": "c"}}]}'

# openai: a call and an answer; the effort (max is xhigh) and the room in max_completion_tokens.
script openai "[$write_call, {\"text\": \"Wrote c.txt.\", \"usage\": {\"prompt_tokens\": 500, \"completion_tokens\": 7, \"cached_tokens\": 300}}]"
start_standin o openai_server "$scratch/scripts/openai.json"
expect_exit 0 run_with OPENAI_BASE_URL="$o_url/v1" OPENAI_API_KEY=sk-openai-0001 -- --task 'Write c.txt' \
    --model openai:gpt-5#max --workspace work --autonomy L3
sid=$(session_id)
expect_out "session $sid for agent ${agent:0:8}
→ write_file {\"content\":\"c\",\"path\":\"c.txt\"}
← wrote 1 byte to c.txt
agent: Wrote c.txt.
session $sid: done"
expect_clean "$o_log"
expect_query "$o_log" '[(e["headers"]["authorization"], e["body"]["model"], e["body"]["reasoning_effort"], e["body"]["max_completion_tokens"]) for e in r]' \
    '[["Bearer sk-openai-0001", "gpt-5", "xhigh", 64000], ["Bearer sk-openai-0001", "gpt-5", "xhigh", 64000]]'
expect_query "$o_log" '[m["role"] for m in r[1]["body"]["messages"]]' '["system", "user", "assistant", "tool"]'
expect_query "$o_log" 'r[1]["body"]["messages"][2]["tool_calls"][0]["function"]' '{"arguments": "{\"path\":\"c.txt\",\"content\":\"c\"}", "name": "write_file"}'
expect_query "$o_log" 'r[1]["body"]["messages"][3]["content"]' '"wrote 1 byte to c.txt"'
# The tools come before the conversation, and the second call starts as the first did.
expect_query "$o_log" '[(e["members"].index("tools") < e["members"].index("messages"), e["kept_start"]) for e in r]' '[[true, null], [true, true]]'
# Usage: the prompt's tokens, the cached among them (reported apart, in the run's end event and
# the stored session); read from the usage chunk.
start_standin oj openai_server "$scratch/scripts/openai.json"
rm -f work/c.txt
expect_exit 0 run_with OPENAI_BASE_URL="$oj_url/v1" OPENAI_API_KEY=sk-openai-0001 -- --task 'Write c.txt' \
    --model openai:gpt-5 --workspace work --autonomy L3 --json
end_usage "$scratch/out" >"$scratch/usage"
want=$(query "$oj_log" '{"input_tokens": len(json.dumps(r[0]["body"])) // 4 + 500, "output_tokens": 27, "cache_read_tokens": 300, "cache_write_tokens": 0}')
expect_text "$scratch/usage" usage "$want"
sid=$(head -n 1 "$scratch/out" | python3 -c 'import json, sys; print(json.load(sys.stdin)["session"])')
expect_exit 0 sion agent show "$sid" --json
end_usage "$scratch/out" >"$scratch/usage"
expect_text "$scratch/usage" 'usage in show' "$want"
expect_query "$oj_log" '["reasoning_effort" in e["body"] for e in r]' '[false, false]'

# openai: with no key, none is sent; a budget is not taken.
script nokey '[{"text": "no key needed"}]'
start_standin n openai_server "$scratch/scripts/nokey.json" --auth none
expect_exit 0 run_with OPENAI_BASE_URL="$n_url/v1" -- --task 'Hi' --model openai:my-model#8000
expect_grep '^agent: no key needed$' "$scratch/out"
expect_clean "$n_log"
expect_query "$n_log" '["authorization" in r[0]["headers"], "reasoning_effort" in r[0]["body"], r[0]["body"]["max_completion_tokens"]]' '[false, false, 16000]'

# local: no key, max_tokens, reasoning text under the name Ollama gives it ("reasoning"), shown
# with ~ and given back while the task goes on.
script local "[{\"reasoning\": \"The file is small.\", \"reasoning_field\": \"reasoning\", $(printf '%s' "$write_call" | cut -c2-), {\"text\": \"Done.\", \"comments\": true, \"crlf\": true, \"split\": true}]"
start_standin l openai_server "$scratch/scripts/local.json" --auth none --max-field max_tokens --reasoning-back
rm -f work/c.txt
expect_exit 0 run_with SION_LOCAL_MODEL_URL="$l_url/v1" -- --task 'Write c.txt' --model local:qwen3#low --workspace work --autonomy L3
sid=$(session_id)
expect_out "session $sid for agent ${agent:0:8}
~ The file is small.
→ write_file {\"content\":\"c\",\"path\":\"c.txt\"}
← wrote 1 byte to c.txt
agent: Done.
session $sid: done"
expect_clean "$l_log"
expect_query "$l_log" '[r[0]["body"]["reasoning_effort"], r[0]["body"]["max_tokens"], r[1]["body"]["messages"][2].get("reasoning")]' '["low", 20096, "The file is small."]'
# Its default address is Ollama's; a private address is not refused (whatever answers there).
expect_exit 69 run_with -- --task 'Hi' --model local:qwen3 &&
    expect_grep "^session [0-9a-f]{16}: failed: the model local:qwen3 failed: cannot reach 'http://127.0.0.1:11434/v1/chat/completions': " "$scratch/out"
expect_exit 69 run_with SION_LOCAL_MODEL_URL=http://10.255.255.1:9/v1 SION_MODEL_TIMEOUT=1 -- --task 'Hi' --model local:qwen3 &&
    expect_grep "^session [0-9a-f]{16}: failed: the model local:qwen3 failed: (cannot reach 'http://10.255.255.1:9/v1/chat/completions': |HTTP [0-9]+: )" "$scratch/out"
# openai: reaches this machine, not the network around it.
expect_exit 78 run_with OPENAI_BASE_URL=http://10.255.255.1:9/v1 -- --task 'Hi' --model openai:gpt-5 &&
    expect_err "sion-run: refusing 'http://10.255.255.1:9/v1': 10.255.255.1 is a private address, which only local: reaches"

# deepseek: reasoning_content goes back on the message that made the calls, within the task;
# the session's next task is not sent it (the stand-in checks both).
script deepseek "[{\"reasoning\": \"Write it first.\", $(printf '%s' "$write_call" | cut -c2-), {\"text\": \"Wrote it.\", \"reasoning\": \"All done.\"}, {\"text\": \"Still here.\"}]"
start_standin d openai_server "$scratch/scripts/deepseek.json" --path /chat/completions --max-field max_tokens --reasoning-back
rm -f work/c.txt
expect_exit 0 run_with DEEPSEEK_BASE_URL="$d_url" DEEPSEEK_API_KEY=sk-deepseek-1 -- --task 'Write c.txt' \
    --model deepseek:deepseek-reasoner --workspace work --autonomy L3
sid=$(session_id)
expect_grep '^~ Write it first\.$' "$scratch/out"
expect_exit 0 run_with DEEPSEEK_BASE_URL="$d_url" DEEPSEEK_API_KEY=sk-deepseek-1 -- --task 'And now?' --session "$sid"
expect_clean "$d_log"
expect_query "$d_log" '[[m.get("reasoning_content") for m in e["body"]["messages"] if m["role"] == "assistant"] for e in r]' \
    '[[], ["Write it first."], [null, null]]'

# azure: the v1 API at the endpoint, the key as api-key, the deployment as the model.
script azure '[{"text": "From Azure."}]'
start_standin z openai_server "$scratch/scripts/azure.json" --auth api-key --path /openai/v1/chat/completions --keys az-key-1
expect_exit 0 run_with AZURE_OPENAI_ENDPOINT="$z_url/" AZURE_OPENAI_API_KEY=az-key-1 -- --task 'Hi' --model azure:my-gpt-deployment#minimal
expect_grep '^agent: From Azure\.$' "$scratch/out"
expect_clean "$z_log"
expect_query "$z_log" '[r[0]["headers"]["api-key"], r[0]["body"]["model"], r[0]["body"]["reasoning_effort"]]' '["az-key-1", "my-gpt-deployment", "minimal"]'
expect_exit 78 run_with AZURE_OPENAI_API_KEY=az-key-1 -- --task 'Hi' --model azure:x &&
    expect_err "sion-run: azure: needs AZURE_OPENAI_ENDPOINT (https://<resource>.openai.azure.com) or AZURE_OPENAI_BASE_URL"

# mistral: tool ids of nine letters and digits, the same for the call and its result.
script mistral "[$write_call, {\"text\": \"Done.\"}]"
start_standin m openai_server "$scratch/scripts/mistral.json" --mistral --max-field max_tokens
rm -f work/c.txt
expect_exit 0 run_with MISTRAL_BASE_URL="$m_url/v1" MISTRAL_API_KEY=mk-1 -- --task 'Write c.txt' --model mistral:mistral-large-latest \
    --workspace work --autonomy L3
expect_clean "$m_log"
expect_query "$m_log" 'r[1]["body"]["messages"][2]["tool_calls"][0]["id"] == r[1]["body"]["messages"][3]["tool_call_id"]' 'true'

# Every provider known by name, at its own variables.
names="openrouter moonshot xai groq together fireworks cerebras"
script named '[{"text": "1"}, {"text": "2"}, {"text": "3"}, {"text": "4"}, {"text": "5"}, {"text": "6"}, {"text": "7"}]'
start_standin k openai_server "$scratch/scripts/named.json" --max-field max_tokens
for name in $names; do
    upper=${name^^}
    expect_exit 0 run_with "${upper}_BASE_URL=$k_url/v1" "${upper}_API_KEY=key-$name" -- --task 'Hi' --model "$name:some-model"
done
expect_clean "$k_log"
expect_query "$k_log" '" ".join(e["key"][4:] for e in r)' "\"$names\""
expect_exit 78 run_with -- --task 'Hi' --model groq:llama &&
    expect_err "sion-run: groq:llama needs a key: set GROQ_API_KEY, or keep it with 'sion agent credential add GROQ_API_KEY'"

# Answers whole; a stream's error (as OpenRouter sends one); cut off; malformed; limited.
fails_with() { # fails_with SCRIPT LINE-PATTERN
    start_standin "$1" openai_server "$scratch/scripts/$1.json" --max-field max_tokens
    local url_var="${1}_url"
    expect_exit 69 run_with OPENROUTER_BASE_URL="${!url_var}/v1" OPENROUTER_API_KEY=or-1 -- --task 'Fail' --model openrouter:x/y &&
        expect_grep "^session [0-9a-f]{16}: failed: the model openrouter:x/y failed: $2\$" "$scratch/out"
}
script whole '[{"text": "A whole answer.", "reasoning": "Whole thoughts.", "whole": true}]'
start_standin w openai_server "$scratch/scripts/whole.json"
expect_exit 0 run_with OPENAI_BASE_URL="$w_url/v1" OPENAI_API_KEY=sk-openai-0001 -- --task 'Hi' --model openai:gpt-5
expect_grep '^~ Whole thoughts\.$' "$scratch/out" && expect_grep '^agent: A whole answer\.$' "$scratch/out"
script upstream '[{"text": "Par", "error_chunk": "Upstream provider error"}]'
fails_with upstream 'the stream failed: Upstream provider error'
script cut '[{"text": "Par", "cut": true}]'
fails_with cut 'the answer was cut off before its end'
script garbage '[{"garbage": true}]'
fails_with garbage 'the answer is malformed: invalid JSON at byte 0'
script limited '[{"status": 429, "message": "Rate limit reached for requests", "headers": {"retry-after": "20"}}]'
fails_with limited 'HTTP 429: Rate limit reached for requests'
script toolong '[{"status": 400, "message": "This model'"'"'s maximum context length is 8192 tokens"}]'
fails_with toolong "HTTP 400: This model's maximum context length is 8192 tokens"

done_testing
