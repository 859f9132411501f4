#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
# Routes and their evaluation (issue 19), a report and never a gate.
#
# Routing: a scripted session of one answer started for a profile with no routes, with a route
# whose --when holds, and with routes the scripted sorter chooses between: the median wall time of
# each, and what routing adds to a session's start (sion-run asks `sion-route pick` over a pipe);
# beside it, `sion-route pick` alone and a bare spawn of /bin/true, which that pipe costs at least.
#
# Evaluation: 20 cases, 2 scripted models, 3 runs (120 sessions, each with its check in a bubblewrap
# sandbox) with -j 1, -j 2 and, as root where Slurm is installed, --on slurm on a single-node cluster
# of tests/slurm/cluster.sh; the wall time of each, and the time Slurm adds to a run: the wall time
# beyond -j's with as many at once, a run's share.
#
#   tests/bench/route.py [--bin DIR] [--runs N] [--no-slurm]
import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
TOP = os.path.dirname(os.path.dirname(HERE))


def timed(argv, env, stdin=None):
    start = time.perf_counter()
    done = subprocess.run(argv, env=env, input=stdin, stdout=subprocess.DEVNULL,
                          stderr=subprocess.PIPE)
    wall = time.perf_counter() - start
    if done.returncode != 0:
        sys.exit(f"route.py: {' '.join(argv)} failed: {done.stderr.decode()[:300]}")
    return wall


def median_ms(argv, env, runs, stdin=None):
    return statistics.median(timed(argv, env, stdin) for _ in range(runs)) * 1000


def routing(bin_dir, runs):
    with tempfile.TemporaryDirectory(prefix="sion-bench-route.") as root:
        env = dict(os.environ, SION_HOME=os.path.join(root, "home"), SION_EXEC_PATH=bin_dir)
        run, route = os.path.join(bin_dir, "sion-run"), os.path.join(bin_dir, "sion-route")
        answer = os.path.join(root, "answer.json")
        json.dump({"turns": [{"text": "Done."}] * (runs * 4 + 4)}, open(answer, "w"))
        sorter = os.path.join(root, "sorter.json")
        json.dump({"turns": [{"sort": True, "text": "code"}]}, open(sorter, "w"))
        agents = {}
        for profile in ("plain", "when", "sorted"):
            agents[profile] = subprocess.run([run, "create", profile, "--model", "script:" + answer],
                                             env=env, capture_output=True, text=True,
                                             check=True).stdout.split()[0]
        for argv in (["set", "when", "long", "--model", "script:" + answer, "--when", "long",
                      "--longer-than", "1"],
                     ["set", "sorted", "code", "--model", "script:" + answer, "--about", "code"],
                     ["set", "sorted", "chat", "--model", "script:" + answer, "--about", "talk"],
                     ["sorter", "sorted", "script:" + sorter]):
            subprocess.run([route] + argv, env=env, stdout=subprocess.DEVNULL, check=True)
        start = {}
        for profile in ("plain", "when", "sorted"):
            start[profile] = median_ms([run, "run", profile, agents[profile], "--task",
                                        "Fix the parser"], env, runs)
        pick = median_ms([route, "pick"], env, runs,
                         b'{"profile":"when","task":"Fix the parser"}\n')
        spawn = median_ms(["/bin/true"], env, runs)
        print(f"routing, median of {runs}: a session of one answer starts and ends in "
              f"{start['plain']:.2f} ms with no routes, {start['when']:.2f} ms with a --when that "
              f"holds (+{start['when'] - start['plain']:.2f} ms), {start['sorted']:.2f} ms with "
              f"the scripted sorter (+{start['sorted'] - start['plain']:.2f} ms)")
        print(f"routing: sion-route pick alone {pick:.2f} ms; a bare spawn of /bin/true "
              f"{spawn:.2f} ms")


def evaluation(bin_dir, slurm):
    with tempfile.TemporaryDirectory(prefix="sion-bench-eval.") as root:
        env = dict(os.environ, SION_HOME=os.path.join(root, "home"), SION_EXEC_PATH=bin_dir,
                   PATH=bin_dir + ":" + os.environ.get("PATH", "/usr/bin:/bin"))
        run, route = os.path.join(bin_dir, "sion-run"), os.path.join(bin_dir, "sion-route")
        models = []
        for letter in "ab":
            path = os.path.join(root, letter + ".json")
            json.dump({"turns": [{"calls": [{"tool": "write_file", "input": {
                "path": "answer.txt", "content": letter}}]}, {"text": "Done."}]}, open(path, "w"))
            models += ["--model", "script:" + path]
        cases = [{"name": f"case-{i:02}", "task": f"Write the answer of case {i}.",
                  "files": {"want.txt": "ab\n" if i < 10 else "b\n"},
                  "check": 'test -f answer.txt && grep -qF "$(cat answer.txt)" want.txt'}
                 for i in range(20)]
        cases_path = os.path.join(root, "cases.json")
        json.dump({"cases": cases}, open(cases_path, "w"))
        subprocess.run([run, "create", "lead"] + models[:2], env=env, stdout=subprocess.DEVNULL,
                       check=True)
        walls = {}
        ways = [("-j 1", ["-j", "1"]), ("-j 2", ["-j", "2"])]
        if slurm:
            ways.append(("--on slurm", ["--on", "slurm"]))
        for name, flags in ways:
            # The route as it was: an evaluation may move b first.
            subprocess.run([route, "set", "lead", "code"] + models + ["--about", "code"], env=env,
                           stdout=subprocess.DEVNULL, check=True)
            where = os.path.join(root, "ev-" + name.replace(" ", "").replace("-", ""))
            walls[name] = timed([route, "eval", "lead", "code", "--set", cases_path, "--runs", "3",
                                 "--dir", where] + flags, dict(env, **slurm) if flags[0] == "--on"
                                else env)
        line = ", ".join(f"{name} {walls[name]:.1f} s" for name, _ in ways)
        print(f"evaluation of 20 cases x 2 models x 3 runs (120 sessions, each checked in its "
              f"sandbox): {line}")
        if slurm:
            at_once = os.cpu_count() or 1
            local = walls["-j 2"] if at_once >= 2 else walls["-j 1"]
            extra = (walls["--on slurm"] - local) / 120 * min(at_once, 2) * 1000
            print(f"evaluation: Slurm adds {extra:.0f} ms to a run (its wall time beyond -j "
                  f"{min(at_once, 2)}'s, a run's share, with {at_once} at once on the node)")


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--bin", required=True)
    parser.add_argument("--runs", type=int, default=30)
    parser.add_argument("--no-slurm", action="store_true")
    args = parser.parse_args()
    bin_dir = os.path.abspath(args.bin)
    routing(bin_dir, args.runs)
    cluster = os.path.join(TOP, "tests", "slurm", "cluster.sh")
    slurm = None
    if args.no_slurm or os.geteuid() != 0 or not shutil.which("slurmctld"):
        print("evaluation: --on slurm not measured (it needs root and Slurm's daemons)")
    if not args.no_slurm and os.geteuid() == 0 and shutil.which("slurmctld"):
        where = tempfile.mkdtemp(prefix="sion-bench-slurm.")
        try:
            subprocess.run([cluster, "start", where], check=True, stdout=subprocess.DEVNULL)
            slurm = {"SLURM_CONF": os.path.join(where, "slurm.conf")}
            evaluation(bin_dir, slurm)
        finally:
            subprocess.run([cluster, "stop", where], stdout=subprocess.DEVNULL,
                           stderr=subprocess.DEVNULL)
            shutil.rmtree(where, ignore_errors=True)
    else:
        evaluation(bin_dir, None)


if __name__ == "__main__":
    main()
