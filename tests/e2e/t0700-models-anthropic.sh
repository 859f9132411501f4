#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# anthropic: against a stand-in of the Messages API (tests/models/anthropic_server.py), which checks
# every request: a session with thinking and a call, the thinking given back signed and the cache
# marks on the stable prefix, usage with the cache's reads and writes; how hard it thinks (#level,
# #budget); redacted thinking, answers whole and framings of the stream; busy, failing, cut off,
# malformed, slow and refused answers; thinking cut off before its signature not kept, and thinking
# that no longer checks let go once refused.
. "$(dirname "$0")/lib.sh"
command -v python3 >/dev/null || skip "python3 is not installed"
. "$SION_SOURCE_DIR/tests/models/standin.sh"

mkdir -p "$scratch/work" "$scratch/scripts"
cd "$scratch" || exit 1
unset ANTHROPIC_API_KEY ANTHROPIC_BASE_URL SION_MODEL_TIMEOUT
agent=$(sion agent create coder) || exit 1
export ANTHROPIC_API_KEY=sk-ant-test-0001
# run ARGS...: a run of the agent with no terminal, bounded.
run() { timeout 60 setsid -w sion agent run coder "$agent" "$@" </dev/null; }
# run_at URL ARGS...: the same with ANTHROPIC_BASE_URL=URL.
run_at() { ANTHROPIC_BASE_URL=$1 timeout 60 setsid -w sion agent run coder "$agent" "${@:2}" </dev/null; }
script() { printf '%s\n' "$2" >"$scratch/scripts/$1.json"; }
stored() { # stored SESSION EXPRESSION: what the Python EXPRESSION makes of its messages (`m`)
    python3 - "$SION_HOME/sion.db" "$1" "$2" <<'PY'
import json, sqlite3, sys
db = sqlite3.connect(sys.argv[1])
m = [json.loads(c) for (c,) in db.execute("SELECT content FROM messages WHERE session = ? ORDER BY seq", (sys.argv[2],))]
print(json.dumps(eval(sys.argv[3]), sort_keys=True))
PY
}

# end_usage FILE: the usage of the end event that closes FILE (--json events), keys sorted.
end_usage() { tail -n 1 "$1" | python3 -c 'import json, sys; print(json.dumps(json.load(sys.stdin)["usage"], sort_keys=True))'; }

# A session that thinks, calls a tool and answers: the transcript shows what it thought (~).
script think '[{"thinking": "I should write the file.", "calls": [{"name": "write_file", "input": {"path": "a.txt", "content": "hi"}}]},
 {"text": "Wrote a.txt.", "thinking": "Done now."}]'
start_standin a anthropic_server "$scratch/scripts/think.json"
expect_exit 0 run_at "$a_url" --task 'Write a.txt' --model anthropic:claude-opus-5-5#high \
    --workspace work --autonomy L3
sid=$(session_id)
expect_out "session $sid for agent ${agent:0:8}
~ I should write the file.
→ write_file {\"content\":\"hi\",\"path\":\"a.txt\"}
← wrote 2 bytes to a.txt
~ Done now.
agent: Wrote a.txt.
session $sid: done"
[ "$(cat work/a.txt)" = hi ] && ok || fail "a.txt was not written"
expect_clean "$a_log"
expect_query "$a_log" '[x for e in r for x in e["refusals"]]' '[]'
expect_query "$a_log" '[(e["path"], e["headers"]["x-api-key"], e["headers"]["anthropic-version"], e["body"]["model"], e["body"]["stream"]) for e in r]' \
    '[["/v1/messages", "sk-ant-test-0001", "2023-06-01", "claude-opus-5-5", true], ["/v1/messages", "sk-ant-test-0001", "2023-06-01", "claude-opus-5-5", true]]'
expect_query "$a_log" '[(e["body"]["thinking"], e["body"]["output_config"], e["body"]["max_tokens"]) for e in r]' \
    '[[{"type": "adaptive"}, {"effort": "high"}, 32384], [{"type": "adaptive"}, {"effort": "high"}, 32384]]'
# The thinking goes back before the call it led to, as it came (the stand-in checks the signature).
expect_query "$a_log" '[(b["type"], b.get("thinking")) for b in r[1]["body"]["messages"][1]["content"]]' \
    '[["thinking", "I should write the file."], ["tool_use", null]]'
expect_query "$a_log" 'r[1]["body"]["messages"][2]["content"][0]["tool_use_id"] == r[1]["body"]["messages"][1]["content"][1]["id"]' 'true'
# Cache marks: the last tool, the system prompt, the conversation's last block; no other.
expect_query "$a_log" '[([i for i, t in enumerate(e["body"]["tools"]) if "cache_control" in t] == [len(e["body"]["tools"]) - 1], "cache_control" in e["body"]["system"][0], "cache_control" in e["body"]["messages"][-1]["content"][-1], sum(1 for m in e["body"]["messages"] for b in m["content"] if "cache_control" in b)) for e in r]' \
    '[[true, true, true, 1], [true, true, true, 1]]'
# The second call starts byte for byte as the first did, up to the first one's last turn.
expect_query "$a_log" '[e["kept_start"] for e in r]' '[null, true]'
# The second call reads the first one's prefix from the cache.
expect_query "$a_log" '[u[0]["cache_read_input_tokens"] == 0, u[0]["cache_creation_input_tokens"] > 0, u[1]["cache_read_input_tokens"] >= u[0]["cache_creation_input_tokens"]]' \
    '[true, true, true]'
# Kept on the assistant's message: whose it is and the block as it came.
expect_exit 0 stored "$sid" '[(x["anthropic"]["by"], [k["at"] for k in x["anthropic"]["blocks"]], [k["block"]["type"] for k in x["anthropic"]["blocks"]]) for x in m if "anthropic" in x]'
expect_out "[[{\"base_url\": \"$a_url\", \"kind\": \"anthropic\", \"model\": \"claude-opus-5-5\"}, [0], [\"thinking\"]], [{\"base_url\": \"$a_url\", \"kind\": \"anthropic\", \"model\": \"claude-opus-5-5\"}, [0], [\"thinking\"]]]"

# Usage: the input counts what was read from the cache and written to it.
start_standin j anthropic_server "$scratch/scripts/think.json"
rm -f work/a.txt
expect_exit 0 run_at "$j_url" --task 'Write a.txt' --model anthropic:claude-opus-5-5 \
    --workspace work --autonomy L3 --json
# Reads and writes of the cache are reported apart, in the run's end event and the stored session.
want_usage=$(query "$j_log" '{"input_tokens": sum(x["input_tokens"] + x["cache_read_input_tokens"] + x["cache_creation_input_tokens"] for x in u), "output_tokens": sum(x["output_tokens"] for x in u), "cache_read_tokens": sum(x["cache_read_input_tokens"] for x in u), "cache_write_tokens": sum(x["cache_creation_input_tokens"] for x in u)}')
expect_query "$j_log" '[u[1]["cache_read_input_tokens"] > 0, u[0]["cache_creation_input_tokens"] > 0]' '[true, true]'
end_usage "$scratch/out" >"$scratch/usage"
expect_text "$scratch/usage" usage "$want_usage"
jsid=$(head -n 1 "$scratch/out" | python3 -c 'import json, sys; print(json.load(sys.stdin)["session"])')
expect_exit 0 sion agent show "$jsid" --json
end_usage "$scratch/out" >"$scratch/usage"
expect_text "$scratch/usage" 'usage in show' "$want_usage"
expect_query "$j_log" '[e["body"].get("thinking") for e in r]' '[null, null]'

# How hard it thinks: each level and budget as the Messages API takes it.
script plain '[{"text": "1"}, {"text": "2"}, {"text": "3"}, {"text": "4"}, {"text": "5"}, {"text": "6"}, {"text": "7"}, {"text": "8"}]'
start_standin e anthropic_server "$scratch/scripts/plain.json"
for effort in '#8000' '#none' '#minimal' '#max' '#500' '#0' '#xhigh' ''; do
    expect_exit 0 run_at "$e_url" --task 'Say a number' --model "anthropic:claude-opus-5-5$effort"
done
expect_clean "$e_log"
expect_query "$e_log" '[(e["body"].get("thinking"), e["body"].get("output_config"), e["body"]["max_tokens"]) for e in r]' \
    '[[{"budget_tokens": 8000, "type": "enabled"}, null, 24000], [{"type": "disabled"}, null, 16000], [{"type": "adaptive"}, {"effort": "low"}, 17024], [{"type": "adaptive"}, {"effort": "max"}, 64000], [{"budget_tokens": 1024, "type": "enabled"}, null, 16500], [{"type": "disabled"}, null, 16000], [{"type": "adaptive"}, {"effort": "xhigh"}, 48768], [null, null, 16000]]'
expect_exit 64 run --task x --model 'anthropic:claude-opus-5-5#hard' &&
    expect_err "sion-run: invalid model 'anthropic:claude-opus-5-5#hard': invalid effort '#hard': give none, minimal, low, medium, high, xhigh, max or a budget of 0 to 60000 tokens"

# Redacted thinking goes back as it came; a stream in CRLF, split mid-event, with comments; an
# answer that comes whole.
echo hi >work/a.txt
script redacted '[{"redacted": true, "calls": [{"name": "read_file", "input": {"path": "a.txt"}}], "crlf": true, "split": true, "comments": true},
 {"text": "It says hi.", "whole": true}]'
start_standin d anthropic_server "$scratch/scripts/redacted.json"
expect_exit 0 run_at "$d_url" --task 'Read a.txt' --model anthropic:claude-sonnet-5-5#4000 \
    --workspace work --autonomy L3
expect_grep '^agent: It says hi\.$' "$scratch/out"
expect_clean "$d_log"
expect_query "$d_log" '[[b["type"] for b in r[1]["body"]["messages"][1]["content"]], [x for e in r for x in e["refusals"]]]' \
    '[["redacted_thinking", "tool_use"], []]'

# Failures: each is the model's, named on the run's last line (69), the HTTP status first.
fails_with() { # fails_with SCRIPT LINE-PATTERN [ENV...]
    local name=$1 pattern=$2
    shift 2
    start_standin "$name" anthropic_server "$scratch/scripts/$name.json"
    local url_var="${name}_url"
    expect_exit 69 env ANTHROPIC_BASE_URL="${!url_var}" "$@" timeout 60 setsid -w sion agent run coder "$agent" \
        --task 'Fail' --model anthropic:claude-opus-5-5 </dev/null &&
        expect_grep "^session [0-9a-f]{16}: failed: the model anthropic:claude-opus-5-5 failed: $pattern\$" "$scratch/out"
}
script busy '[{"status": 529, "message": "Overloaded"}]'
fails_with busy 'HTTP 529: Overloaded'
script midstream '[{"text": "A partial answer", "error_event": {"type": "overloaded_error", "message": "Overloaded"}}]'
fails_with midstream 'overloaded_error: Overloaded'
script cut '[{"text": "A partial answer", "cut": true}]'
fails_with cut 'the answer was cut off before its end'
script garbage '[{"garbage": true}]'
fails_with garbage 'the answer is malformed: invalid JSON at byte 0'
script slow '[{"slow": 4, "text": "late"}]'
fails_with slow "cannot reach 'http://127.0.0.1:[0-9]+/v1/messages': Timeout was reached.*" SION_MODEL_TIMEOUT=1
script malformed '[{"status": 400, "message": "max_tokens: 99999 > 64000, which is the maximum"}]'
fails_with malformed 'HTTP 400: max_tokens: 99999 > 64000, which is the maximum'
script refused '[{"text": "never"}]'
start_standin k anthropic_server "$scratch/scripts/refused.json" --keys sk-ant-good
expect_exit 69 run_at "$k_url" --task 'Fail' --model anthropic:claude-opus-5-5 &&
    expect_grep '^session [0-9a-f]{16}: failed: the model anthropic:claude-opus-5-5 failed: HTTP 401: invalid x-api-key$' "$scratch/out"
expect_query "$k_log" 'len(r)' '1'
# Configuration refused before a session starts: no key, a private address.
expect_exit 78 env -u ANTHROPIC_API_KEY sion agent run coder "$agent" --task x --model anthropic:claude-opus-5-5 &&
    expect_err "sion-run: anthropic:claude-opus-5-5 needs a key: set ANTHROPIC_API_KEY, or keep it with 'sion agent credential add ANTHROPIC_API_KEY'"
expect_exit 78 env ANTHROPIC_BASE_URL=http://10.1.2.3:8080 sion agent run coder "$agent" --task x --model anthropic:claude-opus-5-5 &&
    expect_err "sion-run: refusing 'http://10.1.2.3:8080': 10.1.2.3 is a private address, which only local: reaches"
expect_exit 78 env ANTHROPIC_BASE_URL=http://93.184.216.34 sion agent run coder "$agent" --task x --model anthropic:claude-opus-5-5 &&
    expect_err "sion-run: refusing 'http://93.184.216.34': plain http goes only to this machine: use https"

# Thinking cut off before its signature is not kept: the next run of the session is not sent it.
script unsigned '[{"thinking": "Cut short", "unsigned": true, "text": "Partial."}, {"text": "Again."}]'
start_standin s anthropic_server "$scratch/scripts/unsigned.json"
expect_exit 0 run_at "$s_url" --task 'Think' --model anthropic:claude-opus-5-5#high
sid=$(session_id)
expect_grep '^~ Cut short$' "$scratch/out"
expect_exit 0 run_at "$s_url" --task 'Again' --session "$sid"
expect_clean "$s_log"
expect_query "$s_log" '[b["type"] for b in r[1]["body"]["messages"][1]["content"]]' '["text"]'
expect_exit 0 stored "$sid" '[x for x in m if "anthropic" in x]' && expect_out '[]'

# Thinking that no longer checks (signed under another key) is refused once, then let go.
script resigned '[{"thinking": "Plan A.", "calls": [{"name": "write_file", "input": {"path": "b.txt", "content": "b"}}], "new_secret": true},
 {"text": "Done."}]'
start_standin n anthropic_server "$scratch/scripts/resigned.json"
expect_exit 0 run_at "$n_url" --task 'Write b.txt' --model anthropic:claude-opus-5-5#high \
    --workspace work --autonomy L3
expect_grep '^agent: Done\.$' "$scratch/out"
expect_clean "$n_log"
expect_query "$n_log" '[len(e["refusals"]) for e in r]' '[0, 1, 0]'
expect_query "$n_log" '[[b["type"] for b in e["body"]["messages"][1]["content"]] for e in r[1:]]' '[["thinking", "tool_use"], ["tool_use"]]'

done_testing
