#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# A stable start (seed 001, "What a model is sent"): the requests of a session start byte for byte
# as the one before did, up to its last turn, across the runs that continue it, for a provider's
# cache; the system prompt is the one the session began with, kept with it, and a run whose
# settings differ (another autonomy) tells the model in a note before the person's message rather
# than changing the start; `sion agent show` shows where. Against the stand-ins of Anthropic's
# Messages, OpenAI's Chat Completions and Responses and Gemini (tests/models/), which check each
# request.
. "$(dirname "$0")/lib.sh"
. "$SION_SOURCE_DIR/tests/models/standin.sh"

cd "$scratch" || exit 1
mkdir -p work
export ANTHROPIC_API_KEY=sk-ant-test-0001
unset ANTHROPIC_BASE_URL
agent=$(sion agent create coder) || exit 1
printf '%s\n' '[{"calls": [{"name": "write_file", "input": {"path": "a.txt", "content": "a"}}]},
 {"text": "Wrote a.txt."}, {"text": "Still here."}, {"text": "And again."}]' >script.json
start_standin a anthropic_server script.json
run() {
    ANTHROPIC_BASE_URL=$a_url timeout 60 setsid -w sion agent run coder "$agent" \
        --model anthropic:claude-opus-5-5 --workspace work "$@" </dev/null
}
expect_exit 0 run --task 'Write a.txt' --autonomy L3
sid=$(session_id)
expect_exit 0 run --session "$sid" --task 'Are you there?' --autonomy L4
expect_grep '^this run.s settings are not those the session began with: the model is told them in a note$' "$scratch/out"
expect_exit 0 run --session "$sid" --task 'And now?' --autonomy L3
if grep -q 'settings are not those' "$scratch/out"; then
    fail "a run with the session's own settings was told they changed"
else
    ok
fi
expect_query "$a_log" '[x for e in r for x in e["violations"]]' '[]'
# Four requests, over three runs: each starts as the one before did, the system prompt the first.
expect_query "$a_log" '[e["kept_start"] for e in r]' '[null, true, true, true]'
expect_query "$a_log" 'len({json.dumps(e["body"]["system"][0]["text"]) for e in r})' '1'
expect_query "$a_log" '"autonomy L3" in r[0]["body"]["system"][0]["text"]' 'true'
# The note, in the person's turn before the task; and only in the run whose settings differed.
expect_query "$a_log" '[b["text"] for b in r[2]["body"]["messages"][-1]["content"]]' \
    "[\"The runtime's note: this run's settings are not those the session began with, which the system prompt gives. Now: You are agent ${agent:0:8} of sion, working for a person on the task they give you. You act only through your tools; each call passes the session's policy (autonomy L4), and a call it refuses comes back saying why. Your workspace is /workspace: name files relative to it. When the task is done, say so briefly, without a tool call.\", \"Are you there?\"]"
expect_query "$a_log" '[b["text"] for b in r[3]["body"]["messages"][-1]["content"]]' '["And now?"]'
expect_exit 0 sion agent show "$sid"
expect_grep '^this run.s settings are not those the session began with: the model is told them in a note$' "$scratch/out"
expect_grep '^you: Are you there\?$' "$scratch/out"


# The same three runs against the other providers' stand-ins: one system prompt where each API
# takes it, and every request starting as the one before did.
# across NAME SERVER SCRIPT MODEL SYSTEM VAR=VALUE... [-- STAND-IN ARGS...]: the runs with MODEL at
# the stand-in SERVER playing SCRIPT, its URL for @URL@ in the VALUEs; SYSTEM a Python expression
# of a request `e` giving the system prompt as that API takes it.
across() {
    local name=$1 model=$4 system=$5 log id env
    start_standin_for "$1" "$2" "$3" "${@:6}"
    eval "log=\$${name}_log"
    env=("${standin_env[@]}")
    expect_exit 0 env "${env[@]}" timeout 60 setsid -w sion agent run coder "$agent" --model "$model" \
        --workspace work --task 'Write a.txt' --autonomy L3 </dev/null
    id=$(session_id)
    for level in L4 L3; do
        expect_exit 0 env "${env[@]}" timeout 60 setsid -w sion agent run coder "$agent" --model "$model" \
            --workspace work --session "$id" --task 'There?' --autonomy "$level" </dev/null
    done
    # What a stand-in refused: its violations, or Gemini's verdict.
    expect_query "$log" '[x for e in r for x in e.get("violations", [])] + [e["verdict"] for e in r if e.get("verdict", "answered") != "answered"]' '[]'
    expect_query "$log" '[e["kept_start"] for e in r]' '[null, true, true, true]'
    expect_query "$log" "len({json.dumps($system) for e in r})" '1'
}
across o openai_server script.json openai:gpt-5 'e["body"]["messages"][0]' OPENAI_API_KEY=sk-openai-0001 OPENAI_BASE_URL=@URL@/v1
across p responses_server script.json openai-responses:gpt-5 'e["body"]["instructions"]' OPENAI_API_KEY=sk-openai-0001 \
    OPENAI_BASE_URL=@URL@/v1
cat >gemini.json <<'JSON'
{"turns": [
  {"parts": [{"functionCall": {"name": "write_file", "args": {"path": "a.txt", "content": "a"}}, "thoughtSignature": "c2lnLTE="}]},
  {"parts": [{"text": "Wrote a.txt."}]}, {"parts": [{"text": "Still here."}]}, {"parts": [{"text": "And again."}]}
]}
JSON
across g gemini_server gemini.json gemini:gemini-3-pro 'e["body"]["systemInstruction"]' GEMINI_API_KEY=AIza-test-0001 \
    GEMINI_BASE_URL=@URL@ -- --model gemini-3-pro --api-key AIza-test-0001

done_testing
