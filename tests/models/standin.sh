# SPDX-License-Identifier: MIT
# For the model suites (tests/e2e/t070*): start the stand-ins of tests/models/ on 127.0.0.1, stop
# them at exit, and ask what they were sent. Source it after tests/e2e/lib.sh.
standin_pids=""
trap 'for p in $standin_pids; do kill "$p" 2>/dev/null; done; wait 2>/dev/null; rm -rf "$scratch"' EXIT

# start_standin NAME SERVER SCRIPT [ARG...]: runs tests/models/SERVER.py with the replies in SCRIPT
# and sets ${NAME}_url (http://127.0.0.1:PORT) and ${NAME}_log (its JSON-lines log,
# $scratch/NAME.log).
start_standin() {
    local name=$1 server=$2 script=$3 at="$scratch/$1"
    shift 3
    rm -f "$at.port" "$at.log" "$at.err"
    python3 "$SION_SOURCE_DIR/tests/models/$server.py" --port-file "$at.port" --script "$script" \
        --log "$at.log" --lifetime 300 "$@" 2>"$at.err" &
    standin_pids="$standin_pids $!"
    for _ in $(seq 200); do
        [ -s "$at.port" ] && break
        sleep 0.05
    done
    if [ ! -s "$at.port" ]; then
        fail "the stand-in $name did not start: $(cat "$at.err")"
        done_testing
        exit 1
    fi
    eval "${name}_url=http://127.0.0.1:$(cat "$at.port")"
    eval "${name}_log=$at.log"
}

# start_standin_for NAME SERVER SCRIPT VAR=VALUE... [-- STAND-IN ARGS...]: start_standin NAME
# SERVER SCRIPT with the stand-in's ARGS, and the array standin_env set to the VAR=VALUEs with
# @URL@ made the stand-in's URL, for `env "${standin_env[@]}" sion …`.
start_standin_for() {
    local name=$1 server=$2 script=$3 url args=()
    shift 3
    standin_env=()
    while [ $# -gt 0 ] && [ "$1" != -- ]; do standin_env+=("$1") && shift; done
    [ $# -gt 0 ] && shift && args=("$@")
    start_standin "$name" "$server" "$script" "${args[@]}"
    eval "url=\$${name}_url"
    standin_env=("${standin_env[@]//@URL@/$url}")
}

# session_id: the session's id in the first line of $scratch/out.
session_id() { sed -n '1s/^session \([0-9a-f]\{16\}\) for agent .*$/\1/p' "$scratch/out"; }

# verdicts NAME: what the stand-in NAME made of each request, one a line.
verdicts() { python3 -c 'import json,sys; [print(json.loads(l)["verdict"]) for l in open(sys.argv[1])]' "$scratch/$1.log"; }

# run_with VAR=VALUE... -- ARGS...: a run of agent $agent with those variables, no terminal, bounded.
run_with() {
    local env=()
    while [ "$1" != -- ]; do
        env+=("$1")
        shift
    done
    shift
    env "${env[@]}" timeout 60 setsid -w sion agent run coder "$agent" "$@" </dev/null
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
