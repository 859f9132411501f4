#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The seed's "Servers over HTTP" and "Logging in to a server" transcripts, byte for byte once the
# ports, client ids, PKCE challenges and states are normalised, against the OAuth-protected notes
# server of tests/fixtures/mcp/notes_http_server.py on 127.0.0.1: `add --url … --no-browser` with a
# scripted browser that follows the authorization URL as a person who always consents would; a
# session calling its tools with the sealed token; the deprecated HTTP+SSE transport logged in to
# the same way; `logout` revoking, after which a session is not offered the server and says how to
# log in; `login` again. Then what must not happen: no token in the shelf, the transcript or any
# log; a tampered mcp-auth.bin is a clear error and the server is not offered; a refresh token
# renews a lapsed access token without anyone; the SDK's own OAuth example server is logged in to;
# the notes server over TLS, refused with a CA the machine does not know and used through
# SSL_CERT_FILE.
. "$(dirname "$0")/lib.sh"

fixtures="$SION_SOURCE_DIR/tests/fixtures/mcp"
cd "$scratch" || exit 1

servers=()
trap 'for p in "${servers[@]}"; do kill "$p" 2>/dev/null; done; rm -rf "$scratch"' EXIT

# start_notes NAME [FLAGS…]: the fixture on a free port, its notes in NAME/, its requests logged
# to NAME.log; sets $port. It ends when its stdin (a fifo held here) closes.
start_notes() {
    local name=$1
    shift
    mkdir -p "$name"
    mkfifo "$name.in"
    python3 "$fixtures/notes_http_server.py" --dir "$name" --log "$scratch/$name.log" "$@" \
        <"$name.in" >"$name.port" 2>"$name.err" &
    servers+=($!)
    exec {hold}>"$name.in"
    for _ in $(seq 100); do
        port=$(head -n 1 "$name.port" 2>/dev/null)
        [ -n "$port" ] && return 0
        sleep 0.1
    done
    fail "the notes server did not start: $(cat "$name.err")"
    return 1
}

# browse OUT: the scripted browser. Waits for the authorization URL of the authorization server at
# $issuer (a pattern) in OUT and follows it, with its redirect back to the callback on 127.0.0.1;
# it trusts the authorities of $browser_ca when that is set.
issuer='http://127\.0\.0\.1:[0-9]*'
browser_ca=
browse() {
    local url=
    for _ in $(seq 300); do
        url=$(grep -m 1 "^$issuer/authorize?" "$1" 2>/dev/null)
        [ -n "$url" ] && break
        sleep 0.1
    done
    [ -n "$url" ] || { fail "no authorization URL came: $(cat "$1")"; return 1; }
    curl -s -o /dev/null -L --max-redirs 2 --max-time 20 ${browser_ca:+--cacert "$browser_ca"} "$url" ||
        fail "the browser could not follow $url"
}

# login_run OUT CMD…: CMD with its stdin held open (a person who pastes nothing), the browser
# following what it prints; the status in $status.
mkfifo person.in
exec {person}<>person.in
login_run() {
    local out=$1
    shift
    : >"$out"
    "$@" <person.in >"$out" 2>"$out.err" &
    local pid=$!
    browse "$out"
    wait "$pid"
    status=$?
}

# normalise FILE PORT: the seed's port, callback port, client id, challenge and state.
normalise() {
    sed -E -e "s/127\\.0\\.0\\.1:$2/127.0.0.1:8812/g" \
        -e 's/redirect_uri=http%3A%2F%2F127\.0\.0\.1%3A[0-9]+/redirect_uri=http%3A%2F%2F127.0.0.1%3APORT/' \
        -e "s/resource=http%3A%2F%2F127\\.0\\.0\\.1%3A$2/resource=http%3A%2F%2F127.0.0.1%3A8812/" \
        -e 's/[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/CLIENT/g' \
        -e 's/code_challenge=[A-Za-z0-9_-]{43}/code_challenge=CHALLENGE/' \
        -e 's/state=[A-Za-z0-9_-]{32}/state=STATE/' "$1"
}
same() { # same WANT GOT WHAT
    if cmp -s "$1" "$2"; then ok; else
        fail "$3 differs from the seed's"
        diff "$1" "$2" >&2
    fi
}
authorize_line() { # the seed's authorization URL, normalised, for PATH
    echo "http://127.0.0.1:8812/authorize?response_type=code&client_id=CLIENT&redirect_uri=http%3A%2F%2F127.0.0.1%3APORT%2Fcallback&code_challenge=CHALLENGE&code_challenge_method=S256&state=STATE&resource=http%3A%2F%2F127.0.0.1%3A8812%2F$1&scope=notes%3Aread"
}

# -- add over Streamable HTTP, 2026-07-28 --------------------------------------------------------
start_notes notes || exit 1
notes_port=$port
printf 'oat milk, lentils, coffee' >notes/groceries.txt
login_run add.out sion agent mcp add notes --url "http://127.0.0.1:$notes_port/mcp" --no-browser
[ "$status" -eq 0 ] && ok || fail "add exited $status: $(cat add.out.err)"
normalise add.out "$notes_port" >got
{
    echo 'MCP server notes asks for authorization.'
    echo 'Open this URL to authorize:'
    authorize_line mcp
    echo 'A browser on another machine cannot come back to this one: paste here the address it was sent to.'
    echo 'registered with http://127.0.0.1:8812 as client CLIENT'
    echo 'authorized notes at http://127.0.0.1:8812 for notes:read, renewed without you while its refresh token lasts'
    echo 'MCP server notes (notes 1.0.0, protocol 2026-07-28): reviewed tools'
    echo 'read_note (read): Read a note by its name.'
    echo 'write_note (write, repeats run again): Write a note under a name, replacing any of that name.'
    echo 'Give it to a session with --mcp notes.'
} >want
same want got "add notes"

expect_exit 0 sion agent mcp list
normalise "$scratch/out" "$notes_port" >got
printf '%s\n' 'notes: http://127.0.0.1:8812/mcp over HTTP, authorized at http://127.0.0.1:8812 for notes:read' \
    'read_note (read)' 'write_note (write, repeats run again)' >want
same want got "list"

id=$(sion agent create coder) && ok || fail "sion agent create coder"
agent="${id:0:8}…${id:60:4}"
cat >notes.json <<'JSON'
{"turns": [
  {"calls": [{"tool": "notes_read_note", "input": {"name": "groceries"}}]},
  {"calls": [{"tool": "notes_write_note", "input": {"name": "groceries", "text": "oat milk, lentils, coffee, rice"}}]},
  {"text": "Your groceries note had oat milk, lentils and coffee; I added rice."}
]}
JSON
expect_exit 0 sion agent run coder "$agent" --task 'Add rice to my groceries note.' \
    --model script:notes.json --mcp notes --autonomy L3
sed -E -e 's/session [0-9a-f]{16}/session 98a0144a596a090c/' -e "s/agent ${id:0:8}/agent b80717e1/" \
    "$scratch/out" >got
cat >want <<'TXT'
session 98a0144a596a090c for agent b80717e1
→ notes_read_note {"name":"groceries"}
← oat milk, lentils, coffee
→ notes_write_note {"name":"groceries","text":"oat milk, lentils, coffee, rice"}
← wrote groceries
agent: Your groceries note had oat milk, lentils and coffee; I added rice.
session 98a0144a596a090c: done
TXT
same want got "the notes session over HTTP"
[ "$(cat notes/groceries.txt)" = "oat milk, lentils, coffee, rice" ] && ok || fail "the note was not written"

# -- the deprecated HTTP+SSE transport ---------------------------------------------------------
start_notes old || exit 1
old_port=$port
login_run old.out sion agent mcp add old-notes --url "http://127.0.0.1:$old_port/sse" --no-browser
[ "$status" -eq 0 ] && ok || fail "add old-notes exited $status: $(cat old.out.err)"
normalise old.out "$old_port" >got
{
    echo 'MCP server old-notes asks for authorization.'
    echo 'Open this URL to authorize:'
    authorize_line sse
    echo 'A browser on another machine cannot come back to this one: paste here the address it was sent to.'
    echo 'registered with http://127.0.0.1:8812 as client CLIENT'
    echo 'authorized old-notes at http://127.0.0.1:8812 for notes:read, renewed without you while its refresh token lasts'
    echo 'MCP server old-notes (notes 1.0.0, protocol 2025-11-25): reviewed tools'
    echo 'read_note (read): Read a note by its name.'
    echo 'write_note (write, repeats run again): Write a note under a name, replacing any of that name.'
    echo 'Give it to a session with --mcp old-notes.'
} >want
same want got "add old-notes"
expect_exit 0 sion agent mcp list
expect_grep "^old-notes: http://127\\.0\\.0\\.1:$old_port/sse over HTTP\\+SSE, authorized at http://127\\.0\\.0\\.1:$old_port for notes:read\$" "$scratch/out"
expect_grep "^notes: http://127\\.0\\.0\\.1:$notes_port/mcp over HTTP, authorized at" "$scratch/out"

# -- nothing secret where it should not be ------------------------------------------------------
tokens=$(python3 - "$scratch/notes.log" <<'PY'
import json, sys
seen = set()
for line in open(sys.argv[1]):
    r = json.loads(line)
    for k in ("access_token", "refresh_token", "code", "code_verifier"):
        v = r.get("form", {}).get(k) or r.get(k)
        if v: seen.add(v)
    a = r.get("bearer")
    if a: seen.add(a)
print("\n".join(sorted(seen)))
PY
)
leaks=0
while IFS= read -r t; do
    [ -n "$t" ] || continue
    if grep -rqF -- "$t" "$SION_HOME/sion.db" "$scratch"/*.out "$scratch"/*.err "$scratch/out" "$scratch/err" 2>/dev/null; then
        leaks=$((leaks + 1))
    fi
done <<<"$tokens"
[ "$leaks" -eq 0 ] && ok || fail "$leaks secrets of the login found in the shelf or the transcripts"
[ -s "$SION_HOME/agents/mcp-auth.bin" ] && ok || fail "no sealed mcp-auth.bin"

# -- logout, a session without the server, login again ------------------------------------------
expect_exit 0 sion agent mcp logout notes
normalise "$scratch/out" "$notes_port" >got
printf '%s\n' 'revoked its tokens at http://127.0.0.1:8812' 'forgot the authorization of MCP server notes' >want
same want got "logout"
cat >again.json <<'JSON'
{"turns": [{"text": "I have no notes tools in this session."}]}
JSON
expect_exit 0 sion agent run coder "$agent" --task 'Read my groceries note.' \
    --model script:again.json --mcp notes --autonomy L3
sed -E -e 's/session [0-9a-f]{16}/session a191f8d720f81d10/' -e "s/agent ${id:0:8}/agent b80717e1/" \
    "$scratch/out" >got
cat >want <<'TXT'
session a191f8d720f81d10 for agent b80717e1
MCP server notes is not offered: the MCP server notes needs authorization (HTTP 401): log in with `sion agent mcp login notes`
agent: I have no notes tools in this session.
session a191f8d720f81d10: done
TXT
same want got "the session after logout"

login_run login.out sion agent mcp login notes --no-browser
[ "$status" -eq 0 ] && ok || fail "login exited $status: $(cat login.out.err)"
normalise login.out "$notes_port" >got
{
    echo 'Open this URL to authorize:'
    authorize_line mcp
    echo 'A browser on another machine cannot come back to this one: paste here the address it was sent to.'
    echo 'registered with http://127.0.0.1:8812 as client CLIENT'
    echo 'authorized notes at http://127.0.0.1:8812 for notes:read, renewed without you while its refresh token lasts'
} >want
same want got "login"
expect_exit 0 sion agent run coder "$agent" --task 'Add rice to my groceries note.' \
    --model script:notes.json --mcp notes --autonomy L3
expect_grep '^← oat milk, lentils, coffee, rice$' "$scratch/out"

# -- a tampered store: a clear error, the server not offered, nothing written over ---------------
cp "$SION_HOME/agents/mcp-auth.bin" sealed.bak
python3 - "$SION_HOME/agents/mcp-auth.bin" <<'PY'
import sys
p = sys.argv[1]
b = bytearray(open(p, "rb").read())
b[len(b) // 2] ^= 0x40
open(p, "wb").write(bytes(b))
PY
cp "$SION_HOME/agents/mcp-auth.bin" tampered
expect_exit 0 sion agent run coder "$agent" --task 'Read my groceries note.' \
    --model script:again.json --mcp notes --autonomy L3
expect_grep '^MCP server notes is not offered: the MCP server notes needs authorization \(HTTP 401\)' "$scratch/out"
expect_exit 0 sion agent mcp list
expect_grep "^notes: http://127\\.0\\.0\\.1:$notes_port/mcp over HTTP\$" "$scratch/out"
cmp -s tampered "$SION_HOME/agents/mcp-auth.bin" && ok || fail "the tampered store was written over"
expect_exit 65 sion agent mcp logout notes
expect_grep '^sion-mcp: .*mcp-auth\.bin' "$scratch/err"
cp sealed.bak "$SION_HOME/agents/mcp-auth.bin"

# -- the SDK's OAuth example server: a real peer's authorization server ----------------------------
# DCR, PKCE S256 and an at-once approval, no refresh token and no iss; it names itself localhost
# (and listens on every interface: it is reached on localhost only, and stopped at exit).
command -v node >/dev/null || skip "node is not installed (Debian package nodejs)"
"$SION_SOURCE_DIR/scripts/install-peers" 2>"$scratch/err" || fail "scripts/install-peers failed: $(cat "$scratch/err")"
sdk="$SION_SOURCE_DIR/tests/peers/node_modules/@modelcontextprotocol/sdk/dist/esm/examples/server/simpleStreamableHttp.js"
read -r mcp_port auth_port < <(python3 -c '
import socket
a, b = socket.socket(), socket.socket()
a.bind(("127.0.0.1", 0)); b.bind(("127.0.0.1", 0))
print(a.getsockname()[1], b.getsockname()[1])')
MCP_PORT=$mcp_port MCP_AUTH_PORT=$auth_port timeout 300 node "$sdk" --oauth >sdk.log 2>&1 &
servers+=($!)
for _ in $(seq 300); do
    curl -s -o /dev/null "http://localhost:$auth_port/.well-known/oauth-authorization-server" && break
    sleep 0.1
done
issuer="http://localhost:$auth_port" # the SDK's authorization server names itself localhost
login_run sdk.out sion agent mcp add sdk --url "http://localhost:$mcp_port/mcp" --no-browser
[ "$status" -eq 0 ] && ok || fail "add sdk exited $status: $(cat sdk.out.err)"
expect_grep "^authorized sdk at http://localhost:$auth_port/ for mcp:tools, until its token expires \(no refresh token: log in again then\)\$" sdk.out
expect_grep '^MCP server sdk \(simple-streamable-http-server 1\.0\.0, protocol 2025-11-25\): reviewed tools$' sdk.out
expect_grep '^greet \(external\): A simple greeting tool$' sdk.out
cat >greet.json <<'JSON'
{"turns": [{"calls": [{"tool": "sdk_greet", "input": {"name": "sion"}}]}, {"text": "Greeted."}]}
JSON
expect_exit 0 sion agent run coder "$agent" --task 'Greet.' --model script:greet.json --mcp sdk --autonomy L5
expect_grep '^← Hello, sion!$' "$scratch/out"

# -- over TLS, with a private authority: SSL_CERT_FILE -------------------------------------------
# The notes server speaks HTTPS with a certificate of a CA made here. Unknown to the machine, it is
# refused before anything is sent and nothing goes on the shelf; with SSL_CERT_FILE naming the CA,
# discovery, registration, the token and the session's calls all go over TLS.
tls_authority "$scratch/tls"
tls_certificate "$scratch/tls" localhost DNS:localhost,IP:127.0.0.1
start_notes secure --tls "$scratch/tls/localhost.pem" || exit 1
secure_port=$port
printf 'rye bread' >secure/bakery.txt
expect_exit 69 timeout 60 sion agent mcp add secure --url "https://localhost:$secure_port/mcp" --no-browser </dev/null &&
    expect_grep "^sion-mcp: .*https://localhost:$secure_port/mcp.*(certificate|issuer)" "$scratch/err"
[ ! -s secure.log ] && ok || fail "a request reached the server: $(cat secure.log)"
expect_exit 0 sion agent mcp list
grep -q '^secure:' "$scratch/out" && fail "secure went on the shelf" || ok
issuer="https://localhost:$secure_port"
browser_ca="$scratch/tls/ca.pem"
export SSL_CERT_FILE="$scratch/tls/ca.pem"
login_run secure.out sion agent mcp add secure --url "https://localhost:$secure_port/mcp" --no-browser
[ "$status" -eq 0 ] && ok || fail "add secure exited $status: $(cat secure.out.err)"
expect_grep "^authorized secure at https://localhost:$secure_port for notes:read, renewed without you while its refresh token lasts\$" secure.out
cat >bakery.json <<'JSON'
{"turns": [{"calls": [{"tool": "secure_read_note", "input": {"name": "bakery"}}]}, {"text": "Rye bread."}]}
JSON
expect_exit 0 sion agent run coder "$agent" --task 'What do I need from the bakery?' \
    --model script:bakery.json --mcp secure --autonomy L3
expect_grep '^← rye bread$' "$scratch/out"
paths_of() { python3 -c 'import json, sys; print(" ".join(sorted({json.loads(l)["path"] for l in open(sys.argv[1])})))' "$1"; }
[ "$(paths_of secure.log)" = "/.well-known/oauth-authorization-server /.well-known/oauth-protected-resource/mcp /authorize /mcp /register /token" ] &&
    ok || fail "the requests over TLS were $(paths_of secure.log)"
unset SSL_CERT_FILE

done_testing
