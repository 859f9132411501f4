#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# sion-mcp list --json: one JSON object a server on the shelf, in the order of their names, that
# passes schemas/mcp.list.json and carries what its lines of text show: how it runs (its command's
# words and its sandbox, or its URL without user info, query or fragment and its transport), its
# pinned tools with their effects, local or not and idempotent or not, who authorized it (a server
# over HTTP logged in to with its client's credentials), and its sampling limits; never a header, a
# token, a client's secret or a secret of its URL; the text stays as it was; an empty shelf prints
# nothing; a malformed invocation with --json is still the one-line usage error (64).
. "$(dirname "$0")/lib.sh"
need_jsonschema
command -v sqlite3 >/dev/null || skip "sqlite3 is not installed (Debian package sqlite3)"
db="$SION_HOME/sion.db"
cd "$scratch" || exit 1
cp "$SION_SOURCE_DIR/examples/mcp-notes/notes-server.py" .
mkdir notes

# An empty shelf (and no store): nothing, exit 0.
expect_exit 0 sion-mcp list --json && expect_out ''

# Two servers added for real, one with effects of the user's, both allowed sampling; three put in the
# store as add keeps them, with pins: in bwrap, in Docker, over HTTP+SSE at a URL with secrets in it,
# and one over HTTP with no tool pinned.
expect_exit 0 timeout 60 sion-mcp add notes --dir notes -- python3 notes-server.py
expect_exit 0 timeout 60 sion-mcp add jotter --dir notes --effect list_notes=read-local \
    --effect add_note=write-local --effect delete_note=spend -- python3 notes-server.py
expect_exit 0 sion-mcp sampling jotter
expect_exit 0 sion-mcp sampling notes --max-tokens 200 --per-run 2 --model openai:gpt-5
digest=$(printf '%064d' 7)
expect_exit 0 sqlite3 "$db" "INSERT INTO mcp_servers (name, config, protocol, created) VALUES
 ('boxed', '{\"command\":[\"node\",\"/opt/server.js\"],\"shown\":[\"node\",\"server.js\",\"--root\",\"my dir\"],\"sandbox\":\"bwrap\",\"timeout\":60}', '2025-11-25', 1),
 ('docked', '{\"command\":[\"server\"],\"shown\":[\"server\"],\"sandbox\":\"docker:alpine@sha256:$digest\",\"timeout\":60}', '2025-11-25', 1),
 ('remote', '{\"url\":\"https://me:hunter2@mcp.example.com/mcp?key=s3cret#top\",\"headers\":[[\"X-Key\",\"\${NOTES_KEY}\"]],\"transport\":\"sse\",\"timeout\":60}', '2024-11-05', 1),
 ('plain-http', '{\"url\":\"http://127.0.0.1:8812/mcp\",\"timeout\":60}', '2025-11-25', 1)"
# The notes server over HTTP, logged in to with a client's credentials, told a header of a secret.
export NOTES_KEY='nk-Listed-Vq8Rt3Ws6Yx1' CC_SECRET='cs-Listed-Pz4Lm9Kd2Hb7'
mkdir web && mkfifo web.in
python3 "$SION_SOURCE_DIR/tests/fixtures/mcp/notes_http_server.py" --dir web --client "cc-app:$CC_SECRET" \
    <web.in >web.port 2>web.err &
server=$!
# shellcheck disable=SC2034 # held open until the end: the server ends when its stdin closes
exec {hold}>web.in
trap 'exec {hold}>&-; kill "$server" 2>/dev/null; rm -rf "$scratch"' EXIT
port=
for _ in $(seq 100); do
    port=$(head -n 1 web.port 2>/dev/null)
    [ -n "$port" ] && break
    sleep 0.1
done
[ -n "$port" ] && ok || fail "the notes server did not start: $(cat web.err)"
# shellcheck disable=SC2016 # ${NOTES_KEY} is for sion-mcp to expand, where the server is reached
expect_exit 0 timeout 60 sion-mcp add web --url "http://127.0.0.1:$port/mcp" --header 'X-Key: ${NOTES_KEY}' \
    --client-id cc-app --client-secret-env CC_SECRET --client-credentials </dev/null
expect_exit 0 sqlite3 "$db" "INSERT INTO mcp_pins VALUES
 ('boxed', 'fetch', 'x', '{\"name\":\"fetch\",\"annotations\":{\"readOnlyHint\":true}}'),
 ('boxed', 'count', 'y', '{\"name\":\"count\",\"annotations\":{\"readOnlyHint\":true,\"openWorldHint\":false}}'),
 ('docked', 'put', 'z', '{\"name\":\"put\",\"annotations\":{\"openWorldHint\":false,\"idempotentHint\":true}}'),
 ('remote', 'pay', 'w', '{\"name\":\"pay\"}')"

# The text as it was.
expect_exit 0 sion-mcp list && expect_out "boxed: node server.js --root my dir, in bwrap
count (read)
fetch (external)

docked: server, in docker:alpine@sha256:$digest
put (write, repeats run again)

jotter: python3 notes-server.py, unsandboxed
add_note (write-local, repeats run again)
delete_note (spend)
list_notes (read-local)
read_note (read)
sampling allowed: at most 1000 tokens a completion and 5 completions a run, written by the session's first model

notes: python3 notes-server.py, unsandboxed
add_note (write, repeats run again)
delete_note (write)
list_notes (read)
read_note (read)
sampling allowed: at most 200 tokens a completion and 2 completions a run, written by openai:gpt-5

plain-http: http://127.0.0.1:8812/mcp over HTTP

remote: https://mcp.example.com/mcp over HTTP+SSE
pay (external)

web: http://127.0.0.1:$port/mcp over HTTP, authorized at http://127.0.0.1:$port for notes:read
read_note (read)
write_note (write, repeats run again)"
# The same servers as JSON lines, one a server, in the same order.
expect_exit 0 sion-mcp list --json && expect_json_lines mcp.list.json 7 &&
    expect_out "{\"name\":\"boxed\",\"command\":[\"node\",\"server.js\",\"--root\",\"my dir\"],\"sandbox\":\"bwrap\",\"tools\":[{\"name\":\"count\",\"effect\":\"read\",\"local\":false,\"idempotent\":true},{\"name\":\"fetch\",\"effect\":\"external\",\"local\":false,\"idempotent\":false}]}
{\"name\":\"docked\",\"command\":[\"server\"],\"sandbox\":\"docker:alpine@sha256:$digest\",\"tools\":[{\"name\":\"put\",\"effect\":\"write\",\"local\":false,\"idempotent\":true}]}
{\"name\":\"jotter\",\"command\":[\"python3\",\"notes-server.py\"],\"tools\":[{\"name\":\"add_note\",\"effect\":\"write\",\"local\":true,\"idempotent\":true},{\"name\":\"delete_note\",\"effect\":\"spend\",\"local\":false,\"idempotent\":false},{\"name\":\"list_notes\",\"effect\":\"read\",\"local\":true,\"idempotent\":true},{\"name\":\"read_note\",\"effect\":\"read\",\"local\":false,\"idempotent\":true}],\"sampling\":{\"max_tokens\":1000,\"per_run\":5}}
{\"name\":\"notes\",\"command\":[\"python3\",\"notes-server.py\"],\"tools\":[{\"name\":\"add_note\",\"effect\":\"write\",\"local\":false,\"idempotent\":true},{\"name\":\"delete_note\",\"effect\":\"write\",\"local\":false,\"idempotent\":false},{\"name\":\"list_notes\",\"effect\":\"read\",\"local\":false,\"idempotent\":true},{\"name\":\"read_note\",\"effect\":\"read\",\"local\":false,\"idempotent\":true}],\"sampling\":{\"max_tokens\":200,\"per_run\":2,\"model\":\"openai:gpt-5\"}}
{\"name\":\"plain-http\",\"url\":\"http://127.0.0.1:8812/mcp\",\"transport\":\"http\",\"tools\":[]}
{\"name\":\"remote\",\"url\":\"https://mcp.example.com/mcp\",\"transport\":\"sse\",\"tools\":[{\"name\":\"pay\",\"effect\":\"external\",\"local\":false,\"idempotent\":false}]}
{\"name\":\"web\",\"url\":\"http://127.0.0.1:$port/mcp\",\"transport\":\"http\",\"authorization\":{\"issuer\":\"http://127.0.0.1:$port\",\"scope\":\"notes:read\"},\"tools\":[{\"name\":\"read_note\",\"effect\":\"read\",\"local\":false,\"idempotent\":true},{\"name\":\"write_note\",\"effect\":\"write\",\"local\":false,\"idempotent\":true}]}"
python3 - "$scratch/out" "$port" <<'PY' && ok || fail "the members of list --json"
import json, sys
lines = {l["name"]: l for l in (json.loads(line) for line in open(sys.argv[1], encoding="utf-8"))}
assert list(lines) == ["boxed", "docked", "jotter", "notes", "plain-http", "remote", "web"], lines
assert lines["boxed"]["command"] == ["node", "server.js", "--root", "my dir"], lines["boxed"]
assert lines["boxed"]["sandbox"] == "bwrap" and "sandbox" not in lines["notes"], lines
assert lines["docked"]["sandbox"].startswith("docker:alpine@sha256:"), lines["docked"]
assert {t["name"]: (t["effect"], t["local"]) for t in lines["jotter"]["tools"]} == {
    "add_note": ("write", True), "delete_note": ("spend", False),
    "list_notes": ("read", True), "read_note": ("read", False)}, lines["jotter"]
assert [t["idempotent"] for t in lines["notes"]["tools"]] == [True, False, True, True], lines["notes"]
assert lines["jotter"]["sampling"] == {"max_tokens": 1000, "per_run": 5}, lines["jotter"]
assert lines["notes"]["sampling"] == {"max_tokens": 200, "per_run": 2, "model": "openai:gpt-5"}, lines["notes"]
assert "sampling" not in lines["boxed"], lines["boxed"]
assert (lines["remote"]["url"], lines["remote"]["transport"]) == ("https://mcp.example.com/mcp", "sse")
assert lines["plain-http"]["transport"] == "http" and "command" not in lines["plain-http"]
assert "authorization" not in lines["remote"], lines["remote"]
issuer = "http://127.0.0.1:" + sys.argv[2]
assert lines["web"]["authorization"] == {"issuer": issuer, "scope": "notes:read"}, lines["web"]
PY
# No secret of the URL, and no header, in what was printed.
for secret in hunter2 s3cret '#top' NOTES_KEY X-Key "$NOTES_KEY" "$CC_SECRET" cc-app Bearer; do
    ! grep -qF -- "$secret" "$scratch/out" && ok || fail "list --json printed '$secret'"
done

# Off the shelf, off the list; all off, nothing again.
expect_exit 0 sion-mcp remove jotter
expect_exit 0 sion-mcp list --json && expect_json_lines mcp.list.json 6
for name in boxed docked notes plain-http remote web; do expect_exit 0 sion-mcp remove "$name"; done
expect_exit 0 sion-mcp list --json && expect_out ''

# Malformed invocations: the usage error, nothing on stdout.
expect_exit 64 sion-mcp list notes --json && expect_err "sion-mcp: unexpected operand 'notes'" &&
    expect_out ''
expect_exit 64 sion-mcp list --json=1 && expect_err "sion-mcp: option '--json' takes no argument"
expect_exit 64 sion-mcp --json list && expect_err "sion-mcp: unknown option '--json'"
expect_exit 64 sion-mcp review notes --json && expect_err "sion-mcp: unknown option '--json'"

expect_exit 0 sion-mcp list --help && expect_grep '^usage: sion-mcp list \[--json\]$' "$scratch/out"
expect_exit 0 sion-mcp --help && expect_grep '^ +sion-mcp list \[--json\]$' "$scratch/out"

done_testing
