#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Continuing a session whose earlier run's sandbox still runs (issue 16): sion-run is killed during
# shell "sleep A & sleep B" while its sion-sandbox serve is stopped, so serve never takes the
# parent-death signal and both sleeps go on. --session then ends that sandbox (serve, bwrap and the
# sleeps), says so on one line, and runs its own: its shell command runs, and nothing of the old
# sandbox is left. As root, and as a user. A lock file that names a stranger, by its pid with
# another start time, or in a lock nobody holds, leaves the stranger alone; a lock held by a run
# that still runs refuses the session as running.
#
# A stopped serve whose run dies is sent SIGHUP and SIGCONT by the kernel (its process group is
# orphaned, and has a stopped member), which ends it. Under a reaper of the run's own session
# (tini -s, a supervisor) the group is not orphaned: serve stays stopped, the parent-death SIGTERM
# pending. The runs here start under such a reaper.
. "$(dirname "$0")/lib.sh"

need_bwrap
command -v setpriv >/dev/null || skip "setpriv is not installed (Debian package util-linux)"
command -v flock >/dev/null || skip "flock is not installed (Debian package util-linux)"
command -v pgrep >/dev/null || skip "pgrep is not installed (Debian package procps)"
command -v python3 >/dev/null || skip "python3 is not installed"

# reaper CMD...: runs CMD as the child of a process that reaps its orphans (PR_SET_CHILD_SUBREAPER),
# in this session, until every one has ended.
reaper() {
    exec python3 -c '
import ctypes, os, sys
if ctypes.CDLL(None, use_errno=True).prctl(36, 1, 0, 0, 0) != 0:
    sys.exit("cannot become a subreaper")
if os.fork() == 0:
    os.execvp(sys.argv[1], sys.argv[1:])
try:
    while True:
        os.wait()
except ChildProcessError:
    pass
' "$@"
}

boot=$(cat /proc/sys/kernel/random/boot_id)
# runs PID: PID is a process that has not exited (a zombie has).
runs() {
    local state
    state=$(sed -n 's/^.*) \(.\) .*$/\1/p' "/proc/$1/stat" 2>/dev/null)
    [ -n "$state" ] && [ "$state" != Z ]
}
# name_of PID [START]: the process as the lock file names it, "pid:start:boot".
name_of() { echo "$1:${2:-$(sed 's/^.*) //' "/proc/$1/stat" | cut -d' ' -f20)}:$boot"; }
# tree PID: PID and its descendants, one a line.
tree() {
    local p
    echo "$1"
    for p in $(pgrep -P "$1"); do tree "$p"; done
}
# until_true TRIES CMD...: CMD until it succeeds, TRIES times 0.1 s apart at most.
until_true() {
    local tries=$1 i
    shift
    for ((i = 0; i < tries; i++)); do
        "$@" && return 0
        sleep 0.1
    done
    return 1
}
# At exit, what a failed check left: the old sandbox, the stranger and the lock's holder, each
# known by its name (a pid alone may be another's by then).
left=''
leftovers() {
    local n
    for n in $left; do
        [ "$(name_of "${n%%:*}" 2>/dev/null)" = "$n" ] && kill -9 "${n%%:*}"
    done
}
EXTRA_CLEANUP=leftovers
trap 'leftovers; rm -rf "$scratch"' EXIT
sleeps_run() { [ "$(pgrep -c -f -- "^sleep ($1|$2)\$")" -eq 2 ]; }

# left_running AS HOME WORK A B: as AS (a command prefix, or nothing), under a reaper, starts a
# session in WORK whose shell runs "sleep A & sleep B", stops its sion-sandbox serve once both
# sleeps run, and kills sion-run. Sets $sid, $serve, $old (serve's tree, bwrap and the sleeps
# included) and $reaped (the reaper).
left_running() {
    local as=$1 home=$2 work=$3 a=$4 b=$5 run p
    printf '{"turns": [{"calls": [{"tool": "shell", "input": {"command": "sleep %s & sleep %s"}}]}, {"text": "slept"}]}\n' \
        "$a" "$b" >"$home/sleep.json"
    # shellcheck disable=SC2086 # AS: the words of a command, or none
    reaper $as env HOME="$home" SION_HOME="$home/.sion" sion-run run coder "$agent" --task "Sleep $a" \
        --model "script:$home/sleep.json" --workspace "$work" --shell --autonomy L3 \
        </dev/null >"$scratch/run.out" 2>"$scratch/run.err" &
    reaped=$!
    until_true 600 sleeps_run "$a" "$b" && ok || fail "the sleeps did not start: $(cat "$scratch/run.err")"
    run=$(pgrep -P "$reaped")
    serve=$(pgrep -P "$run" -f '^[^ ]*sion-sandbox serve ')
    [ -n "$serve" ] && ok || fail "sion-run $run has no sion-sandbox serve"
    old=$(tree "$serve")
    for p in $old; do left="$left $(name_of "$p")"; done
    kill -STOP "$serve"
    kill -9 "$run"
    until_true 600 eval '! runs "$run"' && ok || fail "sion-run $run outlived SIGKILL"
    sid=$(sed -n 's/^session \([0-9a-f]\{16\}\) for agent .*$/\1/p' "$scratch/run.out")
    [ -n "$sid" ] && ok || fail "the killed run printed no session line: $(head -n 3 "$scratch/run.out")"
    # The setup: the killed run's sandbox is stopped, not ended, and its sleeps go on.
    [ "$(sed 's/^.*) \(.\) .*$/\1/' "/proc/$serve/stat" 2>&1)" = T ] && ok || fail "serve $serve is not stopped"
    sleeps_run "$a" "$b" && ok || fail "the sleeps ended with the killed run"
}

# continued_ends AS HOME WORK A B WHAT: continues $sid as AS with a shell command, and checks that
# the old sandbox was ended and said so, that nothing of it runs, and that the new command ran.
continued_ends() {
    local as=$1 home=$2 work=$3 a=$4 b=$5 what=$6 p still=
    cat >"$home/again.json" <<'JSON'
{"turns": [{"calls": [{"tool": "shell", "input": {"command": "echo again > again.txt; echo ran again"}}]}, {"text": "again"}]}
JSON
    # shellcheck disable=SC2086 # AS: the words of a command, or none
    expect_exit 0 $as env HOME="$home" SION_HOME="$home/.sion" timeout 120 sion-run run coder "$agent" \
        --task Again --session "$sid" --model "script:$home/again.json" </dev/null &&
        expect_err "sion-run: session $sid's sandbox from an earlier run was still running (pid $serve): ended it"
    expect_grep "^session $sid for agent $agent, continued\$" "$scratch/out"
    expect_grep '^ran again$' "$scratch/out"
    expect_grep "^session $sid: done\$" "$scratch/out"
    [ "$(cat "$work/again.txt" 2>&1)" = again ] && ok || fail "$what: the continued run's command did not write again.txt"
    for p in $old; do runs "$p" && still="$still $p"; done
    [ -z "$still" ] && ok || fail "$what: processes of the old sandbox still run:$still ($(ps -o pid=,args= -p "${still# }" | head -n 5))"
    [ "$(pgrep -c -f -- "^sleep ($a|$b)\$")" -eq 0 ] && ok || fail "$what: a sleep of the old sandbox still runs"
    [ ! -e "$home/.sion/sandboxes/$sid.lock" ] && ok || fail "$what: the session's sandbox lock is left"
    leftovers # what a failed check above left, for the reaper to end
    wait "$reaped"
}

expect_exit 0 sion-run create coder && agent=$(cut -c1-8 "$scratch/out")

# As root.
work="$scratch/work"
mkdir -p "$work"
left_running "" "$HOME" "$work" "91.$$" "92.$$"
continued_ends "" "$HOME" "$work" "91.$$" "92.$$" root

# A stranger the lock file names by its pid with another start time: the lock is held (by flock(1),
# which the file does not name), so the run waits for it, then refuses, and the stranger lives.
lock="$SION_HOME/sandboxes/$sid.lock"
gone="999999999:1:$boot" # no process has that pid
sleep 300 &
stranger=$!
flock -o "$lock" sleep 300 &
holder=$!
until_true 100 eval '! flock -n "$lock" true' && ok || fail "flock(1) did not take the lock"
left="$left $(name_of "$stranger") $(name_of "$holder") $(name_of "$(pgrep -P "$holder")")"
start=$(name_of "$stranger" | cut -d: -f2)
printf '{"run":"%s","sandbox":"%s"}\n' "$gone" "$(name_of "$stranger" $((start + 1)))" >"$lock"
expect_exit 75 timeout 120 sion-run run coder "$agent" --task Refused --session "$sid" --model "script:$HOME/again.json" </dev/null &&
    expect_err "sion-run: session $sid's sandbox from an earlier run is still running: it did not end within 5 s"
runs "$stranger" && ok || fail "the stranger named by its pid was killed"
# Held with a run that still runs named in it: the session is running.
printf '{"run":"%s"}\n' "$(name_of "$stranger")" >"$lock"
expect_exit 75 sion-run run coder "$agent" --task Refused --session "$sid" --model "script:$HOME/again.json" </dev/null &&
    expect_err "sion-run: session $sid is running (pid $stranger)"
pkill -P "$holder" -x sleep
wait "$holder" 2>/dev/null
# Named rightly but not held: a file an earlier run left, and nothing to end.
printf '{"run":"%s","sandbox":"%s"}\n' "$gone" "$(name_of "$stranger")" >"$lock"
rm -f "$work/again.txt"
expect_exit 0 timeout 120 sion-run run coder "$agent" --task Again --session "$sid" --model "script:$HOME/again.json" </dev/null &&
    expect_err ''
[ "$(cat "$work/again.txt" 2>&1)" = again ] && ok || fail "the run after the stranger's did not run its command"
runs "$stranger" && ok || fail "the stranger named in a lock nobody held was killed"
kill "$stranger"
wait "$stranger" 2>/dev/null

# As a user, with their own home and workspace.
user_work="$scratch/user-work"
mkdir -p "$user_work"
user_workspace "$user_work" sionold
user_home="$scratch/user-home"
mkdir -p "$user_home"
chown "$user:$user" "$user_home"
as_user="setpriv --reuid $user --regid $user --clear-groups"
# shellcheck disable=SC2086 # the words of a command
expect_exit 0 $as_user env HOME="$user_home" SION_HOME="$user_home/.sion" sion-run create coder &&
    agent=$(cut -c1-8 "$scratch/out")
left_running "$as_user" "$user_home" "$user_work" "93.$$" "94.$$"
[ "$(stat -c %U "/proc/$serve")" = "$user" ] && ok || fail "the user's serve runs as $(stat -c %U "/proc/$serve")"
continued_ends "$as_user" "$user_home" "$user_work" "93.$$" "94.$$" "as $user"

done_testing
