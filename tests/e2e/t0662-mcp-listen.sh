#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# A session's tools follow a 2026-07-28 server's list: the client listens (subscriptions/listen)
# where the server says its tools change, and a notifications/tools/list_changed on that stream
# has the list read again. Against the SDK v2 server of tests/fixtures/mcp/modern-http-server.mjs
# on 127.0.0.1, whose offer_forecast takes forecast off its list and puts it back: through
# `sion-mcp serve` (mcp/state before and after, a call of a tool gone) and in a sion-run session
# (the model's next turn has the list as it is now).
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/t0620-helpers.bash"

command -v node >/dev/null || skip "node is not installed (Debian package nodejs)"
command -v npm >/dev/null || skip "npm is not installed (Debian package npm)"
if ! "$SION_SOURCE_DIR/scripts/install-peers" 2>"$scratch/err"; then
    fail "scripts/install-peers failed: $(cat "$scratch/err")"
    done_testing
    exit 1
fi
cd "$scratch" || exit 1

servers=()
trap 'for p in "${servers[@]}"; do kill "$p" 2>/dev/null; done; rm -rf "$scratch"' EXIT
port=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
node "$SION_SOURCE_DIR/tests/fixtures/mcp/modern-http-server.mjs" "$port" "$scratch/weather.log" \
    >server.log 2>&1 &
servers+=($!)
for _ in $(seq 300); do
    python3 -c "import socket; socket.create_connection(('127.0.0.1', $port), 1)" 2>/dev/null && break
    sleep 0.1
done

expect_exit 0 timeout 60 sion-mcp add weather --url "http://127.0.0.1:$port/mcp"
expect_grep '^MCP server weather \(weather 2\.0, protocol 2026-07-28\): reviewed tools$' "$scratch/out"
expect_grep '^offer_forecast \(write, repeats run again\): Offer forecast, or take it off the list of tools\.$' "$scratch/out"
# `add` wants no changes told: it reads the list once, and listens for nothing.
grep -q '"subscriptions/listen"' weather.log && fail "add listened for changes" || ok

# -- the bridge: mcp/state follows the server's list ---------------------------------------------
offered() { # offered ID: the tools request ID's mcp/state offers, sorted, on one line
    got "$1" servers.0.tools | python3 -c 'import json, sys; print(" ".join(sorted(t["name"] for t in json.load(sys.stdin))))'
}
{
    req 0 mcp/state
    echo
    call 1 weather_offer_forecast '{"offered":false}'
    echo
    req 2 mcp/state
    echo
    call 3 weather_forecast '{"city":"Lisbon"}'
    call 4 weather_offer_forecast '{"offered":true}'
    echo
    req 5 mcp/state
    echo
    call 6 weather_forecast '{"city":"Lisbon"}'
} | expect_exit 0 bridge -- sion-mcp serve weather
cp "$scratch/out" bridge.out
expect_got 'connected' 0 servers.0.state
[ "$(offered 0)" = "weather_forecast weather_offer_forecast" ] && ok || fail "at first: $(offered 0)"
expect_got 'forecast is off the list' 1 text
[ "$(offered 2)" = "weather_offer_forecast" ] && ok || fail "with forecast off the list: $(offered 2)"
# A pinned tool the server no longer lists is gone without a notice; bad_marks keeps its own.
bad_marks="MCP server weather: the tool \"bad_marks\" is not offered: its x-mcp-header 'A' marks a property that is not a string, an integer or a boolean"
expect_got "[$(python3 -c 'import json, sys; print(json.dumps(sys.argv[1]))' "$bad_marks")]" 2 servers.0.notices
expect_py 'a(3)["error"]["message"] == "there is no tool named weather_forecast"'
expect_got 'forecast is offered' 4 text
[ "$(offered 5)" = "weather_forecast weather_offer_forecast" ] && ok || fail "with forecast offered again: $(offered 5)"
expect_got 'LISBON: 1 days' 6 text
python3 - weather.log <<'PY' && ok || fail "the bridge did not listen once and read the list on each change"
import json, sys
methods = [h.get("mcp-method") for h in map(json.loads, open(sys.argv[1]))]
listens = methods.count("subscriptions/listen")
lists = methods.count("tools/list")
# add's list, the bridge's first, then one for each of the two changes
assert listens == 1 and lists == 4, (listens, lists, methods)
PY

# -- a session: the model's next turn has the list as it is now ----------------------------------
id=$(sion agent create coder) && ok || fail "sion agent create coder"
cat >offer.json <<'JSON'
{"turns": [
  {"calls": [{"tool": "weather_offer_forecast", "input": {"offered": false}}]},
  {"calls": [{"tool": "weather_forecast", "input": {"city": "Porto"}}]},
  {"calls": [{"tool": "weather_offer_forecast", "input": {"offered": true}}]},
  {"calls": [{"tool": "weather_forecast", "input": {"city": "Porto"}}]},
  {"text": "The forecast went away and came back."}
]}
JSON
expect_exit 0 timeout 120 sion agent run coder "$id" --task 'Take the forecast away and back.' \
    --model script:offer.json --mcp weather --autonomy L3
sed -E -e 's/session [0-9a-f]{16}/session S/' -e "s/agent ${id:0:8}/agent A/" "$scratch/out" >got
{
    echo 'session S for agent A'
    echo "$bad_marks"
    cat <<'TXT'
→ weather_offer_forecast {"offered":false}
← forecast is off the list
→ weather_forecast {"city":"Porto"}
✗ there is no tool named weather_forecast
→ weather_offer_forecast {"offered":true}
← forecast is offered
→ weather_forecast {"city":"Porto"}
← PORTO: 1 days
agent: The forecast went away and came back.
session S: done
TXT
} >want
cmp -s want got && ok || { fail "the session's transcript differs"; diff want got >&2; }

done_testing
