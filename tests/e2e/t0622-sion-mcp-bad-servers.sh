#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The bad servers of tests/fixtures/mcp through sion-mcp add and serve: garbage between answers,
# oversized and huge answers, silence (to a call, or from the start), death mid-call, floods of
# notifications, hostile tool names, slow calls. Each has one clear outcome, nothing hangs (every
# run is bounded), and the notes server served beside it keeps working.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/t0620-helpers.bash"

command -v sqlite3 >/dev/null || skip "sqlite3 is not installed (Debian package sqlite3)"
fixtures="$SION_SOURCE_DIR/tests/fixtures/mcp"
# added NAME FIXTURE [OPTIONS...]: `sion-mcp add` of a bad server reviews its one echo (and the
# tool that misbehaves, if any).
added() {
    local name=$1 fixture=$2
    shift 2
    expect_exit 0 timeout 60 sion-mcp add "$name" "$@" -- python3 "$fixtures/$fixture.py" &&
        expect_grep "^MCP server $name \\($name 1\\.0, protocol 2025-11-25\\): reviewed tools\$" "$scratch/out" &&
        expect_grep '^echo \(read\): Say the message back\.$' "$scratch/out"
}
# The notes server answered beside the bad one: its ids are 90 and up.
notes_calls() {
    call 90 notes_add_note '{"name":"beside","text":"still kept"}'
    call 91 notes_read_note '{"name":"beside"}'
}
notes_answered() {
    expect_got 'kept note beside' 90 text
    expect_got 'still kept' 91 text
}

cd "$scratch" || exit 1
cp "$SION_SOURCE_DIR/examples/mcp-notes/notes-server.py" .
mkdir notes
expect_exit 0 timeout 60 sion-mcp add notes --dir notes -- python3 notes-server.py

# Garbage between answers (not JSON, cut short, not UTF-8, not JSON-RPC, an answer to nothing):
# skipped, and the answers come through.
added garbage garbage
{
    req 0 mcp/state
    echo
    call 1 garbage_echo '{"message":"through the noise"}'
    notes_calls
    echo
    call 2 garbage_echo '{"message":"again"}'
} | expect_exit 0 bridge -- sion-mcp serve notes garbage
expect_got 'connected' 0 servers.1.state
expect_got 'through the noise' 1 text
expect_got 'again' 2 text
notes_answered

# One answer of 20 MiB, under the 32 MiB a message may be: its text cut for the model, saying how
# much; the server goes on.
added oversized oversized
expect_grep '^oversized \(read\): Answer with one line of 20 MiB\.$' "$scratch/out"
{
    req 0 mcp/state
    echo
    call 1 oversized_oversized
    notes_calls
    echo
    call 2 oversized_echo '{"message":"after"}'
} | expect_exit 0 bridge -- sion-mcp serve notes oversized
expect_py 'a(1)["text"].endswith("\n[%d more bytes were cut]" % (20 * 1024 * 1024 - 256 * 1024)) and len(a(1)["text"]) < 300 * 1024'
expect_py '"content" not in a(1)'
expect_got 'after' 2 text
notes_answered

# 50 MB in one answer, over the limit: the call has no answer (uncertain), the server goes on.
added huge huge
{
    req 0 mcp/state
    echo
    call 1 huge_huge
    notes_calls
    echo
    call 2 huge_echo '{"message":"after"}'
} | expect_exit 0 bridge -- sion-mcp serve notes huge
expect_got '-32001' 1 error.code
expect_py '"MCP server huge sent a message of" in a(1)["error"]["message"] and a(1)["error"]["message"].endswith("over the 32 MiB limit")'
expect_got 'after' 2 text
notes_answered

# A flood of 100,000 notifications before each answer: read and dropped.
added flood flood
{
    req 0 mcp/state
    echo
    call 1 flood_echo '{"message":"above the flood"}'
    notes_calls
} | expect_exit 0 bridge -- sion-mcp serve notes flood
expect_got 'above the flood' 1 text
notes_answered

# A server that never answers a call: after --timeout it is cancelled and uncertain, and the server
# is still there; one that answers nothing at all cannot be added, and served (planted on the
# shelf) is named as failed, costing only its own tools.
added silent silent --timeout 2
{
    req 0 mcp/state
    echo
    call 1 silent_echo '{"message":"anyone?"}'
    notes_calls
    echo
    req 2 mcp/state
} | expect_exit 0 bridge -- sion-mcp serve notes silent
expect_got '{"error":{"code":-32001,"message":"MCP server silent did not answer '"'"'tools/call'"'"' within 2 s"}}' 1
expect_got 'connected' 2 servers.1.state
notes_answered
expect_exit 69 timeout 60 sion-mcp add mute --timeout 2 -- python3 "$fixtures/silent.py" --from-start
expect_err "sion-mcp: MCP server mute answered neither server/discover nor initialize within 2 s"
expect_exit 0 sqlite3 "$SION_HOME/sion.db" "INSERT INTO mcp_servers (name, config, protocol, server, created, reviewed) SELECT 'mute', json_set(config, '\$.command', json_array('python3', '$fixtures/silent.py', '--from-start')), protocol, server, created, reviewed FROM mcp_servers WHERE name = 'silent'"
{
    req 0 mcp/state
    echo
    call 1 mute_echo '{"message":"anyone?"}'
    notes_calls
} | expect_exit 0 bridge -- sion-mcp serve notes mute
expect_got 'connected' 0 servers.0.state
expect_got 'failed' 0 servers.1.state
# It spoke the 2025 era at its review (as silent.py did): the handshake is tried at once.
expect_got "did not answer: MCP server mute did not answer 'initialize' within 2 s" 0 servers.1.message
expect_got '[]' 0 servers.1.tools
expect_got '-32003' 1 error.code
notes_answered
expect_grep "^sion-mcp: MCP server mute did not answer 'initialize' within 2 s\$" "$scratch/err"

# A server that dies mid-call, half an answer written: the call is uncertain, naming how it ended;
# the server is then failed, and a call of it is not sent.
added dies dies
{
    req 0 mcp/state
    echo
    call 1 dies_echo '{"message":"last words"}'
    echo
    req 2 mcp/state
    call 3 dies_echo '{"message":"again"}'
    notes_calls
} | expect_exit 0 bridge -- sion-mcp serve notes dies
expect_got '{"error":{"code":-32001,"message":"MCP server dies ended (its program exited with status 3)"}}' 1
expect_got 'failed' 2 servers.1.state
# Named in the list of servers as it ended, not as one that did not answer.
expect_got 'MCP server dies ended (its program exited with status 3)' 2 servers.1.message
expect_got '-32003' 3 error.code
notes_answered

# Hostile names: not offered, each named on one line, a long one cut; the one good tool is.
expect_exit 0 timeout 60 sion-mcp add hostile -- python3 "$fixtures/hostile_names.py"
long="l$(printf 'o%.0s' $(seq 63))…"
not_offered="is not offered: its name is not 1 to 64 letters, digits, '_' and '-' with the server's name before it"
expect_out "MCP server hostile (hostile-names 1.0, protocol 2025-11-25): reviewed tools
echo (read): Say the message back.
MCP server hostile: the tool \"get weather\" $not_offered
MCP server hostile: the tool \"files/read\" $not_offered
MCP server hostile: the tool \"$long\" $not_offered
MCP server hostile: the tool \"$long\" $not_offered
MCP server hostile: the tool \"café\" $not_offered
MCP server hostile: the tool \"bell[31mred\" $not_offered
MCP server hostile: the tool \"new line\" $not_offered
MCP server hostile: the tool \"\" $not_offered
MCP server hostile: the tool \"echo\" is not offered: the server lists it twice
It runs as you, outside any sandbox: add --sandbox bwrap (or a Docker image) to contain it.
Give it to a session with --mcp hostile."
expect_exit 0 sion-mcp list
expect_grep '^hostile: python3 .*/hostile_names\.py, unsandboxed$' "$scratch/out"
[ "$(sed -n '/^hostile: /,/^$/p' "$scratch/out" | grep -c .)" -eq 2 ] && ok ||
    fail "list shows more of hostile than its echo: $(cat "$scratch/out")"
{
    req 0 mcp/state
    echo
    call 1 hostile_echo '{"message":"plain"}'
    call 2 'hostile_get weather'
    call 3 "hostile_l$(printf 'o%.0s' $(seq 198))a"
    notes_calls
} | expect_exit 0 bridge -- sion-mcp serve notes hostile
expect_py '[t["name"] for t in a(0)["servers"][1]["tools"]] == ["hostile_echo"]'
expect_py 'len(a(0)["servers"][1]["notices"]) == 9 and all("\n" not in n and "\x1b" not in n for n in a(0)["servers"][1]["notices"])'
# A session is told the same lines add printed, long names cut.
expect_py 'a(0)["servers"][1]["notices"][2] == "MCP server hostile: the tool \"l" + "o" * 63 + "…\" '"$not_offered"'"'
expect_got 'plain' 1 text
expect_got '-32002' 2 error.code
expect_got '-32002' 3 error.code
notes_answered

# A slow call: answered when it comes within the timeout, while other calls are answered meanwhile;
# cancelled and uncertain when it does not.
added slow slow --timeout 3
{
    req 0 mcp/state
    echo
    call 1 slow_slow '{"seconds":1}'
    call 2 slow_slow '{"seconds":10}'
    call 3 slow_echo '{"message":"meanwhile"}'
    notes_calls
} | expect_exit 0 bridge -- sion-mcp serve notes slow
expect_got 'answered after 1 seconds' 1 text
expect_got '{"error":{"code":-32001,"message":"MCP server slow did not answer '"'"'tools/call'"'"' within 3 s"}}' 2
expect_got 'meanwhile' 3 text
# The echo was answered before the slow calls were.
expect_py '[m.get("id") for m in messages].index(3) < [m.get("id") for m in messages].index(1)'
notes_answered

# All the bad ones in one serve, with notes: it answers, and ends when its input does. Ten servers
# starting at once on a loaded machine may take longer than silent's and slow's few seconds to
# shake hands: here their timeouts are the default's, as what is tested is the serve, not them.
expect_exit 0 sqlite3 "$SION_HOME/sion.db" "UPDATE mcp_servers SET config = json_set(config, '\$.timeout', 60) WHERE name IN ('silent', 'slow')"
{
    req 0 mcp/state
    echo
    notes_calls
    echo
    req 1 mcp/close
} | expect_exit 0 bridge -- sion-mcp serve notes garbage oversized huge flood silent mute dies hostile slow
expect_py '[s["state"] for s in a(0)["servers"]] == ["connected"] * 6 + ["failed"] + ["connected"] * 3'
notes_answered
expect_exit 0 sqlite3 "$SION_HOME/sion.db" 'PRAGMA integrity_check' && expect_out ok

done_testing
