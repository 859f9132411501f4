#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
# search_files' engine beside ripgrep, a report and never a gate (issue 5's goal: at most 1.5 times
# rg's time): a generated tree of 20,000 source-like files (a fixed seed: every run sees the same
# bytes), searched for a rare literal, a regular expression, a case-insensitive word and a common
# word, by tests/bench/bench_search (the engine alone: the same walk beneath a directory held open,
# the same reads, every matching line printed, nothing capped) and by `rg -n`, with the page cache
# warm. Prints the median wall time of N runs of each and the ratio, per pattern and over all, for
# rg as it runs (on every core) and for `rg -j1` (one thread, as the engine is). Checks that both
# found the same number of matching lines; exits 1 if not, 69 if rg is missing, 0 otherwise.
#
#   tests/bench/search.py [--bin DIR] [--runs N] [--files N]   (DIR: where bench_search is)
import argparse
import os
import random
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

WORDS = ("let value count total index buffer result error config request response handler "
         "parse render update insert delete select client server stream reader writer token "
         "return match struct impl self async await const static public private void string").split()
PATTERNS = [
    ("rare literal", ["needle_handler"]),
    ("regex", [r"fn\s+[a-z]+_handler\("]),
    ("ignore case", ["-i", "todo"]),
    ("common word", ["return"]),
]


def make_tree(root, files, seed=5):
    """`files` files of 40-120 lines in 20 x 10 directories; a few hold the rare needle."""
    rng = random.Random(seed)
    per_dir = max(1, files // 200)
    made = 0
    for top in range(20):
        for sub in range(10):
            d = os.path.join(root, f"pkg{top:02d}", f"mod{sub}")
            os.makedirs(d, exist_ok=True)
            for n in range(per_dir):
                if made == files:
                    return made
                lines = []
                for _ in range(rng.randint(40, 120)):
                    k = rng.random()
                    if k < 0.05:
                        lines.append(f"fn {rng.choice(WORDS)}_handler({rng.choice(WORDS)}: u32) {{")
                    elif k < 0.06:
                        lines.append(f"    // TODO: {' '.join(rng.choices(WORDS, k=5))}")
                    elif k < 0.0605:
                        lines.append("    needle_handler(&mut state);")
                    else:
                        lines.append("    " + " ".join(rng.choices(WORDS, k=rng.randint(3, 12))) + ";")
                with open(os.path.join(d, f"file{n:03d}.rs"), "w") as f:
                    f.write("\n".join(lines) + "\n")
                made += 1
    return made


def timed(argv):
    """Wall seconds of one run, its stdout thrown away, and its stderr."""
    start = time.perf_counter()
    p = subprocess.run(argv, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, check=False)
    elapsed = time.perf_counter() - start
    if p.returncode not in (0, 1):  # rg exits 1 when nothing matches
        sys.exit(f"search.py: {argv[0]} exited with {p.returncode}: {p.stderr.decode()}")
    return elapsed, p.stderr.decode()


def median_ms(argv, runs):
    timed(argv)  # warm the page cache and the binary
    return statistics.median(timed(argv)[0] for _ in range(runs)) * 1000


def rg_lines(rg, args, root):
    p = subprocess.run([rg, "-c", "--no-filename", *args, root], capture_output=True, check=False)
    return sum(int(x) for x in p.stdout.split())


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--bin", default="")
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--files", type=int, default=20000)
    args = ap.parse_args()
    engine = os.path.join(args.bin, "bench_search") if args.bin else shutil.which("bench_search")
    rg = shutil.which("rg")
    if rg is None:
        print("search.py: rg is not installed (Debian package ripgrep)", file=sys.stderr)
        return 69
    if not engine or not os.access(engine, os.X_OK):
        sys.exit("search.py: cannot find bench_search (give --bin DIR)")
    status = 0
    with tempfile.TemporaryDirectory(prefix="sion-bench-search.") as tmp:
        root = os.path.join(tmp, "tree")
        made = make_tree(root, args.files)
        size = sum(os.path.getsize(os.path.join(d, f)) for d, _, fs in os.walk(root) for f in fs)
        print(f"search_files' engine beside ripgrep: {made} files, {size / 1e6:.1f} MB, "
              f"median of {args.runs} warm runs, {os.cpu_count()} cores")
        print(f"{'pattern':<14} {'lines':>7} {'engine ms':>10} {'rg ms':>8} {'ratio':>6} "
              f"{'rg -j1 ms':>10} {'ratio':>6}")
        totals = [0.0, 0.0, 0.0]
        for name, pattern in PATTERNS:
            ours = [engine, "--ignore-case", pattern[1]] if pattern[0] == "-i" else [engine, pattern[0]]
            ours.append(root)
            theirs = [rg, "-n", "--no-heading", "--color", "never", *pattern, root]
            single = [rg, "-j1", "-n", "--no-heading", "--color", "never", *pattern, root]
            _, said = timed(ours)
            our_lines = int(said.split("files, ")[1].split()[0])
            their_lines = rg_lines(rg, pattern, root)
            if our_lines != their_lines:
                print(f"search.py: '{name}': the engine found {our_lines} lines, rg {their_lines}",
                      file=sys.stderr)
                status = 1
            t = [median_ms(ours, args.runs), median_ms(theirs, args.runs),
                 median_ms(single, args.runs)]
            totals = [a + b for a, b in zip(totals, t)]
            print(f"{name:<14} {our_lines:>7} {t[0]:>10.1f} {t[1]:>8.1f} {t[0] / t[1]:>6.2f} "
                  f"{t[2]:>10.1f} {t[0] / t[2]:>6.2f}")
        print(f"{'all':<14} {'':>7} {totals[0]:>10.1f} {totals[1]:>8.1f} "
              f"{totals[0] / totals[1]:>6.2f} {totals[2]:>10.1f} {totals[0] / totals[2]:>6.2f}")
        print(f"search ratio (engine / rg): {totals[0] / totals[1]:.2f} (goal <= 1.5); "
              f"against rg -j1: {totals[0] / totals[2]:.2f}")
    return status


if __name__ == "__main__":
    sys.exit(main())
