#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# A single-node Slurm cluster of its own on 127.0.0.1, for the suites that submit jobs to one (t09xx).
#
#   tests/slurm/cluster.sh start DIR     then: set -a; . DIR/env; set +a   (SLURM_CONF=DIR/slurm.conf)
#   tests/slurm/cluster.sh stop DIR
#
# start makes DIR (0700), stops a cluster already running from DIR, and runs, every file of theirs
# under DIR:
#   - a munged of its own, with a key made for it and its socket in DIR/munge (AuthInfo=socket=...),
#     so that two clusters never share, start or stop each other's munged and a system munged (if
#     any) is neither used nor touched;
#   - slurmctld -c and slurmd -c, on two ports free on 127.0.0.1 when it starts, with DIR/slurm.conf:
#     one node named after the short host name with CPUs=$(nproc), one partition "debug" (Default);
# then waits, at most 60 seconds, for sinfo to show the node idle, and writes DIR/env, the one line
# SLURM_CONF=DIR/slurm.conf that every Slurm command (sbatch, squeue, scancel, sinfo) needs. The
# daemons stay in the caller's process group, so a test killed with its group takes them along.
#
# Where they listen: slurmctld and slurmd bind 127.0.0.1 only (SlurmctldHost=NAME(127.0.0.1),
# NodeAddr=127.0.0.1, CommunicationParameters=NoCtldInAddrAny,NoInAddrAny) and munged has a Unix
# socket only. Nothing of a batch job listens. What Slurm has no setting to bind: srun's ephemeral
# ports (the suites use sbatch) are on the address the host's name resolves to, 127.0.0.1 where
# /etc/hosts says so, as on the test machines.
#
# stop cancels every job, waits for them to end (KillWait=5: TERM, then KILL five seconds later),
# stops slurmd, slurmctld and munged by the pids kept in DIR (TERM, then KILL after 20 seconds),
# kills what is left of a job step of this cluster's, and never fails when they are already gone.
#
# Exit status: 0 ok; 64 usage; 69 the cluster did not come up (one line on stderr, then the logs'
# last lines); 77 not root (slurmd runs jobs as their users); 125 Slurm or munge is not installed
# (Debian's slurm-wlm and munge; scripts/install-deps --test installs them, so CI has them).
set -euo pipefail

prog=cluster.sh
die() { # die CODE MESSAGE [LOG...]: the reason, then each log's last lines; stops what start started
    local code=$1 log
    printf '%s: %s\n' "$prog" "$2" >&2
    shift 2
    for log in "$@"; do
        [ -s "$log" ] || continue
        printf '  %s:\n' "${log##*/}" >&2
        tail -n 15 "$log" | sed 's/^/  | /' >&2
    done
    [ -z "${started:-}" ] || stop_all
    exit "$code"
}
usage() { die 64 "usage: $prog start DIR | stop DIR"; }

[ $# -eq 2 ] || usage
case $1 in start | stop) verb=$1 ;; *) usage ;; esac
[ -n "$2" ] || usage
if [ "$verb" = stop ] && [ ! -d "$2" ]; then
    exit 0
fi
mkdir -p "$2"
chmod 700 "$2"
dir=$(cd "$2" && pwd -P)
conf=$dir/slurm.conf
export SLURM_CONF=$conf

# The pids of the programs started here are kept as DIR/NAME.pid ($! of each, run in the foreground);
# the files the daemons write themselves are in DIR/run, where a daemon that writes its own while it
# starts cannot make ours look empty.
running() { # running PID: it exists and is not a zombie waiting for an init that reaps slowly
    local stat
    stat=$(cat "/proc/$1/stat" 2>/dev/null) || return 1
    stat=${stat##*) }
    [ "${stat%% *}" != Z ]
}

alive() { # alive NAME: the process whose pid is in $dir/NAME.pid runs, and is NAME (not a pid reused)
    local pid
    [ -s "$dir/$1.pid" ] || return 1
    pid=$(cat "$dir/$1.pid")
    running "$pid" && [ "$(cat "/proc/$pid/comm" 2>/dev/null)" = "$1" ]
}

stop_one() { # stop_one NAME: SIGTERM, up to 20 s, then SIGKILL
    local pid i
    if alive "$1"; then
        pid=$(cat "$dir/$1.pid")
        kill -TERM "$pid" 2>/dev/null || true
        for ((i = 0; i < 200; i++)); do
            running "$pid" || break
            sleep 0.1
        done
        kill -KILL "$pid" 2>/dev/null || true
    fi
    rm -f "$dir/$1.pid"
}

cancel_jobs() { # every job, then up to 20 s for them to leave the queue (KillWait=5)
    local ids i
    ids=$(timeout 15 squeue -h -o %F 2>/dev/null | sort -u) || return 0
    [ -n "$ids" ] || return 0
    # shellcheck disable=SC2086 # one job id a word
    timeout 15 scancel $ids 2>/dev/null || true
    for ((i = 0; i < 100; i++)); do
        ids=$(timeout 15 squeue -h -o %i 2>/dev/null) || return 0
        [ -n "$ids" ] || return 0
        sleep 0.2
    done
}

kill_steps() { # a slurmstepd of this cluster's outlives slurmd when a job could not be cancelled:
    local pid sid # its session (the job's processes) goes with it
    for pid in $(pgrep -x slurmstepd 2>/dev/null); do
        tr '\0' '\n' 2>/dev/null <"/proc/$pid/environ" | grep -qxF "SLURM_CONF=$conf" || continue
        sid=$(ps -o sid= -p "$pid" 2>/dev/null | tr -d ' ')
        [ -z "$sid" ] || pkill -KILL -s "$sid" 2>/dev/null || true
    done
}

stop_all() {
    rm -f "$dir/env"
    if alive slurmctld && [ -s "$conf" ]; then
        cancel_jobs
    fi
    stop_one slurmd
    stop_one slurmctld
    kill_steps
    stop_one munged
}

if [ "$verb" = stop ]; then
    stop_all
    exit 0
fi

# --- start ---------------------------------------------------------------------------------------

for cmd in slurmctld slurmd sinfo squeue sbatch scancel munged munge unmunge; do
    command -v "$cmd" >/dev/null ||
        die 125 "'$cmd' is not installed (Debian packages slurm-wlm and munge; scripts/install-deps --test)"
done
[ "$(id -u)" -eq 0 ] || die 77 "slurmd needs root: run the Slurm suites as root (CI does)"
case $dir in *[[:space:]\'\"\\\$]*) die 64 "'$dir' has a character slurm.conf cannot hold" ;; esac
# A Unix socket's path has at most 107 bytes: slurmd's job steps make theirs in DIR/spool.
[ ${#dir} -le 60 ] || die 64 "'$dir' is too long for the job steps' sockets: give one of at most 60 characters"
host=$(hostname -s)
cpus=$(nproc)

stop_all
started=1
trap 'stop_all; exit 130' INT TERM HUP

start_munged() {
    mkdir -p "$dir/munge" "$dir/run"
    chmod 700 "$dir/munge"
    rm -f "$dir/munge/munge.socket.2" "$dir/munge/munge.socket.2.lock"
    (umask 077 && head -c 128 /dev/urandom >"$dir/munge/munge.key")
    # --force: munged wants every directory above its socket open to all, and DIR is private.
    # In the foreground munged logs to stderr, here DIR/munged.out.
    munged --foreground --force --socket="$dir/munge/munge.socket.2" --key-file="$dir/munge/munge.key" \
        --pid-file="$dir/run/munged.pid" --seed-file="$dir/munge/munged.seed" </dev/null >"$dir/munged.out" 2>&1 &
    echo $! >"$dir/munged.pid"
    local i
    for ((i = 0; i < 100; i++)); do
        if [ -S "$dir/munge/munge.socket.2" ] &&
            munge -n -S "$dir/munge/munge.socket.2" 2>/dev/null |
            unmunge -S "$dir/munge/munge.socket.2" >/dev/null 2>&1; then
            return 0
        fi
        alive munged || break
        sleep 0.1
    done
    die 69 "munged did not start" "$dir/munged.out"
}

free_ports() { # two ports free on 127.0.0.1 now, the kernel's choice
    python3 -c 'import socket
s = [socket.socket() for _ in range(2)]
for x in s: x.bind(("127.0.0.1", 0))
print(*(x.getsockname()[1] for x in s))'
}

write_conf() { # write_conf CTLD_PORT SLURMD_PORT
    : >"$dir/plugstack.conf"
    mkdir -p "$dir/state" "$dir/spool"
    cat >"$conf" <<EOF
# A single-node cluster made by tests/slurm/cluster.sh: everything under $dir, on 127.0.0.1 only.
ClusterName=sion
SlurmctldHost=$host(127.0.0.1)
SlurmctldPort=$1
SlurmdPort=$2
CommunicationParameters=NoCtldInAddrAny,NoInAddrAny
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
CredType=cred/munge
AuthInfo=socket=$dir/munge/munge.socket.2
StateSaveLocation=$dir/state
SlurmdSpoolDir=$dir/spool
SlurmctldPidFile=$dir/run/slurmctld.pid
SlurmdPidFile=$dir/run/slurmd.pid
SlurmctldLogFile=$dir/slurmctld.log
SlurmdLogFile=$dir/slurmd.log
PlugStackConfig=$dir/plugstack.conf
MailProg=/bin/true
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
SwitchType=switch/none
MpiDefault=none
ReturnToService=2
SchedulerType=sched/backfill
# A task starts within a second of a core coming free (the default waits 3 s between passes).
SchedulerParameters=batch_sched_delay=1
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
# TERM, then KILL 5 s later, when a job is cancelled or runs out of time (the default waits 30 s).
KillWait=5
NodeName=$host NodeAddr=127.0.0.1 CPUs=$cpus State=UNKNOWN
PartitionName=debug Nodes=$host Default=YES MaxTime=INFINITE State=UP
EOF
}

node_idle() { [ "$(timeout 15 sinfo -h -n "$host" -o %t 2>/dev/null)" = idle ]; }

start_slurm() { # start_slurm: 0 when the node is idle within 60 s, else 1 with $why set
    local deadline=$((SECONDS + 60))
    : >"$dir/slurmctld.log"
    : >"$dir/slurmd.log"
    slurmctld -D -c </dev/null >"$dir/slurmctld.out" 2>&1 &
    echo $! >"$dir/slurmctld.pid"
    slurmd -D -c -N "$host" </dev/null >"$dir/slurmd.out" 2>&1 &
    echo $! >"$dir/slurmd.pid"
    while ((SECONDS < deadline)); do
        node_idle && return 0
        alive slurmctld || {
            why="slurmctld exited"
            return 1
        }
        alive slurmd || {
            why="slurmd exited"
            return 1
        }
        sleep 0.2
    done
    why="the node '$host' is not idle after 60 seconds: $(timeout 15 sinfo -h -o '%t %E' 2>&1 | head -n 1)"
    return 1
}

start_munged
for attempt in 1 2 3; do
    ports=$(free_ports) || die 69 "no free ports on 127.0.0.1 for slurmctld and slurmd"
    read -r ctld_port slurmd_port <<<"$ports"
    write_conf "$ctld_port" "$slurmd_port"
    start_slurm && break
    # Another program may take a port between its choice and slurmctld's or slurmd's bind: others.
    if [ "$attempt" -lt 3 ] && grep -qs 'Address already in use' "$dir"/slurm*.log "$dir"/slurm*.out; then
        stop_one slurmd
        stop_one slurmctld
        continue
    fi
    die 69 "$why" "$dir/slurmctld.out" "$dir/slurmd.out"
done
printf 'SLURM_CONF=%s\n' "$conf" >"$dir/env"
