#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The front door: --version, --help, routing to dashed programs, the errors for unknown words,
# missing programs and bad options, and a closed stdout.
. "$(dirname "$0")/lib.sh"

expect_exit 0 sion --version && expect_out "sion $(sed -n 's/^project(sion VERSION \([0-9.]*\).*/\1/p' "$SION_SOURCE_DIR/CMakeLists.txt")"
expect_exit 0 sion --help && expect_grep '^usage: sion ' "$scratch/out"
expect_exit 0 sion -h && expect_grep '^Options:' "$scratch/out"

# Usage errors: one line naming what is wrong, exit 64.
expect_exit 64 sion && expect_err "sion: a command is needed; usage: sion agent|sandbox|mcp|setup|help [<args>...]"
expect_exit 64 sion --frob && expect_err "sion: unknown option '--frob'"
expect_exit 64 sion frob && expect_err "sion: unknown command 'frob'; usage: sion agent|sandbox|mcp|setup|help [<args>...]"
expect_exit 64 sion agent && expect_err "sion: 'agent' needs a command; usage: sion agent run|chat|create|list|sessions|show|credential|skills|chatgpt|mcp|hooks|routes [<args>...]"
expect_exit 64 sion agent frob --x && expect_err "sion: unknown command 'frob'; usage: sion agent run|chat|create|list|sessions|show|credential|skills|chatgpt|mcp|hooks|routes [<args>...]"
# sion's own MCP servers.
expect_exit 64 sion mcp frob && expect_err "sion: unknown command 'frob'; usage: sion mcp mail|calendar|documents [<args>...]"
expect_exit 64 sion mcp && expect_err "sion: 'mcp' needs a command; usage: sion mcp mail|calendar|documents [<args>...]"

# Routing: a stand-in program on SION_EXEC_PATH records its argv.
fake="$scratch/libexec"
mkdir -p "$fake"
for p in sion-run sion-mcp sion-hooks sion-route sion-sandbox sion-documents sion-mail sion-calendar; do
    printf '#!/bin/sh\nprintf "%%s" "$(basename "$0")"; printf " [%%s]" "$@"; echo\nexit 7\n' >"$fake/$p"
    chmod +x "$fake/$p"
done
route() { SION_EXEC_PATH="$fake" expect_exit 7 sion "$@"; }
route agent run coder abc --task 'two words' && expect_out "sion-run [run] [coder] [abc] [--task] [two words]"
route agent create coder --autonomy L3 && expect_out "sion-run [create] [coder] [--autonomy] [L3]"
route agent list && expect_out "sion-run [list]"
route agent sessions && expect_out "sion-run [sessions]"
route agent show af88d6083cc5587b --json && expect_out "sion-run [show] [af88d6083cc5587b] [--json]"
route agent mcp add notes -- python3 s.py && expect_out "sion-mcp [add] [notes] [--] [python3] [s.py]"
route agent hooks list && expect_out "sion-hooks [list]"
route agent routes test lead 'Fix it' && expect_out "sion-route [test] [lead] [Fix it]"
route sandbox exec -- id && expect_out "sion-sandbox [exec] [--] [id]"
route mcp documents --dir docs && expect_out "sion-documents [--dir] [docs]"
route mcp mail --imap && expect_out "sion-mail [--imap]"
route mcp calendar --help && expect_out "sion-calendar [--help]"
# The program's status is sion's: it replaced sion by exec.
SION_EXEC_PATH="$fake" expect_exit 7 sion sandbox check

# Looked up in SION_EXEC_PATH first, then <bindir>/../libexec/sion, then PATH.
mkdir -p "$scratch/root/bin" "$scratch/root/libexec/sion" "$scratch/path"
cp "$SION_BIN/sion" "$scratch/root/bin/sion"
cp "$fake/sion-hooks" "$scratch/root/libexec/sion/sion-hooks"
printf '#!/bin/sh\necho from-path\n' >"$scratch/path/sion-hooks"
chmod +x "$scratch/path/sion-hooks"
SION_EXEC_PATH= PATH="$scratch/path:/usr/bin:/bin" expect_exit 7 "$scratch/root/bin/sion" agent hooks list && expect_out "sion-hooks [list]"
rm "$scratch/root/libexec/sion/sion-hooks"
SION_EXEC_PATH= PATH="$scratch/path:/usr/bin:/bin" expect_exit 0 "$scratch/root/bin/sion" agent hooks list && expect_out "from-path"

# A program that is not installed.
SION_EXEC_PATH="$scratch/empty" PATH=/usr/bin:/bin expect_exit 127 "$scratch/root/bin/sion" agent routes show && expect_err "sion: 'routes' is not installed: sion-route not found"
# One that cannot be executed.
mkdir -p "$scratch/noexec" && cp "$fake/sion-run" "$scratch/noexec/sion-run" && chmod -x "$scratch/noexec/sion-run"
SION_EXEC_PATH="$scratch/noexec" PATH=/usr/bin:/bin expect_exit 127 "$scratch/root/bin/sion" agent run x

# sion help X opens man sion-X.
printf '#!/bin/sh\necho "man $*"\n' >"$scratch/path/man" && chmod +x "$scratch/path/man"
PATH="$scratch/path:/usr/bin:/bin" expect_exit 0 "$SION_BIN/sion" help sandbox && expect_out "man sion-sandbox"
PATH="$scratch/path:/usr/bin:/bin" expect_exit 0 "$SION_BIN/sion" help routes && expect_out "man sion-route"
PATH="$scratch/path:/usr/bin:/bin" expect_exit 0 "$SION_BIN/sion" help documents && expect_out "man sion-documents"
PATH="$scratch/path:/usr/bin:/bin" expect_exit 0 "$SION_BIN/sion" help && expect_out "man sion"

# A closed stdout: the write error is reported on one line, exit 74.
( trap '' PIPE; exec sion --help ) >&- 2>"$scratch/err"
# fd 1 closed at start is guarded to /dev/null, so that is not an error.
[ $? -eq 0 ] && ok || fail "sion --help with stdout closed"
if [ -w /dev/full ]; then
    expect_exit 74 sh -c 'sion --help >/dev/full' && expect_err "sion: write error: No space left on device"
fi

done_testing
