#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
# Types lines into an interactive shell on a pseudo-terminal, presses TAB at the end of each, and
# prints the line as the shell's completion left it, one a line: what a person sees complete.
#   shell_complete.py bash|zsh|fish SETUP TEXT...
# SETUP is a file of the shell's own commands, run first (it loads the completions). A key of our
# own (C-x p) has the shell add its line to a file, which is read back; C-u clears it for the
# next. Each step waits at most 30 s for the shell, then fails: a bound, not a timed check.
import os
import pty
import select
import signal
import sys
import tempfile
import time

shell, setup_file, texts = sys.argv[1], sys.argv[2], sys.argv[3:]
work = tempfile.mkdtemp(prefix="complete.")
dump = os.path.join(work, "line")
setup = open(setup_file).read()

# Each shell's binding of C-x p to "add the line to $DUMP", and how it starts with none of the
# user's files.
if shell == "bash":
    argv = ["bash", "--noprofile", "--norc", "-i"]
    bind = 'bind -x \'"\\C-xp": printf "%s\\n" "$READLINE_LINE" >> "$DUMP"\'\n'
elif shell == "zsh":
    argv = ["zsh", "-f", "-i"]
    bind = ('dump() { print -r -- "$BUFFER" >> "$DUMP" }\nzle -N dump\nbindkey "^Xp" dump\n'
            'bindkey "^U" kill-whole-line\n')
elif shell == "fish":
    argv = ["fish", "--no-config", "-i"]
    bind = "bind \\cxp 'commandline >> $DUMP'\n"
else:
    sys.exit(f"shell_complete.py: unknown shell {shell}")

env = dict(os.environ, DUMP=dump, TERM="xterm", PS1="$ ", HISTFILE="/dev/null")
pid, fd = pty.fork()
if pid == 0:
    os.chdir(work)
    os.execvpe(argv[0], argv, env)

seen = b""


def drain(seconds):
    """Reads what the shell wrote for up to `seconds` (its screen is not checked, only kept)."""
    global seen
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        ready, _, _ = select.select([fd], [], [], max(0.0, end - time.monotonic()))
        if not ready:
            return
        try:
            data = os.read(fd, 65536)
        except OSError:
            return
        if not data:
            return
        seen += data


def wait_for_lines(count):
    """The first `count` lines the shell added to the file, once it has."""
    end = time.monotonic() + 30
    while time.monotonic() < end:
        drain(0.05)
        try:
            with open(dump) as f:
                lines = f.read().split("\n")
        except FileNotFoundError:
            continue
        if len(lines) > count:
            return lines[:count]
    os.kill(pid, signal.SIGKILL)
    sys.stderr.write("shell_complete.py: the shell did not answer within 30 s; its screen:\n")
    sys.stderr.write(seen.decode(errors="replace")[-2000:] + "\n")
    sys.exit(1)


os.write(fd, (setup + bind).encode())
# The shell is ready once it answers the key: an empty line first.
os.write(fd, b"\x18p")
wait_for_lines(1)
for n, text in enumerate(texts, start=2):
    os.write(fd, text.encode() + b"\t")
    os.write(fd, b"\x18p")
    print(wait_for_lines(n)[-1])
    os.write(fd, b"\x15")
os.write(fd, b"exit\n")
drain(1)
os.kill(pid, signal.SIGKILL)
os.waitpid(pid, 0)
