#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The shelf from the console (seed 002): /mcp add of a command (the seed's notes server, run in a
# bubblewrap sandbox in the agent's workspace), reviewed and pinned, given to this agent, and
# reaching the session at its next message; /mcp listing what this agent has and what else is on
# the shelf; /mcp drop taking it off this agent (its tools no longer offered at the next message,
# the server kept on the shelf) and /mcp NAME giving it back; /mcp forget taking it off the shelf
# and off every profile; a second agent of another profile given it by name; and bad input.
. "$(dirname "$0")/lib.sh"
need_bwrap
command -v python3 >/dev/null || skip "python3 is not installed"
command -v sqlite3 >/dev/null || skip "sqlite3 is not installed (Debian package sqlite3)"

cd "$scratch" || exit 1
mkdir -p work scripts
cp "$SION_SOURCE_DIR/examples/mcp-notes/notes-server.py" work/
printf 'Ship on Friday.\n' >work/release.txt
db="$SION_HOME/sion.db"
cat >scripts/notes.json <<'EOF'
{"turns": [{"text": "hello"},
           {"calls": [{"tool": "notes_list_notes", "input": {}}]}, {"text": "listed"},
           {"calls": [{"tool": "notes_list_notes", "input": {}}]}, {"text": "gone"},
           {"calls": [{"tool": "notes_read_note", "input": {"name": "release"}}]}, {"text": "read"}]}
EOF
expect_exit 0 sion-run create coder --model "script:$scratch/scripts/notes.json" && coder=$(cat "$scratch/out")
expect_exit 0 sion-run create lead --model "script:$scratch/scripts/notes.json" && lead=$(cat "$scratch/out")

# chat PROFILE AGENT STEPS ARGS...: a console on pipes, driven by the steps (pty_drive.py).
chat() {
    local profile=$1 agent=$2 steps=$3
    shift 3
    timeout 120 python3 "$SION_SOURCE_DIR/tests/e2e/pty_drive.py" --pipes --log "$scratch/shown" \
        --timeout 60 "$steps" -- sion-run chat "$profile" "${agent:0:8}" --workspace work "$@"
}
steps() { printf '%s\n' "$1" >"$scratch/steps"; }

steps 'send Hello
expect : done
send /mcp
expect On the shelf
send /mcp add notes python3 notes-server.py
expect this agent has it
send /mcp
expect On the shelf
send List them
expect : done
send /mcp drop notes
expect stays on the shelf
send /mcp
expect gives this agent that one
send List them again
expect : done
send /mcp notes
expect next turn
send Read one
expect : done
eof'
expect_exit 0 chat coder "$coder" "$scratch/steps"
sid=$(sed -n '1s/^session \([0-9a-f]\{16\}\) for agent.*/\1/p' "$scratch/shown")
changed="this run's settings are not those the session began with: the model is told them in a note"
expect_text "$scratch/shown" "the console" "session $sid for agent ${coder:0:8}
agent: hello
session $sid: done
This agent has: none
On the shelf: nothing more
/mcp add NAME URL finds one.
MCP server notes (notes 1.0, protocol 2026-07-28): reviewed tools
list_notes (read): List the notes kept, by name.
read_note (read): Read a note by its name.
add_note (write, repeats run again): Keep a note under a name (lowercase letters, digits and hyphens), replacing one of that name.
delete_note (write): Delete a note by its name.
\"notes\" is on the shelf, and this agent has it. Any other agent can have it too, with /mcp notes.
This agent has:
  notes python3 notes-server.py (in a sandbox)
On the shelf: nothing more
session $sid for agent ${coder:0:8}, continued
$changed
→ notes_list_notes {}
← release
agent: listed
session $sid: done
\"notes\" is off this agent, and stays on the shelf.
This agent has: none
On the shelf:
  notes python3 notes-server.py (in a sandbox)
/mcp notes gives this agent that one.
session $sid for agent ${coder:0:8}, continued
$changed
→ notes_list_notes {}
✗ there is no tool named notes_list_notes
agent: gone
session $sid: done
This agent has \"notes\" now: it reaches it at its next turn.
session $sid for agent ${coder:0:8}, continued
$changed
→ notes_read_note {\"name\":\"release\"}
← Ship on Friday.

agent: read
session $sid: done"
# The server runs in bubblewrap, in the workspace, as the shelf keeps it.
expect_exit 0 sion agent mcp list --json && expect_grep '"name":"notes","command":\["python3","notes-server.py"\],"sandbox":"bwrap"' "$scratch/out"
[ "$(sqlite3 "$db" "SELECT count(*) FROM profile_mcp WHERE profile = 'coder' AND server = 'notes'")" = 1 ] &&
    ok || fail "the profile does not have the server it was given back"

# Another agent, of another profile, has it by name; forget takes it off the shelf and off both.
steps 'send /mcp
expect gives this agent that one
send /mcp notes
expect next turn
send /mcp forget notes
expect off every agent
send /mcp
expect nothing more
eof'
expect_exit 0 chat lead "$lead" "$scratch/steps"
expect_grep '^  notes python3 notes-server.py \(in a sandbox\)$' "$scratch/shown"
expect_grep '^"notes" is off the shelf, and off every agent that had it\.$' "$scratch/shown"
expect_exit 0 sion agent mcp list && expect_out ''
[ "$(sqlite3 "$db" "SELECT count(*) FROM profile_mcp")" = 0 ] && ok || fail "a profile still has a forgotten server"

# A server over HTTP that wants an account: on the shelf, this agent has it, and /mcp login.
mkdir -p notes
printf 'Ship on Friday.\n' >notes/release.txt
mkfifo notes.in
python3 "$SION_SOURCE_DIR/tests/fixtures/mcp/notes_http_server.py" --dir notes <notes.in >notes.port 2>notes.err &
server=$!
exec {hold}>notes.in
trap 'exec {hold}>&-; kill "$server" 2>/dev/null; rm -rf "$scratch"' EXIT
wait_until 10 test -s notes.port || fail "the notes server did not start: $(cat notes.err)"
url="http://127.0.0.1:$(head -n 1 notes.port)/mcp"
port=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
cat >scripts/web.json <<'EOF'
{"turns": [{"calls": [{"tool": "web_read_note", "input": {"name": "release"}}]}, {"text": "read it"},
           {"calls": [{"tool": "web_read_note", "input": {"name": "release"}}]}, {"text": "again"}]}
EOF
steps "send /mcp add web $url
expect It wants an account first: /mcp login web
send /mcp login web https://elsewhere.example/callback?code=x
send /mcp login web
expect Open this URL to authorize:
send /mcp login other
browse
expect logged in to \"web\"
send /mcp
expect On the shelf
send Read the note
expect : done
send /mcp logout web
expect forgot
send /mcp login web
expect Open this URL to authorize:
browse-paste /mcp login web
expect logged in to \"web\"
send Read it again
expect : done
eof"
expect_exit 0 timeout 120 python3 "$SION_SOURCE_DIR/tests/e2e/pty_drive.py" --pipes --log "$scratch/shown" \
    --timeout 60 "$scratch/steps" -- sion-run chat lead "${lead:0:8}" --login-port "$port" \
    --model "script:$scratch/scripts/web.json"
expect_grep '^"web" is on the shelf, and this agent has it. It wants an account first: /mcp login web$' "$scratch/shown"
expect_grep "^http://127.0.0.1:[0-9]+/authorize\\?.*redirect_uri=http%3A%2F%2F127.0.0.1%3A$port%2Fcallback" "$scratch/shown"
expect_grep '^MCP server web \(notes 1.0.0, protocol 2026-07-28\): reviewed tools$' "$scratch/shown"
expect_grep "^  web $url \\(logged in\\)\$" "$scratch/shown"
[ "$(grep -c '^← Ship on Friday\.$' "$scratch/shown")" = 2 ] && ok || fail "the note was not read after each login"
expect_grep '^sion-run: no login of web is under way: /mcp login web first$' "$scratch/err"
expect_grep '^sion-run: the login of web is under way, and one is made at a time: ' "$scratch/err"
expect_exit 0 sion agent mcp list --json && expect_grep '"name":"web",.*"authorization":\{"issuer"' "$scratch/out"
expect_exit 64 sion agent mcp login web --callback-port 0 &&
    expect_err "sion-mcp: --callback-port takes a port from 1 to 65535, not '0'"
expect_exit 0 sion agent mcp remove web

# Bad input: each one line, and the chat goes on.
steps 'send /mcp add notes
send /mcp add notes sse
send /mcp add notes sse python3 x.py
send /mcp add web http://127.0.0.1:1/mcp extra
send /mcp drop
send /mcp drop ghost
send /mcp forget ghost
send /mcp ghost
send /mcp two words
send /mcp add Bad-Name python3 notes-server.py
send /mcp login
send /mcp
expect nothing more
eof'
expect_exit 0 chat coder "$coder" "$scratch/steps"
expect_text "$scratch/err" "stderr" "sion-run: give a name and a server: /mcp add NAME URL, /mcp add NAME sse URL, or /mcp add NAME COMMAND...
sion-run: give the server's URL after sse: /mcp add NAME sse URL
sion-run: give the server's URL after sse: /mcp add NAME sse URL
sion-run: a server over HTTP is its URL alone: /mcp add NAME URL
sion-run: give the server's name: /mcp drop NAME
sion-run: this agent does not have the MCP server ghost: /mcp lists what it has
sion-run: there is no MCP server ghost on the shelf: /mcp lists them
sion-run: there is no MCP server ghost on the shelf: /mcp lists them
sion-run: there is no /mcp two: /help lists the /mcp commands
$(sion-mcp add Bad-Name -- true 2>&1)
sion-run: give the server's name: /mcp login NAME, or /mcp login NAME ADDRESS with the address the browser landed on"
expect_exit 64 sion agent mcp add later --login-later -- python3 notes-server.py &&
    expect_err "sion-mcp: --login-later goes with --url"

done_testing
