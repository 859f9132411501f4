#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
# sion-sandbox's per-command wall time, a report and never a gate (issue 3, "Benchmark"): the median
# of N runs of `sion-sandbox exec -- /bin/true` against bare bwrap with exactly the same layout (read
# from a running sandbox's bwrap command line, the seccomp filter included, run by the same user:
# as root, uid 2000010001), and a command in a warm `serve` sandbox against a
# plain fork+exec of the same command; and a command with the Docker backend, when an engine runs and
# SION_TEST_IMAGE names an image on this machine by digest (scripts/docker-test-env prints one);
# otherwise it says why and skips that figure.
#
#   tests/bench/sandbox.py [--bin DIR] [--runs N]      (DIR: where sion-sandbox is; default: PATH)
import argparse
import json
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time


def spawn_wait(argv, pass_fds=()):
    """Wall time of one run, spawned with posix_spawn (what every variant pays alike)."""
    devnull = os.open(os.devnull, os.O_RDWR)
    actions = [(os.POSIX_SPAWN_DUP2, devnull, 0), (os.POSIX_SPAWN_DUP2, devnull, 1)]
    start = time.perf_counter()
    pid = os.posix_spawn(argv[0], argv, os.environ, file_actions=actions)
    _, status = os.waitpid(pid, 0)
    elapsed = time.perf_counter() - start
    os.close(devnull)
    if os.waitstatus_to_exitcode(status) != 0:
        sys.exit(f"sandbox.py: {argv[0]} exited with {os.waitstatus_to_exitcode(status)}")
    return elapsed


def median_ms(samples):
    return statistics.median(samples) * 1000


def bwrap_layout(sandbox, workspace):
    """bwrap's argv as sion-sandbox runs it, read from /proc while a sandbox sleeps."""
    p = subprocess.Popen([sandbox, "exec", "--workspace", workspace, "--", "sleep", "10"])
    try:
        for _ in range(200):
            children = open(f"/proc/{p.pid}/task/{p.pid}/children").read().split()
            if children:
                argv = open(f"/proc/{children[0]}/cmdline", "rb").read().split(b"\0")[:-1]
                if argv and argv[0].endswith(b"bwrap"):
                    return [a.decode() for a in argv]
            time.sleep(0.01)
        sys.exit("sandbox.py: cannot see the sandbox's bwrap")
    finally:
        p.kill()
        p.wait()


# As root, sion-sandbox stages the workspace and itself at /run/0 and /run/1 of a mount namespace of
# its own and runs bwrap as this uid (sandboxd/stage.hpp); bare bwrap is given the paths themselves,
# and runs as the same uid.
HOST_ID = 2000010001


def bare_command(layout, workspace, sandbox, seccomp):
    """The same layout, running /bin/true directly; and the descriptors it reads, each with what
    it holds: ("file", a host's file) for a --file copy, ("data", bytes) for an --ro-bind-data pipe
    or the --seccomp filter."""
    staged = {"/run/0": workspace, "/run/1": os.path.realpath(sandbox)} if os.geteuid() == 0 else {}
    out, data, i = [], [], 0
    cut = layout.index("--")
    while i < cut:
        if layout[i] in ("--ro-bind-data", "--file"):
            data.append((layout[i + 1], ("file", layout[i + 2]) if layout[i] == "--file"
                         else ("data", b"x:x:1:1::/:/bin/sh\n")))
            out += layout[i:i + 3]
            i += 3
            continue
        if layout[i] == "--seccomp":
            data.append((layout[i + 1], ("data", seccomp)))
            out += layout[i:i + 2]
            i += 2
            continue
        out.append(staged.get(layout[i], layout[i]))
        i += 1
    return out + ["--", "/bin/true"], data


def seccomp_filter(build):
    """The filter sion-sandbox gives bwrap, as the build compiled it."""
    text = open(os.path.join(build, "sandboxd", "seccomp_filter.inc")).read()
    return bytes(int(h, 16) for h in re.findall(r"0x([0-9a-f]{2})", text))


def with_data_fds(argv, fds):
    """Runs argv with each of `fds` open (bare_command's), as HOST_ID when this is root."""
    opened = []
    for fd, (kind, what) in fds:
        if kind == "file":
            r = os.open(what, os.O_RDONLY)
        else:
            r, w = os.pipe()
            os.write(w, what)
            os.close(w)
        os.dup2(r, int(fd), inheritable=True)
        os.close(r)
        opened.append(int(fd))
    root = os.geteuid() == 0
    groups = os.getgroups()
    if root:
        os.setgroups([])
        os.setresgid(HOST_ID, HOST_ID, 0)
        os.setresuid(HOST_ID, HOST_ID, 0)
    try:
        return spawn_wait(argv)
    finally:
        if root:
            os.setresuid(0, 0, 0)
            os.setresgid(0, 0, 0)
            os.setgroups(groups)
        for fd in opened:
            os.close(fd)


def warm(sandbox, workspace, runs):
    p = subprocess.Popen([sandbox, "serve", "--workspace", workspace], stdin=subprocess.PIPE,
                         stdout=subprocess.PIPE)

    def call(i):
        line = {"jsonrpc": "2.0", "id": i, "method": "sandbox/exec", "params": {"argv": ["/bin/true"]}}
        p.stdin.write((json.dumps(line) + "\n").encode())
        p.stdin.flush()
        answer = json.loads(p.stdout.readline())
        if answer.get("result", {}).get("exit") != 0:
            sys.exit(f"sandbox.py: the warm sandbox answered {answer}")

    for i in range(5):
        call(i)
    samples = []
    for i in range(runs):
        start = time.perf_counter()
        call(100 + i)
        samples.append(time.perf_counter() - start)
    p.stdin.close()
    p.wait()
    return samples


def docker(sandbox, workspace, runs):
    """Per-command wall time with the Docker backend, or why it cannot be measured here."""
    if not shutil.which("docker"):
        return None, "docker is not installed"
    try:
        info = subprocess.run(["docker", "info"], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                              timeout=20)
    except subprocess.TimeoutExpired:
        info = None
    if info is None or info.returncode != 0:
        return None, "Docker is not running"
    image = os.environ.get("SION_TEST_IMAGE")
    if not image:
        return None, "no image: set SION_TEST_IMAGE to an image on this machine, name@sha256:<digest>"
    argv = [sandbox, "exec", "--backend", f"docker:{image}", "--workspace", workspace, "--", "/bin/true"]
    spawn_wait(argv)
    return [spawn_wait(argv) for _ in range(runs)], None


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--bin", default=None)
    ap.add_argument("--runs", type=int, default=30)
    args = ap.parse_args()
    sandbox = shutil.which("sion-sandbox", path=args.bin or os.environ.get("PATH"))
    if not sandbox or not shutil.which("bwrap"):
        sys.exit("sandbox.py: needs sion-sandbox (--bin DIR) and bwrap")
    workspace = tempfile.mkdtemp(prefix="sion-bench.")
    os.chmod(workspace, 0o777)  # bare bwrap as HOST_ID enters it without sion's idmapped mount
    try:
        build = os.path.dirname(os.path.dirname(sandbox))
        bare, data = bare_command(bwrap_layout(sandbox, workspace), workspace, sandbox,
                                  seccomp_filter(build))
        ours = [sandbox, "exec", "--workspace", workspace, "--", "/bin/true"]
        for _ in range(5):
            with_data_fds(bare, data)
            spawn_wait(ours)
        b, o, t = [], [], []
        for _ in range(args.runs):  # interleaved, so that the machine's load falls on all alike
            b.append(with_data_fds(bare, data))
            o.append(spawn_wait(ours))
            t.append(spawn_wait(["/bin/true"]))
        w = warm(sandbox, workspace, args.runs)
        d, why = docker(sandbox, workspace, args.runs)
        print(f"median of {args.runs} runs, ms")
        print(f"  bare bwrap, same layout, /bin/true   {median_ms(b):7.2f}")
        print(f"  sion-sandbox exec -- /bin/true       {median_ms(o):7.2f}   ({median_ms(o) / median_ms(b):.2f}x bare bwrap)")
        print(f"  fork+exec of /bin/true               {median_ms(t):7.2f}")
        print(f"  warm serve, /bin/true, round trip    {median_ms(w):7.2f}   ({median_ms(w) / median_ms(t):.2f}x fork+exec)")
        if d:
            print(f"  Docker backend, exec -- /bin/true    {median_ms(d):7.2f}   ({median_ms(d) / median_ms(b):.2f}x bare bwrap)")
        else:
            print(f"  Docker: skipped, {why}")
    finally:
        shutil.rmtree(workspace, ignore_errors=True)


if __name__ == "__main__":
    main()
