#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# vertex: sessions through `sion agent run --model vertex:…` against a stand-in of Vertex AI and of
# Google's token endpoint (tests/models/vertex_server.py): Gemini with a token minted from a
# service account's key (the RS256 JWT checked against the key the test made) and kept while it
# is good, minted again when it is not; Claude with a person's refresh token from gcloud's
# application-default file, Anthropic's body with Vertex AI's version and two cache breakpoints,
# its signed thinking given back, an overloaded stream falling back; a token given; express mode
# with GOOGLE_API_KEY; a JWT the endpoint refuses; Claude without a project refused; and no secret
# in anything the sessions printed or stored.
. "$(dirname "$0")/lib.sh"
command -v python3 >/dev/null || skip "python3 is not installed"
. "$SION_SOURCE_DIR/tests/models/standin.sh"
command -v openssl >/dev/null || skip "openssl is not installed (Debian package openssl)"

work="$scratch/work"
mkdir -p "$work"
cd "$scratch" || exit 1

gemini='gemini-3-pro-preview'
claude='claude-sonnet-4-5@20250929'
email='sion-test@sion-test.iam.gserviceaccount.com'
openssl genpkey -algorithm RSA -pkeyopt rsa_keygen_bits:2048 -out sa.pem 2>/dev/null && ok || fail "openssl made no key"
openssl genpkey -algorithm RSA -pkeyopt rsa_keygen_bits:2048 -out other.pem 2>/dev/null && ok || fail "openssl made no key"
modulus=$(openssl rsa -in sa.pem -noout -modulus | sed 's/^Modulus=//')
other_modulus=$(openssl rsa -in other.pem -noout -modulus | sed 's/^Modulus=//')
export GOOGLE_CLOUD_PROJECT=sion-test GOOGLE_CLOUD_LOCATION=us-east5
unset GOOGLE_OAUTH_ACCESS_TOKEN GOOGLE_APPLICATION_CREDENTIALS GOOGLE_API_KEY CLOUDSDK_CONFIG \
    ANTHROPIC_VERTEX_PROJECT_ID CLOUD_ML_REGION

# stand_in NAME ARGS...: the stand-in playing $scratch/NAME.json, logging to $scratch/NAME.log, at
# VERTEX_BASE_URL; $token_uri is its token endpoint.
stand_in() {
    local name=$1
    shift
    start_standin "$name" vertex_server "$scratch/$name.json" --project sion-test --location us-east5 \
        --client-email "$email" --key-id kid-0001 "$@"
    eval "export VERTEX_BASE_URL=\$${name}_url"
    token_uri="$VERTEX_BASE_URL/token"
}
# service_account FILE KEY: a service account's key file for the running stand-in.
service_account() {
    python3 - "$1" "$2" "$email" "$token_uri" <<'PY'
import json, sys
out, pem, email, uri = sys.argv[1:]
json.dump({"type": "service_account", "project_id": "sion-test", "private_key_id": "kid-0001",
           "private_key": open(pem).read(), "client_email": email, "client_id": "1", "token_uri": uri},
          open(out, "w"))
PY
}

run() { timeout 120 setsid -w sion agent run coder "$agent" --workspace "$work" --autonomy L3 "$@" </dev/null; }
# end_usage FILE: the usage of the end event that closes FILE (--json events), keys sorted.
end_usage() { tail -n 1 "$1" | python3 -c 'import json, sys; print(json.dumps(json.load(sys.stdin)["usage"], sort_keys=True))'; }

agent=$(sion agent create coder) && ok || fail "sion agent create coder"
agent=${agent:0:8}

# --- Gemini with a service account: one token for the session, the signatures given back ------
cat >gemini.json <<'JSON'
{"turns": [
  {"parts": [{"functionCall": {"name": "write_file", "args": {"path": "g.txt", "content": "g"}}, "thoughtSignature": "c2lnLWc="}]},
  {"parts": [{"text": "Written."}]}
]}
JSON
stand_in gemini --model "$gemini" --rsa-modulus "$modulus" --expires-in 3600
service_account sa.json sa.pem
GOOGLE_APPLICATION_CREDENTIALS="$scratch/sa.json" expect_exit 0 run --task 'Write g' --model "vertex:$gemini" &&
    expect_err ''
sid=$(session_id)
expect_out "session $sid for agent $agent
→ write_file {\"content\":\"g\",\"path\":\"g.txt\"}
← wrote 1 byte to g.txt
agent: Written.
session $sid: done"
expect_exit 0 verdicts gemini && expect_out "minted ya29.stand-in-1
answered
answered"
python3 - "$scratch/gemini.log" <<'PY' && ok || fail "Gemini on Vertex AI was not asked as it wants"
import json, sys
lines = [json.loads(l) for l in open(sys.argv[1])]
first, second = lines[1], lines[2]
assert first["path"] == "/v1/projects/sion-test/locations/us-east5/publishers/google/models/gemini-3-pro-preview:streamGenerateContent?alt=sse", first["path"]
assert first["headers"]["authorization"] == "Bearer ya29.stand-in-1"
assert second["body"]["contents"][1]["parts"][0]["thoughtSignature"] == "c2lnLWc="
PY

# A token that lapses within the minute is not kept: each call mints one.
sed 's/g\.txt/h.txt/g' gemini.json >lapsing.json
stand_in lapsing --model "$gemini" --rsa-modulus "$modulus" --expires-in 60
service_account sa.json sa.pem
GOOGLE_APPLICATION_CREDENTIALS="$scratch/sa.json" expect_exit 0 run --task 'Write h' --model "vertex:$gemini"
expect_exit 0 verdicts lapsing && expect_out "minted ya29.stand-in-1
answered
minted ya29.stand-in-2
answered"

# A key the endpoint does not know signs a JWT it refuses.
echo '{"turns": [{"parts": [{"text": "never"}]}]}' >refused.json
stand_in refused --model "$gemini" --rsa-modulus "$other_modulus"
service_account sa.json sa.pem
GOOGLE_APPLICATION_CREDENTIALS="$scratch/sa.json" expect_exit 69 run --task 'Hello' --model "vertex:$gemini"
expect_grep "failed: the model vertex:$gemini failed: cannot get a token for Vertex AI from '$token_uri' with '$scratch/sa.json': HTTP 400: invalid_grant$" "$scratch/out"

# --- Claude with gcloud's application-default sign-in -------------------------------------------
cat >claude.json <<'JSON'
{"turns": [
  {"content": [
     {"type": "thinking", "thinking": "A file is needed.", "signature": "RXF1aXZhbGVudC1zaWc="},
     {"type": "text", "text": "Writing c.txt."},
     {"type": "tool_use", "id": "toolu_01", "name": "write_file", "input": {"path": "c.txt", "content": "c"}}],
   "stop_reason": "tool_use", "usage": {"input_tokens": 30, "cache_creation_input_tokens": 2000, "output_tokens": 40}},
  {"content": [{"type": "text", "text": "Claude wrote it."}],
   "usage": {"input_tokens": 50, "cache_read_input_tokens": 2000, "output_tokens": 6}},
  {"overloaded": true}
]}
JSON
stand_in claude --model "$claude" --client-id cid.apps --client-secret person-client-secret-01 \
    --refresh-token 1//person-refresh-token-01
mkdir -p "$HOME/.config/gcloud"
python3 - "$HOME/.config/gcloud/application_default_credentials.json" "$token_uri" <<'PY'
import json, sys
json.dump({"type": "authorized_user", "client_id": "cid.apps", "client_secret": "person-client-secret-01",
           "refresh_token": "1//person-refresh-token-01", "quota_project_id": "sion-quota", "token_uri": sys.argv[2]},
          open(sys.argv[1], "w"))
PY
expect_exit 0 run --task 'Write c' --model "vertex:$claude" && expect_err ''
sid=$(session_id)
expect_out "session $sid for agent $agent
~ A file is needed.
agent: Writing c.txt.
→ write_file {\"content\":\"c\",\"path\":\"c.txt\"}
← wrote 1 byte to c.txt
agent: Claude wrote it.
session $sid: done"
expect_exit 0 verdicts claude && expect_out "minted ya29.stand-in-1
answered
answered"
python3 - "$scratch/claude.log" <<'PY' && ok || fail "Claude on Vertex AI was not asked as it wants"
import json, sys
lines = [json.loads(l) for l in open(sys.argv[1])]
assert lines[0]["grant_type"] == "refresh_token"
first = lines[1]
assert first["path"] == "/v1/projects/sion-test/locations/us-east5/publishers/anthropic/models/claude-sonnet-4-5@20250929:streamRawPredict"
assert first["headers"]["x-goog-user-project"] == "sion-quota"
assert first["body"]["anthropic_version"] == "vertex-2023-10-16"
# The tools stay before the conversation, and the second call starts as the first did.
assert list(first["body"]).index("tools") < list(first["body"]).index("messages"), list(first["body"])
assert first["kept_start"] is None and lines[2]["kept_start"] is True
PY
# Cache reads and writes count as the input they are, and are reported apart: in the stored
# session and in a --json run's end event.
cached='{"cache_read_tokens": 2000, "cache_write_tokens": 2000, "input_tokens": 4080, "output_tokens": 46}'
expect_exit 0 sion agent show "$sid" --json
end_usage "$scratch/out" >"$scratch/usage"
expect_text "$scratch/usage" 'usage in show' "$cached"
# Overloaded in the stream: the next model is asked.
echo '{"turns": [{"text": "the spare model answered"}]}' >spare.json
expect_exit 0 run --task 'Hello' --model "vertex:$claude" --model "script:$scratch/spare.json"
expect_grep "^the model vertex:$claude failed: .*[Oo]verloaded.*; asking script:$scratch/spare.json$" "$scratch/out"
expect_grep '^agent: the spare model answered$' "$scratch/out"
# The same task in a --json run (a token given): its end event reports the cache apart too.
python3 -c 'import json, sys; t = json.load(open(sys.argv[1])); t["turns"] = t["turns"][:2]; json.dump(t, open(sys.argv[2], "w"))' claude.json claudej.json
stand_in claudej --model "$claude" --token ya29.given-token-0001
rm -f "$work/c.txt"
GOOGLE_OAUTH_ACCESS_TOKEN=ya29.given-token-0001 expect_exit 0 run --task 'Write c' --model "vertex:$claude" --json &&
    expect_err ''
end_usage "$scratch/out" >"$scratch/usage"
expect_text "$scratch/usage" 'usage of the run' "$cached"

# --- a token given; express mode -------------------------------------------------------------------
echo '{"turns": [{"parts": [{"text": "given"}]}, {"parts": [{"text": "express"}]}]}' >given.json
stand_in given --model "$gemini" --token ya29.given-token-0001 --api-key express-key-0001
GOOGLE_OAUTH_ACCESS_TOKEN=ya29.given-token-0001 expect_exit 0 run --task 'Hello' --model "vertex:$gemini" &&
    expect_grep '^agent: given$' "$scratch/out"
(
    failures=0
    unset GOOGLE_CLOUD_PROJECT
    GOOGLE_API_KEY=express-key-0001 expect_exit 0 run --task 'Hello' --model "vertex:$gemini" &&
        expect_grep '^agent: express$' "$scratch/out"
    expect_exit 78 run --task 'Hello' --model "vertex:$claude" &&
        expect_err "sion-run: vertex:$claude needs a project: set GOOGLE_CLOUD_PROJECT (Claude is reached on Vertex AI only in a project)"
    exit "$failures"
) && ok || fail "express mode, and Claude without a project"
expect_exit 0 verdicts given && expect_out "answered
answered"
python3 - "$scratch/given.log" <<'PY' && ok || fail "express mode was not asked as it wants"
import json, sys
given, express = [json.loads(l) for l in open(sys.argv[1])]
assert given["headers"]["authorization"] == "Bearer ya29.given-token-0001"
assert express["path"] == "/v1/publishers/google/models/gemini-3-pro-preview:streamGenerateContent?alt=sse", express["path"]
assert express["headers"]["x-goog-api-key"] == "express-key-0001" and "authorization" not in express["headers"]
PY

# --- no secret anywhere the sessions wrote --------------------------------------------------------
key_line=$(sed -n 2p sa.pem)
for s in "$key_line" person-client-secret-01 person-refresh-token-01 ya29.stand-in ya29.given-token-0001 express-key-0001; do
    if grep -rqaF -- "$s" "$SION_HOME" "$work" "$scratch/out" "$scratch/err"; then
        fail "a secret is in what the sessions left: ${s:0:6}…"
    else ok; fi
done

done_testing
