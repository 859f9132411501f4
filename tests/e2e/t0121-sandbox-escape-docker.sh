#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The escape suite with the Docker backend, against a real engine started as t0110 does
# (scripts/docker-test-env: no bridge, no iptables, a busybox image by digest): as a user made here
# whose workspace it is, writing outside /workspace (/proc/self/root, /proc/1/cwd, planted symlinks,
# a hard link), reading the home, $SION_HOME and /root, signalling a process outside, unshare and
# mount inside, and the host's loopback under none each fail with the exact error, and nothing
# happened outside. Exhausting the machine is t0110's (fork bomb, time, output).
. "$(dirname "$0")/lib.sh"

command -v useradd >/dev/null || skip "useradd is not installed (Debian package passwd)"
py=/usr/bin/python3
[ -x "$py" ] || skip "$py is missing (Debian package python3)"

user=
sleeper=
server=
EXTRA_CLEANUP='[ -z "$sleeper" ] || kill "$sleeper" 2>/dev/null
[ -z "$server" ] || kill "$server" 2>/dev/null
[ -z "$user" ] || userdel "$user" >/dev/null 2>&1'
need_docker

# Outside: a file of the user's they must not change, a directory of theirs they must not add to,
# secrets they could read; a sleep; a server on the host's loopback.
user="sionescd$$"
useradd --no-create-home --home-dir /nonexistent --shell /usr/sbin/nologin --user-group "$user" ||
    { fail "cannot create the user $user"; done_testing; exit 1; }
out="$scratch/outside"
ws="$scratch/work"
mkdir -p "$out" "$ws" "$SION_HOME"
echo original >"$out/target"
echo home-secret >"$HOME/secret"
echo sion-secret >"$SION_HOME/key"
chown -R "$user:$user" "$out" "$ws"
ln -s "$out/target" "$ws/link"
ln -s "$out" "$ws/dirlink"
sleep 300 &
sleeper=$!
"$py" - "$scratch/port" <<'PY' 2>/dev/null &
import os, socket, sys
s = socket.socket()
s.bind(("127.0.0.1", 0))
s.listen(8)
open(sys.argv[1] + ".tmp", "w").write(str(s.getsockname()[1]))
os.rename(sys.argv[1] + ".tmp", sys.argv[1])
s.settimeout(300)
while True:
    s.accept()[0].close()
PY
server=$!
for _ in $(seq 300); do [ -s "$scratch/port" ] && break; sleep 0.1; done
port=$(cat "$scratch/port") || { fail "the test server did not start"; done_testing; exit 1; }

dk() { timeout 60 sion-sandbox exec --timeout 10 --backend "docker:$SION_TEST_IMAGE" --workspace "$ws" "$@"; }

expect_exit 0 dk -- id -u && expect_out "$(id -u "$user")"
expect_exit 1 dk -- sh -c "echo x >/proc/self/root$out/target" &&
    expect_err "sh: can't create /proc/self/root$out/target: nonexistent directory"
expect_exit 1 dk -- sh -c "echo x >/proc/1/cwd/../..$out/new" &&
    expect_err "sh: can't create /proc/1/cwd/../..$out/new: nonexistent directory"
expect_exit 1 dk -- sh -c 'echo x >link' && expect_err "sh: can't create link: nonexistent directory"
expect_exit 1 dk -- sh -c 'echo x >dirlink/new' && expect_err "sh: can't create dirlink/new: nonexistent directory"
expect_exit 1 dk -- ln "$out/target" hard && expect_err "ln: $out/target: No such file or directory"
[ -e "$ws/hard" ] && fail "a hard link was made in the workspace" || ok

expect_exit 1 dk -- cat "$HOME/secret" && expect_err "cat: can't open '$HOME/secret': No such file or directory"
expect_exit 1 dk -- cat "$SION_HOME/key" && expect_err "cat: can't open '$SION_HOME/key': No such file or directory"
# /root is the image's own, empty one.
expect_exit 0 dk -- ls -A /root && expect_out ''

expect_exit 1 dk -- sh -c "kill $sleeper" && expect_err "sh: can't kill pid $sleeper: No such process"
expect_exit 0 dk -- sh -c 'kill -9 -1 2>/dev/null; echo survived' && expect_out survived

expect_exit 1 dk -- unshare -r true && expect_err 'unshare: unshare(0x10000000): Operation not permitted'
expect_exit 1 dk -- mount -t tmpfs none /tmp && expect_err 'mount: permission denied (are you root?)'

expect_exit 1 dk --network none -- nc 127.0.0.1 "$port" </dev/null &&
    expect_err 'nc: can'\''t connect to remote host (127.0.0.1): Connection refused'

# No set-user-ID file is planted (the seccomp profile), as the workspace's owner or as root; a
# workspace of root's runs as uid 2000010001, idmapped, and what it writes is root's; /proc/sys is
# read-only.
expect_exit 1 dk -- sh -c 'cp /bin/busybox sh2 && chmod 4755 sh2' &&
    expect_err "chmod: sh2: Operation not permitted"
[ "$(stat -c '%u %A' "$ws/sh2")" = "$(id -u "$user") -rwxr-xr-x" ] && ok ||
    fail "sh2 in the user's workspace is $(stat -c '%u %A' "$ws/sh2")"
root_ws="$scratch/root-work"
mkdir -p "$root_ws"
expect_exit 1 timeout 60 sion-sandbox exec --backend "docker:$SION_TEST_IMAGE" --workspace "$root_ws" -- \
    sh -c 'id -u; cp /bin/busybox sh2 && chmod 4755 sh2' &&
    expect_out 2000010001 && expect_err "chmod: sh2: Operation not permitted"
[ "$(stat -c '%u:%g %A' "$root_ws/sh2")" = "0:0 -rwxr-xr-x" ] && ok ||
    fail "sh2 in root's workspace is $(stat -c '%u:%g %A' "$root_ws/sh2")"
expect_exit 0 timeout 60 sion-sandbox exec --backend "docker:$SION_TEST_IMAGE" --workspace "$root_ws" -- \
    sh -c 'echo 7 > /proc/sys/kernel/printk_ratelimit; echo $?' && expect_out 1
[ -z "$(ls -A /run/sion-sandbox 2>/dev/null)" ] && ok || fail "mounts are left in /run/sion-sandbox"

[ "$(cat "$out/target")" = original ] && ok || fail "$out/target was changed"
[ "$(ls -A "$out")" = target ] && ok || fail "$out now holds $(ls -A "$out" | tr '\n' ' ')"
kill -0 "$sleeper" 2>/dev/null && ok || fail "the sleep outside is gone"
docker ps -q --filter label=sion-sandbox >"$scratch/ps" 2>&1
[ -s "$scratch/ps" ] && fail "containers labelled sion-sandbox still run" || ok

done_testing
