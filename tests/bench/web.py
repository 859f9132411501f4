#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
# fetch_url's HTML reader (issue 20), a report and never a gate: the largest real HTML pages this
# machine has (Debian's documentation under /usr/share/doc and npm's), each made text by
# bench_web (lib/web html_to_text) and by `w3m -dump`: the median time of each, their ratio, and
# the size of the text each made. The goal is to be faster than w3m.
#
#   tests/bench/web.py [--bin DIR] [--runs N] [--pages N]
import argparse
import glob
import os
import shutil
import statistics
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
TOP = os.path.dirname(os.path.dirname(HERE))


def timed(argv, runs):
    times = []
    out = b""
    for _ in range(runs):
        start = time.perf_counter()
        done = subprocess.run(argv, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
        times.append((time.perf_counter() - start) * 1000)
        if done.returncode != 0:
            sys.exit(f"web.py: {' '.join(argv)} exited {done.returncode}")
        out = done.stdout
    return statistics.median(times), len(out)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--bin", default=os.path.join(TOP, "build/release/bin"))
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--pages", type=int, default=4)
    args = parser.parse_args()
    if shutil.which("w3m") is None:
        sys.exit("web.py: w3m is not installed (Debian package w3m)")
    pages = [p for pattern in ("/usr/share/doc/**/*.html", "/usr/lib/node_modules/npm/docs/**/*.html")
             for p in glob.glob(pattern, recursive=True) if os.path.isfile(p)]
    pages = sorted(pages, key=os.path.getsize, reverse=True)[:args.pages]
    if not pages:
        sys.exit("web.py: no HTML page found under /usr/share/doc")
    reader = os.path.join(os.path.abspath(args.bin), "bench_web")
    print(f"web: HTML made text, median of {args.runs} (a process each, as w3m is)")
    total_ours = total_w3m = 0.0
    for page in pages:
        ours, our_size = timed([reader, page], args.runs)
        w3m, w3m_size = timed(["w3m", "-dump", "-T", "text/html", "-cols", "100", page], args.runs)
        total_ours += ours
        total_w3m += w3m
        print(f"  {os.path.getsize(page) / 1024:7.0f} KiB {os.path.basename(page):<28} sion "
              f"{ours:7.1f} ms ({our_size / 1024:5.0f} KiB of text)  w3m {w3m:7.1f} ms "
              f"({w3m_size / 1024:5.0f} KiB)  {ours / w3m:.2f}x")
    print(f"  all pages: sion {total_ours:.1f} ms, w3m {total_w3m:.1f} ms: {total_ours / total_w3m:.2f}x")


if __name__ == "__main__":
    main()
