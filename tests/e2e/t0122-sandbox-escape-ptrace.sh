#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The sandbox's own processes are out of a command's reach though they run as its user: pid 1 (init
# --exec in exec; in serve the reaper, pid 1, and its loop) cannot be ptraced (PTRACE_ATTACH,
# PTRACE_SEIZE), nor its memory, environment or descriptors read through /proc — the extra
# environment's memory file among them. A probe inside tries every process it sees; after it, the
# session goes on. As root, as root with a workspace of a user's (bwrap runs as them), and as that
# user.
. "$(dirname "$0")/lib.sh"

need_bwrap
command -v python3 >/dev/null || skip "python3 is not installed"

# One line per process the probe sees but itself: how each attempt failed, "ok" where one did not.
probe='import ctypes, os
libc = ctypes.CDLL(None, use_errno=True)
libc.ptrace.argtypes = [ctypes.c_long, ctypes.c_long, ctypes.c_void_p, ctypes.c_void_p]
def attempt(f):
    try:
        f()
        return "ok"
    except OSError as e:
        return os.strerror(e.errno)
def trace(request, pid):
    def f():
        if libc.ptrace(request, pid, None, None) != 0:
            raise OSError(ctypes.get_errno(), "ptrace")
        os.kill(pid, 18)
    return attempt(f)
def read(path):
    def f():
        with open(path, "rb") as file:
            file.read(1)
    return attempt(f)
def fds(pid):
    try:
        numbers = [int(n) for n in os.listdir("/proc/%d/fd" % pid)]
    except OSError:
        numbers = range(32)
    got = []
    for n in numbers:
        path = "/proc/%d/fd/%d" % (pid, n)
        for f in (lambda: os.readlink(path), lambda: os.close(os.open(path, os.O_RDONLY))):
            if attempt(f) == "ok":
                got.append(str(n))
    return "ok " + ",".join(got) if got else "denied"
# Those started before it: in serve, the next request may run beside it.
for pid in sorted(int(n) for n in os.listdir("/proc") if n.isdigit() and int(n) < os.getpid()):
    name = os.path.basename(open("/proc/%d/cmdline" % pid, "rb").read().split(b"\0")[0].decode())
    print(pid, name, "attach=" + trace(16, pid), "seize=" + trace(0x4206, pid),
          "mem=" + read("/proc/%d/mem" % pid), "environ=" + read("/proc/%d/environ" % pid),
          "fd=" + fds(pid))'
want='sion-sandbox attach=Operation not permitted seize=Operation not permitted mem=Permission denied environ=Permission denied fd=denied'

# check_probe WHAT PIDS: the probe's output in $scratch/probe has one line per pid of PIDS, each
# with every attempt refused.
check_probe() {
    local pids=$2 got
    got=$(cut -d' ' -f1 "$scratch/probe" | tr '\n' ' ')
    [ "$got" = "$pids " ] && ok || fail "$1: the probe saw pids '$got', want '$pids '"
    while read -r line; do
        [ "${line#* }" = "$want" ] && ok || fail "$1: $line"
    done <"$scratch/probe"
}

# params ARGV...: sandbox/exec's params for ARGV with an extra environment (init --exec reads it
# from a memory file, a descriptor the probe tries too).
params() {
    python3 -c 'import json, sys; print(json.dumps({"argv": sys.argv[1:], "env": {"SECRET": "s3cret"}}))' "$@"
}
req() { printf '{"jsonrpc":"2.0","id":%s,"method":"sandbox/exec","params":%s}\n' "$1" "$2"; }

# attempts WHAT [RUN...]: the probe in exec and in serve, run through RUN (a command prefix).
attempts() {
    local what=$1
    shift
    params python3 -c "$probe" >"$scratch/params"
    expect_exit 0 timeout 60 "$@" sion-sandbox exec --workspace "$work" <"$scratch/params" &&
        cp "$scratch/out" "$scratch/probe" && check_probe "$what, exec" 1
    { req 1 "$(cat "$scratch/params")"; req 2 "$(params sh -c 'echo next $SECRET')"; } >"$scratch/session"
    expect_exit 0 timeout 60 "$@" sion-sandbox serve --workspace "$work" <"$scratch/session"
    # Each answer's exit and stdout in $scratch/answer.ID.
    python3 -c 'import json, sys
for line in open(sys.argv[1]):
    m = json.loads(line)
    with open("%s.%d" % (sys.argv[2], m["id"]), "w") as f:
        f.write("exit %d\n%s" % (m["result"]["exit"], m["result"]["stdout"]))' "$scratch/out" "$scratch/answer"
    expect_grep '^exit 0$' "$scratch/answer.1" && sed 1d "$scratch/answer.1" >"$scratch/probe"
    check_probe "$what, serve" "1 2"
    # pid 1 still runs the session: the next command answers.
    expect_text "$scratch/answer.2" "the next answer" "exit 0
next s3cret"
}

work="$scratch/work"
mkdir -p "$work"
if [ "$(id -u)" -ne 0 ]; then
    attempts "as $(id -un)"
    done_testing
    exit
fi
attempts "as root"
user_workspace "$work" sionptr
attempts "as root, a workspace of $user's"
chown "$user" "$HOME"
attempts "as $user" setpriv --reuid "$user" --regid "$user" --clear-groups

done_testing
