#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# sion-mcp over HTTP against real peers on 127.0.0.1: server-everything's Streamable HTTP (a 2025
# session) and HTTP+SSE (2024-11-05) transports, and a 2026-07-28 server on the SDK v2's
# createMcpHandler (tests/fixtures/mcp/modern-http-server.mjs) whose x-mcp-header marks come back
# as headers and whose broken marks keep a tool off; --header with ${VAR} kept unexpanded on the
# shelf; the usage errors of --url; and hostile servers (tests/fixtures/mcp/hostile_http.py):
# HTML, a truncated stream, an endless one, a huge body, a redirect, an endpoint on another origin.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/t0620-helpers.bash"

command -v node >/dev/null || skip "node is not installed (Debian package nodejs)"
command -v npm >/dev/null || skip "npm is not installed (Debian package npm)"
if ! "$SION_SOURCE_DIR/scripts/install-peers" 2>"$scratch/err"; then
    fail "scripts/install-peers failed: $(cat "$scratch/err")"
    done_testing
    exit 1
fi
everything="$SION_SOURCE_DIR/tests/peers/node_modules/@modelcontextprotocol/server-everything/dist/index.js"
fixtures="$SION_SOURCE_DIR/tests/fixtures/mcp"
cd "$scratch" || exit 1

# Every server this suite starts is stopped at exit.
servers=()
trap 'for p in "${servers[@]}"; do kill "$p" 2>/dev/null; done; rm -rf "$scratch"' EXIT

free_port() { python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }

# serve_on PORT CMD...: starts CMD in the background and waits (30 s at most) until PORT listens.
serve_on() {
    local port=$1
    shift
    "$@" >"$scratch/server-$port.log" 2>&1 &
    servers+=($!)
    for _ in $(seq 300); do
        python3 -c "import socket,sys; socket.create_connection(('127.0.0.1', $port), 1)" 2>/dev/null && return 0
        sleep 0.1
    done
    fail "nothing listens on $port: $*"
    return 1
}

# -- server-everything, Streamable HTTP: a 2025 session ----------------------------------------
port=$(free_port)
serve_on "$port" env PORT="$port" node "$everything" streamableHttp
url="http://127.0.0.1:$port/mcp"
expect_exit 0 timeout 60 sion-mcp add everything --url "$url"
expect_grep '^MCP server everything \(mcp-servers/everything 2\.0\.0, protocol 2025-11-25\): reviewed tools$' "$scratch/out"
expect_grep '^echo \(read\): Echoes back the input string' "$scratch/out"
expect_grep '^Give it to a session with --mcp everything\.$' "$scratch/out"
grep -q 'runs as you' "$scratch/out" && fail "a server over HTTP is not warned of as unsandboxed" || ok
expect_exit 0 sion-mcp list
expect_grep "^everything: $url over HTTP\$" "$scratch/out"
expect_exit 0 timeout 60 sion-mcp review everything
expect_grep '^The tools are as they were pinned\.$' "$scratch/out"
expect_exit 0 timeout 60 sion-mcp prompts everything
expect_grep 'simple-prompt' "$scratch/out"
expect_exit 0 timeout 60 sion-mcp resources everything
expect_grep 'architecture\.md' "$scratch/out"
{
    req 0 mcp/state
    echo
    call 1 everything_echo '{"message":"over http"}'
    call 2 everything_get-sum '{"a":2,"b":3}'
    call 3 everything_trigger-long-running-operation '{"duration":1,"steps":2}'
    req 4 prompts/get '{"server":"everything","name":"simple-prompt"}'
} | expect_exit 0 bridge -- sion-mcp serve everything
expect_got 'connected' 0 servers.0.state
expect_got '2025-11-25' 0 servers.0.protocol
expect_got 'Echo: over http' 1 text
expect_got 'The sum of 2 and 3 is 5.' 2 text
expect_got 'Long running operation completed. Duration: 1 seconds, Steps: 2.' 3 text
expect_py '"This is a simple prompt without arguments." in a(4)["text"]'
# A wrong path: every transport tried is answered 404 with a page saying so. The status is named
# with the page's words, exit 65 (not a lost stream), and nothing is put on the shelf.
before=$(sqlite3 "$SION_HOME/sion.db" 'SELECT name, config FROM mcp_servers ORDER BY name; SELECT count(*) FROM mcp_pins')
expect_exit 65 timeout 60 sion-mcp add wrong --url "http://127.0.0.1:$port/wrong"
expect_err "sion-mcp: MCP server wrong answered neither a POST nor the GET of an event stream (HTTP 404, http://127.0.0.1:$port/wrong): Cannot GET /wrong"
expect_out ""
expect_text <(sqlite3 "$SION_HOME/sion.db" 'SELECT name, config FROM mcp_servers ORDER BY name; SELECT count(*) FROM mcp_pins') "the shelf" "$before"

# -- server-everything, HTTP+SSE of 2024-11-05 --------------------------------------------------
port=$(free_port)
serve_on "$port" env PORT="$port" node "$everything" sse
expect_exit 0 timeout 60 sion-mcp add old --url "http://127.0.0.1:$port/sse"
expect_grep '^MCP server old \(mcp-servers/everything 2\.0\.0, protocol 2025-11-25\): reviewed tools$' "$scratch/out"
expect_exit 0 sion-mcp list
expect_grep "^old: http://127.0.0.1:$port/sse over HTTP\\+SSE\$" "$scratch/out"
{
    req 0 mcp/state
    echo
    call 1 old_echo '{"message":"over sse"}'
} | expect_exit 0 bridge -- sion-mcp serve old
expect_got 'connected' 0 servers.0.state
expect_got 'Echo: over sse' 1 text
# What it spoke at its review is tried first: the stream straight away.
expect_exit 0 timeout 60 sion-mcp review old
expect_grep '^The tools are as they were pinned\.$' "$scratch/out"

# -- a 2026-07-28 server: headers mirrored, broken marks, ${VAR} in a header ---------------------
port=$(free_port)
serve_on "$port" node "$fixtures/modern-http-server.mjs" "$port" "$scratch/weather.log"
export WEATHER_KEY=k-123
expect_exit 0 timeout 60 sion-mcp add weather --url "http://127.0.0.1:$port/mcp" --header 'X-Key: ${WEATHER_KEY}'
expect_grep '^MCP server weather \(weather 2\.0, protocol 2026-07-28\): reviewed tools$' "$scratch/out"
expect_grep '^forecast \(read\): The forecast for a city\.$' "$scratch/out"
expect_grep "^MCP server weather: the tool \"bad_marks\" is not offered: its x-mcp-header 'A' marks a property that is not a string, an integer or a boolean\$" "$scratch/out"
# The shelf keeps ${WEATHER_KEY}, never its value.
python3 - "$SION_HOME/sion.db" <<'PY' && ok || fail "the stored config does not keep \${WEATHER_KEY} as given"
import json, sqlite3, sys
config = json.loads(sqlite3.connect(sys.argv[1]).execute(
    "SELECT config FROM mcp_servers WHERE name = 'weather'").fetchone()[0])
assert config["headers"] == [["X-Key", "${WEATHER_KEY}"]], config
assert "k-123" not in json.dumps(config)
PY
{
    req 0 mcp/state
    echo
    call 1 weather_forecast '{"city":"Lisbon","days":3,"metric":true}'
    call 2 weather_bad_marks '{"a":1}'
} | expect_exit 0 bridge -- sion-mcp serve weather
expect_got '2026-07-28' 0 servers.0.protocol
expect_got 'LISBON: 3 days' 1 text
expect_py 'a(2)["error"]["code"] == -32002'
python3 - "$scratch/weather.log" <<'PY' && ok || fail "the tools/call did not carry its mirrored headers"
import json, sys
calls = [h for h in map(json.loads, open(sys.argv[1])) if h.get("mcp-method") == "tools/call"]
assert len(calls) == 1, calls
h = calls[0]
assert h["mcp-name"] == "forecast" and h["mcp-param-city"] == "Lisbon", h
assert h["mcp-param-days"] == "3" and h["mcp-param-metric"] == "true", h
assert h["mcp-protocol-version"] == "2026-07-28" and h["x-key"] == "k-123", h
PY
unset WEATHER_KEY
expect_exit 78 sion-mcp review weather
expect_err 'sion-mcp: cannot reach MCP server weather: the header X-Key of MCP server weather takes ${WEATHER_KEY}, which is not set'

# -- usage ------------------------------------------------------------------------------------
expect_exit 64 sion-mcp add x --url "http://127.0.0.1:$port/mcp" --dir .
expect_err 'sion-mcp: --dir does not go with --url: a server over HTTP runs elsewhere'
expect_exit 64 sion-mcp add x --header 'A: b' -- true
expect_err 'sion-mcp: --header goes with --url'
expect_exit 64 sion-mcp add x --url "http://127.0.0.1:$port/mcp" --header 'no colon'
expect_err "sion-mcp: --header takes 'Name: value', not 'no colon'"
expect_exit 64 sion-mcp add x --url "http://127.0.0.1:$port/mcp" --header 'Mcp-Session-Id: 1'
expect_err "sion-mcp: --header cannot set Mcp-Session-Id: the protocol's headers are the client's"
expect_exit 64 sion-mcp add x --url "file:///etc/passwd"
expect_err "sion-mcp: --url takes an http or https URL, not 'file:///etc/passwd'"
expect_exit 64 sion-mcp add x --url "http://127.0.0.1:$port/mcp" -- true
expect_err 'sion-mcp: give either --url or a command, not both'

# -- hostile servers: a clear error each, and nothing put on the shelf ---------------------------
hostile() { # MODE EXIT MESSAGE-PATTERN
    local port
    port=$(free_port)
    serve_on "$port" python3 "$fixtures/hostile_http.py" "$1" "$port"
    expect_exit "$2" timeout 60 sion-mcp add "h-$1" --url "http://127.0.0.1:$port/mcp" --timeout 3
    expect_grep "$3" "$scratch/err"
    [ "$(wc -l <"$scratch/err")" -eq 1 ] && ok || fail "$1: more than one line on stderr"
    expect_exit 66 sion-mcp review "h-$1"
}
hostile html 65 "^sion-mcp: MCP server h-html answered 'tools/list' with text/html, not a JSON-RPC answer \(http://127\.0\.0\.1:[0-9]+/mcp\)\$"
hostile truncated 69 "^sion-mcp: MCP server h-truncated ended its stream before answering 'tools/list' \(http://127\.0\.0\.1:[0-9]+/mcp\)\$"
hostile endless 69 "^sion-mcp: MCP server h-endless did not answer 'tools/list' within 3 s\$"
# A body that says it is over the limit is not read at all; one that grows past it is cut there.
hostile huge 69 "^sion-mcp: MCP server h-huge did not answer 'tools/list': cannot read 'http://127\.0\.0\.1:[0-9]+/mcp': the response is larger than 33554432 bytes\$"
hostile redirect 65 "^sion-mcp: MCP server h-redirect at http://127\.0\.0\.1:[0-9]+/mcp redirects to http://203\.0\.113\.7:8080, and redirects are not followed\$"
hostile endpoint 65 "^sion-mcp: MCP server h-endpoint named an endpoint at http://127\.0\.0\.2:9, another origin than its own \(http://127\.0\.0\.1:[0-9]+\): refused\$"

done_testing
