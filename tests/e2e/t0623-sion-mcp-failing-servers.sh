#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Servers that fail at the operator's own commands: one that dies at start says why on the
# operator's terminal (the last lines it wrote to its standard error, bounded to 10 lines and 2 KiB,
# control characters escaped), with a hint naming a variable of the operator's that its words name
# and that --env did not give it; nothing of it is stored or reaches a session. A program that
# prints something not JSON-RPC and never answers fails at once with that line, escaped and cut,
# exit 65, and one that writes a line of its own before answering still works.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/t0620-helpers.bash"

command -v sqlite3 >/dev/null || skip "sqlite3 is not installed (Debian package sqlite3)"
fixtures="$SION_SOURCE_DIR/tests/fixtures/mcp"
db="$SION_HOME/sion.db"
cd "$scratch" || exit 1

# A server that needs a key: without it in its environment it says so on stderr (after a line of
# noise with an escape sequence) and exits 1; with it, it serves an echo. While `broken` exists it
# fails the same way whatever it has.
cat >keyed.py <<PY
import os, sys
sys.path.insert(0, "$fixtures")
sys.dont_write_bytecode = True
from fixture import ECHO, serve
if "BRAVE_API_KEY" not in os.environ or os.path.exists("$scratch/broken"):
    sys.stderr.write("\x1b[31mstarting\x1b[0m the search server\n\n")
    sys.stderr.write("Error: BRAVE_API_KEY environment variable is required\n")
    sys.exit(1)
serve("keyed", [ECHO])
PY
export BRAVE_API_KEY=sk-test-not-a-real-key-1234

# add: the error's line, then the server's last words, then the hint; nothing on the shelf.
expect_exit 69 timeout 60 sion agent mcp add search -- python3 keyed.py
expect_out ""
expect_err "sion-mcp: MCP server search ended (its program exited with status 1)
sion-mcp: MCP server search wrote last on its standard error:
  \\e[31mstarting\\e[0m the search server
  Error: BRAVE_API_KEY environment variable is required
sion-mcp: BRAVE_API_KEY is set in your environment but not given to the server: add --env BRAVE_API_KEY"
expect_exit 0 sqlite3 "$db" "SELECT count(*) FROM mcp_servers" && expect_out 0

# Given the variable, it is added; its key is nowhere in sion.db.
expect_exit 0 timeout 60 sion agent mcp add search --env BRAVE_API_KEY -- python3 keyed.py
expect_grep '^echo \(read\): Say the message back\.$' "$scratch/out"
expect_err ""

# review of a server that now fails: its words, and a hint that fits a server on the shelf only
# when the variable is named and not given. The shelf is as it was.
sqlite3 "$db" ".backup before.db"
touch broken
expect_exit 69 timeout 60 sion agent mcp review search --accept
expect_err "sion-mcp: MCP server search ended (its program exited with status 1)
sion-mcp: MCP server search wrote last on its standard error:
  \\e[31mstarting\\e[0m the search server
  Error: BRAVE_API_KEY environment variable is required"
expect_exit 0 sqlite3 "$db" "SELECT name, config FROM mcp_servers; SELECT server, tool, digest FROM mcp_pins"
sqlite3 before.db "SELECT name, config FROM mcp_servers; SELECT server, tool, digest FROM mcp_pins" >before.rows
expect_text before.rows "the shelf after a failed review" "$(cat "$scratch/out")"
expect_exit 0 sqlite3 "$db" "SELECT count(*) FROM mcp_servers WHERE config LIKE '%BRAVE_API_KEY environment%'"
expect_out 0
grep -c "environment variable is required" "$db"* >/dev/null && fail "the server's words are in sion.db" || ok

# A session's bridge never shows them: the server is named as failed, without its words.
{
    req 1 mcp/state
} | expect_exit 0 bridge -- sion-mcp serve search
expect_got 'failed' 1 servers.0.state
expect_got 'did not answer: MCP server search ended (its program exited with status 1)' 1 servers.0.message
grep -q 'environment variable is required' "$scratch/err" "$scratch/out" && fail "serve shows the server's stderr" || ok
rm broken

# Bounded: of 30 lines of 100 bytes, the last 10; of one line of 5000 bytes, its last 2 KiB, marked
# as cut. A variable named that is not set, or is given, is no hint; nor are words in lowercase.
cat >chatty.sh <<'SH'
#!/bin/sh
i=1
while [ $i -le 30 ]; do
    printf 'line %02d %s\n' $i "$(printf '%090d' 0)" >&2
    i=$((i + 1))
done
echo "NOT_SET_ANYWHERE and HOME and path and BRAVE_API_KEY" >&2
exit 3
SH
chmod +x chatty.sh
expect_exit 69 timeout 60 sion agent mcp add chatty -- ./chatty.sh
expect_grep "^sion-mcp: MCP server chatty ended \(its program exited with status 3\)$" "$scratch/err"
[ "$(grep -c '^  line ' "$scratch/err")" = 9 ] && ok || fail "not the last 9 lines of 30: $(cat "$scratch/err")"
expect_grep '^  line 22 0{90}$' "$scratch/err"
expect_grep '^  line 30 0{90}$' "$scratch/err"
expect_grep '^  NOT_SET_ANYWHERE and HOME and path and BRAVE_API_KEY$' "$scratch/err"
expect_grep '^sion-mcp: BRAVE_API_KEY is set in your environment but not given to the server: add --env BRAVE_API_KEY$' "$scratch/err"
[ "$(wc -l <"$scratch/err")" = 13 ] && ok || fail "more than the error, 10 lines and a hint: $(cat "$scratch/err")"
cat >long.sh <<'SH'
#!/bin/sh
head -c 5000 /dev/zero | tr '\0' 'x' >&2
exit 1
SH
chmod +x long.sh
expect_exit 69 timeout 60 sion agent mcp add long -- ./long.sh
expect_grep "^  …x{2048}$" "$scratch/err"
[ "$(wc -l <"$scratch/err")" = 3 ] && ok || fail "not 3 lines: $(cat "$scratch/err")"

# A program that prints and never answers fails at once (not after the timeout of 60 s, which the
# timeout here only guards), with its first line not JSON-RPC, escaped; cut when long.
expect_exit 65 timeout 50 sion agent mcp add talker -- sh -c 'printf "Listening on \033[1mport\033[0m 8080\n{\"half\":\n"; exec sleep 300'
expect_err "sion-mcp: MCP server talker wrote a line that is not JSON-RPC on its standard output and no answer: 'Listening on \\e[1mport\\e[0m 8080'"
expect_exit 65 timeout 50 sion agent mcp add talker -- sh -c 'printf "%0200d\n" 7; exec sleep 300'
expect_err "sion-mcp: MCP server talker wrote a line that is not JSON-RPC on its standard output and no answer: '$(printf '%080d' 0)…'"
expect_exit 0 sqlite3 "$db" "SELECT group_concat(name) FROM mcp_servers" && expect_out search

# One that writes a line of its own before each answer still works.
expect_exit 0 timeout 60 sion agent mcp add garbage -- python3 "$fixtures/garbage.py"
expect_grep '^echo \(read\): Say the message back\.$' "$scratch/out"

expect_exit 0 sqlite3 "$db" 'PRAGMA integrity_check' && expect_out ok
done_testing
