# SPDX-License-Identifier: MIT
# What the suites t0620 to t0622 share to drive `sion-mcp serve` (t0620-bridge.py) and read its
# answers. Source it after lib.sh.

bridge() { python3 "$SION_SOURCE_DIR/tests/e2e/t0620-bridge.py" "$@"; }
# got ID [PATH]: the answer to request ID of the last serve (in $scratch/out), or a member of it.
got() { bridge --get "$scratch/out" "$@"; }
# req ID METHOD [PARAMS] and call ID TOOL [ARGUMENTS]: one request line.
req() { printf '{"jsonrpc":"2.0","id":%s,"method":"%s","params":%s}\n' "$1" "$2" "${3:-{\}}"; }
call() { req "$1" tools/call "{\"name\":\"$2\",\"arguments\":${3:-{\}}}"; }

# expect_got TEXT ID [PATH]: got ID PATH prints exactly TEXT.
expect_got() {
    local want=$1
    shift
    got "$@" >"$scratch/got" 2>&1 || fail "no answer $*"
    expect_text "$scratch/got" "answer $*" "$want"
}

# expect_py EXPR: a Python expression about the last serve is true; messages are the lines it
# wrote, a(ID) the answer to request ID (its result, or {"error": …}), up(METHOD) the requests it
# sent up with that method.
expect_py() {
    python3 - "$scratch/out" "$1" <<'PY' && ok || fail "not true of the last serve: $1"
import json, sys
messages = [json.loads(line) for line in open(sys.argv[1]) if line.strip()]
def a(rid):
    m = next(m for m in messages if m.get("id") == rid and "method" not in m)
    return {"error": m["error"]} if "error" in m else m["result"]
def up(method):
    return [m["params"] for m in messages if m.get("method") == method]
if not eval(sys.argv[2]):
    sys.exit(1)
PY
}
