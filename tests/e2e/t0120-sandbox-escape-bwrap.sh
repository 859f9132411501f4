#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The escape suite with bubblewrap (issue 3, "Escape suite"): each attempt fails with the exact error,
# and nothing happened outside. Writing outside /workspace through /proc/self/root, /proc/1/cwd,
# symlinks planted in the workspace and hard links; reading the home, $SION_HOME and /root; ptrace
# and signals to processes outside; unshare and mount inside; the host's loopback under none. The
# write, read and kill attempts run again as a user made here, with a workspace of theirs. Exhausting
# the machine is t0102's.
. "$(dirname "$0")/lib.sh"

need_bwrap
py=/usr/bin/python3
[ -x "$py" ] || skip "$py is missing (Debian package python3)"

# Outside the workspace: a file a command must not change, a directory it must not add to, secrets
# in the home and $SION_HOME; a sleep it must not signal; a server on the host's loopback.
out="$scratch/outside"
mkdir -p "$out" "$SION_HOME"
echo original >"$out/target"
echo home-secret >"$HOME/secret"
echo sion-secret >"$SION_HOME/key"
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
user=
cleanup() {
    kill "$sleeper" "$server" 2>/dev/null
    [ -z "$user" ] || userdel "$user" 2>/dev/null
    rm -rf "$scratch"
}
trap cleanup EXIT
for _ in $(seq 300); do [ -s "$scratch/port" ] && break; sleep 0.1; done
port=$(cat "$scratch/port") || { fail "the test server did not start"; done_testing; exit 1; }

# sbx ARGS...: sion-sandbox exec, each attempt bounded by a small time limit.
sbx() { timeout 60 sion-sandbox exec --timeout 10 "$@"; }

# nothing_outside WHAT: the outside file is unchanged, nothing was added beside it, the sleep lives.
nothing_outside() {
    [ "$(cat "$out/target")" = original ] && ok || fail "$1: $out/target was changed"
    [ "$(ls -A "$out")" = target ] && ok || fail "$1: $out now holds $(ls -A "$out" | tr '\n' ' ')"
    kill -0 "$sleeper" 2>/dev/null && ok || fail "$1: the sleep outside is gone"
}

# attempts WORKSPACE: the write, read and kill attempts, each with its exact failure.
attempts() {
    local ws=$1 who=$2
    ln -sfn "$out/target" "$ws/link"
    ln -sfn "$out" "$ws/dirlink"

    expect_exit 2 sbx --workspace "$ws" -- sh -c "echo x >/proc/self/root$out/target" &&
        expect_err "sh: 1: cannot create /proc/self/root$out/target: Directory nonexistent"
    # /proc/1 is the init, which is not dumpable: its cwd is not even followed.
    expect_exit 2 sbx --workspace "$ws" -- sh -c "echo x >/proc/1/cwd/../..$out/new" &&
        expect_err "sh: 1: cannot create /proc/1/cwd/../..$out/new: Permission denied"
    expect_exit 2 sbx --workspace "$ws" -- sh -c 'echo x >link' &&
        expect_err 'sh: 1: cannot create link: Directory nonexistent'
    expect_exit 2 sbx --workspace "$ws" -- sh -c 'echo x >dirlink/new' &&
        expect_err 'sh: 1: cannot create dirlink/new: Directory nonexistent'
    expect_exit 1 sbx --workspace "$ws" -- ln "$out/target" hard &&
        expect_err "ln: failed to access '$out/target': No such file or directory"
    expect_exit 1 sbx --workspace "$ws" -- ln /proc/self/root/usr/bin/true hard &&
        expect_err "ln: failed to create hard link 'hard' => '/proc/self/root/usr/bin/true': Invalid cross-device link"
    [ -e "$ws/hard" ] && fail "$who: a hard link was made in the workspace" || ok

    expect_exit 1 sbx --workspace "$ws" -- cat "$HOME/secret" &&
        expect_err "cat: $HOME/secret: No such file or directory"
    expect_exit 1 sbx --workspace "$ws" -- cat "$SION_HOME/key" &&
        expect_err "cat: $SION_HOME/key: No such file or directory"
    expect_exit 2 sbx --workspace "$ws" -- ls /root &&
        expect_err "ls: cannot access '/root': No such file or directory"

    expect_exit 1 sbx --workspace "$ws" -- kill "$sleeper" &&
        expect_err "kill: ($sleeper): No such process"
    # kill -9 -1 reaches every process the command may signal: none outside.
    expect_exit 0 sbx --workspace "$ws" -- sh -c 'kill -9 -1 2>/dev/null; echo survived' &&
        expect_out survived
    nothing_outside "$who"
}

work="$scratch/work"
mkdir -p "$work"
attempts "$work" "as $(id -un)"

# ptrace of processes outside: the test's shell (an ancestor of the sandbox) and the sleep are out
# of reach (the sandbox has its own pid namespace), and /proc shows nothing of them.
trace='import ctypes, os, sys
libc = ctypes.CDLL(None, use_errno=True)
for pid in sys.argv[1:]:
    r = libc.ptrace(16, int(pid), 0, 0)  # PTRACE_ATTACH
    print(r, os.strerror(ctypes.get_errno()))'
expect_exit 0 sbx --workspace "$work" -- python3 -c "$trace" "$$" "$sleeper" &&
    expect_out '-1 No such process
-1 No such process'
expect_exit 0 sbx --workspace "$work" -- sh -c "ls /proc/$$ /proc/$sleeper 2>&1 | wc -l; echo end" &&
    expect_out '2
end'
kill -0 "$sleeper" 2>/dev/null && ok || fail "the sleep outside is gone after ptrace"

# ptrace of the sandbox's init, the command's parent (pid 1 in exec): it is not dumpable, so a
# command cannot stop it or change what it reports. In serve the init is the parent of every command.
expect_exit 0 sbx --workspace "$work" -- python3 -c "$trace" 1 && expect_out '-1 Operation not permitted'
printf '%s\n' '{"jsonrpc":"2.0","id":1,"method":"sandbox/exec","params":{"argv":["python3","-c","import ctypes, os\nlibc = ctypes.CDLL(None, use_errno=True)\nr = libc.ptrace(16, os.getppid(), 0, 0)\nprint(r, os.strerror(ctypes.get_errno()))"]}}' |
    expect_exit 0 timeout 60 sion-sandbox serve --workspace "$work" &&
    expect_grep '"stdout":"-1 Operation not permitted\\n"' "$scratch/out"

# No new namespaces, no mounts inside.
expect_exit 1 sbx --workspace "$work" -- unshare -r true &&
    expect_err 'unshare: unshare failed: Operation not permitted'
expect_exit 32 sbx --workspace "$work" -- mount -t tmpfs none /tmp
expect_grep '^mount: /tmp: must be superuser to use mount\.$' "$scratch/err"
expect_exit 32 sbx --workspace "$work" -- mount --bind /workspace /usr
expect_grep '^mount: /usr: must be superuser to use mount\.$' "$scratch/err"

# The network under none: a raw TCP connect to the host's loopback finds nothing.
raw='import socket, sys
try:
    socket.create_connection(("127.0.0.1", int(sys.argv[1])), timeout=5); print("connected")
except OSError as e:
    print(type(e).__name__, e.errno)'
expect_exit 0 sbx --workspace "$work" --network none -- python3 -c "$raw" "$port" &&
    expect_out 'ConnectionRefusedError 111'

# Again as a user made here, whose workspace it is: what they may write outside (the target, its
# directory) and read (the secrets) stays out of reach all the same.
if [ "$(id -u)" -eq 0 ]; then
    command -v useradd >/dev/null || skip "useradd is not installed (Debian package passwd)"
    user="sionesc$$"
    useradd --no-create-home --home-dir /nonexistent --shell /usr/sbin/nologin --user-group "$user" ||
        { fail "cannot create the user $user"; done_testing; exit 1; }
    chmod 711 "$scratch"
    chmod 755 "$HOME" "$SION_HOME"
    chmod 644 "$HOME/secret" "$SION_HOME/key"
    chown -R "$user:$user" "$out"
    mkdir -p "$scratch/userwork" "$scratch/bin"
    chown "$user:$user" "$scratch/userwork"
    cp "$SION_BIN/sion-sandbox" "$scratch/bin/" && chmod 755 "$scratch/bin"
    PATH="$scratch/bin:$PATH" attempts "$scratch/userwork" "as $user"
fi

done_testing
