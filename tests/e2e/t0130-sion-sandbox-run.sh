#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# sion-sandbox run: a command attached to sion-sandbox's own stdin, stdout and stderr. A line echo
# answers each line as it comes (through a coprocess: one line answered before the next is sent);
# the command sees only /workspace, as user 10001, with no network under none; its stderr is
# sion-sandbox's; statuses pass through; SIGTERM and SIGHUP, or the death of sion-sandbox's parent,
# leave no process of the sandbox; an empty workspace is made when none is given and removed;
# --env passes a variable; the declared network's proxy runs beside it; and the Docker backend runs
# the same echo (need_docker: this part, and so the suite, skips when the engine cannot run here).
. "$(dirname "$0")/lib.sh"

need_bwrap
py=/usr/bin/python3
[ -x "$py" ] || skip "$py is missing (Debian package python3)"

work="$scratch/work"
mkdir -p "$work" "$SION_HOME" "$scratch/tmp"
export TMPDIR="$scratch/tmp"
cd "$work" || exit 1
# sbx ARGS...: sion-sandbox, bounded whatever happens inside.
sbx() { timeout 120 sion-sandbox "$@"; }
# Processes started in the background, killed at the end whatever happened.
background=()
EXTRA_CLEANUP='for p in "${background[@]}"; do kill -9 "$p" 2>/dev/null; done'
trap 'eval "$EXTRA_CLEANUP"; rm -rf "$scratch"' EXIT

# echo_through WHAT CMD...: CMD, a line echo, answers "echo:WORD" to each WORD before the next is
# sent, says "echo ready" on its stderr, and exits 0 at the end of its input.
echo_through() {
    local what=$1 reply status word to from pid
    shift
    coproc ECHO { "$@" 2>"$scratch/echo.err"; }
    to=${ECHO[1]} from=${ECHO[0]} pid=$ECHO_PID
    for word in one two three; do
        printf '%s\n' "$word" >&"$to"
        reply=
        if IFS= read -r -t 60 reply <&"$from" && [ "$reply" = "echo:$word" ]; then
            ok
        else
            fail "$what: '$word' was answered '${reply:-nothing within 60 s}'"
        fi
    done
    exec {to}>&-
    wait "$pid"
    status=$?
    exec {from}<&-
    [ "$status" -eq 0 ] && ok || fail "$what: exited $status at the end of its input"
    expect_text "$scratch/echo.err" "$what's stderr" "echo ready"
}

# no_process_left WHAT MARKER: no process of the machine has MARKER in its command line.
no_process_left() {
    if pgrep -f -- "$2" >"$scratch/left"; then
        fail "$1: processes are left"
        ps -o pid,ppid,args -p "$(paste -sd, "$scratch/left")" >&2
        return 1
    fi
    ok
}

# wait_for FILE: until FILE is not empty, 60 s at most.
wait_for() {
    local i
    for i in $(seq 600); do
        [ -s "$1" ] && return 0
        sleep 0.1
    done
    return 1
}

line_echo='import sys
print("echo ready", file=sys.stderr, flush=True)
for line in sys.stdin:
    print("echo:" + line.rstrip("\n"), flush=True)'

# --- attached: one line at a time, stderr its own ------------------------------------------------
echo_through "a python line echo" sion-sandbox run --workspace "$work" -- python3 -c "$line_echo"

# The seed's probe: only /workspace, user 10001, home /workspace.
echo made-outside >seen.txt
expect_exit 0 sbx run --workspace "$work" -- sh -c 'id; echo home=$HOME; ls /root ~/.sion 2>&1; touch /usr/local/x 2>&1; ls' &&
    expect_out "uid=10001(sandbox) gid=10001(sandbox) groups=10001(sandbox)
home=/workspace
ls: cannot access '/root': No such file or directory
ls: cannot access '/workspace/.sion': No such file or directory
touch: cannot touch '/usr/local/x': Read-only file system
seen.txt" && expect_err ''

# No network under none: loopback only, and names do not resolve.
expect_exit 0 sbx run -- sh -c 'tail -n +3 /proc/net/dev | cut -d: -f1 | tr -d " "; python3 -c '\''import urllib.request; urllib.request.urlopen("https://example.com", timeout=5)'\'' 2>&1 | tail -n 1' &&
    expect_out 'lo
urllib.error.URLError: <urlopen error [Errno -3] Temporary failure in name resolution>'

# stdout and stderr are each the command's, as it wrote them, nothing cut.
expect_exit 0 sbx run -- sh -c 'echo out; echo err >&2; head -c 200000 /dev/zero | tr "\0" x; echo' &&
    expect_err 'err'
[ "$(head -n 1 "$scratch/out")" = out ] && [ "$(tail -n 1 "$scratch/out" | wc -c)" -eq 200001 ] &&
    ok || fail "stdout is not the command's whole output"

# --- statuses ------------------------------------------------------------------------------------
expect_exit 3 sbx run -- sh -c 'exit 3' && expect_err ''
expect_exit 127 sbx run -- no-such-program &&
    expect_err "sion-sandbox: cannot run 'no-such-program': No such file or directory"
expect_exit 126 sbx run -- /etc && expect_err "sion-sandbox: cannot run '/etc': Permission denied"
expect_exit 137 sbx run -- sh -c 'kill -9 $$' &&
    expect_err 'sion-sandbox: the command was killed by SIGKILL (Killed)'
expect_exit 124 sbx run --timeout 1 -- sh -c 'echo started; sleep 60' && expect_out started &&
    expect_err 'sion-sandbox: the command ran out of time (1 s) and was killed'
expect_exit 152 sbx run --cpu 1 -- sh -c 'while :; do :; done' # the rlimits still hold

# --- the empty workspace, and --env --------------------------------------------------------------
expect_exit 0 sbx run -- sh -c 'pwd; stat -c "%a %u" .; ls -A | wc -l; echo x >made; ls' &&
    expect_out '/workspace
700 10001
0
made'
[ -z "$(ls -A "$TMPDIR")" ] && ok || fail "the empty workspace was left: $(ls -A "$TMPDIR")"

export T0130_GIVEN='given value'
expect_exit 0 sbx run --env T0130_GIVEN --env T0130_UNSET -- sh -c 'echo "$T0130_GIVEN"; echo "${T0130_UNSET-unset}"' &&
    expect_out 'given value
unset'
expect_exit 64 sbx run --env A=B -- true &&
    expect_err "sion-sandbox: option '--env' takes a variable's name, not 'A=B'"
expect_exit 64 sbx run --output 1K -- true
expect_exit 64 sbx run
expect_exit 78 sbx run --workspace "$SION_HOME/.." -- true
[ -z "$(ls -A "$TMPDIR")" ] && ok || fail "a refused run left a workspace: $(ls -A "$TMPDIR")"

# --- ending: SIGTERM and SIGHUP kill the sandbox, orphans and new sessions included --------------
# ends_on SIGNAL STATUS: sion-sandbox, killed with SIGNAL while its command runs, exits with STATUS
# and leaves no process of its sandbox and no workspace.
ends_on() {
    local marker="t0130-$1-$$" pid status
    rm -f "$scratch/ready"
    sion-sandbox run -- sh -c ": $marker; (sleep 600; :) & python3 -c 'import os, time; os.fork() and os._exit(0); os.setsid(); time.sleep(600)' $marker & sleep 1; echo ready; wait" >"$scratch/ready" 2>"$scratch/ends.err" &
    pid=$!
    background+=("$pid")
    wait_for "$scratch/ready" || fail "$1: the command did not start"
    [ "$(pgrep -f -c -- "$marker")" -ge 4 ] && ok || fail "$1: the sandbox's processes are not there"
    kill "-$1" "$pid"
    { wait "$pid"; } 2>/dev/null # not bash's line about the signal
    status=$?
    [ "$status" -eq "$2" ] && ok || fail "$1: sion-sandbox exited $status, want $2"
    no_process_left "$1" "$marker"
    [ -z "$(ls -A "$TMPDIR")" ] && ok || fail "$1: the empty workspace was left: $(ls -A "$TMPDIR")"
}
ends_on TERM 143
ends_on HUP 129

# The parent's death: sion-sandbox's parent is killed, and the sandbox goes with sion-sandbox.
marker="t0130-parent-$$"
rm -f "$scratch/ready"
bash -c 'sion-sandbox run -- sh -c ": $1; echo ready; sleep 600" >"$2" & wait' parent "$marker" "$scratch/ready" &
parent=$!
background+=("$parent")
wait_for "$scratch/ready" || fail "the parent's command did not start"
{ kill -9 "$parent" && wait "$parent"; } 2>/dev/null # not bash's line about the signal
for _ in $(seq 300); do pgrep -f -- "$marker" >/dev/null || break; sleep 0.1; done
no_process_left "the parent's death" "$marker"

# --- the declared network: the proxy beside the command ------------------------------------------
mkdir -p "$work/site" && echo "hello from the host" >"$work/site/index.html"
"$py" - "$work/site" "$scratch/port" <<'PY' 2>/dev/null &
import functools, http.server, sys
handler = functools.partial(http.server.SimpleHTTPRequestHandler, directory=sys.argv[1])
server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
open(sys.argv[2] + ".tmp", "w").write(str(server.server_address[1]))
__import__("os").rename(sys.argv[2] + ".tmp", sys.argv[2])
server.serve_forever()
PY
background+=("$!")
disown "$!"
wait_for "$scratch/port" || fail "the test server did not start"
port=$(cat "$scratch/port")
get='import os, sys, urllib.request
os.environ.pop("NO_PROXY", None); os.environ.pop("no_proxy", None)
for line in sys.stdin:
    try:
        print(urllib.request.urlopen(line.strip(), timeout=10).read().decode().strip(), flush=True)
    except urllib.error.HTTPError as e:
        print("HTTP", e.code, flush=True)'
printf 'http://127.0.0.1:%s/index.html\nhttp://127.0.0.1:%s/\n' "$port" "$((port == 65535 ? port - 1 : port + 1))" >"$scratch/urls"
expect_exit 0 sbx run --network declared --allow-host "127.0.0.1:$port" -- python3 -c "$get" <"$scratch/urls" &&
    expect_out 'hello from the host
HTTP 403'
[ -z "$(ls -A "$TMPDIR")" ] && ok || fail "the proxy's directory was left: $(ls -A "$TMPDIR")"

# --- Docker: the same echo in a container --------------------------------------------------------
if [ "$failures" -ne 0 ]; then # a skip below must not hide a failure above
    done_testing
    exit 1
fi
need_docker
dk=(--backend "docker:$SION_TEST_IMAGE")
docker_echo='echo "echo ready" >&2; while IFS= read -r line; do echo "echo:$line"; done'
echo_through "a busybox line echo in Docker" sion-sandbox run "${dk[@]}" --workspace "$work" -- sh -c "$docker_echo"
expect_exit 0 sbx run "${dk[@]}" --workspace "$work" -- sh -c 'pwd; cat seen.txt; wget -q -O - http://example.com 2>&1 | head -n 1' &&
    expect_out "/workspace
made-outside
wget: bad address 'example.com'"
expect_exit 0 sbx run "${dk[@]}" -- sh -c 'ls -A | wc -l' && expect_out 0
expect_exit 7 sbx run "${dk[@]}" -- sh -c 'exit 7'
[ -z "$(ls -A "$TMPDIR")" ] && ok || fail "Docker: the empty workspace was left: $(ls -A "$TMPDIR")"

# SIGTERM removes the container.
rm -f "$scratch/ready"
sion-sandbox run "${dk[@]}" -- sh -c 'echo ready; sleep 600' >"$scratch/ready" 2>"$scratch/ends.err" &
pid=$!
background+=("$pid")
wait_for "$scratch/ready" || fail "Docker: the command did not start"
# The engine may list the container a moment after its command started.
for _ in $(seq 100); do [ -n "$(docker ps -q --filter label=sion-sandbox)" ] && break; sleep 0.1; done
[ -n "$(docker ps -q --filter label=sion-sandbox)" ] && ok || fail "Docker: no container runs"
kill -TERM "$pid"
wait "$pid"
status=$?
[ "$status" -eq 143 ] && ok || fail "Docker: sion-sandbox exited $status on SIGTERM, want 143"
[ -z "$(docker ps -aq --filter label=sion-sandbox)" ] && ok ||
    fail "Docker: a container is left: $(docker ps -a --filter label=sion-sandbox)"

done_testing
