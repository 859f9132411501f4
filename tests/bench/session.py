#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
# A scripted session end to end, a report and never a gate (DESIGN.md's budget: a session of three
# tool calls in <= 30 ms and <= 10 MiB): `sion-run run` with a write_file, a shell command in the
# bubblewrap sandbox and a read_file, each run in a fresh $SION_HOME and workspace. Prints the median
# wall time and peak RSS of N runs (RSS as GNU time reports it from wait4: the largest of sion-run and
# the processes it waited for, sion-sandbox among them; measured through time(1) because a process
# spawned by this Python starts with Python's peak as its own), beside the parts a session cannot do
# without: starting sion-run to print its help, and one `sion-sandbox exec -- /bin/true`; and a
# fork+exec of /bin/true, the pace of the machine at that moment, so that a slow run of a shared
# machine is told from a slow sion.
#
#   tests/bench/session.py [--bin DIR] [--runs N]      (DIR: where sion-run is; default: PATH)
import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

TIME = "/usr/bin/time"
SCRIPT = {"turns": [
    {"calls": [{"tool": "write_file", "input": {"path": "a.txt", "content": "one\ntwo\n"}}]},
    {"calls": [{"tool": "shell", "input": {"command": "wc -l a.txt"}}]},
    {"calls": [{"tool": "read_file", "input": {"path": "a.txt"}}]},
    {"text": "a.txt has two lines."},
]}


def timed(argv, env):
    """Wall seconds of one run, which must succeed."""
    devnull = os.open(os.devnull, os.O_RDWR)
    start = time.perf_counter()
    pid = os.posix_spawn(argv[0], argv, env, file_actions=[
        (os.POSIX_SPAWN_DUP2, devnull, 0), (os.POSIX_SPAWN_DUP2, devnull, 1)])
    _, status = os.waitpid(pid, 0)
    elapsed = time.perf_counter() - start
    os.close(devnull)
    if os.waitstatus_to_exitcode(status) != 0:
        sys.exit(f"session.py: {' '.join(argv)} exited with {os.waitstatus_to_exitcode(status)}")
    return elapsed


def peak_kib(argv, env):
    """Peak RSS (KiB) of one run, as GNU time reports it."""
    with tempfile.NamedTemporaryFile("r") as out:
        subprocess.run([TIME, "-f", "%M", "-o", out.name] + argv, env=env, check=True,
                       stdout=subprocess.DEVNULL)
        return int(out.read().split()[-1])


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--bin", default=None)
    parser.add_argument("--runs", type=int, default=20)
    args = parser.parse_args()
    run = os.path.join(args.bin, "sion-run") if args.bin else shutil.which("sion-run")
    sandbox = os.path.join(os.path.dirname(run), "sion-sandbox")
    if not run or not os.access(run, os.X_OK):
        sys.exit("session.py: sion-run not found")
    if not os.access(TIME, os.X_OK):
        sys.exit(f"session.py: {TIME} not found (Debian package time)")
    with tempfile.TemporaryDirectory() as top:
        script = os.path.join(top, "three.json")
        with open(script, "w") as f:
            json.dump(SCRIPT, f)
        env = dict(os.environ, SION_EXEC_PATH=os.path.dirname(run))
        walls, rss, helps, trues, forks = [], [], [], [], []
        for i in range(args.runs):
            home = os.path.join(top, f"h{i}")
            work = os.path.join(home, "work")
            os.makedirs(work)
            env_i = dict(env, HOME=home, SION_HOME=os.path.join(home, ".sion"))
            agent = subprocess.run([run, "create", "bench"], env=env_i, check=True,
                                   capture_output=True, text=True).stdout.strip()
            session = [run, "run", "bench", agent, "--task", "Count the lines of a.txt.",
                       "--model", "script:" + script, "--workspace", work, "--shell", "--autonomy", "L3"]
            walls.append(timed(session, env_i))
            rss.append(peak_kib(session, env_i))
            helps.append(timed([run, "--help"], env_i))
            trues.append(timed([sandbox, "exec", "--workspace", work, "--home",
                                os.path.join(home, ".sion"), "--", "/bin/true"], env_i))
            forks.append(timed(["/bin/true"], env_i))
    ms = lambda s: statistics.median(s) * 1000
    print(f"median of {args.runs} runs")
    print(f"  scripted session, 3 calls (write_file, shell, read_file)   {ms(walls):7.2f} ms   "
          f"({ms(walls) / 30:.2f}x the 30 ms budget)")
    print(f"  its peak RSS (sion-run and what it waited for)             {statistics.median(rss) / 1024:7.2f} MiB "
          f"({statistics.median(rss) / 1024 / 10:.2f}x the 10 MiB budget)")
    print(f"  sion-run --help                                            {ms(helps):7.2f} ms")
    print(f"  sion-sandbox exec -- /bin/true (a sandbox's start)          {ms(trues):7.2f} ms")
    print(f"  fork+exec of /bin/true (the machine's pace)                 {ms(forks):7.2f} ms   "
          f"(the session is {ms(walls) / ms(forks):.0f} of them)")


if __name__ == "__main__":
    main()
