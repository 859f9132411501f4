#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# bedrock: sessions through `sion agent run --model bedrock:…` against a stand-in of the Converse
# API (tests/models/bedrock_server.py) that recomputes every Signature Version 4 signature and
# checks the body: a Claude model id with ':' signed with an access key and session token, its
# cache points, its signed reasoning given back as it came; reasoning refused (400) let go and the
# call sent again; a throttled model falling back; Bedrock API keys rotating past a refused one;
# credentials and region from AWS's own files; a profile that signs in another way refused; a
# malformed and a cut answer; and no secret in anything the session printed or stored.
. "$(dirname "$0")/lib.sh"
command -v python3 >/dev/null || skip "python3 is not installed"
. "$SION_SOURCE_DIR/tests/models/standin.sh"

work="$scratch/work"
mkdir -p "$work"
cd "$scratch" || exit 1

secret='wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY'
token='FQoGZXIvYXdzEXAMPLEsessionTOKENvalue0123456789'
claude='us.anthropic.claude-sonnet-4-5-20250929-v1:0'
export AWS_ACCESS_KEY_ID=AKIDEXAMPLE AWS_SECRET_ACCESS_KEY="$secret" AWS_SESSION_TOKEN="$token"
export AWS_REGION=eu-west-3
unset AWS_BEARER_TOKEN_BEDROCK AWS_PROFILE AWS_DEFAULT_REGION AWS_DEFAULT_PROFILE

# stand_in NAME ARGS...: the stand-in playing $scratch/NAME.json and logging to $scratch/NAME.log;
# its endpoint in AWS_ENDPOINT_URL_BEDROCK_RUNTIME.
stand_in() {
    local name=$1
    shift
    start_standin "$name" bedrock_server "$scratch/$name.json" "$@"
    eval "export AWS_ENDPOINT_URL_BEDROCK_RUNTIME=\$${name}_url"
}
signing=(--access-key AKIDEXAMPLE --secret-key "$secret" --session-token "$token")

run() { timeout 120 setsid -w sion agent run coder "$agent" --workspace "$work" --autonomy L3 "$@" </dev/null; }
# end_usage FILE: the usage of the end event that closes FILE (--json events), keys sorted.
end_usage() { tail -n 1 "$1" | python3 -c 'import json, sys; print(json.dumps(json.load(sys.stdin)["usage"], sort_keys=True))'; }

agent=$(sion agent create coder) && ok || fail "sion agent create coder"
agent=${agent:0:8}

# --- Claude: signed with a session token, cached at two points, its reasoning given back -------
cat >claude.json <<'JSON'
{"turns": [
  {"content": [
     {"reasoningContent": {"reasoningText": {"text": "The note goes in note.txt.", "signature": "c2lnbmVkLWJ5LWNsYXVkZQ=="}}},
     {"text": "Writing the note."},
     {"toolUse": {"toolUseId": "tooluse_Ab3", "name": "write_file", "input": {"path": "note.txt", "content": "hi"}}}],
   "stopReason": "tool_use",
   "usage": {"inputTokens": 20, "outputTokens": 30, "cacheWriteInputTokens": 1500}},
  {"content": [{"text": "The note is written."}],
   "usage": {"inputTokens": 40, "outputTokens": 8, "cacheReadInputTokens": 1500}}
]}
JSON
stand_in claude --model "$claude" --region eu-west-3 "${signing[@]}"
expect_exit 0 run --task 'Write a note' --model "bedrock:$claude" && expect_err ''
sid=$(session_id)
expect_out "session $sid for agent $agent
~ The note goes in note.txt.
agent: Writing the note.
→ write_file {\"content\":\"hi\",\"path\":\"note.txt\"}
← wrote 2 bytes to note.txt
agent: The note is written.
session $sid: done"
[ "$(cat "$work/note.txt")" = hi ] && ok || fail "note.txt was not written"
expect_exit 0 verdicts claude && expect_out "answered
answered"
python3 - "$scratch/claude.log" <<'PY' && ok || fail "the Converse requests are not as Bedrock wants them"
import json, sys
first, second = [json.loads(l) for l in open(sys.argv[1])]
# The model id went encoded once on the wire (and the stand-in checked it was signed encoded twice).
assert first["path"] == "/model/us.anthropic.claude-sonnet-4-5-20250929-v1%3A0/converse", first["path"]
assert first["headers"]["x-amz-security-token"], "no session token"
assert "SignedHeaders=accept;content-type;host;x-amz-date;x-amz-security-token," in first["headers"]["authorization"]
body = first["body"]
# What stays the same from call to call comes first, and the second call starts as the first did.
assert list(body)[:3] == ["system", "toolConfig", "messages"], list(body)
assert first["kept_start"] is None and second["kept_start"] is True, second["kept_start"]
assert body["system"][-1] == {"cachePoint": {"type": "default"}} and body["system"][0]["text"]
assert [t["toolSpec"]["name"] for t in body["toolConfig"]["tools"]].count("write_file") == 1
assert body["messages"] == [{"role": "user", "content": [{"text": "Write a note"}, {"cachePoint": {"type": "default"}}]}]
m = second["body"]["messages"]
assert [x["role"] for x in m] == ["user", "assistant", "user"]
assert m[1]["content"] == [
    {"reasoningContent": {"reasoningText": {"text": "The note goes in note.txt.", "signature": "c2lnbmVkLWJ5LWNsYXVkZQ=="}}},
    {"text": "Writing the note."},
    {"toolUse": {"toolUseId": "tooluse_Ab3", "name": "write_file", "input": {"path": "note.txt", "content": "hi"}}}], m[1]
result = m[2]["content"][0]["toolResult"]
assert result["toolUseId"] == "tooluse_Ab3" and result["status"] == "success", result
assert m[2]["content"][-1] == {"cachePoint": {"type": "default"}}
PY
# Cache reads and writes count as the input they are, and are reported apart: in the stored
# session and in a --json run's end event.
cached='{"cache_read_tokens": 1500, "cache_write_tokens": 1500, "input_tokens": 3060, "output_tokens": 38}'
expect_exit 0 sion agent show "$sid" --json
end_usage "$scratch/out" >"$scratch/usage"
expect_text "$scratch/usage" 'usage in show' "$cached"
rm -f "$work/note.txt"
cp claude.json claudej.json
stand_in claudej --model "$claude" --region eu-west-3 "${signing[@]}"
expect_exit 0 run --task 'Write a note' --model "bedrock:$claude" --json && expect_err ''
end_usage "$scratch/out" >"$scratch/usage"
expect_text "$scratch/usage" 'usage of the run' "$cached"
# What was written to the cache counts in the run's token budget.
rm -f "$work/note.txt"
sed 's/"cacheWriteInputTokens": 1500/"cacheWriteInputTokens": 100000/' claude.json >budget.json
stand_in budget --model "$claude" --region eu-west-3 "${signing[@]}"
expect_exit 1 run --task 'Write a note' --model "bedrock:$claude" --budget-tokens 50000 --json
expect_grep '^\{"event":"end",.*"state":"stopped","why":"the token budget of 50000 tokens is spent \(100050 used\)",' "$scratch/out"
end_usage "$scratch/out" >"$scratch/usage"
expect_text "$scratch/usage" 'usage of the stopped run' '{"cache_read_tokens": 0, "cache_write_tokens": 100000, "input_tokens": 100020, "output_tokens": 30}'

# --- reasoning refused (400) is let go, and the call sent again without it --------------------
rm -f "$work/note.txt"
sed 's/"usage": {"inputTokens": 40/"refuse_kept": true, "usage": {"inputTokens": 40/' claude.json >refuse.json
stand_in refuse --model "$claude" --region eu-west-3 "${signing[@]}"
expect_exit 0 run --task 'Write a note' --model "bedrock:$claude" && expect_err ''
expect_grep '^agent: The note is written\.$' "$scratch/out"
expect_exit 0 verdicts refuse && expect_out "answered
400 ValidationException: The provided reasoning signature is invalid
answered"
python3 - "$scratch/refuse.log" <<'PY' && ok || fail "the call sent again still gave reasoning back"
import json, sys
last = [json.loads(l) for l in open(sys.argv[1])][-1]
assert not any("reasoningContent" in b for m in last["body"]["messages"] for b in m["content"])
PY

# --- throttled: the next model is asked -------------------------------------------------------
echo '{"turns": [{"status": 429, "type": "ThrottlingException", "message": "Too many requests, please wait before trying again."}]}' >busy.json
echo '{"turns": [{"text": "the spare model answered"}]}' >spare.json
stand_in busy --model "$claude" --region eu-west-3 "${signing[@]}"
expect_exit 0 run --task 'Say something' --model "bedrock:$claude" --model "script:$scratch/spare.json" && expect_err ''
sid=$(session_id)
expect_out "session $sid for agent $agent
the model bedrock:$claude failed: HTTP 429: Too many requests, please wait before trying again.; asking script:$scratch/spare.json
agent: the spare model answered
session $sid: done"

# --- Bedrock API keys: the refused one rests, the call goes on with the next; Nova's cache points;
# a model that takes none is sent none.
nova='amazon.nova-pro-v1:0'
echo '{"turns": [{"content": [{"text": "nova here"}]}, {"content": [{"text": "nova again"}]}]}' >nova.json
stand_in nova --model "$nova" --region eu-west-3 --api-key refused-key-0001=403 --api-key good-key-0002
AWS_BEARER_TOKEN_BEDROCK='refused-key-0001, good-key-0002' expect_exit 0 run --task 'Hello' --model "bedrock:$nova"
expect_grep '^agent: nova here$' "$scratch/out"
expect_exit 0 verdicts nova && expect_out "403 AccessDeniedException: this key is refused
answered"
python3 - "$scratch/nova.log" <<'PY' && ok || fail "Nova's request is not as Bedrock wants it"
import json, sys
first, second = [json.loads(l) for l in open(sys.argv[1])]
assert first["headers"]["authorization"] == "Bearer refused-key-0001"
assert second["headers"]["authorization"] == "Bearer good-key-0002"
assert "x-amz-date" not in second["headers"]
assert second["body"]["messages"][-1]["content"][-1] == {"cachePoint": {"type": "default"}}
PY
llama='meta.llama3-70b-instruct-v1:0'
echo '{"turns": [{"content": [{"text": "llama here"}]}]}' >llama.json
stand_in llama --model "$llama" --region eu-west-3 "${signing[@]}"
expect_exit 0 run --task 'Hello' --model "bedrock:$llama" && expect_grep '^agent: llama here$' "$scratch/out"
expect_exit 0 verdicts llama && expect_out answered

# --- credentials and region from AWS's own files ----------------------------------------------
mkdir -p "$HOME/.aws"
cat >"$HOME/.aws/credentials" <<INI
[default]
aws_access_key_id = AKIDDEFAULT
aws_secret_access_key = not-this-one

[work]
aws_access_key_id = AKIDWORK
aws_secret_access_key = work-secret-key-0123456789
INI
cat >"$HOME/.aws/config" <<'INI'
[profile work]
region = ap-south-1
s3 =
    max_concurrent_requests = 4

[profile sso]
sso_session = corp
region = us-west-2
INI
echo '{"turns": [{"content": [{"text": "signed with the profile"}]}]}' >profile.json
stand_in profile --model "$claude" --region ap-south-1 --access-key AKIDWORK --secret-key work-secret-key-0123456789
(
    failures=0
    unset AWS_ACCESS_KEY_ID AWS_SECRET_ACCESS_KEY AWS_SESSION_TOKEN AWS_REGION
    AWS_PROFILE=work expect_exit 0 run --task 'Hello' --model "bedrock:$claude" &&
        expect_grep '^agent: signed with the profile$' "$scratch/out"
    exit "$failures"
) && ok || fail "a profile's keys and region from AWS's files"
expect_exit 0 verdicts profile && expect_out answered
(
    failures=0
    unset AWS_ACCESS_KEY_ID AWS_SECRET_ACCESS_KEY AWS_SESSION_TOKEN
    AWS_PROFILE=sso expect_exit 78 run --task 'Hello' --model "bedrock:$claude" &&
        expect_err "sion-run: AWS profile 'sso' signs in with single sign-on (sso_session), which sion does not follow: put its credentials in the environment first (eval \"\$(aws configure export-credentials --format env)\")"
    AWS_PROFILE=nobody expect_exit 78 run --task 'Hello' --model "bedrock:$claude" &&
        expect_err "sion-run: AWS profile 'nobody' is in neither AWS's credentials file nor its config file"
    exit "$failures"
) && ok || fail "profiles that cannot sign are refused before the session starts"

# --- a wrong secret, a malformed answer, a cut one ----------------------------------------------
echo '{"turns": [{"malformed": "<html>busy</html>"}, {"cut": true}]}' >broken.json
stand_in broken --model "$claude" --region eu-west-3 "${signing[@]}"
AWS_SECRET_ACCESS_KEY=wrong-secret-key-000 expect_exit 69 run --task 'Hello' --model "bedrock:$claude"
expect_grep "failed: the model bedrock:$claude failed: HTTP 403: The request signature we calculated does not match the signature you provided$" "$scratch/out"
expect_exit 69 run --task 'Hello' --model "bedrock:$claude"
expect_grep "failed: the model bedrock:$claude failed: the answer is malformed: invalid JSON at byte 0$" "$scratch/out"
expect_exit 69 run --task 'Hello' --model "bedrock:$claude"
expect_grep "failed: the model bedrock:$claude failed: the answer was cut off: " "$scratch/out"

# --- no secret anywhere the session wrote -------------------------------------------------------
for s in "$secret" "$token" refused-key-0001 good-key-0002 work-secret-key-0123456789; do
    if grep -rqaF -- "$s" "$SION_HOME" "$work" "$scratch/out" "$scratch/err"; then
        fail "a secret is in what the sessions left: ${s:0:6}…"
    else ok; fi
done

done_testing
