#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# sion-mcp resources NAME --json, against tests/fixtures/mcp/offers.py: one JSON object a resource,
# then one a template, in the server's order, that passes schemas/mcp.resources.json and carries
# what the text line shows, in MCP's spelling and as the server gave it (a description of two
# lines whole, where the text puts it on one; "" for an address it did not give); the text stays as it was; a server that lists none,
# or has no resources at all, prints nothing; --json does not go with --read; a malformed
# invocation with --json is still the one-line usage error (64), and an error prints no line.
. "$(dirname "$0")/lib.sh"
need_jsonschema
cd "$scratch" || exit 1
offers="$SION_SOURCE_DIR/tests/fixtures/mcp/offers.py"

expect_exit 0 timeout 60 sion-mcp add offers -- python3 "$offers"
expect_exit 0 timeout 60 sion-mcp add bare -- python3 "$offers" --nothing
expect_exit 0 timeout 60 sion-mcp add slow -- python3 "$SION_SOURCE_DIR/tests/fixtures/mcp/slow.py"

# The text as it was.
expect_exit 0 timeout 60 sion-mcp resources offers && expect_out 'file:///docs/guide.md  guide: How to use it. (text/markdown)
mem://scratch
db://orders  orders: Open orders by day
astray
file:///docs/{page}  page (text/markdown) (template)
db://orders/{id}: One order (template)'
# The same as JSON lines, in the same order.
expect_exit 0 timeout 60 sion-mcp resources offers --json && expect_json_lines mcp.resources.json 6 &&
    expect_out '{"uri":"file:///docs/guide.md","name":"guide","description":"How to use it.","mimeType":"text/markdown"}
{"uri":"mem://scratch"}
{"uri":"db://orders","name":"orders","description":"Open orders\n\tby day"}
{"uri":"","name":"astray"}
{"uriTemplate":"file:///docs/{page}","name":"page","mimeType":"text/markdown"}
{"uriTemplate":"db://orders/{id}","description":"One order"}'
python3 - "$scratch/out" <<'PY' && ok || fail "the members of resources --json"
import json, sys
lines = [json.loads(line) for line in open(sys.argv[1], encoding="utf-8")]
assert [l.get("uri") for l in lines] == ["file:///docs/guide.md", "mem://scratch", "db://orders", "", None, None], lines
assert [l.get("uriTemplate") for l in lines[4:]] == ["file:///docs/{page}", "db://orders/{id}"], lines
assert lines[2]["description"] == "Open orders\n\tby day", lines[2]
assert lines[1] == {"uri": "mem://scratch"}, lines[1]
PY

# None listed, or no resources at all: nothing, exit 0.
expect_exit 0 timeout 60 sion-mcp resources bare --json && expect_out ''
expect_exit 0 timeout 60 sion-mcp resources slow --json && expect_out ''
expect_exit 0 timeout 60 sion-mcp resources slow && expect_out ''

# Errors: the line on stderr, nothing on stdout.
expect_exit 66 sion-mcp resources nope --json &&
    expect_err "sion-mcp: there is no MCP server nope on the shelf (\`sion agent mcp list\`)" && expect_out ''
expect_exit 64 sion-mcp resources offers --read mem://scratch --json &&
    expect_err "sion-mcp: --json lists: it does not go with --read" && expect_out ''
expect_exit 64 sion-mcp resources --json &&
    expect_err "sion-mcp: give a server's name: sion-mcp resources NAME [--read URI | --json]"
expect_exit 64 sion-mcp resources offers bare --json &&
    expect_err "sion-mcp: give a server's name: sion-mcp resources NAME [--read URI | --json]"
expect_exit 64 sion-mcp resources offers --json=1 && expect_err "sion-mcp: option '--json' takes no argument"

expect_exit 0 sion-mcp resources --help &&
    expect_grep '^usage: sion-mcp resources NAME \[--read URI \| --json\]$' "$scratch/out"

done_testing
