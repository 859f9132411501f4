#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
# Skills' scripts (issue 20), a report and never a gate: in one `sion-sandbox serve` session, the
# median wall time of a shell command in the warm sandbox (sandbox/exec {"argv": ["sh", "x.sh"]})
# against the same script as a skill's (sandbox/exec with "skill": its folder bound at /skill, in a
# sandbox of its own), with no network and with the declared network and one host (its proxy too).
#
#   tests/bench/skills.py [--bin DIR] [--runs N]
import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
TOP = os.path.dirname(os.path.dirname(HERE))


class Serve:
    def __init__(self, argv, env):
        self.proc = subprocess.Popen(argv, env=env, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                     stderr=subprocess.PIPE, text=True)
        self.next_id = 0

    def call(self, params):
        self.next_id += 1
        self.proc.stdin.write(json.dumps({"jsonrpc": "2.0", "id": self.next_id,
                                          "method": "sandbox/exec", "params": params}) + "\n")
        self.proc.stdin.flush()
        line = self.proc.stdout.readline()
        if not line:
            sys.exit(f"skills.py: sion-sandbox serve ended: {self.proc.stderr.read()[:400]}")
        answer = json.loads(line)
        if "error" in answer or answer["result"]["exit"] != 0:
            sys.exit(f"skills.py: the command failed: {line[:400]}")

    def close(self):
        self.proc.stdin.close()
        self.proc.wait(timeout=60)


def median_ms(serve, params, runs):
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        serve.call(params)
        times.append((time.perf_counter() - start) * 1000)
    return statistics.median(times)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--bin", default=os.path.join(TOP, "build/release/bin"))
    parser.add_argument("--runs", type=int, default=30)
    args = parser.parse_args()
    sandbox = os.path.join(os.path.abspath(args.bin), "sion-sandbox")
    with tempfile.TemporaryDirectory(prefix="sion-bench-skills.") as root:
        ws = os.path.join(root, "ws")
        skill = os.path.join(root, "skill")
        os.makedirs(ws)
        os.makedirs(os.path.join(skill, "scripts"))
        with open(os.path.join(skill, "scripts", "x.sh"), "w") as f:
            f.write("echo done\n")
        with open(os.path.join(ws, "x.sh"), "w") as f:
            f.write("echo done\n")
        os.chmod(skill, 0o755)
        env = dict(os.environ, SION_HOME=os.path.join(root, "home"))
        figures = {}
        for network in ("none", "declared"):
            serve = Serve([sandbox, "serve", "--workspace", ws, "--network", network], env)
            serve.call({"argv": ["true"]})  # the warm sandbox made
            figures[network] = (
                median_ms(serve, {"argv": ["sh", "x.sh"]}, args.runs),
                median_ms(serve, {"argv": ["sh", "/skill/scripts/x.sh"],
                                  "skill": {"dir": skill, "hosts": ["example.org"]}}, args.runs))
            serve.close()
        print(f"skills: a script's start beside a shell command's, median of {args.runs}")
        for network, (shell, script) in figures.items():
            print(f"  network {network:<9} shell command {shell:7.2f} ms   skill's script "
                  f"{script:7.2f} ms  {script / shell:.2f}x")


if __name__ == "__main__":
    main()
