#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The seed's MCP sessions end to end, byte for byte once ids are normalised: the notes server of
# examples/mcp-notes added to the shelf, a session calling its tools through `sion-mcp serve`; the
# rug-pull (a description changed and a tool added between starts) leaving both unoffered with the
# seed's lines; `review --accept` offering them again; and the journal's first real user: the same
# non-idempotent call made twice in a session runs once; a call that got no answer (its --timeout
# passed, or sion-run was killed during it) is uncertain, and is not made again when the session is
# continued.
. "$(dirname "$0")/lib.sh"

cd "$scratch" || exit 1
mkdir notes
cp "$SION_SOURCE_DIR/examples/mcp-notes/notes-server.py" .
id=$(sion agent create coder) && ok || fail "sion agent create coder"
agent="${id:0:8}…${id:60:4}"
normalise() {
    sed -E -e 's/session [0-9a-f]{16}/session 18ea9caaba67d569/' -e "s/agent ${id:0:8}/agent d85ed254/" "$1"
}
same() { # same WANT GOT WHAT
    if cmp -s "$1" "$2"; then ok; else
        fail "$3 differs from the seed's"
        diff "$1" "$2" >&2
    fi
}

expect_exit 0 sion agent mcp add notes --dir notes -- python3 notes-server.py
cat >notes.json <<'JSON'
{"turns": [
  {"calls": [{"tool": "notes_add_note", "input": {"name": "release", "text": "Ship the shell and MCP tools on Friday."}}]},
  {"calls": [{"tool": "notes_list_notes", "input": {}}]},
  {"calls": [{"tool": "notes_read_note", "input": {"name": "release"}}]},
  {"text": "The note release says to ship on Friday."}
]}
JSON
expect_exit 0 sion agent run coder "$agent" --task 'Keep a note about the release.' \
    --model script:notes.json --mcp notes --autonomy L3
normalise "$scratch/out" >got
cat >want <<'TXT'
session 18ea9caaba67d569 for agent d85ed254
→ notes_add_note {"name":"release","text":"Ship the shell and MCP tools on Friday."}
← kept note release
→ notes_list_notes {}
← release
→ notes_read_note {"name":"release"}
← Ship the shell and MCP tools on Friday.
agent: The note release says to ship on Friday.
session 18ea9caaba67d569: done
TXT
same want got "the notes session"
[ "$(cat notes/release.txt)" = "Ship the shell and MCP tools on Friday." ] && ok \
    || fail "the note was not kept in the server's directory"

# The rug-pull: the server changes add_note's description and adds export_notes.
touch notes/.changed
expect_exit 0 sion agent run coder "$agent" --task 'Keep a note about the release.' \
    --model script:notes.json --mcp notes --autonomy L3
normalise "$scratch/out" >got
cat >want <<'TXT'
session 18ea9caaba67d569 for agent d85ed254
MCP server notes: export_notes is new and was not reviewed, so it is not offered (`sion agent mcp review notes`)
MCP server notes: add_note changed since it was reviewed, so it is not offered (`sion agent mcp review notes`)
→ notes_add_note {"name":"release","text":"Ship the shell and MCP tools on Friday."}
✗ there is no tool named notes_add_note
→ notes_list_notes {}
← release
→ notes_read_note {"name":"release"}
← Ship the shell and MCP tools on Friday.
agent: The note release says to ship on Friday.
session 18ea9caaba67d569: done
TXT
same want got "the rug-pulled session"

# Accepted, add_note is offered again; a call of it made twice in one session runs once (it says it
# repeats, but delete_note does not: the journal answers the second from the first).
expect_exit 0 sion agent mcp review notes --accept
expect_grep '^Pinned as listed\.$' "$scratch/out"
cat >twice.json <<'JSON'
{"turns": [
  {"calls": [{"tool": "notes_delete_note", "input": {"name": "release"}}]},
  {"calls": [{"tool": "notes_delete_note", "input": {"name": "release"}}]},
  {"text": "Deleted."}
]}
JSON
expect_exit 0 sion agent run coder "$agent" --task 'Delete the release note.' \
    --model script:twice.json --mcp notes --autonomy L3
[ "$(grep -c '^← deleted note release$' "$scratch/out")" -eq 1 ] && ok \
    || fail "delete_note ran other than once: $(cat "$scratch/out")"
expect_grep 'made before in this session: not made again' "$scratch/out"
[ ! -e notes/release.txt ] && ok || fail "the note was not deleted"

# No answer: the slow fixture's tool, taken to be a write (--effect), waits longer than --timeout.
cp "$SION_SOURCE_DIR"/tests/fixtures/mcp/fixture.py .
cp "$SION_SOURCE_DIR"/tests/fixtures/mcp/slow.py t0630-slow.py
expect_exit 0 sion agent mcp add slow --effect slow=write --timeout 4 -- python3 t0630-slow.py
expect_grep '^slow \(write\): Answer after a number of seconds\.$' "$scratch/out"
cat >wait.json <<'JSON'
{"turns": [{"calls": [{"tool": "slow_slow", "input": {"seconds": 30}}]}, {"text": "It did not answer."}]}
JSON
expect_exit 0 sion agent run coder "$agent" --task 'Wait.' --model script:wait.json --mcp slow --autonomy L3
expect_grep '^✗ MCP server slow did not answer .tools/call. within 4 s$' "$scratch/out"
session=$(sed -n 's/^session \([0-9a-f]\{16\}\) for agent .*/\1/p' "$scratch/out")
db="$SION_HOME/sion.db"
[ "$(sqlite3 "$db" "SELECT state FROM journal WHERE session = '$session'")" = uncertain ] && ok \
    || fail "the unanswered call is not uncertain in the journal"
expect_exit 0 sion agent run coder "$agent" --task 'Again.' --model script:wait.json --session "$session"
expect_grep '^✗ this call was made before and got no answer \(MCP server slow did not answer .tools/call. within 4 s\): it may have taken effect, so it is not made again$' "$scratch/out"

# sion-run killed during the call: the continued session does not make it again either.
expect_exit 0 sion agent mcp remove slow
expect_exit 0 sion agent mcp add slow --effect slow=write --timeout 600 -- python3 t0630-slow.py
sion agent run coder "$agent" --task 'Wait long.' --model script:wait.json --mcp slow --autonomy L3 \
    >killed.out 2>killed.err &
run=$!
for _ in $(seq 100); do
    grep -q '^→ slow_slow' killed.out 2>/dev/null && break
    sleep 0.1
done
sleep 0.5
kill -KILL "$run"
wait "$run" 2>/dev/null
session=$(sed -n 's/^session \([0-9a-f]\{16\}\) for agent .*/\1/p' killed.out)
[ -n "$session" ] && ok || fail "the killed run printed no session: $(cat killed.out killed.err)"
[ "$(sqlite3 "$db" "SELECT state FROM journal WHERE session = '$session'")" = pending ] && ok \
    || fail "the call under way is not pending in the journal"
expect_exit 0 timeout 60 sion agent run coder "$agent" --task 'Again.' --model script:wait.json --session "$session"
expect_grep '^✗ this call was made before and got no answer' "$scratch/out"
[ "$(sqlite3 "$db" "SELECT state FROM journal WHERE session = '$session'")" = uncertain ] && ok \
    || fail "the killed call is not uncertain once the session was continued"
[ "$(sqlite3 "$db" 'PRAGMA integrity_check')" = ok ] && ok || fail "the store is damaged"
pgrep -f "$scratch/t0630-slow.py" >/dev/null && fail "a server outlived the sessions: $(pgrep -af t0630-slow)" || ok

# A server killed mid-session (tests/fixtures/mcp/ghost.py kills itself with SIGKILL during a call):
# the call says how it ended, and a later call of its tools says the server ended and how, not
# merely that there is no such tool; the session goes on.
expect_exit 0 timeout 60 sion agent mcp add ghost -- python3 "$SION_SOURCE_DIR/tests/fixtures/mcp/ghost.py"
cat >ghost.json <<'JSON'
{"turns": [
  {"calls": [{"tool": "ghost_read_graph", "input": {}}]},
  {"calls": [{"tool": "ghost_vanish", "input": {}}]},
  {"calls": [{"tool": "ghost_read_graph", "input": {}}]},
  {"text": "The graph is gone."}
]}
JSON
expect_exit 0 timeout 60 sion agent run coder "$agent" --task 'Read the graph.' --model script:ghost.json \
    --mcp ghost --autonomy L3
normalise "$scratch/out" >got
cat >want <<'TXT'
session 18ea9caaba67d569 for agent d85ed254
→ ghost_read_graph {}
← no entities
→ ghost_vanish {}
✗ MCP server ghost ended (killed by signal 9)
→ ghost_read_graph {}
✗ there is no tool named ghost_read_graph: MCP server ghost ended (killed by signal 9)
agent: The graph is gone.
session 18ea9caaba67d569: done
TXT
same want got "the session whose server was killed"

done_testing
