#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Reasoning given back in a session with MCP servers, for every provider of the chat completions
# family against its stand-in (tests/models/openai_server.py --reasoning-back, which requires it as
# DeepSeek and Kimi do): the servers' note that ends each request must not end the task, so each
# call's reasoning goes back with it; the note still ends what is sent, after the task as a message
# of its own and after calls as the end of the last result; a new task is sent none of it. The
# servers are the stand-in bridge of t0610 (tests/tools/fake-mcp-bridge.py).
. "$(dirname "$0")/lib.sh"
command -v python3 >/dev/null || skip "python3 is not installed"
command -v setsid >/dev/null || skip "setsid is not installed (Debian package util-linux)"
. "$SION_SOURCE_DIR/tests/models/standin.sh"

cd "$scratch" || exit 1
mkdir -p fake bridge scripts
for v in OPENAI_API_KEY OPENAI_BASE_URL SION_LOCAL_MODEL_URL SION_LOCAL_MODEL_KEY AZURE_OPENAI_API_KEY \
    AZURE_OPENAI_ENDPOINT AZURE_OPENAI_BASE_URL SION_MODEL_TIMEOUT; do
    unset "$v"
done
printf '#!/bin/sh\nexec python3 "%s/tests/tools/fake-mcp-bridge.py" "$@"\n' "$SION_SOURCE_DIR" >fake/sion-mcp
chmod +x fake/sion-mcp
export SION_EXEC_PATH="$scratch/fake" SION_FAKE_MCP="$scratch/bridge/notes.json"
python3 - <<'PY'
import json
tool = lambda name: {"name": name, "description": "A tool.", "effect": "read", "idempotent": True,
                     "taints": False, "inputSchema": {"type": "object"}}
notes = {"state": "connected", "protocol": "2026-07-28", "server": {"name": "notes", "version": "1.0"},
         "tools": [tool("notes_read"), tool("notes_list")]}
calls = {"notes_read": [{"text": "Ship on Friday."}], "notes_list": [{"text": "release"}]}
json.dump({"servers": {"notes": notes}, "calls": calls}, open("bridge/notes.json", "w"))
PY
cat >scripts/think.json <<'JSON'
[{"reasoning": "Read the note first.", "calls": [{"name": "notes_read", "input": {}}]},
 {"reasoning": "Then list them.", "calls": [{"name": "notes_list", "input": {}}]},
 {"text": "The note says Friday.", "reasoning": "Done."},
 {"text": "Still Friday."}]
JSON
agent=$(sion-run create coder) || exit 1
run() { timeout 120 setsid -w env "$@" </dev/null; }

# provider VAR-PREFIX MODEL BASE-SUFFIX STAND-IN-ARGS...: a session of two calls and an answer, with
# the notes server, then a second task in it; what the stand-in was sent is checked.
provider() {
    local prefix=$1 model=$2 suffix=$3 name=${2%%:*}
    shift 3
    start_standin "$name" openai_server "$scratch/scripts/think.json" --reasoning-back "$@"
    local url_var="${name}_url" log_var="${name}_log"
    local url="${!url_var}$suffix" log="${!log_var}"
    local base="${prefix}_BASE_URL" key="${prefix}_API_KEY"
    [ "$prefix" = SION_LOCAL_MODEL ] && base=SION_LOCAL_MODEL_URL key=SION_LOCAL_MODEL_KEY
    [ "$prefix" = AZURE_OPENAI ] && base=AZURE_OPENAI_ENDPOINT url="${!url_var}/"
    expect_exit 0 run "$base=$url" "$key=key-$name" sion-run run coder "${agent:0:8}" --task 'When do we ship?' \
        --model "$model" --mcp notes --autonomy L1 || return
    local sid
    sid=$(session_id)
    expect_out "session $sid for agent ${agent:0:8}
~ Read the note first.
→ notes_read {}
← Ship on Friday.
~ Then list them.
→ notes_list {}
← release
~ Done.
agent: The note says Friday.
session $sid: done"
    expect_exit 0 run "$base=$url" "$key=key-$name" sion-run run coder "${agent:0:8}" --task 'And now?' \
        --session "$sid" &&
        expect_grep '^agent: Still Friday\.$' "$scratch/out"
    expect_clean "$log"
    # Each call's reasoning back with it while the task goes on; none in the next task.
    expect_query "$log" '[[m.get("reasoning_content") for m in e["body"]["messages"] if m["role"] == "assistant"] for e in r]' \
        '[[], ["Read the note first."], ["Read the note first.", "Then list them."], [null, null, null]]'
    # The servers' note ends every request: a message of its own after a task, the end of the
    # last result after calls; the results are as they came before it.
    expect_query "$log" '[(e["body"]["messages"][-1]["role"], e["body"]["messages"][-1]["content"].split("## The MCP servers you have\n")[0]) for e in r]' \
        '[["user", ""], ["tool", "Ship on Friday.\n\n"], ["tool", "release\n\n"], ["user", ""]]'
    expect_query "$log" '[sum(str(m.get("content")).count("## The MCP servers you have") for m in e["body"]["messages"]) for e in r]' '[1, 1, 1, 1]'
    expect_query "$log" '[[m["content"].split("\n\n## The MCP")[0] for m in e["body"]["messages"] if m["role"] == "tool"] for e in r]' \
        '[[], ["Ship on Friday."], ["Ship on Friday.", "release"], ["Ship on Friday.", "release"]]'
}

provider OPENAI openai:gpt-5 /v1
provider SION_LOCAL_MODEL local:qwen3 /v1 --max-field max_tokens --auth bearer
provider AZURE_OPENAI azure:my-deployment '' --auth api-key --path /openai/v1/chat/completions
provider DEEPSEEK deepseek:deepseek-reasoner '' --path /chat/completions --max-field max_tokens
provider MISTRAL mistral:magistral-medium-latest /v1 --mistral --max-field max_tokens
for name in openrouter moonshot xai groq together fireworks cerebras; do
    provider "${name^^}" "$name:some-model" /v1 --max-field max_tokens
done

done_testing
