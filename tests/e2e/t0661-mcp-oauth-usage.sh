#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The command line of logging in: add's OAuth flags and --header misused, each its one line and
# exit 64 with nothing put on the shelf; login and logout of a server that is not on the shelf
# (66) or that runs here (64). Then what remove forgets, against the OAuth-protected notes server
# of tests/fixtures/mcp/notes_http_server.py on 127.0.0.1: it revokes the server's tokens and
# forgets them and the client registered for them, so that adding the name again starts clean;
# another server's tokens stay; a revocation that fails still removes, and says so on one line; a
# tampered mcp-auth.bin stops it with exit 65 before anything changed.
. "$(dirname "$0")/lib.sh"

fixtures="$SION_SOURCE_DIR/tests/fixtures/mcp"
cd "$scratch" || exit 1

servers=()
trap 'for p in "${servers[@]}"; do kill "$p" 2>/dev/null; done; rm -rf "$scratch"' EXIT

# What must not change when a command is refused: the shelf, and the sealed tokens.
snapshot() {
    sion-mcp list
    [ -e "$SION_HOME/agents/mcp-auth.bin" ] && cksum <"$SION_HOME/agents/mcp-auth.bin"
}
refused() { # refused CODE MESSAGE ARGS...: sion-mcp ARGS exits CODE with MESSAGE, nothing changed
    local code=$1 want=$2
    shift 2
    snapshot >before 2>&1
    expect_exit "$code" timeout 60 sion-mcp "$@" && expect_err "sion-mcp: $want"
    expect_out ""
    snapshot >after 2>&1
    cmp -s before after && ok || {
        fail "sion-mcp $* changed the shelf or the tokens"
        diff before after >&2
    }
}

# -- add's OAuth flags ----------------------------------------------------------------------------
# Nothing listens at the URL: each is refused before anything is reached.
url=http://127.0.0.1:9/mcp
mkdir notes
cp "$SION_SOURCE_DIR/examples/mcp-notes/notes-server.py" .
refused 64 "--client-secret-env goes with --client-id" add x --url "$url" --client-secret-env APP_SECRET
refused 64 "--client-credentials needs --client-id and --client-secret-env" add x --url "$url" --client-credentials
refused 64 "--client-credentials needs --client-id and --client-secret-env" \
    add x --url "$url" --client-credentials --client-id app
refused 64 "--client-secret-env goes with --client-id" \
    add x --url "$url" --client-credentials --client-secret-env APP_SECRET
refused 64 "--client-credentials does not go with --client-metadata-url" \
    add x --url "$url" --client-credentials --client-id app --client-secret-env APP_SECRET \
    --client-metadata-url https://app.example/client.json
for p in 0 65536 abc '' -1 +80 ' 80' 99999999999999999999; do
    refused 64 "--callback-port takes a port from 1 to 65535, not '$p'" add x --url "$url" --callback-port "$p"
done
for flag in --no-browser '--issuer https://as.example' '--client-id app' \
    '--client-secret-env APP_SECRET' '--client-metadata-url https://app.example/client.json' \
    '--callback-port 8000' '--scope notes:write' --client-credentials \
    '--workload-token-file /run/token' '--header X-Key:k'; do
    # shellcheck disable=SC2086 # the flag and its value
    refused 64 "${flag%% *} goes with --url" add x $flag -- python3 notes-server.py
done
refused 64 "--header takes 'Name: value', not 'NoColon'" add x --url "$url" --header NoColon
refused 64 "--header takes 'Name: value', not 'Bad Name: v'" add x --url "$url" --header 'Bad Name: v'
refused 64 "--header takes 'Name: value', not ': v'" add x --url "$url" --header ': v'
refused 64 "--header X-Key: the value holds a control character" \
    add x --url "$url" --header $'X-Key: a\r\nX-Injected: b'
refused 64 "--header X-Key: the value holds a control character" add x --url "$url" --header $'X-Key: a\nb'
refused 64 "--header X-Key: the value holds a control character" add x --url "$url" --header $'X-Key: a\rb'

# -- login and logout of what cannot be logged in to -----------------------------------------------
no_nope='there is no MCP server nope on the shelf (`sion agent mcp list`)'
refused 66 "$no_nope" login nope
refused 66 "$no_nope" login nope --no-browser
refused 66 "$no_nope" logout nope
expect_exit 0 sion-mcp add here --dir notes -- python3 notes-server.py
refused 64 "MCP server here runs here, not over HTTP: it has no login" login here
refused 64 "MCP server here runs here, not over HTTP: it has no login" logout here
refused 64 "unexpected operand 'x'" login here x
refused 64 "unexpected operand 'x'" logout here x
refused 64 "give a server's name: sion-mcp logout NAME" logout
# A server that runs here has no tokens to revoke: remove takes it off as it always did.
expect_exit 0 sion-mcp remove here && expect_out "removed MCP server here from the shelf"
expect_err ""

# -- remove forgets ---------------------------------------------------------------------------------
# start_notes NAME: the fixture on a free port, its requests logged to NAME.log; sets $port and
# $pid. It ends when its stdin (a fifo held here) closes, or when it is killed.
start_notes() {
    local name=$1 hold
    mkdir -p "$name"
    mkfifo "$name.in"
    python3 "$fixtures/notes_http_server.py" --dir "$name" --log "$scratch/$name.log" \
        <"$name.in" >"$name.port" 2>"$name.err" &
    pid=$!
    servers+=("$pid")
    exec {hold}>"$name.in"
    for _ in $(seq 100); do
        port=$(head -n 1 "$name.port" 2>/dev/null)
        [ -n "$port" ] && return 0
        sleep 0.1
    done
    fail "the notes server did not start: $(cat "$name.err")"
    return 1
}
# login_run OUT CMD...: CMD with its stdin held open (a person who pastes nothing) and a scripted
# browser that follows the authorization URL it prints, as a person who consents would.
mkfifo person.in
exec {person}<>person.in
login_run() {
    local out=$1 url=
    shift
    : >"$out"
    "$@" <person.in >"$out" 2>"$out.err" &
    local cmd=$!
    for _ in $(seq 300); do
        url=$(grep -m 1 '^http://127\.0\.0\.1:[0-9]*/authorize?' "$out" 2>/dev/null)
        [ -n "$url" ] && break
        sleep 0.1
    done
    if [ -n "$url" ]; then
        curl -s -o /dev/null -L --max-redirs 2 --max-time 20 "$url" || fail "the browser could not follow $url"
    else
        fail "no authorization URL came: $(cat "$out" "$out.err")"
    fi
    wait "$cmd"
    status=$?
}
client_of() { sed -nE 's/^registered with .* as client (.*)$/\1/p' "$1"; }
# revocations NAME: the token_type_hint of each revocation the server NAME took, in order.
revocations() {
    python3 - "$1.log" <<'PY'
import json, sys
for line in open(sys.argv[1]):
    r = json.loads(line)
    if r["path"] == "/revoke":
        print(r["form"].get("token_type_hint"))
PY
}

start_notes a || exit 1
a_port=$port a_pid=$pid
start_notes b || exit 1
b_port=$port
login_run add-a.out sion-mcp add notes --url "http://127.0.0.1:$a_port/mcp" --no-browser
[ "$status" -eq 0 ] && ok || fail "add notes exited $status: $(cat add-a.out.err)"
first_client=$(client_of add-a.out)
[ -n "$first_client" ] && ok || fail "add notes registered no client: $(cat add-a.out)"
login_run add-b.out sion-mcp add other --url "http://127.0.0.1:$b_port/mcp" --no-browser
[ "$status" -eq 0 ] && ok || fail "add other exited $status: $(cat add-b.out.err)"

# A tampered store: remove is refused with the store's error, and nothing changes.
sealed=$SION_HOME/agents/mcp-auth.bin
cp "$sealed" sealed.bak
python3 - "$sealed" <<'PY'
import sys
p = sys.argv[1]
b = bytearray(open(p, "rb").read())
b[len(b) // 2] ^= 0x40
open(p, "wb").write(bytes(b))
PY
snapshot >before 2>&1
expect_exit 65 sion-mcp remove notes
expect_grep "^sion-mcp: cannot read MCP authorizations '$sealed': " "$scratch/err"
[ "$(wc -l <"$scratch/err")" -eq 1 ] && ok || fail "more than one line on stderr: $(cat "$scratch/err")"
expect_out ""
snapshot >after 2>&1
cmp -s before after && ok || { fail "a refused remove changed the shelf or the store"; diff before after >&2; }
[ -z "$(revocations a)" ] && ok || fail "a refused remove revoked tokens"
cp sealed.bak "$sealed"

# remove revokes both tokens where the server takes revocations, and forgets them.
expect_exit 0 sion-mcp remove notes
printf '%s\n' "revoked its tokens at http://127.0.0.1:$a_port" \
    'forgot the authorization of MCP server notes' 'removed MCP server notes from the shelf' >want
expect_out "$(cat want)"
expect_err ""
[ "$(revocations a | tr '\n' ' ')" = "refresh_token access_token " ] && ok ||
    fail "remove did not revoke the refresh and access tokens: $(revocations a)"
expect_exit 66 sion-mcp review notes

# The other server is as it was: still authorized, reached without a login, nothing revoked.
expect_exit 0 sion-mcp list
expect_out "$(printf '%s\n' "other: http://127.0.0.1:$b_port/mcp over HTTP, authorized at http://127.0.0.1:$b_port for notes:read" \
    'read_note (read)' 'write_note (write, repeats run again)')"
expect_exit 0 timeout 60 sion-mcp review other </dev/null
expect_out "$(printf '%s\n' 'MCP server other (notes 1.0.0, protocol 2026-07-28):' \
    'read_note (read): Read a note by its name. [unchanged]' \
    'write_note (write, repeats run again): Write a note under a name, replacing any of that name. [unchanged]' \
    'The tools are as they were pinned.')"
[ -z "$(revocations b)" ] && ok || fail "removing notes revoked other's tokens"

# Adding the name again starts clean: a login, and a new registration.
login_run again.out sion-mcp add notes --url "http://127.0.0.1:$a_port/mcp" --no-browser
[ "$status" -eq 0 ] && ok || fail "add notes again exited $status: $(cat again.out.err)"
expect_grep '^MCP server notes asks for authorization\.$' again.out
second_client=$(client_of again.out)
[ -n "$second_client" ] && [ "$second_client" != "$first_client" ] && ok ||
    fail "add notes again did not register anew (first $first_client, then '$second_client')"

# A revocation that fails (the server is down): removed all the same, and one line says so.
kill "$a_pid" && wait "$a_pid" 2>/dev/null
expect_exit 0 timeout 60 sion-mcp remove notes
expect_out "$(printf '%s\n' 'forgot the authorization of MCP server notes' \
    'removed MCP server notes from the shelf')"
expect_grep "^sion-mcp: could not revoke the tokens of MCP server notes, forgotten all the same: cannot reach 'http://127\\.0\\.0\\.1:$a_port/revoke': " "$scratch/err"
[ "$(wc -l <"$scratch/err")" -eq 1 ] && ok || fail "not one line on stderr: $(cat "$scratch/err")"
expect_exit 0 sion-mcp list
expect_grep "^other: http://127\\.0\\.0\\.1:$b_port/mcp over HTTP, authorized at " "$scratch/out"
# Its tokens are gone: the same name at another server is sent none.
start_notes c || exit 1
c_port=$port
login_run c.out sion-mcp add notes --url "http://127.0.0.1:$c_port/mcp" --no-browser
[ "$status" -eq 0 ] && ok || fail "add notes at another server exited $status: $(cat c.out.err)"
python3 - c.log <<'PY' && ok || fail "the tokens of a removed server were sent to the next one of its name"
import json, sys
for line in open(sys.argv[1]):
    r = json.loads(line)
    if r["path"] == "/token":
        break
    assert not r["auth"], r
PY

done_testing
