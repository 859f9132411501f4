#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
# Runs a command with a pseudo-terminal as its controlling terminal and stdin, and answers the
# questions it asks there, as a person at the terminal would: for the e2e suites of programs that
# ask on /dev/tty (sion-run's "Run it? [y/N]").
#
#   pty_answer.py [--log FILE] [--timeout S] ANSWER... -- COMMAND [ARG...]
#
# Each time "[y/N] " appears on the terminal, the next ANSWER is typed, with a newline; the answer
# EOF types the terminal's end of file (^D) instead. The command's stdout and stderr are this
# program's own, so its transcript stays apart from what went through the terminal, which --log
# keeps (questions and the echoed answers, CR LF made LF). A question with no answer left is
# answered with EOF and named on stderr. Exits with the command's status (128+n for signal n), or
# 124 when it has not ended after --timeout seconds (60), having killed it.
import os
import select
import signal
import sys
import termios
import time

from pty_drive import spawn

PROMPT = b"[y/N] "


def usage(why):
    sys.stderr.write("pty_answer.py: %s\n" % why)
    sys.exit(64)


def parse(argv):
    log, timeout, answers = None, 60.0, []
    i = 0
    while i < len(argv) and argv[i] != "--":
        if argv[i] == "--log" and i + 1 < len(argv):
            log, i = argv[i + 1], i + 2
        elif argv[i] == "--timeout" and i + 1 < len(argv):
            timeout, i = float(argv[i + 1]), i + 2
        else:
            answers.append(argv[i])
            i += 1
    if i + 1 >= len(argv):
        usage("give the command after --")
    return log, timeout, answers, argv[i + 1:]


def type_answer(master, answer):
    if answer == "EOF":
        # The terminal's end of file: VEOF at the start of a line makes read() return 0.
        os.write(master, bytes([termios.tcgetattr(master)[6][termios.VEOF][0]]))
    else:
        os.write(master, answer.encode() + b"\n")


def main():
    log_path, timeout, answers, command = parse(sys.argv[1:])
    pid, master, _, _ = spawn(command, on_terminal=(0,))
    seen = b""
    asked = 0
    deadline = time.monotonic() + timeout
    status = None
    while True:
        left = deadline - time.monotonic()
        if left <= 0:
            os.killpg(pid, signal.SIGKILL)
            os.waitpid(pid, 0)
            sys.stderr.write("pty_answer.py: '%s' did not end within %g s\n" % (command[0], timeout))
            sys.exit(124)
        ready, _, _ = select.select([master], [], [], min(left, 0.2))
        if ready:
            try:
                chunk = os.read(master, 4096)
            except OSError:  # EIO: every end of the terminal is closed
                chunk = b""
            if not chunk:
                break
            seen += chunk
            while seen.count(PROMPT) > asked:
                if asked < len(answers):
                    type_answer(master, answers[asked])
                else:
                    sys.stderr.write("pty_answer.py: no answer left for question %d\n" % (asked + 1))
                    type_answer(master, "EOF")
                asked += 1
        else:
            done, st = os.waitpid(pid, os.WNOHANG)
            if done:
                status = st
                pid = None
                break
    if pid is not None and status is None:
        _, status = os.waitpid(pid, 0)
    os.close(master)
    if log_path:
        with open(log_path, "wb") as f:
            f.write(seen.replace(b"\r\n", b"\n"))
    if os.WIFSIGNALED(status):
        sys.exit(128 + os.WTERMSIG(status))
    sys.exit(os.WEXITSTATUS(status))


if __name__ == "__main__":
    main()
