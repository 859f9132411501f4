#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
# Many sessions at once on one $SION_HOME, a report and never a gate (issue 19): N scripted sessions
# started together, each making 30 journaled writes (apply_patch, no shell) in a workspace of its
# own, for N = 1, 10, 100 and 300. Prints, for each N, the wall time from the first start to the
# last end, the journaled calls a second, and how many sessions did not end done (which should be
# none: writes wait their turn for the store).
#
#   tests/bench/store.py [--bin DIR] [--sessions 1,10,100,300]
import argparse
import json
import os
import shutil
import sqlite3
import subprocess
import sys
import tempfile
import time

WRITES = 30


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--bin", default=None)
    parser.add_argument("--sessions", default="1,10,100,300")
    args = parser.parse_args()
    run_bin = os.path.join(args.bin, "sion-run") if args.bin else shutil.which("sion-run")
    if not run_bin or not os.access(run_bin, os.X_OK):
        sys.exit("store.py: no sion-run: give --bin DIR")
    turns = [{"calls": [{"tool": "apply_patch", "input": {"patch":
              f"*** Begin Patch\n*** Add File: k/f{k:02}.txt\n+write {k}\n*** End Patch"}}]}
             for k in range(WRITES)]
    for n in (int(x) for x in args.sessions.split(",")):
        with tempfile.TemporaryDirectory(prefix="sion-bench-store.") as root:
            home = os.path.join(root, "home")
            os.makedirs(home)
            script = os.path.join(root, "s.json")
            json.dump({"turns": turns + [{"text": "done"}]}, open(script, "w"))
            env = dict(os.environ, SION_HOME=home, SION_EXEC_PATH=os.path.dirname(run_bin))
            agent = subprocess.run([run_bin, "create", "coder"], env=env, capture_output=True,
                                   text=True, check=True).stdout.split()[0]
            works = []
            for i in range(n):
                works.append(os.path.join(root, "w", str(i)))
                os.makedirs(works[-1])
            start = time.perf_counter()
            runs = [subprocess.Popen([run_bin, "run", "coder", agent, "--task", f"Load {i}", "--model",
                                      "script:" + script, "--workspace", works[i], "--autonomy", "L3"],
                                     env=env, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                                     stderr=subprocess.DEVNULL) for i in range(n)]
            failed = sum(1 for p in runs if p.wait() != 0)
            wall = time.perf_counter() - start
            db = sqlite3.connect(os.path.join(home, "sion.db"))
            made = db.execute("SELECT count(*) FROM journal WHERE state = 'done'").fetchone()[0]
            db.close()
            print(f"{n:3d} sessions at once, {WRITES} journaled writes each: {wall:6.2f} s, "
                  f"{made / wall:7.1f} journaled calls a second, {failed} not done, "
                  f"{n * WRITES - made} writes not made")


if __name__ == "__main__":
    main()
