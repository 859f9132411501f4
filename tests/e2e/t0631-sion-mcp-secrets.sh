#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The secrets sion-mcp gives servers never come back through it: tests/fixtures/mcp/telltale.py,
# given TELLTALE_KEY with --env, says the key whole, 14 characters of it, upper-cased, in base64,
# broken by white space, as structured content (a value and a member's name), in a tool error, a
# JSON-RPC error, a log notification, a progress message, an elicitation's question, a resource, a
# prompt, a tool's description and its last words on standard error; add, review, resources,
# prompts and serve pass on "[redacted]" in each place and the key in no form, and the answers are
# still JSON. A session through sion-run keeps it out of the transcript and sion.db. Over HTTP
# (tests/fixtures/mcp/notes_http_server.py --echo-credentials), an X-Key header's ${VAR}, the
# OAuth access token and the client's secret are redacted too.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/t0620-helpers.bash"

command -v sqlite3 >/dev/null || skip "sqlite3 is not installed (Debian package sqlite3)"
command -v curl >/dev/null || skip "curl is not installed (Debian package curl)"
fixtures="$SION_SOURCE_DIR/tests/fixtures/mcp"
db="$SION_HOME/sion.db"
cd "$scratch" || exit 1

export TELLTALE_KEY='tt-Kx7Qw2Lm9Np4Rs8Vb3Zc6Hd1Fg5Jk'

# no_secret WHAT FILE... [-- SECRET...]: none of the files holds any 12 characters of a secret (by
# default TELLTALE_KEY's value), in any case, with white space passed over, or of its base64 forms
# — in their text, or in a string or member name of a JSON line of theirs (escapes decoded).
no_secret() {
    local what=$1
    shift
    python3 - "$@" <<'PY' && ok || fail "$what: a secret is in it"
import base64, json, os, re, sys
args = sys.argv[1:]
files, secrets = (args[:args.index("--")], args[args.index("--") + 1:]) if "--" in args \
    else (args, [os.environ["TELLTALE_KEY"]])
runs = set()
for secret in secrets:
    forms = [secret]
    for offset in range(3):
        encoded = base64.b64encode(b"\0" * offset + secret.encode()).decode().rstrip("=")
        encoded = encoded[offset + 1 if offset else 0:-1]
        forms += [encoded, encoded.replace("+", "-").replace("/", "_")]
    for form in forms:
        runs.update(form[i:i + 12].lower() for i in range(len(form) - 11))
def strings(value):
    if isinstance(value, str):
        yield value
    elif isinstance(value, list):
        for item in value:
            yield from strings(item)
    elif isinstance(value, dict):
        for key, item in value.items():
            yield key
            yield from strings(item)
leaks = []
for path in files:
    text = open(path, encoding="utf-8", errors="replace").read()
    said = [text]
    for line in text.splitlines():
        try:
            said += list(strings(json.loads(line)))
        except ValueError:
            pass
    for s in said:
        compact = re.sub(r"\s", "", s).lower()
        leaks += [f"{path}: {run}" for run in runs if run in compact]
if leaks:
    print("\n".join(sorted(set(leaks))[:10]), file=sys.stderr)
    sys.exit(1)
PY
}

# -- the operator's commands -----------------------------------------------------------------------
# add shows the tools as listed, the description's 14 characters of the key redacted; review finds
# them unchanged (the pins were made of what was redacted, the same each time).
expect_exit 0 timeout 60 sion-mcp add telltale --env TELLTALE_KEY -- python3 "$fixtures/telltale.py"
expect_grep '^whole \(read\): Say the key back whole \(it starts \[redacted\]\)\.$' "$scratch/out"
no_secret "add" "$scratch/out" "$scratch/err"
expect_exit 0 sqlite3 "$db" .dump
cp "$scratch/out" add.dump
no_secret "sion.db after add" add.dump
expect_exit 0 timeout 60 sion-mcp review telltale
expect_grep '^The tools are as they were pinned\.$' "$scratch/out"
expect_grep '^whole \(read\): Say the key back whole \(it starts \[redacted\]\)\. \[unchanged\]$' "$scratch/out"
no_secret "review" "$scratch/out" "$scratch/err"
expect_exit 0 timeout 60 sion-mcp resources telltale
expect_out 'key:///whole  key: the key, [redacted] (text/plain)'
expect_exit 0 timeout 60 sion-mcp resources telltale --read key:///whole
expect_out '[redacted]'
expect_exit 0 timeout 60 sion-mcp prompts telltale
expect_out 'key: Use the key [redacted]
  why: why [redacted]'
# A server that fails: its last words on the operator's terminal, redacted; no hint, since the
# variable they name was given.
expect_exit 69 timeout 60 sion-mcp add dying --env TELLTALE_KEY -- python3 "$fixtures/telltale.py" --die
expect_err 'sion-mcp: MCP server dying ended (its program exited with status 1)
sion-mcp: MCP server dying wrote last on its standard error:
  telltale: started with TELLTALE_KEY=[redacted]
  telltale: the key [redacted] was refused'

# -- sion-mcp serve ------------------------------------------------------------------------------
{
    req 0 mcp/state
    echo
    for tool in whole cut upper base64 split structured fail broken log ask resources; do
        call "\"$tool\"" "telltale_$tool"
    done
    call '"read"' telltale_read_resource '{"uri":"key:///whole"}'
    req '"prompts"' prompts/list '{"server":"telltale"}'
    req '"prompt"' prompts/get '{"server":"telltale","name":"key"}'
} | expect_exit 0 bridge --answer 'elicitation/create={"action":"decline"}' -- sion-mcp serve --ask telltale
cp "$scratch/out" serve.out
no_secret "serve" serve.out "$scratch/err"
expect_py 'next(t for t in a(0)["servers"][0]["tools"] if t["name"] == "telltale_whole")["description"] == "Say the key back whole (it starts [redacted])."'
expect_got 'the key is [redacted]' '"whole"' text
expect_got 'it starts [redacted] and holds [redacted]' '"cut"' text
expect_got '[redacted]' '"upper"' text
expect_py '"[redacted]" in a("base64")["text"] and " Basic " in a("base64")["text"]'
expect_got '[redacted]' '"split"' text
expect_got "{\"[redacted]\":\"a member named by the key\",\"key\":\"[redacted]\",\"length\":${#TELLTALE_KEY}}" '"structured"' structuredContent
expect_py 'a("fail").pop("start_us") <= a("fail").pop("end_us")'
expect_py '{k: v for k, v in a("fail").items() if k not in ("start_us", "end_us")} == {"text": "the key [redacted] was refused", "isError": True, "content": [{"type": "text", "text": "the key [redacted] was refused"}]}'
expect_py 'a("broken")["isError"] and a("broken")["text"] == "MCP server telltale refused '"'"'tools/call'"'"': cannot use the key [redacted] (-32603)"'
expect_got 'logged' '"log"' text
expect_py 'up("elicitation/create") == [{"message": "May I use the key [redacted]?", "requestedSchema": {"type": "object", "properties": {"[redacted]": {"type": "string", "description": "about [redacted]"}}}, "server": "telltale"}]'
expect_got 'asked' '"ask"' text
expect_got 'key:///whole  key: the key, [redacted]' '"resources"' text
expect_got '[redacted]' '"read"' text
expect_got 'Use the key [redacted]' '"prompts"' prompts.0.description
expect_py '"Use the key [redacted]." in a("prompt")["text"]'

# -- a session -------------------------------------------------------------------------------------
id=$(sion agent create coder) && ok || fail "sion agent create coder"
python3 - <<'PY' >telltale.json
import json
tools = ["whole", "cut", "upper", "base64", "split", "structured", "fail", "broken", "log", "ask",
         "resources"]
turns = [{"calls": [{"tool": "telltale_" + t, "input": {}}]} for t in tools]
turns.append({"calls": [{"tool": "telltale_read_resource", "input": {"uri": "key:///whole"}}]})
turns.append({"text": "The key stays hidden."})
print(json.dumps({"turns": turns}))
PY
expect_exit 0 timeout 120 sion agent run coder "${id:0:8}…${id:60:4}" --task 'Find the key.' \
    --model script:telltale.json --mcp telltale --autonomy L3
cp "$scratch/out" run.out
cp "$scratch/err" run.err
expect_grep '^← the key is \[redacted\]$' run.out
expect_grep '^✗ the key \[redacted\] was refused$' run.out
expect_grep '^agent: The key stays hidden\.$' run.out
no_secret "the transcript" run.out run.err
session=$(sed -n 's/^session \([0-9a-f]\{16\}\) for agent .*/\1/p' run.out)
expect_exit 0 sion-run show "$session" --json
cp "$scratch/out" show.json
expect_grep 'the key is \[redacted\]' show.json
no_secret "show --json" show.json
expect_exit 0 sqlite3 "$db" .dump
cp "$scratch/out" run.dump
expect_grep 'the key is \[redacted\]' run.dump
no_secret "sion.db" run.dump

# -- over HTTP -----------------------------------------------------------------------------------
# The notes server behind its own authorization server, logged in to with the client credentials
# grant (nobody asked), told an X-Key header: it says the header, its token and the client's secret
# back in a tool error and a JSON-RPC error.
export NOTES_KEY='nk-Hq3Wd8Zr5Tx1Yc7Vb2Mn6Lp4'
export CC_SECRET='cs-Jf9Ge4Ku2Ra8Sw3Pd7Xt5Qm1'
mkdir notes
mkfifo notes.in
python3 "$fixtures/notes_http_server.py" --dir notes --client "cc-app:$CC_SECRET" --echo-credentials \
    <notes.in >notes.port 2>notes.err &
server=$!
exec {hold}>notes.in
trap 'exec {hold}>&-; kill "$server" 2>/dev/null; rm -rf "$scratch"' EXIT
port=
for _ in $(seq 100); do
    port=$(head -n 1 notes.port 2>/dev/null)
    [ -n "$port" ] && break
    sleep 0.1
done
[ -n "$port" ] && ok || fail "the notes server did not start: $(cat notes.err)"
expect_exit 0 timeout 60 sion-mcp add notes --url "http://127.0.0.1:$port/mcp" --header 'X-Key: ${NOTES_KEY}' \
    --client-id cc-app --client-secret-env CC_SECRET --client-credentials </dev/null
no_secret "add over HTTP" "$scratch/out" "$scratch/err" -- "$NOTES_KEY" "$CC_SECRET"
{
    call 1 notes_read_note '{"name":"x"}'
    call 2 notes_write_note '{"name":"x","text":"y"}'
} | expect_exit 0 bridge -- sion-mcp serve notes
cp "$scratch/out" http.out
expect_got 'X-Key [redacted]; Authorization Bearer [redacted]; client secret [redacted]' 1 text
expect_got "MCP server notes refused 'tools/call': X-Key [redacted]; Authorization Bearer [redacted]; client secret [redacted] (-32603)" 2 text
no_secret "serve over HTTP" http.out "$scratch/err" -- "$NOTES_KEY" "$CC_SECRET"

done_testing
