#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# No sandboxed command acts as host root (issue 16, finding 1), whoever runs sion-sandbox and whoever
# owns the workspace: as root with a workspace of root's, as root with a user's, and as a user with
# their own. In each, in exec and in serve:
#   - a command's processes have a host uid that is not 0 (2000010001 as root, the user's own);
#   - /proc/sys is read-only: printk_ratelimit keeps the host's value, core_pattern does not open
#     for writing;
#   - a shell copied into the workspace cannot be made set-user-ID or set-group-ID, and no file the
#     command leaves there has either bit, while files come out as the workspace owner's;
# and the seccomp filter refuses a set-user-ID or set-group-ID bit by every call that sets a mode,
# and the kernel's dangerous calls, with EPERM (clone3 and openat2 with ENOSYS), while the same
# calls without the bits work.
. "$(dirname "$0")/lib.sh"

need_bwrap
py=/usr/bin/python3
[ -x "$py" ] || skip "$py is missing (Debian package python3)"
[ "$(id -u)" -eq 0 ] || skip "the three cases need root to make a user (CI runs as root)"
command -v setpriv >/dev/null || skip "setpriv is not installed (Debian package util-linux)"
[ "$(uname -m)" = x86_64 ] || skip "the system call numbers below are x86_64's"

printk=/proc/sys/kernel/printk_ratelimit
printk_before=$(cat "$printk")

# The reproductions, as the issue gives them.
attack='echo 7 > /proc/sys/kernel/printk_ratelimit 2>&1; echo "printk=$?"
( : >> /proc/sys/kernel/core_pattern ) 2>/dev/null; echo "core_pattern=$?"
cp /bin/bash rootbash && chmod 4755 rootbash; echo "chmod=$?"
chmod 2755 rootbash; echo "chmod g=$?"
echo made > made.txt'

# Every call that sets a mode, with and without the bits, and the refused calls. Prints one line a
# call: the call, then its errno name or "ok".
calls='import ctypes, errno, os
libc = ctypes.CDLL(None, use_errno=True)
def sys(name, nr, *args):
    r = libc.syscall(nr, *args)
    print(name, "ok" if r >= 0 else errno.errorcode[ctypes.get_errno()])
    if r >= 0 and name.startswith(("open", "creat")):
        os.close(r)
AT = -100
O_CREAT, O_WRONLY, O_TMPFILE = 0o100, 0o1, 0o20200000
b = lambda s: s.encode()
open("f", "w").close()
fd = os.open("f", os.O_RDONLY)
for mode in (0o4755, 0o2755, 0o755):
    m = "%o" % mode
    sys("chmod " + m, 90, b("f"), mode)
    sys("fchmod " + m, 91, fd, mode)
    sys("fchmodat " + m, 268, AT, b("f"), mode)
    sys("fchmodat2 " + m, 452, AT, b("f"), mode, 0)
    sys("open " + m, 2, b("o" + m), O_CREAT | O_WRONLY, mode)
    sys("openat " + m, 257, AT, b("a" + m), O_CREAT | O_WRONLY, mode)
    sys("openat tmpfile " + m, 257, AT, b("."), O_TMPFILE | O_WRONLY, mode)
    sys("creat " + m, 85, b("c" + m), mode)
    sys("mkdir " + m, 83, b("d" + m), mode)
    sys("mkdirat " + m, 258, AT, b("e" + m), mode)
    sys("mknod " + m, 133, b("n" + m), 0o100000 | mode, 0)
    sys("mknodat " + m, 259, AT, b("m" + m), 0o100000 | mode, 0)
for name, nr in (("keyctl", 250), ("add_key", 248), ("request_key", 249), ("bpf", 321),
                 ("perf_event_open", 298), ("userfaultfd", 323), ("kexec_load", 246),
                 ("mount", 165), ("umount2", 166), ("pivot_root", 155), ("fsopen", 430),
                 ("open_tree", 428), ("move_mount", 429), ("mount_setattr", 442),
                 ("open_by_handle_at", 304), ("name_to_handle_at", 303), ("unshare", 272),
                 ("setns", 308), ("io_uring_setup", 425), ("init_module", 175),
                 ("reboot", 169), ("swapon", 167), ("acct", 163), ("clone3", 435),
                 ("openat2", 437)):
    sys(name, nr, 0, 0, 0, 0, 0)
sys("clone newuser", 56, 0x10000000 | 17, 0, 0, 0, 0)'

# What the filter answers for `calls`, set bits first.
calls_want() {
    local m
    for m in 4755 2755; do
        for c in chmod fchmod fchmodat fchmodat2 open openat "openat tmpfile" creat mkdir mkdirat mknod mknodat; do
            echo "$c $m EPERM"
        done
    done
    for c in chmod fchmod fchmodat fchmodat2 open openat "openat tmpfile" creat mkdir mkdirat mknod mknodat; do
        echo "$c 755 ok"
    done
    for c in keyctl add_key request_key bpf perf_event_open userfaultfd kexec_load mount umount2 \
        pivot_root fsopen open_tree move_mount mount_setattr open_by_handle_at name_to_handle_at \
        unshare setns io_uring_setup init_module reboot swapon acct; do
        echo "$c EPERM"
    done
    echo "clone3 ENOSYS"
    echo "openat2 ENOSYS"
    echo "clone newuser EPERM"
}
want_calls=$(calls_want)

# The host uid of the process whose whole command line is PATTERN (a regular expression), once it
# runs.
host_uid_of() {
    local pid i
    for i in $(seq 1 200); do
        pid=$(pgrep -f -- "$1" | head -n 1)
        if [ -n "$pid" ]; then
            awk '/^Uid:/ { print $2 }' "/proc/$pid/status" 2>/dev/null && return
        fi
        sleep 0.05
    done
    echo none
}

# mode_of FILE: its owner, group and permissions, as ls shows them.
mode_of() { stat -c '%u:%g %A' "$1"; }

# case_of WHAT WORK OWNER HOST_UID [RUN...]: the checks for one case, sion-sandbox run as RUN says.
case_of() {
    local what=$1 work=$2 owner=$3 want_uid=$4
    shift 4
    # The command's processes: never host uid 0. A sleep of a length no other process has.
    local length="30.$RANDOM$RANDOM"
    "$@" sion-sandbox exec --workspace "$work" --timeout 60 -- sleep "$length" >/dev/null 2>&1 &
    local sbx=$!
    local got
    got=$(host_uid_of "^sleep ${length/./\\.}\$")
    pkill -f -- "^sleep ${length/./\\.}\$" 2>/dev/null
    wait "$sbx" 2>/dev/null
    [ "$got" = "$want_uid" ] && ok || fail "$what: the command ran as host uid $got, want $want_uid"

    expect_exit 0 "$@" sion-sandbox exec --workspace "$work" -- sh -c "$attack" &&
        expect_out "printk=2
core_pattern=2
chmod=1
chmod g=1"
    expect_grep '^sh: 1: cannot create /proc/sys/kernel/printk_ratelimit: Read-only file system$' "$scratch/err"
    expect_grep "^chmod: changing permissions of 'rootbash': Operation not permitted$" "$scratch/err"
    [ "$(cat "$printk")" = "$printk_before" ] && ok || fail "$what: printk_ratelimit changed"
    [ "$(mode_of "$work/rootbash")" = "$owner -rwxr-xr-x" ] && ok ||
        fail "$what: rootbash is $(mode_of "$work/rootbash"), want $owner -rwxr-xr-x"
    [ "$(mode_of "$work/made.txt")" = "$owner -rw-r--r--" ] && ok ||
        fail "$what: made.txt is $(mode_of "$work/made.txt"), want $owner -rw-r--r--"
    # serve: the same through the warm sandbox.
    printf '%s\n' "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"sandbox/exec\",\"params\":{\"command\":\"chmod 4755 rootbash; echo chmod=\$?; echo 7 > $printk; echo printk=\$?\"}}" |
        expect_exit 0 timeout 60 "$@" sion-sandbox serve --workspace "$work" &&
        expect_grep '"stdout":"chmod=1\\nprintk=2\\n"' "$scratch/out"
    [ "$(mode_of "$work/rootbash")" = "$owner -rwxr-xr-x" ] && ok || fail "$what: serve made rootbash set-user-ID"

    expect_exit 0 "$@" sion-sandbox exec --workspace "$work" -- "$py" -c "$calls" &&
        expect_out "$want_calls"
    local left
    left=$(find "$work" -perm /6000 | head -n 3)
    [ -z "$left" ] && ok || fail "$what: set-id files left in the workspace: $left"
}

# As root, a workspace of root's.
root_work="$scratch/root-work"
mkdir -p "$root_work"
case_of "root's workspace" "$root_work" 0:0 2000010001

# As root, a workspace of a user's made here.
work="$scratch/work"
mkdir -p "$work"
user_workspace "$work" sionroot
case_of "a user's workspace" "$work" "$(id -u "$user"):$(id -g "$user")" 2000010001

# As that user, with their own workspace.
rm -rf "${work:?}"/*
chown "$user" "$HOME"
case_of "run by a user" "$work" "$(id -u "$user"):$(id -g "$user")" "$(id -u "$user")" \
    setpriv --reuid "$user" --regid "$user" --clear-groups

# A session's shell tool, as root with a workspace of root's: the same refusals reach the model.
cat >"$scratch/model.json" <<'JSON'
{"turns": [
  {"calls": [{"tool": "shell", "input": {"command": "cp /bin/bash rootbash && chmod 4755 rootbash; echo chmod=$?; echo 7 > /proc/sys/kernel/printk_ratelimit; echo printk=$?"}}]},
  {"text": "done"}
]}
JSON
session_work="$scratch/session-work"
mkdir -p "$session_work"
id=$(sion agent create coder) && ok || fail "sion agent create coder"
expect_exit 0 sion agent run coder "${id:0:8}" --task 'Plant a shell.' --model "script:$scratch/model.json" \
    --workspace "$session_work" --shell --autonomy L3 &&
    expect_grep '^chmod=1$' "$scratch/out" && expect_grep '^printk=2$' "$scratch/out" &&
    expect_grep "^chmod: changing permissions of 'rootbash': Operation not permitted$" "$scratch/out"
[ "$(mode_of "$session_work/rootbash")" = "0:0 -rwxr-xr-x" ] && ok ||
    fail "the session's rootbash is $(mode_of "$session_work/rootbash")"
[ "$(cat "$printk")" = "$printk_before" ] && ok || fail "the session changed printk_ratelimit"

done_testing
