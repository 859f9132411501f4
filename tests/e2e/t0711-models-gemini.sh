#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# gemini: sessions through `sion agent run --model gemini:…` against a stand-in of the Gemini API
# (tests/models/gemini_server.py) that checks every request as Gemini 3 does: the answer streamed
# with CRLF and its text cut across events, its thought summary shown, the signatures on its text
# and calls given back on their parts; a call another model made sent with Google's value for an
# unsigned one; signatures refused (400) let go; an error in the stream and a cut stream as the
# model's failures; keys from GOOGLE_API_KEY rotating past a refused one; effort as thinkingLevel
# and thinkingBudget; a missing key refused; and no key in anything the session printed or stored.
. "$(dirname "$0")/lib.sh"
command -v python3 >/dev/null || skip "python3 is not installed"
. "$SION_SOURCE_DIR/tests/models/standin.sh"

work="$scratch/work"
mkdir -p "$work"
cd "$scratch" || exit 1

key='AIzaSyEXAMPLE-gemini-key-0123456789'
model='gemini-3-pro-preview'
export GEMINI_API_KEY="$key"
unset GOOGLE_API_KEY

# stand_in NAME ARGS...: the stand-in playing $scratch/NAME.json, logging to $scratch/NAME.log, at
# GEMINI_BASE_URL.
stand_in() {
    local name=$1
    shift
    start_standin "$name" gemini_server "$scratch/$name.json" --model "$model" "$@"
    eval "export GEMINI_BASE_URL=\$${name}_url"
}

run() { timeout 120 setsid -w sion agent run coder "$agent" --workspace "$work" --autonomy L3 "$@" </dev/null; }
# end_usage FILE: the usage of the end event that closes FILE (--json events), keys sorted.
end_usage() { tail -n 1 "$1" | python3 -c 'import json, sys; print(json.dumps(json.load(sys.stdin)["usage"], sort_keys=True))'; }

agent=$(sion agent create coder) && ok || fail "sion agent create coder"
agent=${agent:0:8}

# --- a tool turn: the summary shown, the signatures given back where they came -----------------
cat >signed.json <<'JSON'
{"turns": [
  {"parts": [
     {"text": "Plan: write note.txt", "thought": true},
     {"text": "Writing the note."},
     {"functionCall": {"name": "write_file", "args": {"path": "note.txt", "content": "hi"}}, "thoughtSignature": "c2lnLW9uLXRoZS1jYWxs"}],
   "usage": {"promptTokenCount": 1200, "cachedContentTokenCount": 1000, "candidatesTokenCount": 20, "thoughtsTokenCount": 30}},
  {"parts": [{"text": "The note is written.", "thoughtSignature": "c2lnLW9uLXRoZS10ZXh0"}]},
  {"parts": [{"text": "Still here."}]}
]}
JSON
stand_in signed --api-key "$key"
expect_exit 0 run --task 'Write a note' --model "gemini:$model" && expect_err ''
sid=$(session_id)
expect_out "session $sid for agent $agent
~ Plan: write note.txt
agent: Writing the note.
→ write_file {\"content\":\"hi\",\"path\":\"note.txt\"}
← wrote 2 bytes to note.txt
agent: The note is written.
session $sid: done"
[ "$(cat "$work/note.txt")" = hi ] && ok || fail "note.txt was not written"
# The session goes on: the signed text of the last answer goes back too.
expect_exit 0 run --session "$sid" --task 'Anything else?' && expect_grep '^agent: Still here\.$' "$scratch/out"
expect_exit 0 verdicts signed && expect_out "answered
answered
answered"
python3 - "$scratch/signed.log" <<'PY' && ok || fail "the requests are not as Gemini wants them"
import json, sys
first, second, third = [json.loads(l) for l in open(sys.argv[1])]
assert first["path"] == "/v1beta/models/gemini-3-pro-preview:streamGenerateContent?alt=sse"
assert first["headers"]["x-goog-api-key"]
b = first["body"]
assert b["systemInstruction"]["parts"][0]["text"]
# What stays the same from call to call comes first; each call starts as the one before did,
# the continued session's too.
assert list(b)[:3] == ["systemInstruction", "tools", "contents"], list(b)
assert [e["kept_start"] for e in (first, second, third)] == [None, True, True]
decl = b["tools"][0]["functionDeclarations"]
assert any(d["name"] == "write_file" and d["parametersJsonSchema"]["type"] == "object" for d in decl)
assert "thinkingConfig" not in b["generationConfig"]
c = second["body"]["contents"]
assert [x["role"] for x in c] == ["user", "model", "user"]
assert c[1]["parts"] == [{"text": "Writing the note."},
    {"functionCall": {"name": "write_file", "args": {"path": "note.txt", "content": "hi"}}, "thoughtSignature": "c2lnLW9uLXRoZS1jYWxs"}], c[1]
fr = c[2]["parts"][0]["functionResponse"]
assert fr["name"] == "write_file" and fr["response"] == {"result": "wrote 2 bytes to note.txt"}, fr
assert "id" not in fr
c = third["body"]["contents"]
assert c[3]["parts"] == [{"text": "The note is written.", "thoughtSignature": "c2lnLW9uLXRoZS10ZXh0"}], c[3]
PY
expect_exit 0 sion agent show "$sid" --json
# Three calls: 1,200 tokens read (1,000 of them cached) and 50 written (30 thinking), then 100 and
# 10 twice; what was read from the cache is reported apart.
end_usage "$scratch/out" >"$scratch/usage"
expect_text "$scratch/usage" 'usage in show' '{"cache_read_tokens": 1000, "cache_write_tokens": 0, "input_tokens": 1400, "output_tokens": 70}'
echo '{"turns": [{"parts": [{"text": "cached"}], "usage": {"promptTokenCount": 900, "cachedContentTokenCount": 700, "candidatesTokenCount": 4}}]}' >cachedj.json
stand_in cachedj --api-key "$key"
expect_exit 0 run --task 'Say it' --model "gemini:$model" --json && expect_err ''
end_usage "$scratch/out" >"$scratch/usage"
expect_text "$scratch/usage" 'usage of the run' '{"cache_read_tokens": 700, "cache_write_tokens": 0, "input_tokens": 900, "output_tokens": 4}'

# --- a call another model made goes with Google's value for one it did not sign ----------------
cat >script-then-busy.json <<'JSON'
{"turns": [{"calls": [{"tool": "write_file", "input": {"path": "other.txt", "content": "x"}}]},
           {"fail": {"status": 529, "message": "Overloaded"}}]}
JSON
echo '{"turns": [{"parts": [{"text": "Gemini took over."}]}]}' >takeover.json
stand_in takeover --api-key "$key"
expect_exit 0 run --task 'Write another' --model "script:$scratch/script-then-busy.json" --model "gemini:$model"
expect_grep '^agent: Gemini took over\.$' "$scratch/out"
expect_exit 0 verdicts takeover && expect_out answered
python3 - "$scratch/takeover.log" <<'PY' && ok || fail "another model's call was not sent as Google says"
import json, sys
c = json.loads(open(sys.argv[1]).readline())["body"]["contents"]
assert c[1]["parts"] == [{"functionCall": {"name": "write_file", "args": {"path": "other.txt", "content": "x"}},
                          "thoughtSignature": "skip_thought_signature_validator"}], c[1]
PY

# --- signatures refused are let go, and the call sent again without them ----------------------
sed 's/{"parts": \[{"text": "The note is written."/{"refuse_kept": true, "parts": [{"text": "The note is written."/' signed.json >refuse.json
stand_in refuse --api-key "$key"
expect_exit 0 run --task 'Write a note' --model "gemini:$model" && expect_grep '^agent: The note is written\.$' "$scratch/out"
expect_exit 0 verdicts refuse && expect_out "answered
400 INVALID_ARGUMENT: Corrupted thought signature.
answered"

# --- failures: an error in the stream (the next model asked), a cut stream, a busy answer -------
cat >broken.json <<'JSON'
{"turns": [
  {"parts": [{"text": "Let me"}], "stream_error": {"code": 503, "message": "The model is overloaded. Please try again later."}},
  {"parts": [{"text": "Half an answer"}], "cut": true},
  {"status": 429, "message": "Resource has been exhausted (e.g. check quota)."},
  {"malformed": "{not json"}
]}
JSON
echo '{"turns": [{"text": "the spare model answered"}]}' >spare.json
stand_in broken --api-key "$key"
expect_exit 0 run --task 'Hello' --model "gemini:$model" --model "script:$scratch/spare.json" && expect_err ''
sid=$(session_id)
expect_out "session $sid for agent $agent
the model gemini:$model failed: HTTP 503: The model is overloaded. Please try again later.; asking script:$scratch/spare.json
agent: the spare model answered
session $sid: done"
expect_exit 69 run --task 'Hello' --model "gemini:$model"
expect_grep "failed: the model gemini:$model failed: the answer was cut off: the stream ended before it finished$" "$scratch/out"
expect_exit 69 run --task 'Hello' --model "gemini:$model"
expect_grep "failed: the model gemini:$model failed: HTTP 429: Resource has been exhausted \(e\.g\. check quota\)\.$" "$scratch/out"
expect_exit 69 run --task 'Hello' --model "gemini:$model"
expect_grep "failed: the model gemini:$model failed: the answer is malformed: invalid JSON at byte 1$" "$scratch/out"

# --- keys: GOOGLE_API_KEY when GEMINI_API_KEY is not set, the refused one resting ---------------
echo '{"turns": [{"parts": [{"text": "one"}]}, {"parts": [{"text": "two"}]}]}' >keys.json
stand_in keys --api-key refused-gemini-key-1=403 --api-key good-gemini-key-2
(
    failures=0
    unset GEMINI_API_KEY
    export GOOGLE_API_KEY='refused-gemini-key-1,good-gemini-key-2'
    expect_exit 0 run --task 'Hello' --model "gemini:$model" && expect_grep '^agent: one$' "$scratch/out"
    exit "$failures"
) && ok || fail "keys from GOOGLE_API_KEY"
expect_exit 0 verdicts keys && expect_out "403 PERMISSION_DENIED: this key is refused
answered"

# --- how hard it thinks -------------------------------------------------------------------------
printf '{"turns": [%s]}\n' "$(printf '{"parts": [{"text": "ok"}]},%.0s' 1 2 3)"'{"parts": [{"text": "ok"}]}' >effort.json
stand_in effort --api-key "$key"
for e in high xhigh none 8000; do
    expect_exit 0 run --task 'Think' --model "gemini:$model#$e"
done
python3 - "$scratch/effort.log" <<'PY' && ok || fail "effort is not sent as thinkingLevel or thinkingBudget"
import json, sys
got = [json.loads(l)["body"]["generationConfig"] for l in open(sys.argv[1])]
configs = [g["thinkingConfig"] for g in got]
assert configs == [{"thinkingLevel": "high", "includeThoughts": True}, {"thinkingLevel": "high", "includeThoughts": True},
                   {"thinkingLevel": "minimal", "includeThoughts": True}, {"thinkingBudget": 8000, "includeThoughts": True}], configs
assert got[0]["maxOutputTokens"] > got[2]["maxOutputTokens"], got
PY

# --- no key, no session --------------------------------------------------------------------------
(
    failures=0
    unset GEMINI_API_KEY GOOGLE_API_KEY
    expect_exit 78 run --task 'Hello' --model "gemini:$model" &&
        expect_err "sion-run: gemini:$model needs a key: set GEMINI_API_KEY (or GOOGLE_API_KEY), or keep it with 'sion agent credential add GEMINI_API_KEY'"
    exit "$failures"
) && ok || fail "a missing key is refused before the session starts"

for s in "$key" refused-gemini-key-1 good-gemini-key-2; do
    if grep -rqaF -- "$s" "$SION_HOME" "$work" "$scratch/out" "$scratch/err"; then
        fail "a key is in what the sessions left: ${s:0:6}…"
    else ok; fi
done

done_testing
