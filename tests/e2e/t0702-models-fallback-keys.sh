#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Fallback and keys against the stand-ins of tests/models/: a busy model hands the task to the next
# --model, of another provider or of the same, which is not shown the first one's thinking; an
# unreachable model is passed over; a request refused as malformed or unauthorized is not; keys in
# a list each take their turn, a limited one rests and a refused one too, the call going on with
# the next at once; with one key a limited call is the model's failure; the token budget counts
# the room a model is given for thinking.
. "$(dirname "$0")/lib.sh"
command -v python3 >/dev/null || skip "python3 is not installed"
. "$SION_SOURCE_DIR/tests/models/standin.sh"

mkdir -p "$scratch/work" "$scratch/scripts"
cd "$scratch" || exit 1
unset ANTHROPIC_API_KEY ANTHROPIC_BASE_URL OPENAI_API_KEY OPENAI_BASE_URL SION_MODEL_TIMEOUT
agent=$(sion agent create coder) || exit 1
script() { printf '%s\n' "$2" >"$scratch/scripts/$1.json"; }
write() { printf '{"name": "write_file", "input": {"path": "%s", "content": "x"}}' "$1"; }
busy='{"status": 529, "message": "Overloaded"}'
# end_usage FILE: the usage of the end event that closes FILE (--json events), keys sorted.
end_usage() { tail -n 1 "$1" | python3 -c 'import json, sys; print(json.dumps(json.load(sys.stdin)["usage"], sort_keys=True))'; }

# Busy after a call: the next model, of another provider, takes over; it is sent no thinking.
script a1 "[{\"thinking\": \"Plan.\", \"calls\": [$(write f1.txt)]}, $busy]"
script o1 '[{"text": "Finished by the spare."}]'
start_standin a1 anthropic_server "$scratch/scripts/a1.json"
start_standin o1 openai_server "$scratch/scripts/o1.json"
expect_exit 0 run_with ANTHROPIC_BASE_URL="$a1_url" ANTHROPIC_API_KEY=ka OPENAI_BASE_URL="$o1_url/v1" OPENAI_API_KEY=ko -- \
    --task 'Write f1.txt' --model anthropic:claude-a#high --model openai:gpt-b --workspace work --autonomy L3
sid=$(session_id)
expect_out "session $sid for agent ${agent:0:8}
~ Plan.
→ write_file {\"content\":\"x\",\"path\":\"f1.txt\"}
← wrote 1 byte to f1.txt
the model anthropic:claude-a#high failed: HTTP 529: Overloaded; asking openai:gpt-b
agent: Finished by the spare.
session $sid: done"
expect_clean "$a1_log"
expect_clean "$o1_log"
expect_query "$o1_log" '[sorted(m) for m in r[0]["body"]["messages"] if m["role"] == "assistant"]' '[["content", "role", "tool_calls"]]'

# The same provider's other model is not given the first one's thinking either (the stand-in
# would refuse it: its signatures are the model's).
script a2 "[{\"thinking\": \"Plan.\", \"calls\": [$(write f2.txt)]}, $busy, {\"text\": \"Finished by b.\"}]"
start_standin a2 anthropic_server "$scratch/scripts/a2.json"
expect_exit 0 run_with ANTHROPIC_BASE_URL="$a2_url" ANTHROPIC_API_KEY=ka -- \
    --task 'Write f2.txt' --model anthropic:claude-a#high --model anthropic:claude-b#high --workspace work --autonomy L3
expect_grep '^the model anthropic:claude-a#high failed: HTTP 529: Overloaded; asking anthropic:claude-b#high$' "$scratch/out"
expect_grep '^agent: Finished by b\.$' "$scratch/out"
expect_clean "$a2_log"
expect_query "$a2_log" '[(e["body"]["model"], [b["type"] for b in e["body"]["messages"][1]["content"]] if len(e["body"]["messages"]) > 1 else [], e["refusals"]) for e in r]' \
    '[["claude-a", [], []], ["claude-a", ["thinking", "tool_use"], []], ["claude-b", ["tool_use"], []]]'

# Unreachable: passed over, named.
closed=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
script a3 '[{"text": "Reached."}]'
start_standin a3 anthropic_server "$scratch/scripts/a3.json"
expect_exit 0 run_with OPENAI_BASE_URL="http://127.0.0.1:$closed/v1" ANTHROPIC_BASE_URL="$a3_url" ANTHROPIC_API_KEY=ka -- \
    --task 'Hi' --model openai:gpt-b --model anthropic:claude-a
expect_grep "^the model openai:gpt-b failed: cannot reach 'http://127.0.0.1:$closed/v1/chat/completions': .*; asking anthropic:claude-a\$" "$scratch/out"
expect_grep '^agent: Reached\.$' "$scratch/out"

# Refused as malformed (400) or unauthorized (401): not retried, the next model not asked.
for refusal in '{"status": 400, "message": "messages: roles must alternate"}' '{"status": 401, "message": "invalid x-api-key"}'; do
    script a4 "[$refusal]"
    script o4 '[{"text": "never"}]'
    start_standin a4 anthropic_server "$scratch/scripts/a4.json"
    start_standin o4 openai_server "$scratch/scripts/o4.json"
    expect_exit 69 run_with ANTHROPIC_BASE_URL="$a4_url" ANTHROPIC_API_KEY=ka OPENAI_BASE_URL="$o4_url/v1" OPENAI_API_KEY=ko -- \
        --task 'Hi' --model anthropic:claude-a --model openai:gpt-b &&
        expect_grep "^session [0-9a-f]{16}: failed: the model anthropic:claude-a failed: HTTP 40[01]: (messages: roles must alternate|invalid x-api-key)\$" "$scratch/out"
    expect_query "$o4_log" 'len(r)' '0'
done

# Keys: each call starts with the next key; a limited one rests (here for the rest of the run),
# and the call goes on at once with the next.
script keys "[{\"key\": \"k-one\", \"status\": 429, \"message\": \"Rate limited\"},
 {\"key\": \"k-two\", \"calls\": [$(write k1.txt)]}, {\"key\": \"k-two\", \"calls\": [$(write k2.txt)]},
 {\"key\": \"k-three\", \"calls\": [$(write k3.txt)]}, {\"key\": \"k-two\", \"text\": \"Done.\"}]"
start_standin k anthropic_server "$scratch/scripts/keys.json"
expect_exit 0 run_with ANTHROPIC_BASE_URL="$k_url" ANTHROPIC_API_KEY='k-one, k-two,k-three' -- \
    --task 'Write three' --model anthropic:claude-a --workspace work --autonomy L3
expect_grep '^agent: Done\.$' "$scratch/out"
expect_clean "$k_log"
expect_query "$k_log" '[e["key"] for e in r]' '["k-one", "k-two", "k-two", "k-three", "k-two"]'
# A refused key rests too, and the call goes on with the next.
script refused "[{\"key\": \"r-one\", \"calls\": [$(write r1.txt)]}, {\"key\": \"r-two\", \"status\": 401, \"message\": \"invalid x-api-key\"},
 {\"key\": \"r-one\", \"calls\": [$(write r2.txt)]}, {\"key\": \"r-one\", \"text\": \"Done.\"}]"
start_standin rf anthropic_server "$scratch/scripts/refused.json"
expect_exit 0 run_with ANTHROPIC_BASE_URL="$rf_url" ANTHROPIC_API_KEY='r-one,r-two' -- \
    --task 'Write two' --model anthropic:claude-a --workspace work --autonomy L3
expect_grep '^agent: Done\.$' "$scratch/out"
expect_query "$rf_log" '[e["key"] for e in r]' '["r-one", "r-two", "r-one", "r-one"]'
# With one key, a limited call is the model's failure: the next model is asked.
script a5 '[{"status": 429, "message": "Rate limited", "headers": {"retry-after": "30"}}]'
script o5 '[{"text": "The spare answered."}]'
start_standin a5 anthropic_server "$scratch/scripts/a5.json"
start_standin o5 openai_server "$scratch/scripts/o5.json"
expect_exit 0 run_with ANTHROPIC_BASE_URL="$a5_url" ANTHROPIC_API_KEY=only-key OPENAI_BASE_URL="$o5_url/v1" OPENAI_API_KEY=ko -- \
    --task 'Hi' --model anthropic:claude-a --model openai:gpt-b
expect_grep '^the model anthropic:claude-a failed: HTTP 429: Rate limited; asking openai:gpt-b$' "$scratch/out"
expect_grep '^agent: The spare answered\.$' "$scratch/out"

# The token budget counts the room a model is given for thinking, before each call.
echo '{"turns": [{"text": "hello", "usage": {"input_tokens": 10, "output_tokens": 1}}]}' >"$scratch/scripts/hello.json"
expect_exit 1 run_with -- --task 'Hi' --model "script:$scratch/scripts/hello.json#max" --budget-tokens 50000
sid=$(session_id)
expect_out "session $sid for agent ${agent:0:8}
session $sid: stopped: the token budget of 50000 tokens is spent (0 used)"
expect_exit 0 run_with -- --task 'Hi' --model "script:$scratch/scripts/hello.json#low" --budget-tokens 50000
expect_grep '^agent: hello$' "$scratch/out"

# The cache figures of every model a run asked add up, reported apart: in the run's end event, and
# over the session's runs in the stored session.
script a6 "[{\"calls\": [$(write f6.txt)]}, $busy]"
script o6 '[{"text": "Cached.", "usage": {"prompt_tokens": 800, "completion_tokens": 3, "cached_tokens": 500}}]'
start_standin a6 anthropic_server "$scratch/scripts/a6.json"
start_standin o6 openai_server "$scratch/scripts/o6.json"
expect_exit 0 run_with ANTHROPIC_BASE_URL="$a6_url" ANTHROPIC_API_KEY=ka OPENAI_BASE_URL="$o6_url/v1" OPENAI_API_KEY=ko -- \
    --task 'Write f6.txt' --model anthropic:claude-a --model openai:gpt-b --workspace work --autonomy L3 --json
sid=$(head -n 1 "$scratch/out" | python3 -c 'import json, sys; print(json.load(sys.stdin)["session"])')
first=$(query "$a6_log" '{"input_tokens": u[0]["input_tokens"] + u[0]["cache_read_input_tokens"] + u[0]["cache_creation_input_tokens"] + 800, "output_tokens": u[0]["output_tokens"] + 3, "cache_read_tokens": u[0]["cache_read_input_tokens"] + 500, "cache_write_tokens": u[0]["cache_creation_input_tokens"]}')
expect_query "$a6_log" 'len(u) == 1 and u[0]["cache_creation_input_tokens"] > 0' 'true'
end_usage "$scratch/out" >"$scratch/usage"
expect_text "$scratch/usage" 'usage of a run with a fallback' "$first"
echo '{"turns": [{"text": "again", "usage": {"input_tokens": 100, "output_tokens": 2, "cache_read_tokens": 90, "cache_write_tokens": 5}}]}' >"$scratch/scripts/s6.json"
expect_exit 0 run_with -- --session "$sid" --task 'Again' --model "script:$scratch/scripts/s6.json" --json
end_usage "$scratch/out" >"$scratch/usage"
expect_text "$scratch/usage" 'usage of the second run' '{"cache_read_tokens": 90, "cache_write_tokens": 5, "input_tokens": 100, "output_tokens": 2}'
expect_exit 0 sion agent show "$sid" --json
end_usage "$scratch/out" >"$scratch/usage"
both=$(python3 -c 'import json, sys; a = json.loads(sys.argv[1]); b = {"cache_read_tokens": 90, "cache_write_tokens": 5, "input_tokens": 100, "output_tokens": 2}; print(json.dumps({k: a[k] + b[k] for k in a}, sort_keys=True))' "$first")
expect_text "$scratch/usage" 'usage of the session' "$both"

done_testing
