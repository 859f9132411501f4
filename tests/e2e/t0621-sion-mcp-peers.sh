#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# sion-mcp against the real peers (scripts/install-peers): server-everything over stdio (2025 era:
# its review and effects; echo, sums, structured content, an image, progress restarting the
# timeout and a timeout that cancels, resources and templates, prompts, sampling within its limits,
# elicitation sent up); the SDK v2 server of the 2026-07-28 era found by the server/discover probe;
# and server-filesystem run in bubblewrap, which sees its /workspace and not $HOME or $SION_HOME;
# a Node server using fetch() runs there too, within --sandbox-memory.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/t0620-helpers.bash"

command -v node >/dev/null || skip "node is not installed (Debian package nodejs)"
command -v npm >/dev/null || skip "npm is not installed (Debian package npm)"
need_bwrap
if ! "$SION_SOURCE_DIR/scripts/install-peers" 2>"$scratch/err"; then
    fail "scripts/install-peers failed: $(cat "$scratch/err")"
    done_testing
    exit 1
fi
peers="$SION_SOURCE_DIR/tests/peers/node_modules"
everything="$peers/@modelcontextprotocol/server-everything/dist/index.js"
filesystem="$peers/@modelcontextprotocol/server-filesystem/dist/index.js"
cd "$scratch" || exit 1

# server-everything: reviewed over the 2025 handshake (it refuses the probe), each tool with the
# effect its annotations give. Told the client may ask and sample, it lists the tools that do.
expect_exit 0 timeout 60 sion-mcp add everything -- node "$everything"
expect_grep '^MCP server everything \(mcp-servers/everything 2\.0\.0, protocol 2025-11-25\): reviewed tools$' "$scratch/out"
for line in 'echo \(read\): Echoes back the input string' \
    'get-sum \(read\): Returns the sum of two numbers' \
    'get-tiny-image \(read\): ' \
    'gzip-file-as-resource \(external, repeats run again\): ' \
    'toggle-simulated-logging \(write\): ' \
    'trigger-sampling-request \(external\): ' \
    'trigger-elicitation-request \(write\): '; do
    expect_grep "^$line" "$scratch/out"
done
expect_grep '^It runs as you, outside any sandbox' "$scratch/out"
expect_exit 0 timeout 60 sion-mcp review everything
expect_grep '^The tools are as they were pinned\.$' "$scratch/out"
[ "$(grep -c ' \[unchanged\]$' "$scratch/out")" -ge 15 ] && ok || fail "review: fewer than 15 tools unchanged"

{
    req 0 mcp/state
    echo
    call 1 everything_echo '{"message":"hi"}'
    call 2 everything_get-sum '{"a":2,"b":3}'
    call 3 everything_get-structured-content '{"location":"New York"}'
    call 4 everything_get-tiny-image
    call 5 everything_trigger-long-running-operation '{"duration":1,"steps":2}'
    call 6 everything_resources
    call 7 everything_read_resource '{"uri":"demo://resource/static/document/architecture.md"}'
    req 8 prompts/list '{"server":"everything"}'
    req 9 prompts/get '{"server":"everything","name":"simple-prompt"}'
    req 10 prompts/get '{"server":"everything","name":"args-prompt","arguments":{"city":"Lisbon"}}'
    call 11 everything_get-sum '{"a":"two"}'
    call 12 everything_trigger-elicitation-request
} | expect_exit 0 bridge -- sion-mcp serve everything
expect_got 'connected' 0 servers.0.state
expect_got '2025-11-25' 0 servers.0.protocol
expect_got '[]' 0 servers.0.notices
expect_py 'sorted((t["name"], t["effect"]) for t in a(0)["servers"][0]["tools"] if t["name"] in ("everything_echo", "everything_gzip-file-as-resource", "everything_toggle-simulated-logging", "everything_resources")) == [("everything_echo", "read"), ("everything_gzip-file-as-resource", "external"), ("everything_resources", "read"), ("everything_toggle-simulated-logging", "write")]'
# Without a person to ask (no --ask) and without sampling allowed, the tools that need them are not
# listed by the server, so not offered.
expect_py 'not any(t["name"].startswith("everything_trigger-") and t["name"] != "everything_trigger-long-running-operation" for t in a(0)["servers"][0]["tools"])'
expect_got 'Echo: hi' 1 text
expect_got 'The sum of 2 and 3 is 5.' 2 text
expect_py 'json.loads(a(3)["text"]) == a(3)["structuredContent"] and set(a(3)["structuredContent"]) == {"temperature", "conditions", "humidity"}'
# An image is named with its type and size, never passed on as bytes in the text.
expect_py 'len([b for b in a(4)["content"] if b["type"] == "image"]) == 1'
python3 - "$scratch/out" <<'PY' && ok || fail "get-tiny-image is not rendered as [image image/png, N bytes]"
import base64, json, sys
answer = next(m for m in map(json.loads, open(sys.argv[1])) if m.get("id") == 4)["result"]
image = next(b for b in answer["content"] if b["type"] == "image")
size = len(base64.b64decode(image["data"]))
assert f"[image image/png, {size} bytes]" in answer["text"].split("\n"), answer["text"]
assert image["data"] not in answer["text"]
PY
expect_got 'Long running operation completed. Duration: 1 seconds, Steps: 2.' 5 text
expect_py '"demo://resource/static/document/architecture.md  architecture.md: Static document file exposed from /docs: architecture.md" in a(6)["text"].split("\n")'
expect_py 'any(line.endswith(" (template)") for line in a(6)["text"].split("\n"))'
expect_py 'a(7)["text"].startswith("# Everything Server")'
expect_py '{"simple-prompt", "args-prompt"} <= {p["name"] for p in a(8)["prompts"]}'
expect_py 'a(9)["text"] == "This is a simple prompt without arguments."'
expect_py '"Lisbon" in a(10)["text"]'
expect_got 'true' 11 isError
expect_got '-32002' 12 error.code
# The same at the command line.
expect_exit 0 timeout 60 sion-mcp resources everything
expect_grep '^demo://resource/static/document/architecture\.md  architecture\.md: Static document file exposed from /docs: architecture\.md \(text/markdown\)$' "$scratch/out"
expect_grep ' \(template\)$' "$scratch/out"
expect_exit 0 timeout 60 sion-mcp resources everything --read demo://resource/static/document/architecture.md
expect_grep '^# Everything Server' "$scratch/out"
expect_exit 0 timeout 60 sion-mcp prompts everything
expect_grep '^args-prompt: A prompt with two arguments, one required and one optional$' "$scratch/out"
expect_grep '^  city \(required\): Name of the city$' "$scratch/out"
expect_grep '^  state$' "$scratch/out"

# Progress restarts a call's timeout: with --timeout 6, a twelve-second operation in 24 steps
# finishes; one in a single step does not, is cancelled, and the server goes on. (The margins are
# wide: the timeout bounds connecting too, and a loaded machine may start node slowly, 3 s and more
# beside three other suites on two cores, or report progress late.)
expect_exit 0 timeout 60 sion-mcp add patient --timeout 6 -- node "$everything"
{
    req 0 mcp/state
    echo
    call 1 patient_trigger-long-running-operation '{"duration":12,"steps":24}'
    echo
    call 2 patient_trigger-long-running-operation '{"duration":12,"steps":1}'
    echo
    call 3 patient_echo '{"message":"still here"}'
} | expect_exit 0 bridge -- sion-mcp serve patient
expect_got 'Long running operation completed. Duration: 12 seconds, Steps: 24.' 1 text
expect_got '{"error":{"code":-32001,"message":"MCP server patient did not answer '"'"'tools/call'"'"' within 6 s"}}' 2
expect_got 'Echo: still here' 3 text

# Sampling, once allowed: the request goes up with the server's name, maxTokens cut to the limit,
# and no more than --per-run completions; elicitation goes up with --ask.
expect_exit 0 sion-mcp sampling everything --max-tokens 50 --per-run 1
{
    req 0 mcp/state
    echo
    call 1 everything_trigger-sampling-request '{"prompt":"What is 6 times 7?","maxTokens":500}'
    echo
    call 2 everything_trigger-sampling-request '{"prompt":"Again?"}'
    echo
    call 3 everything_trigger-elicitation-request
} | expect_exit 0 bridge \
    --answer 'sampling/createMessage={"role":"assistant","content":{"type":"text","text":"42"},"model":"script:x","stopReason":"endTurn"}' \
    --answer 'elicitation/create={"action":"accept","content":{"name":"Ada"}}' \
    -- sion-mcp serve --ask everything
expect_py 'len(up("sampling/createMessage")) == 1 and up("sampling/createMessage")[0]["server"] == "everything" and up("sampling/createMessage")[0]["maxTokens"] == 50'
expect_py '"What is 6 times 7?" in json.dumps(up("sampling/createMessage")[0]["messages"])'
expect_py '"\"42\"" in a(1)["text"] and not a(1)["isError"]'
expect_py 'a(2)["isError"] and "MCP server everything has had its 1 completions of this run" in a(2)["text"]'
expect_py 'len(up("elicitation/create")) == 1 and up("elicitation/create")[0]["server"] == "everything"'
expect_py '"Name: Ada" in a(3)["text"]'

# The 2026-07-28 server on the SDK v2: found by the probe, remembered, and called with _meta.
expect_exit 0 timeout 60 sion-mcp add shout -- node "$SION_SOURCE_DIR/tests/fixtures/mcp/modern-server.mjs"
expect_out "MCP server shout (shout 1.0, protocol 2026-07-28): reviewed tools
shout (read): Say a text louder: upper-cased.
It runs as you, outside any sandbox: add --sandbox bwrap (or a Docker image) to contain it.
Give it to a session with --mcp shout."
expect_exit 0 sqlite3 "$SION_HOME/sion.db" "SELECT protocol FROM mcp_servers WHERE name = 'shout'" && expect_out "2026-07-28"
{
    req 0 mcp/state
    echo
    call 1 shout_shout '{"text":"quiet"}'
} | expect_exit 0 bridge -- sion-mcp serve shout everything
expect_got '2026-07-28' 0 servers.0.protocol
expect_got '2025-11-25' 0 servers.1.protocol
expect_got 'QUIET' 1 text

# server-filesystem in bubblewrap: its directory at /workspace, readable and writable, and given as
# its root (roots/list), which it then keeps to; nothing outside.
mkdir ws && echo hello >ws/a.txt
reads=(--sandbox-read "$peers")
node_dir=$(dirname "$(readlink -f "$(command -v node)")")
case $node_dir in /usr/*) ;; *) reads+=(--sandbox-read "$node_dir") ;; esac
expect_exit 0 timeout 60 sion-mcp add fs --sandbox bwrap --dir ws "${reads[@]}" -- node "$filesystem" /workspace
expect_grep '^MCP server fs \(secure-filesystem-server [0-9.]+, protocol 2025-11-25\): reviewed tools$' "$scratch/out"
expect_grep '^list_directory \(read\): ' "$scratch/out"
expect_grep '^write_file \(write, repeats run again\): ' "$scratch/out"
grep -q '^It runs as you' "$scratch/out" && fail "a sandboxed server was said to run as you" || ok
expect_exit 0 sion-mcp list
expect_grep "^fs: node $filesystem /workspace, in bwrap$" "$scratch/out"
{
    req 0 mcp/state
    echo
    call 1 fs_list_directory '{"path":"/workspace"}'
    call 2 fs_read_text_file '{"path":"/workspace/a.txt"}'
    call 3 fs_write_file '{"path":"/workspace/b.txt","content":"from the sandbox"}'
    call 4 fs_list_directory "{\"path\":\"$scratch\"}"
    call 5 fs_read_text_file "{\"path\":\"$SION_HOME/sion.db\"}"
    call 6 fs_list_allowed_directories
} | expect_exit 0 bridge -- sion-mcp serve fs
expect_got 'connected' 0 servers.0.state
expect_got '[FILE] a.txt' 1 text
expect_got 'hello' 2 text
expect_got 'Successfully wrote to /workspace/b.txt' 3 text
[ "$(cat ws/b.txt 2>/dev/null)" = "from the sandbox" ] && ok || fail "what the server wrote is not in its --dir"
expect_got 'true' 4 isError
expect_got 'true' 5 isError
expect_got 'Allowed directories:
/workspace' 6 text

# What a sandboxed server sees, asked of the fixture that looks: its /workspace, nothing of $HOME or
# $SION_HOME (both in $scratch), the sandbox's own /etc, and only the variables it is given.
export ANTHROPIC_API_KEY=sk-test-secret NOTES_KEY=k1
fixtures="$SION_SOURCE_DIR/tests/fixtures/mcp"
expect_exit 0 timeout 60 sion-mcp add inside --sandbox bwrap --dir ws --sandbox-read "$fixtures" --env NOTES_KEY -- python3 "$fixtures/environ.py"
{
    call 1 inside_where
    call 2 inside_look '{"path":"/workspace"}'
    call 3 inside_look "{\"path\":\"$scratch\"}"
    call 4 inside_look "{\"path\":\"$SION_HOME\"}"
    call 5 inside_look "{\"path\":\"$HOME\"}"
    call 6 inside_look '{"path":"/etc/passwd"}'
    call 7 inside_environ
    call 8 inside_look '{"path":"/root"}'
} | expect_exit 0 bridge -- sion-mcp serve inside
unset ANTHROPIC_API_KEY NOTES_KEY
expect_got '/workspace' 1 text
expect_got 'a.txt
b.txt' 2 text
for id in 3 4 5 8; do
    expect_got 'FileNotFoundError: No such file or directory' "$id" text
done
expect_py '"sandbox:x:10001:10001" in a(6)["text"] and a(6)["text"] != open("/etc/passwd").read()'
expect_py 'json.loads(a(7)["text"])["NOTES_KEY"] == "k1" and "sk-test" not in a(7)["text"] and "SION_HOME" not in json.loads(a(7)["text"])'

# A Node server that uses fetch() runs in bubblewrap: its memory is bounded, not its address space,
# of which V8 reserves far more than it uses (under a 4 GiB RLIMIT_AS fetch() failed with
# "RangeError: WebAssembly.instantiate(): Out of memory"). --sandbox-memory is kept with it; what it
# holds past that ends it (the memory cgroup's kill, or a failed allocation under RLIMIT_DATA).
expect_exit 0 timeout 60 sion-mcp add fetcher --sandbox bwrap --sandbox-memory 256M --dir ws \
    "${reads[@]}" --sandbox-read "$fixtures" -- node "$fixtures/fetcher.mjs"
expect_exit 0 sqlite3 "$SION_HOME/sion.db" "SELECT json_extract(config, '$.memory') FROM mcp_servers WHERE name = 'fetcher'" &&
    expect_out 256M
{
    call 1 fetcher_fetch
    echo
    call 2 fetcher_hold '{"mib":64}'
    echo
    call 3 fetcher_hold '{"mib":512}'
} | expect_exit 0 bridge -- sion-mcp serve fetcher
expect_got 'status 200: hello' 1 text
expect_got 'holding 64 MiB' 2 text
expect_py '"MCP server fetcher ended" in a(3)["error"]["message"]'
expect_exit 64 sion-mcp add hog --sandbox bwrap --sandbox-memory 8K -- node "$fixtures/fetcher.mjs" &&
    expect_err "sion-mcp: option '--sandbox-memory': '8K' is too little: give 16M or more"
expect_exit 64 sion-mcp add hog --sandbox-memory 1G -- node "$fixtures/fetcher.mjs" &&
    expect_err "sion-mcp: --sandbox-network, --sandbox-read and --sandbox-memory go with --sandbox"

done_testing
