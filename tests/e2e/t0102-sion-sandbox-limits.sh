#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Limits in exec: a fork bomb, a memory hog, a 10 GB file, an infinite loop and a 1 GB output flood
# each end within small limits with a clear result, and the next command runs normally. The fork
# bomb runs in a workspace of a user's (made here when run by root), where RLIMIT_NPROC binds;
# root's own workspace, bounded by the sandbox's cgroup, is t0106's.
. "$(dirname "$0")/lib.sh"

need_bwrap
command -v python3 >/dev/null || skip "python3 is not installed"
command -v node >/dev/null || skip "node is not installed (Debian package nodejs)"

work="$scratch/work"
mkdir -p "$work"
if [ "$(id -u)" -eq 0 ]; then
    user_workspace "$work" sionlim
fi
cd "$work" || exit 1
limits=(--timeout 3 --cpu 2 --memory 256M --file-size 1M --output 1K)
sbx() { timeout 120 sion-sandbox "$@"; }
next() {
    expect_exit 0 sbx exec "${limits[@]}" -- echo next && expect_out next
}

# Processes: RLIMIT_NPROC (256) holds inside.
# (a child each, up to 300, all killed and reaped before it ends)
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
expect_exit 0 sbx exec --timeout 60 -- python3 -c "$forker"
expect_grep '^fork failed after [0-9]+ Resource temporarily unavailable$' "$scratch/out"
next

# A fork bomb: bounded in number, ended by the wall clock.
expect_exit 124 sbx exec "${limits[@]}" -- sh -c '(bomb() { bomb | bomb & }; bomb) & exec sleep 60'
[ "$(tail -n 1 "$scratch/err")" = 'sion-sandbox: the command ran out of time (3 s) and was killed' ] && ok ||
    fail "the fork bomb's last line is '$(tail -n 1 "$scratch/err")'"
next

# A memory hog: the sandbox's memory cgroup is full and the kernel kills it, said so; where no
# memory cgroup can be made, RLIMIT_DATA refuses its allocation.
expect_exit 0 sbx check
if grep -q '^ok: memory bounded: .* in its own cgroup' "$scratch/out"; then
    expect_exit 137 sbx exec "${limits[@]}" -- python3 -c 'x = bytearray(1 << 30)' &&
        expect_err 'sion-sandbox: out of memory (256 MiB for the sandbox): a process of the command was killed'
    expect_exit 137 sbx exec --json "${limits[@]}" -- python3 -c 'x = bytearray(1 << 30)'
    expect_grep '"signal":9,"timed_out":false,"out_of_memory":true,' "$scratch/out"
else
    expect_grep '^ok: memory bounded: RLIMIT_DATA 4 GiB a process \(no memory cgroup: .+\)$' "$scratch/out"
    expect_exit 1 sbx exec "${limits[@]}" -- python3 -c 'x = bytearray(1 << 30)'
    expect_grep '^MemoryError$' "$scratch/err"
fi
next
# What stays within it is not killed, nor said to have run out: a program that allocates 100 MiB
# and one, Node's fetch(), that reserves far more address space than it uses.
expect_exit 0 sbx exec "${limits[@]}" -- python3 -c 'x = bytearray(100 << 20); print(len(x))' &&
    expect_out 104857600
expect_exit 0 sbx exec "${limits[@]}" -- node -e \
    'fetch("http://127.0.0.1:9/").then(() => console.log("answered"), () => console.log("refused"))'
expect_out refused

# A 10 GB file: cut at 1 MiB by SIGXFSZ.
expect_exit 153 sbx exec "${limits[@]}" -- sh -c 'exec head -c 10G /dev/zero > big' &&
    expect_err 'sion-sandbox: the command was killed by SIGXFSZ (File size limit exceeded)'
[ "$(stat -c %s big)" = 1048576 ] && ok || fail "big is $(stat -c %s big) bytes, want 1048576"
rm -f big
next

# An infinite loop: RLIMIT_CPU's SIGXCPU; one that sleeps: the wall clock.
expect_exit 152 sbx exec "${limits[@]}" --timeout 60 --cpu 1 -- sh -c 'while :; do :; done' &&
    expect_err 'sion-sandbox: the command was killed by SIGXCPU (CPU time limit exceeded)'
expect_exit 124 sbx exec "${limits[@]}" -- sh -c 'while :; do sleep 1; done'
next

# A 1 GB flood of output: 1 KiB kept of it, the rest counted and said.
expect_exit 0 sbx exec --output 1K --timeout 100 -- sh -c 'yes | head -c 1G'
[ "$(head -c 1024 "$scratch/out" | tr -d 'y\n' | wc -c)" = 0 ] && ok || fail "the kept output is not y lines"
[ "$(tail -n 1 "$scratch/out")" = '[... 1073740800 more bytes cut]' ] && ok ||
    fail "the last line is '$(tail -n 1 "$scratch/out")'"
expect_exit 0 sbx exec --json --output 1K --timeout 100 -- sh -c 'yes | head -c 1G >&2'
expect_grep '"stdout":"","stderr":"(y\\n){512}\[... 1073740800 more bytes cut\]\\n","truncated":true' "$scratch/out"
next

done_testing
