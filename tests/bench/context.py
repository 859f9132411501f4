#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
# What a model is sent, end to end, a report and never a gate (issue 18's goals):
#  - three read calls of an MCP tool that takes 1 s, in one answer of the scripted model, the
#    server played by tests/tools/fake-mcp-bridge.py found as sion-mcp: the time from the first
#    call's start to the last one's end, as sion.db keeps them, beside the slowest call (goal:
#    <= 1.2x; one after another they took 3x);
#  - a scripted session of 300 turns, each a read_file of a 6,000-character file, which compacts
#    (its summaries' narratives the scripted model's "writes no summary"): sion-run's wall time a
#    model call (building the request, the call and storing it; the scripted model answers at once)
#    and its peak RSS as GNU time reports it (goals: <= 2 ms a call at 120,000 characters, <= 20 MiB).
#
#   tests/bench/context.py [--bin DIR] [--runs N]      (DIR: where sion-run is; default: PATH)
import argparse
import json
import os
import shutil
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
SOURCE = os.path.dirname(os.path.dirname(HERE))
TIME = "/usr/bin/time"


def fresh(root, name):
    """A $SION_HOME and workspace of their own under `root`."""
    home = os.path.join(root, name, "home")
    work = os.path.join(root, name, "work")
    os.makedirs(home)
    os.makedirs(work)
    return home, work


def run(run_bin, env, who, args, timed=False):
    argv = [run_bin, "run", "coder", who] + args
    start = time.perf_counter()
    if timed:
        with tempfile.NamedTemporaryFile("r") as out:
            p = subprocess.run([TIME, "-f", "%M", "-o", out.name] + argv, env=env,
                               stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
            peak = int(out.read().split()[-1]) if p.returncode == 0 else 0
    else:
        p = subprocess.run(argv, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        peak = 0
    elapsed = time.perf_counter() - start
    if p.returncode != 0:
        sys.exit(f"context.py: sion-run exited {p.returncode}: {p.stderr.strip()[:300]}")
    return elapsed, peak


def agent(run_bin, env):
    p = subprocess.run([run_bin, "create", "coder"], env=env, capture_output=True, text=True, check=True)
    return p.stdout.split()[0]


def side_by_side(run_bin, root, runs):
    """Spans of the three 1 s reads, and of the slowest, in ms, per run."""
    fake = os.path.join(root, "fake")
    os.makedirs(fake, exist_ok=True)
    wrapper = os.path.join(fake, "sion-mcp")
    with open(wrapper, "w") as f:
        f.write(f'#!/bin/sh\nexec python3 "{SOURCE}/tests/tools/fake-mcp-bridge.py" "$@"\n')
    os.chmod(wrapper, 0o755)
    bridge = os.path.join(root, "bridge.json")
    tool = {"name": "notes_look", "description": "Look.", "effect": "read", "idempotent": True,
            "taints": False, "inputSchema": {"type": "object", "properties": {"what": {"type": "string"}}}}
    json.dump({"servers": {"notes": {"state": "connected", "protocol": "2025-06-18",
                                     "server": {"name": "notes", "version": "1"}, "tools": [tool]}},
               "calls": {"notes_look": [{"sleep": 1, "text": "looked at {what}"}]}}, open(bridge, "w"))
    script = os.path.join(root, "three.json")
    json.dump({"turns": [{"calls": [{"tool": "notes_look", "input": {"what": w}} for w in "abc"]},
                         {"text": "Done."}]}, open(script, "w"))
    out = []
    for n in range(runs):
        home, _ = fresh(root, f"three{n}")
        env = dict(os.environ, SION_HOME=home, SION_EXEC_PATH=fake, SION_FAKE_MCP=bridge)
        who = agent(run_bin, env)
        argv = [run_bin, "run", "coder", who, "--task", "Look.", "--model", "script:" + script,
                "--mcp", "notes", "--autonomy", "L3"]
        subprocess.run(argv, env=env, stdout=subprocess.DEVNULL, check=True)
        db = sqlite3.connect(os.path.join(home, "sion.db"))
        spans = db.execute("SELECT started_ms, started_ms + wall_ms, wall_ms FROM calls").fetchall()
        db.close()
        out.append((max(e for _, e, _ in spans) - min(s for s, _, _ in spans), max(w for _, _, w in spans)))
    return out


def long_session(run_bin, root, runs, turns=300, size=6000):
    home, work = fresh(root, "long")
    for k in range(turns):
        with open(os.path.join(work, f"f{k:03}.txt"), "w") as f:
            f.write((f"file {k}: " + "word " * (size // 5))[:size - 1] + "\n")
    script = os.path.join(root, "long.json")
    json.dump({"turns": [{"calls": [{"tool": "read_file", "input": {"path": f"f{k:03}.txt"}}]}
                         for k in range(turns)] + [{"text": "Done."}]}, open(script, "w"))
    env = dict(os.environ, SION_HOME=home, SION_EXEC_PATH=os.path.dirname(run_bin))
    who = agent(run_bin, env)
    walls, peaks = [], []
    for _ in range(runs):
        wall, peak = run(run_bin, env, who, ["--task", "Read every file.", "--model", "script:" + script,
                                        "--workspace", work, "--autonomy", "L3"], timed=True)
        walls.append(wall)
        peaks.append(peak)
        # Each run a new session of the same agent.
    db = sqlite3.connect(os.path.join(home, "sion.db"))
    compactions = db.execute("SELECT count(*) FROM messages WHERE json_extract(content, '$.role') = "
                             "'compaction'").fetchone()[0] // runs
    db.close()
    return walls, peaks, turns + 1, compactions


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--bin", default=None)
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args()
    run_bin = os.path.join(args.bin, "sion-run") if args.bin else shutil.which("sion-run")
    if not run_bin or not os.access(run_bin, os.X_OK):
        sys.exit("context.py: no sion-run: give --bin DIR")
    with tempfile.TemporaryDirectory(prefix="sion-bench-context.") as root:
        spans = side_by_side(run_bin, root, args.runs)
        span = statistics.median(s for s, _ in spans)
        slowest = statistics.median(w for _, w in spans)
        print(f"three 1 s read calls side by side: {span} ms from the first start to the last end, "
              f"the slowest call {slowest} ms: {span / slowest:.2f}x the slowest (goal <= 1.2x)")
        walls, peaks, calls, compactions = long_session(run_bin, root, args.runs)
        wall = statistics.median(walls)
        print(f"a 300-turn scripted session that compacts: {wall:.2f} s, {wall * 1000 / calls:.2f} ms a "
              f"model call ({calls} calls, {compactions} compactions), peak RSS {statistics.median(peaks) / 1024:.1f} MiB (goals <= 2 ms, "
              f"<= 20 MiB)")


if __name__ == "__main__":
    main()
