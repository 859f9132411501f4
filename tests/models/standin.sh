# SPDX-License-Identifier: MIT
# For the model suites (tests/e2e/t070*): start the stand-ins of tests/models/ on 127.0.0.1, stop
# them at exit, and ask what they were sent. Source it after tests/e2e/lib.sh.
standin_pids=""
trap 'for p in $standin_pids; do kill "$p" 2>/dev/null; done; wait 2>/dev/null; rm -rf "$scratch"' EXIT

# start_standin NAME SERVER SCRIPT [ARG...]: runs tests/models/SERVER.py with the replies in SCRIPT
# and sets ${NAME}_url (http://127.0.0.1:PORT) and ${NAME}_log (its JSON-lines log).
start_standin() {
    local name=$1 server=$2 script=$3 dir="$scratch/standin-$1"
    shift 3
    rm -rf "$dir" && mkdir -p "$dir"
    python3 "$SION_SOURCE_DIR/tests/models/$server.py" --port-file "$dir/port" --script "$script" \
        --log "$dir/log.jsonl" --lifetime 300 "$@" 2>"$dir/err" &
    standin_pids="$standin_pids $!"
    for _ in $(seq 200); do
        [ -s "$dir/port" ] && break
        sleep 0.05
    done
    if [ ! -s "$dir/port" ]; then
        fail "the stand-in $name did not start: $(cat "$dir/err")"
        done_testing
        exit 1
    fi
    eval "${name}_url=http://127.0.0.1:$(cat "$dir/port")"
    eval "${name}_log=$dir/log.jsonl"
}

# query LOG EXPRESSION: prints what the Python EXPRESSION makes of the requests in LOG (`r`, a
# list of {"path", "headers", "body", "key", "violations", "refusals"}) and the answers' usage
# (`u`), as JSON.
query() {
    python3 - "$1" "$2" <<'PY'
import json, sys
entries = [json.loads(line) for line in open(sys.argv[1], encoding="utf-8")]
r = [e for e in entries if "path" in e]
u = [e["usage"] for e in entries if "usage" in e]
print(json.dumps(eval(sys.argv[2]), sort_keys=True))
PY
}

# expect_query LOG EXPRESSION WANT: the query's answer is WANT.
expect_query() {
    local got
    got=$(query "$1" "$2")
    if [ "$got" != "$3" ]; then
        fail "$2: want $3, got $got"
        return 1
    fi
    ok
}

# expect_clean LOG: no request broke a rule of the provider's.
expect_clean() {
    expect_query "$1" '[v for e in r for v in e["violations"]] + [e for e in entries if "unanswered" in e]' '[]'
}
