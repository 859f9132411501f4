# SPDX-License-Identifier: MIT
"""Drives `sion-mcp serve` as a session does, for the suites t0620 to t0622.

  python3 t0620-bridge.py [--timeout S] [--answer METHOD=JSON]... -- COMMAND...
      Starts COMMAND (sion-mcp serve ...) and reads request lines from stdin in rounds separated by
      empty lines: a round is sent whole, then its requests are waited for until each is answered.
      A request the bridge sends up (elicitation/create, sampling/createMessage) is answered with
      the JSON result --answer gives for its method, or a -32601 error; it is printed as it came.
      Every line the bridge writes is printed. After the last round its stdin is closed and it is
      waited for. Exit: the bridge's status; 124 and a message when S seconds (60) pass in a round
      or at the end; 1 and a message when its output ends with requests unanswered.

  python3 t0620-bridge.py --get FILE ID [PATH]
      From a printed conversation, the answer to request ID (its "result", or its "error"), or the
      member PATH of it (dots between keys, numbers index arrays), as canonical JSON; a string
      is printed as it is. Exit 1 when there is no such answer or member.
"""

import json
import os
import selectors
import subprocess
import sys
import time


def get(path, rid, member):
    for line in open(path, encoding="utf-8"):
        try:
            m = json.loads(line)
        except ValueError:
            continue
        if isinstance(m, dict) and "method" not in m and m.get("id") == json.loads(rid):
            value = {"error": m["error"]} if "error" in m else m.get("result")
            for key in member.split(".") if member else []:
                try:
                    value = value[int(key)] if isinstance(value, list) else value[key]
                except (KeyError, IndexError, ValueError, TypeError):
                    sys.exit(f"t0620-bridge: answer {rid} has no {member}")
            if isinstance(value, str):
                print(value)
            else:
                print(json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False))
            return
    sys.exit(f"t0620-bridge: no answer to request {rid} in {path}")


def drive(args):
    timeout, answers = 60.0, {}
    while args[0] != "--":
        if args[0] == "--timeout":
            timeout = float(args[1])
        elif args[0] == "--answer":
            method, _, result = args[1].partition("=")
            answers[method] = json.loads(result)
        args = args[2:]
    bridge = subprocess.Popen(args[1:], stdin=subprocess.PIPE, stdout=subprocess.PIPE)
    selector = selectors.DefaultSelector()
    selector.register(bridge.stdout, selectors.EVENT_READ)
    out = sys.stdout.buffer
    partial = b""

    def stop(code, why):
        out.flush()
        bridge.kill()
        bridge.wait()
        print(f"t0620-bridge: {why}", file=sys.stderr)
        sys.exit(code)

    def answer_up(message):
        method = message["method"]
        if method in answers:
            reply = {"jsonrpc": "2.0", "id": message["id"], "result": answers[method]}
        else:
            reply = {"jsonrpc": "2.0", "id": message["id"],
                     "error": {"code": -32601, "message": f"no answer for {method}"}}
        bridge.stdin.write(json.dumps(reply).encode() + b"\n")
        bridge.stdin.flush()

    def wait(outstanding):
        nonlocal partial
        deadline = time.monotonic() + timeout
        while outstanding:
            left = deadline - time.monotonic()
            if left <= 0 or not selector.select(left):
                stop(124, f"no answer to {sorted(outstanding, key=str)} in {timeout:g} s")
            chunk = os.read(bridge.stdout.fileno(), 1 << 20)
            if not chunk:
                stop(1, f"the bridge's output ended with {sorted(outstanding, key=str)} unanswered")
            *lines, partial = (partial + chunk).split(b"\n")
            for line in lines:
                out.write(line + b"\n")
                out.flush()
                message = json.loads(line)
                if "method" in message and "id" in message:
                    answer_up(message)
                elif "method" not in message:
                    outstanding.discard(json.dumps(message.get("id")))

    rounds = sys.stdin.read().split("\n\n")
    for round_ in rounds:
        lines = [line for line in round_.split("\n") if line.strip()]
        outstanding = set()
        for line in lines:
            message = json.loads(line)
            if "id" in message:
                outstanding.add(json.dumps(message["id"]))
            bridge.stdin.write(line.encode() + b"\n")
        bridge.stdin.flush()
        wait(outstanding)
    bridge.stdin.close()
    rest = b""
    deadline = time.monotonic() + timeout
    while True:
        left = deadline - time.monotonic()
        if left <= 0 or not selector.select(left):
            stop(124, f"the bridge did not end within {timeout:g} s of its input's end")
        chunk = os.read(bridge.stdout.fileno(), 1 << 20)
        if not chunk:
            break
        rest += chunk
    out.write(partial + rest)
    out.flush()
    sys.exit(bridge.wait())


if sys.argv[1] == "--get":
    get(sys.argv[2], sys.argv[3], sys.argv[4] if len(sys.argv) > 4 else "")
else:
    drive(sys.argv[1:])
