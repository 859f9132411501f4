#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Networks with bubblewrap: none has only loopback and no names; host is the machine's network;
# declared reaches a declared server on the machine's loopback through the proxy, gets 403 for an
# undeclared one, and cannot connect around the proxy; in exec and in serve.
. "$(dirname "$0")/lib.sh"

need_bwrap
py=/usr/bin/python3
[ -x "$py" ] || skip "$py is missing (Debian package python3)"

work="$scratch/work"
mkdir -p "$work/site"
echo "hello from the host" >"$work/site/index.html"
cd "$work" || exit 1
sbx() { timeout 120 sion-sandbox "$@"; }

# A server on the machine's loopback, on a port the kernel picks; stopped at the end.
"$py" - "$work/site" "$scratch/port" <<'PY' 2>/dev/null &
import functools, http.server, sys
handler = functools.partial(http.server.SimpleHTTPRequestHandler, directory=sys.argv[1])
server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
open(sys.argv[2] + ".tmp", "w").write(str(server.server_address[1]))
__import__("os").rename(sys.argv[2] + ".tmp", sys.argv[2])
server.timeout = 300
server.serve_forever()
PY
server=$!
trap 'kill "$server" 2>/dev/null; rm -rf "$scratch"' EXIT
for _ in $(seq 100); do [ -s "$scratch/port" ] && break; sleep 0.1; done
port=$(cat "$scratch/port") || { fail "the test server did not start"; done_testing; exit 1; }
other=$((port == 65535 ? port - 1 : port + 1))

# The client inside: a GET through whatever proxy the environment names, loopback included.
get='import os, sys, urllib.request
os.environ.pop("NO_PROXY", None); os.environ.pop("no_proxy", None)
try:
    print(urllib.request.urlopen(sys.argv[1], timeout=10).read().decode().strip())
except urllib.error.HTTPError as e:
    print("HTTP", e.code)
except Exception as e:
    print(type(e).__name__)'
raw='import socket, sys
try:
    socket.create_connection(("127.0.0.1", int(sys.argv[1])), timeout=5); print("connected")
except OSError as e:
    print(type(e).__name__)'

# none: loopback only, names do not resolve, the host's server is out of reach.
expect_exit 0 sbx exec -- sh -c "tail -n +3 /proc/net/dev | cut -d: -f1 | tr -d ' '; python3 -c '$raw' $port; getent hosts example.com || echo no-name"
expect_out "lo
ConnectionRefusedError
no-name"

# host: the machine's network, its loopback server included.
expect_exit 0 sbx exec --network host -- python3 -c "$get" "http://127.0.0.1:$port/index.html" &&
    expect_out "hello from the host"

# declared: the declared server through the proxy; another gets 403; a connection around the
# proxy finds nothing.
declared=(--network declared --allow-host "127.0.0.1:$port")
expect_exit 0 sbx exec "${declared[@]}" -- sh -c "python3 -c '$get' http://127.0.0.1:$port/index.html; python3 -c '$get' http://127.0.0.1:$other/; python3 -c '$raw' $port; echo \$HTTPS_PROXY"
expect_grep '^hello from the host$' "$scratch/out"
expect_grep '^HTTP 403$' "$scratch/out"
expect_grep '^ConnectionRefusedError$' "$scratch/out"
expect_grep '^http://127\.0\.0\.1:[0-9]+$' "$scratch/out"
# Declared without hosts is none for commands: no proxy at all.
expect_exit 0 sbx exec --network declared -- sh -c 'echo "[$HTTP_PROXY]"' && expect_out '[]'

# The same in a serve session.
printf '%s\n' "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"sandbox/exec\",\"params\":{\"argv\":[\"python3\",\"-c\",$(printf '%s' "$get" | "$py" -c 'import json,sys; print(json.dumps(sys.stdin.read()))'),\"http://127.0.0.1:$port/index.html\"]}}" \
    "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"sandbox/exec\",\"params\":{\"argv\":[\"python3\",\"-c\",$(printf '%s' "$get" | "$py" -c 'import json,sys; print(json.dumps(sys.stdin.read()))'),\"http://127.0.0.1:$other/\"]}}" \
    '{"jsonrpc":"2.0","id":3,"method":"sandbox/close"}' >"$scratch/session"
expect_exit 0 sbx serve "${declared[@]}" <"$scratch/session"
expect_grep '"id":1,"result":\{"exit":0,"signal":null,"timed_out":false,"stdout":"hello from the host\\n"' "$scratch/out"
expect_grep '"id":2,"result":\{"exit":0,"signal":null,"timed_out":false,"stdout":"HTTP 403\\n"' "$scratch/out"
# The proxy's private directory is gone with the session.
ls -d "${TMPDIR:-/tmp}"/sion-sandbox.* 2>/dev/null | while read -r d; do
    [ "$(stat -c %Y "$d")" -lt "$(stat -c %Y "$scratch")" ] || fail "left behind: $d"
done

# A bad host pattern: refused before anything runs.
expect_exit 64 sbx exec --network declared --allow-host 'a..b' -- true
expect_grep "^sion-sandbox: invalid host pattern 'a\.\.b'" "$scratch/err"

done_testing
