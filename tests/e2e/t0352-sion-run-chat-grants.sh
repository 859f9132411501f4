#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Grants from the console to the proxy (seed 002): sandboxed MCP servers, one in Python
# (caller.py, urllib) and one in Node 22 on the official SDK (caller.mjs, fetch()), call an HTTPS
# API stand-in that wants `Authorization: Bearer <token>` (bearer_api.py, on 127.0.0.2 with a
# certificate of the suite's own authority, which the proxy trusts through SSL_CERT_FILE). The
# token is kept sealed with `sion agent credential add` and granted with `sion agent mcp grant`.
# In a chat the calls on the grant's path get through; another path gets no credential; another
# host is refused by the proxy; the token is in none of the sandbox's environments, command lines,
# files or outputs, nor in the transcript, the shelf's listing or sion.db. After /mcp drop the
# server is no longer started: its call is refused and the API hears nothing more. A server over
# HTTP that refuses with no grant shows "(no grant)" in /mcp, which prints the grant to paste and
# writes none.
. "$(dirname "$0")/lib.sh"
need_bwrap
command -v python3 >/dev/null || skip "python3 is not installed"
command -v sqlite3 >/dev/null || skip "sqlite3 is not installed (Debian package sqlite3)"
command -v npm >/dev/null || skip "npm is not installed (Debian package npm)"
if ! "$SION_SOURCE_DIR/scripts/install-peers" 2>"$scratch/err"; then
    fail "scripts/install-peers failed: $(cat "$scratch/err")"
    done_testing
    exit 1
fi
node22="$SION_SOURCE_DIR/tests/conformance/node_modules/node/bin/node"

cd "$scratch" || exit 1
mkdir -p work scripts tmp
export TMPDIR="$scratch/tmp"
background=()
EXTRA_CLEANUP='for p in "${background[@]}"; do kill -9 "$p" 2>/dev/null; done'
trap 'eval "$EXTRA_CLEANUP"; rm -rf "$scratch"' EXIT

tls_authority "$scratch/ca"
tls_certificate "$scratch/ca" api "IP:127.0.0.2,IP:127.0.0.3"
export SSL_CERT_FILE="$scratch/ca/ca.pem"
token="tok-$(head -c 24 /dev/urandom | od -An -tx1 | tr -d ' \n')"
printf '%s\n' "$token" >"$scratch/token"
# api ADDRESS: the stand-in there; its port in $port.
api() {
    rm -f "$scratch/port"
    python3 "$SION_SOURCE_DIR/tests/e2e/bearer_api.py" "$1" "$scratch/ca/api.pem" "$scratch/token" \
        "$scratch/api.log" "$scratch/port" 2>"$scratch/api.err" &
    background+=("$!")
    wait_until 30 test -s "$scratch/port" || fail "the API stand-in on $1 did not start: $(cat "$scratch/api.err")"
    port=$(cat "$scratch/port")
}
api 127.0.0.2
p2=$port
api 127.0.0.3
p3=$port
: >"$scratch/api.log"
rm -f "$scratch/token" # the stand-in has read it; from now on only the credential store holds it

printf '%s\n' "$token" | expect_exit 0 sion agent credential add API_TOKEN
cp "$SION_SOURCE_DIR/tests/fixtures/mcp/"{caller,fixture,seen}.py work/
expect_exit 0 timeout 60 sion agent mcp add api --dir work --sandbox bwrap --effect get=read-local -- python3 caller.py
expect_exit 0 sion agent mcp grant api "https://127.0.0.2:$p2/v1" --credential API_TOKEN &&
    expect_out "MCP server api's requests to https://127.0.0.2:$p2/v1 get Authorization: Bearer \${API_TOKEN}, written by its sandbox's proxy"
expect_exit 0 timeout 60 sion agent mcp add napi --sandbox bwrap --sandbox-read "$SION_SOURCE_DIR/tests" --effect get=read-local \
    -- "$node22" "$SION_SOURCE_DIR/tests/fixtures/mcp/caller.mjs"
expect_exit 0 sion agent mcp grant napi "https://127.0.0.2:$p2/v1" --credential API_TOKEN
expect_exit 0 sion agent mcp list && expect_grep "^grant: https://127.0.0.2:$p2/v1 gets Authorization: Bearer \\$\\{API_TOKEN\\}$" "$scratch/out"

cat >scripts/calls.json <<EOF
{"turns": [{"calls": [{"tool": "api_get", "input": {"url": "https://127.0.0.2:$p2/v1/items"}}]},
           {"calls": [{"tool": "api_get", "input": {"url": "https://127.0.0.2:$p2/v2/items"}}]},
           {"calls": [{"tool": "api_get", "input": {"url": "https://127.0.0.3:$p3/v1/items"}}]},
           {"calls": [{"tool": "napi_get", "input": {"url": "https://127.0.0.2:$p2/v1/node"}}]},
           {"calls": [{"tool": "api_seen", "input": {}}]},
           {"text": "called"},
           {"calls": [{"tool": "api_get", "input": {"url": "https://127.0.0.2:$p2/v1/after"}}]},
           {"text": "dropped"}]}
EOF
expect_exit 0 sion-run create coder --model "script:$scratch/scripts/calls.json" && coder=$(cat "$scratch/out")
expect_exit 0 sion agent mcp give coder api
expect_exit 0 sion agent mcp give coder napi
printf '%s\n' 'send Call the API' 'expect : done' 'send /mcp drop api' 'expect stays on the shelf' \
    'send Call it again' 'expect : done' eof >"$scratch/steps"
expect_exit 0 timeout 180 python3 "$SION_SOURCE_DIR/tests/e2e/pty_drive.py" --pipes --log "$scratch/shown" \
    --timeout 90 "$scratch/steps" -- sion-run chat coder "${coder:0:8}" --workspace work --autonomy L5
for line in "^← 200 \\{\"path\": \"/v1/items\", \"authorized\": true\\}$" \
    "^← 401 \\{\"path\": \"/v2/items\", \"authorized\": false\\}$" \
    '^✗ failed: URLError: <urlopen error Tunnel connection failed: 403 Forbidden>$' \
    "^← 200 \\{\"path\": \"/v1/node\", \"authorized\": true\\}$" \
    '^← seen [0-9]+ bytes$' \
    '^✗ there is no tool named api_get$'; do
    expect_grep "$line" "$scratch/shown"
done
# The API heard the grant's path with the token, the other path without, and nothing after the
# drop; the other host was never reached.
expect_text "$scratch/api.log" "the API's log" "$(printf '%s\n' \
    '{"address": "127.0.0.2", "path": "/v1/items", "authorization": true, "authorized": true}' \
    '{"address": "127.0.0.2", "path": "/v2/items", "authorization": false, "authorized": false}' \
    '{"address": "127.0.0.2", "path": "/v1/node", "authorization": true, "authorized": true}')"
[ -s work/seen.dump ] && ok || fail "the server saw nothing"
sqlite3 "$SION_HOME/sion.db" .dump >"$scratch/db.dump"
expect_exit 0 sion agent mcp list --json && cp "$scratch/out" "$scratch/list.json"
for f in work/seen.dump "$scratch/shown" "$scratch/out" "$scratch/err" "$scratch/db.dump" "$scratch/list.json"; do
    if grep -qaF -- "$token" "$f"; then fail "the token is in $f"; else ok; fi
done
# Nothing of the sandbox said it back either: the client had nothing to redact.
if grep -qaF '[redacted]' "$scratch/shown"; then fail "a server said a secret back"; else ok; fi

# The same through `run --json`, with the server given to this run alone, and the session shown.
cat >scripts/one.json <<EOF
{"turns": [{"calls": [{"tool": "api_get", "input": {"url": "https://127.0.0.2:$p2/v1/json"}}]},
           {"text": "once"}]}
EOF
expect_exit 0 timeout 120 sion-run run coder "${coder:0:8}" --task 'Call it' --workspace work --mcp api \
    --autonomy L5 --model "script:$scratch/scripts/one.json" --json </dev/null &&
    expect_grep '"tool":"api_get","state":"ok","text":"200 \{.*/v1/json.*authorized.*: true\}"' "$scratch/out"
sid=$(sed -n 's/.*"session":"\([0-9a-f]\{16\}\)".*/\1/p' "$scratch/out" | head -n 1)
cp "$scratch/out" "$scratch/run.json"
expect_exit 0 sion-run show "$sid" --json && cp "$scratch/out" "$scratch/show.json"
expect_grep 'v1/json' "$scratch/show.json"
for f in "$scratch/run.json" "$scratch/show.json" "$scratch/err"; do
    if grep -qaF -- "$token" "$f"; then fail "the token is in $f"; else ok; fi
done

# A server over HTTP refused for want of a key: "(no grant)", and the grant to paste, not written.
python3 - "$scratch/k.port" <<'PY' 2>/dev/null &
import http.server, os, sys, threading
class Refuse(http.server.BaseHTTPRequestHandler):
    def do_POST(self):
        self.rfile.read(int(self.headers.get("Content-Length", 0)))
        self.send_response(401)
        self.send_header("Content-Length", "0")
        self.end_headers()
    do_GET = do_POST
    def log_message(self, *_):
        pass
server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Refuse)
open(sys.argv[1] + ".tmp", "w").write(str(server.server_address[1]))
os.rename(sys.argv[1] + ".tmp", sys.argv[1])
threading.Timer(300, lambda: os._exit(0)).start()
server.serve_forever()
PY
background+=("$!")
wait_until 30 test -s "$scratch/k.port" || fail "the refusing server did not start"
kurl="http://127.0.0.1:$(cat "$scratch/k.port")/mcp"
echo '{"turns": [{"text": "hi"}]}' >scripts/hi.json
expect_exit 0 sion-run create keyed --model "script:$scratch/scripts/hi.json" && keyed=$(cat "$scratch/out")
printf '%s\n' "send /mcp add keys $kurl" 'expect wants an account first' 'send Hello' 'expect : done' \
    'send /mcp' 'expect this grant' eof >"$scratch/steps"
expect_exit 0 timeout 120 python3 "$SION_SOURCE_DIR/tests/e2e/pty_drive.py" --pipes --log "$scratch/shown" \
    --timeout 60 "$scratch/steps" -- sion-run chat keyed "${keyed:0:8}" --workspace work
expect_grep "^  keys $kurl \\(no grant\\)$" "$scratch/shown"
expect_grep "^keys was refused \\(HTTP 401\\)\\. If it takes an account, /mcp login keys; if it takes a key, keep the key with sion agent credential add KEYS_KEY, and paste this grant where you keep your configuration \\(this console writes none\\):$" "$scratch/shown"
expect_grep "^  sion agent mcp grant keys $kurl --credential KEYS_KEY$" "$scratch/shown"
expect_exit 0 sion agent mcp list --json
grep -q '"name":"keys".*"grants"' "$scratch/out" && fail "the console wrote a grant" || ok
# Pasted, it is kept.
expect_exit 0 sion agent mcp grant keys "$kurl" --credential KEYS_KEY --header X-Api-Key --scheme ''
expect_out "MCP server keys's requests to $kurl get X-Api-Key: \${KEYS_KEY}, written by sion-mcp"
expect_grep '^sion-mcp: note: no credential KEYS_KEY is kept or set yet' "$scratch/err"

# Bad input: one line each.
expect_exit 0 sion agent mcp grant api "https://127.0.0.2:$p2/v2" --credential API_TOKEN &&
    expect_out "(the grant for https://127.0.0.2:$p2/v1 is replaced: one a host)
MCP server api's requests to https://127.0.0.2:$p2/v2 get Authorization: Bearer \${API_TOKEN}, written by its sandbox's proxy"
expect_exit 0 sion agent mcp grant api "https://127.0.0.2:$p2/v1" --credential API_TOKEN
expect_exit 0 sion agent mcp grant api "https://127.0.0.2:$p2/v1" --off &&
    expect_out "MCP server api's requests to https://127.0.0.2:$p2/v1 get no credential"
expect_exit 1 sion agent mcp grant api "https://127.0.0.2:$p2/v1" --off &&
    expect_err "sion-mcp: MCP server api has no grant for https://127.0.0.2:$p2/v1"
expect_exit 64 sion agent mcp grant api "http://example.org/v1" --credential API_TOKEN &&
    expect_err "sion-mcp: a credential goes over https only, not to 'http://example.org/v1': plain http is for this machine's loopback"
expect_exit 64 sion agent mcp grant api "https://example.org/v1" &&
    expect_err "sion-mcp: say which credential: sion-mcp grant NAME [URL] --credential VAR"
expect_exit 64 sion agent mcp grant api --credential API_TOKEN &&
    expect_err "sion-mcp: give the URL its requests go to: sion-mcp grant NAME URL --credential VAR"
expect_exit 66 sion agent mcp grant ghost https://example.org/ --credential API_TOKEN &&
    expect_err "sion-mcp: there is no MCP server ghost on the shelf (\`sion agent mcp list\`)"
expect_exit 64 sion agent mcp grant api https://example.org/ --credential API_TOKEN --off &&
    expect_err "sion-mcp: --off takes no credential, header or scheme"

done_testing
