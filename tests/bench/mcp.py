#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
# MCP tool calls over stdio, a report and never a gate (issue: >= 20,000 sequential calls/s against
# a minimal C++ echo server; >= 4x the TypeScript SDK's client on server-everything; DESIGN.md: a
# call within 2x of the pipe's round trip). Each row is the median of N runs of
# tests/bench/mcp_client_bench.cpp (sion's client, and --raw: bare lines on the same pipes) or of
# tests/bench/mcp_sdk_client.mjs (the SDK's client), with the connect time (spawn, handshake,
# tools/list) beside the calls per second.
#
#   tests/bench/mcp.py [--bin DIR] [--peers DIR] [--runs N] [--calls N]
import argparse
import json
import os
import statistics
import subprocess
import sys


def one(argv):
    out = subprocess.run(argv, check=True, capture_output=True, text=True, timeout=300).stdout
    return json.loads(out.strip().splitlines()[-1])


def median(argv, runs):
    rows = [one(argv) for _ in range(runs)]
    return (statistics.median(r["calls_per_s"] for r in rows),
            statistics.median(r["connect_ms"] for r in rows))


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--bin", default="build/release/bin")
    parser.add_argument("--peers", default="tests/peers/node_modules")
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--calls", type=int, default=5000)
    args = parser.parse_args()
    bench = os.path.join(args.bin, "mcp_client_bench")
    echo = os.path.join(args.bin, "mcp_echo_server")
    everything = os.path.join(args.peers, "@modelcontextprotocol/server-everything/dist/index.js")
    sdk = os.path.join(args.peers, "@modelcontextprotocol/sdk")
    for path in (bench, echo, everything, sdk):
        if not os.path.exists(path):
            sys.exit(f"mcp.py: {path} is missing (build the release preset; scripts/install-peers)")
    calls = str(args.calls)
    rows = []
    echo_cmd = ["--", echo]
    every_cmd = ["--", "node", everything]
    rows.append(("sion client, C++ echo server",) + median([bench, "--calls", calls] + echo_cmd, args.runs))
    rows.append(("bare pipe, C++ echo server",) + median([bench, "--raw", "--calls", calls] + echo_cmd, args.runs))
    rows.append(("sion client, server-everything",) + median([bench, "--calls", calls] + every_cmd, args.runs))
    rows.append(("bare pipe, server-everything",) + median([bench, "--raw", "--calls", calls] + every_cmd, args.runs))
    rows.append(("SDK client, server-everything",) + median(
        ["node", "tests/bench/mcp_sdk_client.mjs", sdk, calls, "echo", '{"message":"hi"}'] + every_cmd, args.runs))
    print(f"MCP tools/call over stdio, {args.calls} sequential calls, median of {args.runs} runs")
    print(f"{'':34} {'calls/s':>10} {'connect ms':>11}")
    for name, rate, connect in rows:
        print(f"{name:34} {rate:10.0f} {connect:11.1f}")
    by = {name: rate for name, rate, _ in rows}
    print(f"sion / bare pipe (echo server): {by['sion client, C++ echo server'] / by['bare pipe, C++ echo server']:.2f}"
          f"   (round trip {1e6 / by['sion client, C++ echo server']:.1f} us vs {1e6 / by['bare pipe, C++ echo server']:.1f} us)")
    print(f"sion / SDK (server-everything): {by['sion client, server-everything'] / by['SDK client, server-everything']:.2f}x")


if __name__ == "__main__":
    main()
