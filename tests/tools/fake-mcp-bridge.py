#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
# A stand-in for `sion-mcp serve`, for sion-run's suites: it speaks the bridge's side of the pipes
# protocol (mcp/state, tools/call, prompts/get, mcp/close, and elicitation/create and
# sampling/createMessage sent up while a call is open) as a JSON script says, with no MCP server
# behind it.
#
#   fake-mcp-bridge.py serve [--ask] [--sampling-model SPEC] NAME...
#
# SION_FAKE_MCP names the script:
#   {"servers": {"notes": {"state": "connected", "notices": [...], "tools": [{"name": "notes_add_note",
#                          "description": "...", "inputSchema": {...}, "effect": "write",
#                          "idempotent": false, "taints": false}]},
#                "web": {"state": "failed", "message": "did not answer: ..."}},
#    "calls": {"notes_add_note": [STEP, ...]},
#    "prompts": {"notes": {"release": {"text": "Write the notes of release {version}."}}}}
# A server named on the command line but not in the script did not answer. The Nth call of a tool
# plays its Nth STEP, the last one again after that:
#   {"text": "kept note {name}", "isError": false}  the result; {ARG} is the call's argument ARG,
#                                                   {replies} the compact JSON of the answers to "ask"
#   {"ask": [{"method": "elicitation/create", "params": {...}}, ...], "text": "..."}
#                                                   sent up one after another before the result
#   {"error": {"code": -32001, "message": "..."}}   an error instead of a result
#   {"die": 1}                                      exits with that status without answering
#   {"sleep": 30, ...}                              waits that long first (a server that hangs);
#                                                   without "ask", "die" or "servers" the call is
#                                                   answered from a thread of its own, so that
#                                                   calls made together run together, and its
#                                                   start and end are logged: {"call", "started",
#                                                   "ended"} (seconds since the epoch)
#   "servers": {...} in a step                      the servers from then on (tools/list_changed)
# A call of a tool no connected server offers is answered -32002, or -32003 when its server is not
# connected. Each line read, and the command line and pid first, is appended as JSON to
# SION_FAKE_MCP_LOG when it is set.
import json
import os
import sys
import threading
import time

calls_made = {}
log_path = os.environ.get("SION_FAKE_MCP_LOG")


logging = threading.Lock()


def log(entry):
    if log_path:
        with logging, open(log_path, "a") as f:
            f.write(json.dumps(entry, sort_keys=True, separators=(",", ":")) + "\n")


sending = threading.Lock()


def send(message):
    message["jsonrpc"] = "2.0"
    with sending:
        sys.stdout.write(json.dumps(message, separators=(",", ":")) + "\n")
        sys.stdout.flush()


def read():
    line = sys.stdin.readline()
    if not line:
        sys.exit(0)
    log(json.loads(line))
    return json.loads(line)


def state_of(servers, names):
    out = []
    for name in names:
        s = dict(servers.get(name) or {"state": "failed",
                                       "message": "did not answer: there is no server %s in the script" % name})
        s["name"] = name
        s.setdefault("notices", [])
        s.setdefault("tools", [])
        out.append(s)
    return {"servers": out}


def fill(text, arguments, replies):
    for key, value in arguments.items():
        text = text.replace("{%s}" % key, value if isinstance(value, str) else json.dumps(value))
    return text.replace("{replies}", json.dumps(replies, sort_keys=True, separators=(",", ":")))


def ask_up(requests):
    replies = []
    for n, r in enumerate(requests, 1):
        send({"id": "up%d" % n, "method": r["method"], "params": r.get("params", {})})
        while True:
            m = read()
            if m.get("id") == "up%d" % n and "method" not in m:
                replies.append(m.get("result", m.get("error")))
                break
    return replies


def call(script, servers, names, params):
    name = params.get("name", "")
    arguments = params.get("arguments", {})
    offered = {t["name"] for n in names for t in servers.get(n, {}).get("tools", [])
               if servers[n].get("state") == "connected"}
    if name not in offered:
        server = name.split("_", 1)[0]
        if server in names and servers.get(server, {}).get("state") != "connected":
            return None, {"code": -32003, "message": "MCP server %s is not connected" % server}
        return None, {"code": -32002, "message": "there is no tool named %s" % name}
    steps = script.get("calls", {}).get(name, [{"text": "called %s" % name}])
    n = calls_made.get(name, 0)
    calls_made[name] = n + 1
    step = steps[min(n, len(steps) - 1)]
    if step.get("sleep") and not any(k in step for k in ("ask", "die", "servers")):
        return "beside", (step, name, arguments)
    time.sleep(step.get("sleep", 0))
    if "die" in step:
        sys.exit(step["die"])
    replies = ask_up(step.get("ask", []))
    if "servers" in step:
        servers.clear()
        servers.update(step["servers"])
    return answer(step, arguments, replies)


def answer(step, arguments, replies=()):
    if "error" in step:
        return None, step["error"]
    text = fill(step.get("text", ""), arguments, list(replies))
    result = {"text": text, "isError": step.get("isError", False),
              "content": [{"type": "text", "text": text}]}
    if "structuredContent" in step:
        result["structuredContent"] = step["structuredContent"]
    return result, None


def beside(request_id, step, name, arguments):
    """A call that sleeps, answered from its own thread."""
    started = time.time()
    time.sleep(step["sleep"])
    result, error = answer(step, arguments)
    log({"call": name, "started": started, "ended": time.time()})
    if error is not None:
        send({"id": request_id, "error": error})
    else:
        send({"id": request_id, "result": result})


def prompt(script, params):
    p = script.get("prompts", {}).get(params.get("server"), {}).get(params.get("name"))
    if p is None:
        return None, {"code": -32002, "message": "MCP server %s has no prompt %s" %
                      (params.get("server"), params.get("name"))}
    return {"text": fill(p["text"], params.get("arguments", {}), [])}, None


def main():
    args = sys.argv[1:]
    log({"argv": args, "pid": os.getpid()})
    if not args or args[0] != "serve":
        sys.stderr.write("sion-mcp: give serve\n")
        sys.exit(64)
    names = []
    i = 1
    while i < len(args):
        if args[i] == "--sampling-model":
            i += 2
            continue
        if args[i] != "--ask":
            names.append(args[i])
        i += 1
    try:
        with open(os.environ["SION_FAKE_MCP"]) as f:
            script = json.load(f)
    except (KeyError, OSError, ValueError) as e:
        sys.stderr.write("sion-mcp: cannot read the script SION_FAKE_MCP names: %s\n" % e)
        sys.exit(66)
    servers = dict(script.get("servers", {}))
    while True:
        m = read()
        if "method" not in m or "id" not in m:
            continue
        method, params = m["method"], m.get("params", {})
        result, error = None, None
        if method == "mcp/state":
            result = state_of(servers, names)
        elif method == "tools/call":
            result, error = call(script, servers, names, params)
            if result == "beside":
                threading.Thread(target=beside, args=(m["id"], *error), daemon=True).start()
                continue
        elif method == "prompts/get":
            result, error = prompt(script, params)
        elif method == "mcp/close":
            send({"id": m["id"], "result": {}})
            sys.exit(0)
        else:
            error = {"code": -32601, "message": "method not found: %s" % method}
        if error is not None:
            send({"id": m["id"], "error": error})
        else:
            send({"id": m["id"], "result": result})


if __name__ == "__main__":
    try:
        main()
    except BrokenPipeError:  # sion-run went away
        os._exit(0)
