#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The number of a command's processes is bounded as root too: each sandbox in a cgroup of its own
# with pids.max 256, made and removed by sion-sandbox, where the cgroup hierarchy is writable;
# RLIMIT_NPROC for a user who cannot write it, and for root's commands without one (they run as uid
# 2000010001). A fork bomb and a counted fork loop end within the bound with a clear result, in exec
# and in serve, and the next command runs; no cgroup is left. `check` says which bound holds.
. "$(dirname "$0")/lib.sh"

need_bwrap
command -v python3 >/dev/null || skip "python3 is not installed"
[ "$(id -u)" -eq 0 ] || skip "the bounds as root and as a user made here need root (CI runs as root)"
command -v setpriv >/dev/null || skip "setpriv is not installed (Debian package util-linux)"

# A child each, up to 300, all killed and reaped before it ends.
forker='import os, signal
pids = []
try:
    for _ in range(300):
        pid = os.fork()
        if pid == 0:
            signal.pause()
            os._exit(0)
        pids.append(pid)
    print("forked 300")
except OSError as e:
    print("fork failed after", len(pids), e.strerror)
for pid in pids:
    os.kill(pid, signal.SIGKILL)
for pid in pids:
    os.waitpid(pid, 0)'
# The bomb in a subshell: the shell that the time limit ends forks once, before the bomb, so it
# never meets the bound itself (dash ends with 2 at a fork that fails).
bomb='(bomb() { bomb | bomb & }; bomb) & exec sleep 60'

# The sandboxes' cgroups of the whole machine: sion-sandbox-PID-N directories of any hierarchy.
cgroups() { find /sys/fs/cgroup -mindepth 1 -maxdepth 6 -type d -name 'sion-sandbox-*' 2>/dev/null | sort; }
before=$(cgroups)

# bounded WHAT [RUN...]: the fork loop and the bomb in exec and in serve, each followed by a
# command that runs normally.
bounded() {
    local what=$1
    shift
    expect_exit 0 timeout 120 "$@" sion-sandbox exec --workspace "$work" -- python3 -c "$forker" &&
        expect_grep '^fork failed after [0-9]+ Resource temporarily unavailable$' "$scratch/out"
    expect_exit 124 timeout 120 "$@" sion-sandbox exec --workspace "$work" --timeout 3 -- sh -c "$bomb"
    [ "$(tail -n 1 "$scratch/err")" = 'sion-sandbox: the command ran out of time (3 s) and was killed' ] &&
        ok || fail "$what: the bomb's last line is '$(tail -n 1 "$scratch/err")'"
    expect_exit 0 timeout 60 "$@" sion-sandbox exec --workspace "$work" -- echo next && expect_out next
    # One request at a time: run side by side they share the sandbox's bound, and the bomb's own
    # shell may find no process left to fork (exit 2, not the time limit).
    expect_exit 0 timeout 120 python3 - "$forker" "$bomb" "$@" sion-sandbox serve --workspace "$work" <<'PY'
import json, subprocess, sys
serve = subprocess.Popen(sys.argv[3:], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
for i, params in enumerate([{"argv": ["python3", "-c", sys.argv[1]]},
                            {"command": sys.argv[2], "timeout": 3},
                            {"argv": ["echo", "next"]}], 1):
    serve.stdin.write(json.dumps({"jsonrpc": "2.0", "id": i, "method": "sandbox/exec",
                                  "params": params}) + "\n")
    serve.stdin.flush()
    sys.stdout.write(serve.stdout.readline())
serve.stdin.close()
sys.stdout.write(serve.stdout.read())
sys.exit(serve.wait())
PY
    expect_grep '^\{"jsonrpc":"2.0","id":1,"result":\{"exit":0,"signal":null,"timed_out":false,"stdout":"fork failed after [0-9]+ Resource temporarily unavailable\\n"' "$scratch/out"
    expect_grep '^\{"jsonrpc":"2.0","id":2,"result":\{"exit":124,"signal":9,"timed_out":true,' "$scratch/out"
    expect_grep '^\{"jsonrpc":"2.0","id":3,"result":\{"exit":0,"signal":null,"timed_out":false,"stdout":"next\\n"' "$scratch/out"
}

# As root, with a workspace of root's: RLIMIT_NPROC does not bind, the cgroup does.
work="$scratch/work"
mkdir -p "$work"
expect_exit 0 sion-sandbox check --workspace "$work"
expect_grep "^ok: processes bounded: pids\.max 256 in each sandbox's own cgroup beneath /sys/fs/cgroup[^ ]* \(cgroup v[12]\)$" "$scratch/out"
bounded "as root"

# While a command runs its sandbox is in a cgroup of its own, with pids.max 256, removed after;
# one left by a sion-sandbox that was killed goes with the next sandbox.
# in_cgroup MARKER: the pids cgroup of the init whose command line holds MARKER, once it runs
# (with cgroup v1 its memory cgroup is another, in the memory hierarchy).
# (On a loaded machine the init may be seen a moment before it has joined: it is looked for again.)
in_cgroup() {
    local init= dir
    for _ in $(seq 100); do
        init=$(pgrep -f -- "init --exec .*$1" | head -n 1)
        if [ -n "$init" ]; then
            for dir in $(cgroups); do
                [ -e "$dir/pids.max" ] || continue
                grep -qx "$init" "$dir/cgroup.procs" 2>/dev/null && { echo "$dir"; return; }
            done
        fi
        sleep 0.1
    done
}
marker="t0106-$$"
timeout 60 sion-sandbox exec --workspace "$work" -- sh -c "sleep 2 # $marker" >/dev/null 2>&1 &
runner=$!
cgroup=$(in_cgroup "$marker")
[ -n "$cgroup" ] && ok || fail "the running command is in no sion-sandbox cgroup"
[ -n "$cgroup" ] && [ "$(cat "$cgroup/pids.max")" = 256 ] && ok || fail "pids.max of '$cgroup' is not 256"
wait "$runner"
[ -n "$cgroup" ] && [ ! -e "$cgroup" ] && ok || fail "the cgroup '$cgroup' is left after the command"
timeout 60 sion-sandbox exec --workspace "$work" -- sh -c "sleep 30 # $marker-killed" >/dev/null 2>&1 &
runner=$!
cgroup=$(in_cgroup "$marker-killed")
[ -n "$cgroup" ] && ok || fail "the running command is in no sion-sandbox cgroup"
pkill -KILL -f -- "^sion-sandbox exec --workspace $work -- sh -c sleep 30 # $marker-killed"
wait "$runner"
expect_exit 0 sion-sandbox exec --workspace "$work" -- true
[ -n "$cgroup" ] && [ ! -e "$cgroup" ] && ok || fail "the killed sion-sandbox's cgroup '$cgroup' is left"

# As a user made here, who cannot write the hierarchy: RLIMIT_NPROC.
user_workspace "$work" sionproc
chown "$user" "$HOME"
as_user=(setpriv --reuid "$user" --regid "$user" --clear-groups)
expect_exit 0 "${as_user[@]}" sion-sandbox check --workspace "$work"
expect_grep "^ok: processes bounded: RLIMIT_NPROC 256 for uid $(id -u "$user"), who runs bwrap \(no cgroup: .+\)$" "$scratch/out"
bounded "as $user" "${as_user[@]}"

# As root with the cgroups out of sight (a mount namespace with nothing on /sys/fs/cgroup) and a
# workspace of root's: bwrap runs as uid 2000010001, never root, so RLIMIT_NPROC binds.
work="$scratch/root-work"
mkdir -p "$work"
if command -v unshare >/dev/null && unshare -m true 2>/dev/null; then
    # (unshare's mounts are private: the cgroups stay mounted outside)
    no_cgroups=(unshare -m sh -c 'umount -R /sys/fs/cgroup && exec "$@"' sh)
    expect_exit 0 "${no_cgroups[@]}" sion-sandbox check --workspace "$work"
    expect_grep "^ok: processes bounded: RLIMIT_NPROC 256 for uid 2000010001, who runs bwrap \(no cgroup: no cgroup hierarchy has the pids controller\)$" "$scratch/out"
    bounded "as root without cgroups" "${no_cgroups[@]}"
else
    fail "unshare -m cannot make a mount namespace here"
fi

# Every cgroup made here is gone. One whose sion-sandbox still runs is another test's (ctest -j):
# a sion-sandbox removes its cgroup before it exits, so a cgroup seen after its PID is gone is left.
left=
for dir in $(comm -13 <(echo "$before") <(cgroups)); do
    pid=${dir##*/sion-sandbox-}
    pid=${pid%-*}
    kill -0 "$pid" 2>/dev/null || [ ! -e "$dir" ] || left="$left $dir"
done
[ -z "$left" ] && ok || fail "cgroups are left:$left"

done_testing
