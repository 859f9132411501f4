#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# A command's extra environment reaches it on no command line: with a secret value given through
# exec (a request's env), serve (sandbox/exec's env) and run --env, and while the command waits,
# every process's /proc/PID/cmdline on the machine is read and none may hold the value, while the
# command sees it in its environment. First a canary shows the scan finds a value that is on a
# command line, and each scan must see the sandbox's own processes. Then the same for the Docker
# backend (need_docker: this part, and so the suite, skips when the engine cannot run here).
. "$(dirname "$0")/lib.sh"

need_bwrap

work="$scratch/work"
mkdir -p "$work" "$SION_HOME"
cd "$work" || exit 1
secret="sion-secret-$$-$RANDOM$RANDOM"
name=SION_TEST_SECRET
# Processes started in the background, killed at the end whatever happened.
background=()
EXTRA_CLEANUP='for p in "${background[@]}"; do kill -9 "$p" 2>/dev/null; done'
trap 'eval "$EXTRA_CLEANUP"; rm -rf "$scratch"' EXIT

# The command: writes what it sees of the variable to seen.TAG, then waits (a minute at most) for
# go.TAG, so that it is alive while the machine's command lines are read.
cat >"$work/wait.sh" <<EOF
printf %s "\$$name" >"seen.\$1.tmp" && mv "seen.\$1.tmp" "seen.\$1"
i=0
while [ ! -e "go.\$1" ] && [ "\$i" -lt 300 ]; do sleep 0.2; i=\$((i + 1)); done
EOF

# scan VALUE: the pids of the machine's processes whose command line holds VALUE, in $found, and how
# many command lines were read, in $scanned. Bash's builtins only: a program started to look would
# carry VALUE on its own command line.
scan() {
    local file arg pid
    found=
    scanned=0
    for file in /proc/[0-9]*/cmdline; do
        pid=${file#/proc/}
        pid=${pid%/cmdline}
        scanned=$((scanned + 1))
        # (arg emptied first: a read that fails, as one of a process that has just ended does,
        # leaves it as it was, and the loop would never end)
        while arg= && IFS= read -r -d '' arg || [ -n "$arg" ]; do
            case $arg in
            *"$1"*)
                found="$found $pid"
                break
                ;;
            esac
        done 2>/dev/null <"$file"
    done
}

wait_for() {
    local i
    for i in $(seq 600); do
        [ -e "$1" ] && return 0
        sleep 0.1
    done
    return 1
}

# The scan can fail: a canary on a command line is found.
canary="sion-canary-$$-$RANDOM"
(exec -a "$canary" sleep 60) >/dev/null 2>&1 &
canary_pid=$!
background+=("$canary_pid")
for _ in $(seq 50); do # until the subshell has become sleep
    scan "$canary"
    [ -n "$found" ] && break
    sleep 0.1
done
[ "$found" = " $canary_pid" ] && ok || fail "the scan found '$canary' in '${found# }', not in $canary_pid"
[ "$scanned" -gt 2 ] && ok || fail "the scan read $scanned command lines"
kill "$canary_pid"
wait "$canary_pid" 2>/dev/null

# secret_stays_off WHAT TAG MARKER PID: once the command started by PID (tagged TAG) has said what it
# sees, no command line holds the secret while one holds MARKER (the sandbox is there to be seen);
# then the command is let go, PID must exit 0, and the command must have seen the secret.
secret_stays_off() {
    local what=$1 tag=$2 marker=$3 pid=$4 status
    if ! wait_for "$work/seen.$tag"; then
        fail "$what: the command did not start"
        sed 's/^/  stderr: /' "$scratch/$tag.err" >&2
        kill -9 "$pid" 2>/dev/null
        return 1
    fi
    scan "$secret"
    if [ -z "$found" ]; then
        ok
    else
        fail "$what: the secret is on the command line of$found"
        for p in $found; do tr '\0' ' ' <"/proc/$p/cmdline" | cut -c1-300 >&2 && echo >&2; done
    fi
    scan "$marker"
    [ -n "$found" ] && ok || fail "$what: no command line holds '$marker': the scan missed the sandbox"
    : >"$work/go.$tag"
    wait "$pid"
    status=$?
    [ "$status" -eq 0 ] && ok || {
        fail "$what: exited $status"
        sed 's/^/  stderr: /' "$scratch/$tag.err" >&2
    }
    expect_text "$work/seen.$tag" "$what: the variable the command saw" "$secret"
}

# sandbox_env_stays_off LABEL MARKER SANDBOX-OPTIONS...: the three ways in, in one sandbox kind.
sandbox_env_stays_off() {
    local label=$1 marker=$2 pid
    shift 2
    printf '{"command":"sh wait.sh %s-exec","env":{"%s":"%s","OTHER":"o"}}' \
        "$label" "$name" "$secret" >"$scratch/request"
    timeout 120 sion-sandbox exec "$@" --workspace "$work" --json <"$scratch/request" \
        >"$scratch/$label-exec.out" 2>"$scratch/$label-exec.err" &
    pid=$!
    background+=("$pid")
    secret_stays_off "$label exec" "$label-exec" "$marker" "$pid"
    expect_grep '^\{"exit":0,"signal":null,"timed_out":false,' "$scratch/$label-exec.out"

    {
        printf '{"jsonrpc":"2.0","id":1,"method":"sandbox/exec","params":'
        printf '{"command":"sh wait.sh %s-serve","env":{"%s":"%s"}}}\n' "$label" "$name" "$secret"
        printf '{"jsonrpc":"2.0","id":2,"method":"sandbox/close","params":{}}\n'
    } >"$scratch/session"
    timeout 120 sion-sandbox serve "$@" --workspace "$work" <"$scratch/session" \
        >"$scratch/$label-serve.out" 2>"$scratch/$label-serve.err" &
    pid=$!
    background+=("$pid")
    secret_stays_off "$label serve" "$label-serve" "$marker" "$pid"
    expect_grep '^\{"jsonrpc":"2.0","id":1,"result":\{"exit":0,"signal":null,"timed_out":false,' \
        "$scratch/$label-serve.out"

    (
        export "$name=$secret"
        exec timeout 120 sion-sandbox run "$@" --workspace "$work" --env "$name" -- \
            sh wait.sh "$label-run"
    ) >"$scratch/$label-run.out" 2>"$scratch/$label-run.err" &
    pid=$!
    background+=("$pid")
    secret_stays_off "$label run --env" "$label-run" "$marker" "$pid"
}

# bwrap's init inside, seen from outside, marks the sandbox.
sandbox_env_stays_off bwrap /run/sion/sion-sandbox

# The declared network: init sets the proxy's variables after the command's own, as before.
(
    export "$name=$secret" HTTP_PROXY=mine
    exec timeout 60 sion-sandbox run --workspace "$work" --network declared \
        --allow-host example.org --env "$name" --env HTTP_PROXY -- \
        sh -c 'echo "$'"$name"'"; case $HTTP_PROXY in http://127.0.0.1:*) echo proxied ;; esac'
) >"$scratch/out" 2>"$scratch/err"
status=$?
[ "$status" -eq 0 ] && ok || fail "run, declared network: exited $status: $(cat "$scratch/err")"
expect_out "$secret
proxied"

# A request that names a variable badly is refused before anything runs.
printf '{"command":"true","env":{"A=B":"x"}}' >"$scratch/request"
expect_exit 65 timeout 60 sion-sandbox exec --workspace "$work" <"$scratch/request" &&
    expect_err "sion-sandbox: environment variable name 'A=B' is not a name"
# So is what init is handed badly: the command does not run, the status line says 65, and the
# message names no value.
printf 'GOOD=1\0BAD-no-value\0' >"$scratch/block"
expect_exit 65 sion-sandbox init --exec --status-fd 3 --env-fd 4 -- touch "$scratch/ran" \
    3>"$scratch/status" 4<"$scratch/block" &&
    expect_err "sion-sandbox: the environment given to init holds 'BAD-no-value', not NAME=value"
[ ! -e "$scratch/ran" ] && ok || fail "init ran the command with a malformed environment"
expect_grep '^\{"exit":65,' "$scratch/status"
expect_exit 64 sion-sandbox init --exec --status-fd 3 --env-fd 1 -- true 3>/dev/null &&
    expect_err "sion-sandbox: option '--env-fd' needs a descriptor of 3 or more"

need_docker
rm -f "$work"/seen.* "$work"/go.*
# docker run's command line, labelled, marks the container.
sandbox_env_stays_off docker sion-sandbox= --backend "docker:$SION_TEST_IMAGE"
# What docker reads for itself keeps its value on the command line, and does not move docker.
printf '{"command":"echo \\"$%s $DOCKER_HOST\\"","env":{"%s":"%s","DOCKER_HOST":"%s"}}' \
    "$name" "$name" "$secret" tcp://192.0.2.1:1 >"$scratch/request"
expect_exit 0 timeout 60 sion-sandbox exec --backend "docker:$SION_TEST_IMAGE" --workspace "$work" \
    <"$scratch/request" && expect_out "$secret tcp://192.0.2.1:1"

done_testing
