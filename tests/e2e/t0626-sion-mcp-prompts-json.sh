#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# sion-mcp prompts NAME --json, against tests/fixtures/mcp/offers.py: one JSON object a prompt, in
# the server's order, that passes schemas/mcp.prompts.json and carries what its lines of text show,
# in MCP's spelling and as the server gave it: its name, its description, and its arguments with
# theirs and whether each is required; the text stays as it was; a server that lists none, or has
# no prompts at all, prints nothing; a malformed invocation with --json is still the one-line usage
# error (64), and an error prints no line.
. "$(dirname "$0")/lib.sh"
need_jsonschema
cd "$scratch" || exit 1
offers="$SION_SOURCE_DIR/tests/fixtures/mcp/offers.py"

expect_exit 0 timeout 60 sion-mcp add offers -- python3 "$offers"
expect_exit 0 timeout 60 sion-mcp add bare -- python3 "$offers" --nothing
expect_exit 0 timeout 60 sion-mcp add slow -- python3 "$SION_SOURCE_DIR/tests/fixtures/mcp/slow.py"

# The text as it was.
expect_exit 0 timeout 60 sion-mcp prompts offers && expect_out 'review: Review a change.
  diff (required): The change
  tone: How to say it
hello
translate: Translate a text.
  text (required)
  to'
# The same as JSON lines, one a prompt, in the same order.
expect_exit 0 timeout 60 sion-mcp prompts offers --json && expect_json_lines mcp.prompts.json 3 &&
    expect_out '{"name":"review","description":"Review a change.","arguments":[{"name":"diff","description":"The change","required":true},{"name":"tone","description":"How to say it","required":false}]}
{"name":"hello","arguments":[]}
{"name":"translate","description":"Translate a text.","arguments":[{"name":"text","required":true},{"name":"to","required":false}]}'
python3 - "$scratch/out" <<'PY' && ok || fail "the members of prompts --json"
import json, sys
lines = [json.loads(line) for line in open(sys.argv[1], encoding="utf-8")]
assert [l["name"] for l in lines] == ["review", "hello", "translate"], lines
assert [[a["name"] for a in l["arguments"]] for l in lines] == [["diff", "tone"], [], ["text", "to"]], lines
assert [[a["required"] for a in l["arguments"]] for l in lines] == [[True, False], [], [True, False]], lines
assert "description" not in lines[1] and "description" not in lines[2]["arguments"][0], lines
PY

# None listed, or no prompts at all: nothing, exit 0.
expect_exit 0 timeout 60 sion-mcp prompts bare --json && expect_out ''
expect_exit 0 timeout 60 sion-mcp prompts slow --json && expect_out ''
expect_exit 0 timeout 60 sion-mcp prompts slow && expect_out ''

# Errors: the line on stderr, nothing on stdout.
expect_exit 66 sion-mcp prompts nope --json &&
    expect_err "sion-mcp: there is no MCP server nope on the shelf (\`sion agent mcp list\`)" && expect_out ''
expect_exit 64 sion-mcp prompts --json && expect_err "sion-mcp: give a server's name: sion-mcp prompts NAME [--json]"
expect_exit 64 sion-mcp prompts offers bare --json &&
    expect_err "sion-mcp: give a server's name: sion-mcp prompts NAME [--json]" && expect_out ''
expect_exit 64 sion-mcp prompts offers --json=1 && expect_err "sion-mcp: option '--json' takes no argument"

expect_exit 0 sion-mcp prompts --help && expect_grep '^usage: sion-mcp prompts NAME \[--json\]$' "$scratch/out"

done_testing
