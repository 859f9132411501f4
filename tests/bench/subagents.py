#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
# Subagents (issue 21), a report and never a gate.
#
# Together: a session that spawns three subagents in one answer, each running a scripted session
# whose shell command takes 1 s in a bubblewrap sandbox of its own, against the same session
# spawning one: the median wall time of each, and their ratio (the goal is 1.3x at most).
#
# Worktrees: in a repository of 10,000 files, what a subagent's worktree adds to a spawn (the same
# spawn with and without "worktree": true, its shell command changing nothing), and what it adds
# when the subagent changes one file and its change is committed on a branch; beside them, git's own
# `git worktree add` and `git worktree remove --force` of the same repository.
#
#   tests/bench/subagents.py [--bin DIR] [--runs N]
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


def timed(argv, env, cwd=None):
    start = time.perf_counter()
    done = subprocess.run(argv, env=env, cwd=cwd, stdin=subprocess.DEVNULL,
                          stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    wall = time.perf_counter() - start
    if done.returncode != 0:
        sys.exit(f"subagents.py: {' '.join(argv)} failed: "
                 f"{(done.stderr or done.stdout).decode()[:400]}")
    return wall, done.stdout.decode()


def spawn(name, worktree=False):
    spec = {"name": name, "task": "Do your part.", "budget": 100000}
    if worktree:
        spec["worktree"] = True
    return {"tool": "agent_spawn", "input": spec}


def script(path, turns):
    with open(path, "w") as f:
        json.dump({"turns": turns}, f)
    return "script:" + path


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--bin", default=os.path.join(TOP, "build/release/bin"))
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args()
    bin_dir = os.path.abspath(args.bin)
    run = os.path.join(bin_dir, "sion-run")
    if shutil.which("bwrap") is None:
        sys.exit("subagents.py: bwrap is not installed (Debian package bubblewrap)")

    with tempfile.TemporaryDirectory(prefix="sion-bench-subagents.") as root:
        env = dict(os.environ, SION_HOME=os.path.join(root, "home"), SION_EXEC_PATH=bin_dir,
                   XDG_CACHE_HOME=os.path.join(root, "cache"))
        for key in [k for k in env if k.startswith("GIT_")]:
            del env[key]
        ws = os.path.join(root, "ws")
        os.makedirs(ws)
        agent = subprocess.run([run, "create", "lead"], env=env, capture_output=True, text=True,
                               check=True).stdout.split()[0]

        def session(lead, child, workspace, worktree_runs=False):
            argv = [run, "run", "lead", agent, "--task", "Go.", "--model", lead,
                    "--subagent-model", child, "--delegate", "--autonomy", "L6",
                    "--workspace", workspace, "--shell", "--sandbox-timeout", "120"]
            wall, out = timed(argv, env)
            if "done;" not in out:
                sys.exit(f"subagents.py: a subagent did not end done:\n{out}")
            return wall

        def median(lead, child, workspace, runs):
            return statistics.median(session(lead, child, workspace) for _ in range(runs)) * 1000

        # --- together ----------------------------------------------------------------------------
        sleeper = script(os.path.join(root, "sleep.json"),
                         [{"calls": [{"tool": "shell", "input": {"command": "sleep 1"}}]},
                          {"text": "Slept."}])
        one = script(os.path.join(root, "one.json"),
                     [{"calls": [spawn("a")]}, {"text": "Done."}])
        three = script(os.path.join(root, "three.json"),
                       [{"calls": [spawn("a"), spawn("b"), spawn("c")]}, {"text": "Done."}])
        session(one, sleeper, ws)  # made the subagents' agents and warmed the caches
        session(three, sleeper, ws)
        alone = median(one, sleeper, ws, args.runs)
        together = median(three, sleeper, ws, args.runs)
        print("subagents: a session spawning subagents whose one shell command takes 1 s, "
              f"median of {args.runs}")
        print(f"  one subagent                  {alone:8.0f} ms")
        print(f"  three spawned together        {together:8.0f} ms  "
              f"{together / alone:.2f}x one alone (goal: 1.3x at most)")

        # --- worktrees ---------------------------------------------------------------------------
        repo = os.path.join(root, "repo")
        for d in range(100):
            os.makedirs(os.path.join(repo, f"d{d:02}"))
            for f in range(100):
                with open(os.path.join(repo, f"d{d:02}", f"f{f:03}.txt"), "w") as out:
                    out.write(f"file {d} {f}\n" * 20)
        git = ["git", "-C", repo, "-c", "user.name=bench", "-c", "user.email=bench@example.com"]
        for argv in (["init", "-q", "-b", "main"], ["add", "-A"], ["commit", "-q", "-m", "many"]):
            subprocess.run(git + argv, env=env, check=True)
        quiet = script(os.path.join(root, "quiet.json"),
                       [{"calls": [{"tool": "shell", "input": {"command": "true"}}]},
                        {"text": "Looked."}])
        change = script(os.path.join(root, "change.json"),
                        [{"calls": [{"tool": "shell",
                                     "input": {"command": "echo more >> /workspace/d00/f000.txt"}}]},
                         {"text": "Changed."}])
        plain = script(os.path.join(root, "plain.json"),
                       [{"calls": [spawn("w")]}, {"text": "Done."}])
        with_tree = script(os.path.join(root, "tree.json"),
                           [{"calls": [spawn("w", worktree=True)]}, {"text": "Done."}])
        session(plain, quiet, repo)
        without = median(plain, quiet, repo, args.runs)
        unchanged = median(with_tree, quiet, repo, args.runs)
        changed_ms = []
        for _ in range(args.runs):
            changed_ms.append(session(with_tree, change, repo) * 1000)
        changed = statistics.median(changed_ms)
        peer = []
        linked = os.path.join(root, "linked")
        for _ in range(args.runs):
            start = time.perf_counter()
            subprocess.run(git + ["worktree", "add", "-q", "--detach", linked], env=env,
                           check=True)
            subprocess.run(git + ["worktree", "remove", "--force", linked], env=env, check=True)
            peer.append((time.perf_counter() - start) * 1000)
        peer_ms = statistics.median(peer)
        made = unchanged - without
        print(f"worktrees: a spawn in a repository of 10,000 files, median of {args.runs}")
        print(f"  without a worktree            {without:8.0f} ms")
        print(f"  with one, nothing changed     {unchanged:8.0f} ms  made and removed: "
              f"+{made:.0f} ms")
        print(f"  with one, one file committed  {changed:8.0f} ms  made, committed and removed: "
              f"+{changed - without:.0f} ms")
        print(f"  git worktree add + remove     {peer_ms:8.0f} ms  "
              f"(sion's make and remove: {made / peer_ms:.2f}x git's)")


if __name__ == "__main__":
    main()
