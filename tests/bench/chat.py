#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
# A console's messages beside the same messages as runs, a report and never a gate: N messages,
# each a task of three tool calls (write_file, a shell command in the bubblewrap sandbox,
# read_file) on the scripted model, said to one `sion-run chat` on its standard input, against the
# same N tasks as `sion-run run` and then `sion-run run --session` continuing it, one process each.
# A chat starts its sandbox and its store once and keeps them between messages; a run starts them
# again each time. Prints the median, over R repetitions, of the whole and of a message's share,
# and the chat's peak RSS (GNU time: sion-run and what it waited for).
#
#   tests/bench/chat.py [--bin DIR] [--messages N] [--runs R]   (DIR: where sion-run is)
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
TURNS = [
    {"calls": [{"tool": "write_file", "input": {"path": "a.txt", "content": "one\ntwo\n"}}]},
    {"calls": [{"tool": "shell", "input": {"command": "wc -l a.txt"}}]},
    {"calls": [{"tool": "read_file", "input": {"path": "a.txt"}}]},
    {"text": "a.txt has two lines."},
]


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--bin", default=None)
    parser.add_argument("--messages", type=int, default=10)
    parser.add_argument("--runs", type=int, default=5)
    args = parser.parse_args()
    run = os.path.join(args.bin, "sion-run") if args.bin else shutil.which("sion-run")
    if not run or not os.access(run, os.X_OK):
        sys.exit("chat.py: sion-run not found")
    if not os.access(TIME, os.X_OK):
        sys.exit(f"chat.py: {TIME} not found (Debian package time)")
    chats, runs, rss = [], [], []
    with tempfile.TemporaryDirectory() as top:
        script = os.path.join(top, "turns.json")
        with open(script, "w") as f:
            json.dump({"turns": TURNS * args.messages}, f)
        task = "Count the lines of a.txt."
        for i in range(args.runs):
            for kind in ("chat", "run"):
                home = os.path.join(top, f"{kind}{i}")
                work = os.path.join(home, "work")
                os.makedirs(work)
                env = dict(os.environ, HOME=home, SION_HOME=os.path.join(home, ".sion"),
                           SION_EXEC_PATH=os.path.dirname(run))
                agent = subprocess.run([run, "create", "bench"], env=env, check=True,
                                       capture_output=True, text=True).stdout.strip()
                options = ["--model", "script:" + script, "--workspace", work, "--shell",
                           "--autonomy", "L3"]
                if kind == "chat":
                    argv = [TIME, "-f", "%M", "-o", os.path.join(home, "rss"), run, "chat",
                            "bench", agent] + options
                    start = time.perf_counter()
                    subprocess.run(argv, env=env, check=True, input=(task + "\n") * args.messages,
                                   text=True, stdout=subprocess.DEVNULL)
                    chats.append(time.perf_counter() - start)
                    with open(os.path.join(home, "rss")) as f:
                        rss.append(int(f.read().split()[-1]))
                    continue
                start = time.perf_counter()
                first = subprocess.run([run, "run", "bench", agent, "--task", task] + options,
                                       env=env, check=True, capture_output=True, text=True)
                session = first.stdout.split()[1]
                for _ in range(args.messages - 1):
                    subprocess.run([run, "run", "bench", agent, "--task", task, "--session",
                                    session] + options, env=env, check=True,
                                   stdout=subprocess.DEVNULL)
                runs.append(time.perf_counter() - start)
    ms = lambda s: statistics.median(s) * 1000
    n = args.messages
    print(f"median of {args.runs} repetitions, {n} messages of 3 calls each")
    print(f"  one sion-run chat, the messages on its standard input   {ms(chats):8.1f} ms   "
          f"({ms(chats) / n:.2f} ms a message)")
    print(f"  sion-run run, then run --session for each message       {ms(runs):8.1f} ms   "
          f"({ms(runs) / n:.2f} ms a message; the chat takes {ms(chats) / ms(runs):.2f}x)")
    print(f"  the chat's peak RSS (sion-run and what it waited for)   {statistics.median(rss) / 1024:8.2f} MiB")


if __name__ == "__main__":
    main()
