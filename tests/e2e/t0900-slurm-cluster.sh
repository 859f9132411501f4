#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The single-node Slurm cluster of tests/slurm/cluster.sh does what sion-route eval --on slurm relies
# on: it listens on 127.0.0.1 only; a job array's tasks each run once with SLURM_ARRAY_TASK_ID and the
# variables given with --export; one task cancelled mid-run (JOB_N) ends alone, writing nothing; an
# array cancelled whole leaves no task running; a job past its --time is killed by Slurm; stop leaves
# no daemon behind. Bounded: each wait has at most 120 seconds, the whole suite takes about 100.
. "$(dirname "$0")/lib.sh"
[ "$(id -u)" -eq 0 ] || skip "slurmd needs root: the Slurm suites run as root (CI does)"

cluster="$SION_SOURCE_DIR/tests/slurm/cluster.sh"
slurm="$scratch/slurm"
trap '"$cluster" stop "$slurm" >/dev/null 2>&1; rm -rf "$scratch"' EXIT
code=0
"$cluster" start "$slurm" 2>"$scratch/cluster.err" || code=$?
if [ "$code" -eq 125 ]; then
    skip "$(head -n 1 "$scratch/cluster.err")"
elif [ "$code" -ne 0 ]; then
    cat "$scratch/cluster.err" >&2
    fail "cluster.sh start exited $code"
    done_testing
    exit 1
fi
ok
set -a
. "$slurm/env"
set +a
[ "$SLURM_CONF" = "$slurm/slurm.conf" ] && ok || fail "DIR/env gives SLURM_CONF=$SLURM_CONF"
[ "$(stat -c %a "$slurm")" = 700 ] && ok || fail "the cluster's directory is not 0700"
jobs="$scratch/jobs"
mkdir -p "$jobs"
cd "$jobs" || exit 1 # where a job writes what is not named, and its default slurm-%A_%a.out

# gone JOB: squeue lists no task of JOB (pending, running or completing). A squeue that fails is
# not an answer, unless it says the job is unknown (its record purged).
gone() {
    local out
    if ! out=$(timeout 20 squeue -h -j "$1" 2>"$scratch/squeue.err"); then
        grep -q 'Invalid job id' "$scratch/squeue.err"
        return
    fi
    [ -z "$out" ]
}

# wait_for SECONDS CHECK...: polls CHECK until it succeeds, for at most SECONDS.
wait_for() {
    local end=$((SECONDS + $1))
    shift
    until "$@"; do
        [ "$SECONDS" -lt "$end" ] || return 1
        sleep 0.5
    done
}

# running PID: the process exists and is not a zombie.
running() {
    local stat
    stat=$(cat "/proc/$1/stat" 2>/dev/null) || return 1
    stat=${stat##*) }
    [ "${stat%% *}" != Z ]
}

# submit NAME SBATCH-ARGS...: sbatch --parsable, the job's id in ${NAME}.
submit() {
    local name=$1 id
    shift
    if id=$(timeout 30 sbatch --parsable "$@" 2>"$scratch/sbatch.err") && [[ $id =~ ^[0-9]+$ ]]; then
        ok
        printf -v "$name" %s "$id"
    else
        fail "sbatch $* did not give a job id: $id $(cat "$scratch/sbatch.err")"
        done_testing
        exit 1
    fi
}

# Both daemons listen on 127.0.0.1 and nowhere else (/proc/net/tcp: LISTEN is 0A, 127.0.0.1 is
# 0100007F; nothing on tcp6).
for key in SlurmctldPort SlurmdPort; do
    port=$(sed -n "s/^$key=//p" "$SLURM_CONF")
    hex=$(printf ':%04X' "$port")
    addrs=$(awk -v p="$hex" '$4 == "0A" && substr($2, length($2) - 4) == p { print $2 }' /proc/net/tcp /proc/net/tcp6)
    [ "$addrs" = "0100007F$hex" ] && ok || fail "$key $port listens on '$addrs', want 127.0.0.1 alone"
done

# Started first, as it runs longest, on a core of its own while the arrays run on the others: Slurm
# checks time limits every 30 seconds, so a job of --time=1 (the least, one minute) is killed 60 to 90
# seconds after it starts. With one core it would hold the arrays back: it starts after them then.
submit_limited() {
    submit limited --time=1 -o "$jobs/limit.txt" --wrap "echo started; sleep 300 && echo late >$jobs/limit-late"
}
[ "$(nproc)" -lt 2 ] || submit_limited

# An array of 4: each task once, with its index and the variable given with --export.
submit array --array=0-3 --export="ALL,SION_SLURM_PROBE=probe $$" -o "$jobs/out-%a.txt" \
    --wrap "printf 'task %s %s\n' \"\$SLURM_ARRAY_TASK_ID\" \"\$SION_SLURM_PROBE\" >>$jobs/result-\$SLURM_ARRAY_TASK_ID"
wait_for 120 gone "$array" && ok || fail "the array $array is still queued after 120 seconds"
for i in 0 1 2 3; do
    expect_text "$jobs/result-$i" "result of task $i" "task $i probe $$"
    [ -e "$jobs/out-$i.txt" ] && ok || fail "no output file out-$i.txt of task $i"
done
[ "$(find "$jobs" -name 'result-*' | wc -l)" -eq 4 ] && ok || fail "more than 4 results: $(ls "$jobs")"

# One task of an array cancelled once it runs: that task alone ends, and writes no result. Slurm
# signals a task's processes one by one: its shell may run on a moment after the sleep it waits for
# is killed, so each writes its result only when what it ran succeeded, as a job's script must.
submit partial --array=0-3 -o "$jobs/p-out-%a.txt" --wrap "touch $jobs/p-started-\$SLURM_ARRAY_TASK_ID
{ [ \"\$SLURM_ARRAY_TASK_ID\" != 2 ] || sleep 300; } && touch $jobs/p-result-\$SLURM_ARRAY_TASK_ID"
wait_for 120 test -e "$jobs/p-started-2" && ok || fail "task 2 of $partial did not start in 120 seconds"
expect_exit 0 timeout 30 scancel "${partial}_2"
wait_for 120 gone "$partial" && ok || fail "the array $partial is still queued after 120 seconds"
for i in 0 1 3; do
    [ -e "$jobs/p-result-$i" ] && ok || fail "task $i of $partial did not finish"
done
[ ! -e "$jobs/p-result-2" ] && ok || fail "the cancelled task 2 of $partial wrote its result"
expect_grep "CANCELLED" "$jobs/p-out-2.txt"

# A whole array cancelled mid-run: nothing of it is left queued or running within 30 seconds, neither
# a task's shell nor what it started.
submit whole --array=0-3 -o "$jobs/w-out-%a.txt" --wrap "sleep 300 & echo \$\$ \$! >$jobs/w-pids-\$SLURM_ARRAY_TASK_ID
wait \$! && touch $jobs/w-result-\$SLURM_ARRAY_TASK_ID"
wait_for 120 test -s "$jobs/w-pids-0" && ok || fail "task 0 of $whole did not start in 120 seconds"
expect_exit 0 timeout 30 scancel "$whole"
wait_for 30 gone "$whole" && ok || fail "the array $whole is still queued 30 seconds after scancel"
for f in "$jobs"/w-pids-*; do
    for pid in $(cat "$f"); do
        if running "$pid"; then fail "$(cat "/proc/$pid/comm") $pid of task ${f##*-} of $whole still runs"; else ok; fi
    done
done
[ -z "$(find "$jobs" -name 'w-result-*')" ] && ok || fail "a task of the cancelled $whole wrote its result"

# The job past its --time: killed by Slurm within 120 seconds of its start, not run to its end.
[ "$(nproc)" -ge 2 ] || submit_limited
wait_for 120 gone "$limited" && ok || fail "the job $limited of --time=1 still runs after 120 seconds"
expect_exit 0 timeout 20 squeue -h -j "$limited" -t all -o %T
expect_out TIMEOUT
expect_grep "DUE TO TIME LIMIT" "$jobs/limit.txt"
[ ! -e "$jobs/limit-late" ] && ok || fail "the job $limited of --time=1 ran to its end"

# stop ends every daemon it started, and a second stop has nothing to do.
pids=$(cat "$slurm/slurmctld.pid" "$slurm/slurmd.pid" "$slurm/munged.pid")
expect_exit 0 "$cluster" stop "$slurm"
for pid in $pids; do
    if running "$pid"; then fail "$(cat "/proc/$pid/comm") $pid still runs after stop"; else ok; fi
done
expect_exit 0 "$cluster" stop "$slurm"
[ ! -e "$slurm/env" ] && ok || fail "stop left DIR/env"

done_testing
