#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
# Runs a command with a pseudo-terminal as its controlling terminal, stdin and stdout, and plays a
# person at it from a script of steps, one a line, for the e2e suites of sion's console:
#
#   pty_drive.py [--pipes] [--log FILE] [--timeout S] STEPS -- COMMAND [ARG...]
#
# With --pipes the command has no terminal at all: its stdin and stdout are pipes (stderr stays
# this program's), "interrupt" sends it SIGINT and "eof" closes its stdin.
#
# Steps (a file; '#' lines and blank lines are skipped):
#   expect TEXT      wait until TEXT has appeared on the terminal since the last expect matched
#                    (\n in TEXT is a line break; the terminal's CR LF is read as LF)
#   send TEXT        type TEXT and Enter
#   type TEXT        type TEXT without Enter
#   interrupt        type the terminal's interrupt character (Ctrl-C)
#   eof              type the terminal's end of file (Ctrl-D)
#   touch FILE       create FILE (a stand-in waiting on it goes on)
#   browse           be the person's browser: GET the address shown last after "Open this URL to
#                    authorize:", following its redirects (back to the login's port)
#   browse-paste TEXT  GET it without following, and send TEXT and the address it was sent to
#                    (a browser on another machine, whose person pastes where it landed)
#   sleep S          wait S seconds
# Everything the terminal showed is kept in --log. An expect that times out (--timeout, 30 s a
# step) names the step and what came since on stderr, kills the command and exits 124. Otherwise
# exits with the command's status (128+n for signal n) once it ends, within the same timeout.
import fcntl
import http.client
import os
import select
import signal
import sys
import termios
import time
import urllib.parse
import urllib.request


def usage(why):
    sys.stderr.write("pty_drive.py: %s\n" % why)
    sys.exit(64)


def parse(argv):
    log, timeout, pipes = None, 30.0, False
    i = 0
    while i < len(argv) and argv[i] != "--":
        if argv[i] == "--pipes":
            pipes, i = True, i + 1
        elif argv[i] == "--log" and i + 1 < len(argv):
            log, i = argv[i + 1], i + 2
        elif argv[i] == "--timeout" and i + 1 < len(argv):
            timeout, i = float(argv[i + 1]), i + 2
        else:
            break
    if i >= len(argv) or argv[i] == "--":
        usage("give a file of steps")
    steps_file = argv[i]
    if i + 2 >= len(argv) or argv[i + 1] != "--":
        usage("give the command after --")
    steps = []
    with open(steps_file, encoding="utf-8") as f:
        for n, line in enumerate(f, 1):
            line = line.rstrip("\n")
            if not line.strip() or line.lstrip().startswith("#"):
                continue
            word, _, rest = line.partition(" ")
            if word not in ("expect", "send", "type", "interrupt", "eof", "touch", "sleep",
                            "browse", "browse-paste"):
                usage("%s:%d: unknown step '%s'" % (steps_file, n, word))
            steps.append((n, word, rest.replace("\\n", "\n")))
    return log, timeout, pipes, steps, argv[i + 2:]


def spawn(command, pipes=False, on_terminal=(0, 1)):
    """Starts the command: its pid, the fd its output is read from, the one its input is
    written to, and the terminal's control characters (None with pipes). Its fds `on_terminal`
    are the pseudo-terminal (or the pipes); the others are this program's."""
    if pipes:
        out_r, out_w = os.pipe()
        in_r, in_w = os.pipe()
        ours, theirs, cc = (out_r, in_w), (in_r, out_w), None
    else:
        master, slave = os.openpty()
        ours, theirs, cc = (master, master), (slave, slave), termios.tcgetattr(slave)[6]
    pid = os.fork()
    if pid == 0:
        try:
            for fd in set(ours):
                os.close(fd)
            os.setsid()
            if not pipes:
                fcntl.ioctl(theirs[0], termios.TIOCSCTTY, 0)
            os.dup2(theirs[0], 0)
            if 1 in on_terminal:
                os.dup2(theirs[1], 1)
            for fd in set(theirs):
                if fd > 2:
                    os.close(fd)
            os.execvp(command[0], command)
        except OSError as e:
            sys.stderr.write("%s: cannot run '%s': %s\n"
                             % (os.path.basename(sys.argv[0]), command[0], e.strerror))
        os._exit(127)
    for fd in set(theirs):
        os.close(fd)
    return pid, ours[0], ours[1], cc


def main():
    log_path, timeout, pipes, steps, command = parse(sys.argv[1:])
    pid, master, to_it, cc = spawn(command, pipes)
    seen = b""     # everything shown, CR LF made LF
    matched = 0    # where the next expect starts looking
    status = None

    def pump(wait):
        nonlocal seen, status
        ready, _, _ = select.select([master], [], [], wait)
        if ready:
            try:
                data = os.read(master, 65536)
            except OSError:
                data = b""
            if data:
                seen += data.replace(b"\r\n", b"\n")
                return True
        if status is None:
            done, st = os.waitpid(pid, os.WNOHANG)
            if done:
                status = st
        return False

    def fail(n, why):
        sys.stderr.write("pty_drive.py: step at line %d: %s; the terminal showed since:\n%s\n"
                         % (n, why, seen[matched:].decode("utf-8", "replace")))
        try:
            os.kill(pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        keep()
        sys.exit(124)

    def keep():
        if log_path:
            with open(log_path, "wb") as f:
                f.write(seen)

    for n, word, rest in steps:
        if word == "expect":
            want = rest.encode()
            deadline = time.monotonic() + timeout
            while True:
                at = seen.find(want, matched)
                if at >= 0:
                    matched = at + len(want)
                    break
                if status is not None and not pump(0):
                    fail(n, "the command ended before '%s' showed" % rest)
                if time.monotonic() > deadline:
                    fail(n, "'%s' did not show within %g seconds" % (rest, timeout))
                pump(0.05)
        elif word == "send":
            os.write(to_it, rest.encode() + (b"\n" if pipes else b"\r"))
        elif word == "type":
            os.write(to_it, rest.encode())
        elif word == "interrupt":
            if pipes:
                os.kill(pid, signal.SIGINT)
            else:
                os.write(to_it, cc[termios.VINTR])
        elif word == "eof":
            if pipes:
                os.close(to_it)
            else:
                os.write(to_it, cc[termios.VEOF])
        elif word in ("browse", "browse-paste"):
            mark = b"Open this URL to authorize:\n"
            at = seen.rfind(mark)
            if at < 0:
                fail(n, "no address to authorize was shown")
            url = seen[at + len(mark):].split(b"\n", 1)[0].decode()
            try:
                if word == "browse":
                    urllib.request.urlopen(url, timeout=timeout).read()
                else:
                    parts = urllib.parse.urlsplit(url)
                    c = http.client.HTTPConnection(parts.hostname, parts.port, timeout=timeout)
                    c.request("GET", parts.path + "?" + parts.query)
                    landed = c.getresponse().getheader("Location") or ""
                    os.write(to_it, (rest + " " + landed).encode() + (b"\n" if pipes else b"\r"))
            except OSError as e:
                fail(n, "the browser could not open %s: %s" % (url, e))
        elif word == "touch":
            open(rest, "a").close()
        elif word == "sleep":
            end = time.monotonic() + float(rest)
            while time.monotonic() < end:
                pump(0.05)
    deadline = time.monotonic() + timeout
    while status is None:
        if time.monotonic() > deadline:
            fail(len(steps), "the command did not end within %g seconds" % timeout)
        pump(0.05)
    while pump(0):
        pass
    keep()
    if os.WIFSIGNALED(status):
        sys.exit(128 + os.WTERMSIG(status))
    sys.exit(os.WEXITSTATUS(status))


if __name__ == "__main__":
    main()
