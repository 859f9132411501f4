#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# sion-run chatgpt models --json, against the stand-in of OpenAI's sign-in and API
# (tests/models/chatgpt_server.py): one JSON object a model the plan lists, in its order, that
# passes schemas/run.chatgpt-models.json; the text stays as it was; a plan with no model to list
# prints nothing; --json goes with models alone; a malformed invocation with --json is still the
# one-line usage error (64), and an error prints no line.
. "$(dirname "$0")/lib.sh"
need_jsonschema
. "$SION_SOURCE_DIR/tests/models/standin.sh"
cd "$scratch" || exit 1
unset BROWSER DISPLAY WAYLAND_DISPLAY SION_CHATGPT_ISSUER SION_CHATGPT_BASE_URL SION_MODEL_TIMEOUT

# The browser: follows the sign-in's redirect back to sion's loopback port, as a person's would.
cat >"$scratch/browser" <<'SH'
#!/bin/sh
exec python3 -c 'import sys, urllib.request; print(urllib.request.urlopen(sys.argv[1], timeout=30).read().decode())' "$1"
SH
chmod +x "$scratch/browser"
echo '[]' >"$scratch/script.json"
# chatgpt URL COMMAND...: sion-run chatgpt COMMAND at the stand-in at URL, bounded.
chatgpt() {
    local url=$1
    shift
    env BROWSER="$scratch/browser" SION_CHATGPT_ISSUER="$url" SION_CHATGPT_BASE_URL="$url/v1" \
        timeout 60 sion-run chatgpt "$@" </dev/null
}

# Not signed in: the error, and no line.
expect_exit 78 sion-run chatgpt models --json && expect_out '' &&
    expect_grep 'no ChatGPT account is signed in' "$scratch/err"

start_standin plan chatgpt_server "$scratch/script.json" --key-file "$scratch/issuer.key"
expect_exit 0 chatgpt "$plan_url" login
expect_exit 0 chatgpt "$plan_url" models && expect_out 'gpt-5.2-codex
gpt-5.2'
expect_exit 0 chatgpt "$plan_url" models --json && expect_json_lines run.chatgpt-models.json 2 &&
    expect_out '{"model":"gpt-5.2-codex"}
{"model":"gpt-5.2"}'

# A plan with nothing to list: nothing, exit 0 (signed in again at a stand-in that hides them).
start_standin hidden chatgpt_server "$scratch/script.json" --key-file "$scratch/issuer.key" --hide-models
expect_exit 0 chatgpt "$hidden_url" login
expect_exit 0 chatgpt "$hidden_url" models --json && expect_out ''
expect_exit 0 chatgpt "$hidden_url" models && expect_out ''

# --json goes with models alone; malformed invocations are the usage error, nothing on stdout.
expect_exit 64 sion-run chatgpt status --json &&
    expect_err "sion-run: --json goes with models: sion-run chatgpt models --json" && expect_out ''
expect_exit 64 sion-run chatgpt models extra --json && expect_err "sion-run: unexpected operand 'extra'" &&
    expect_out ''
expect_exit 64 sion-run chatgpt models --json=1 && expect_err "sion-run: option '--json' takes no argument"
expect_exit 64 sion-run chatgpt --json &&
    expect_err "sion-run: a command is needed: login, status, models or logout (see --help)"

expect_exit 0 sion-run chatgpt --help && expect_grep '^       sion-run chatgpt models \[--json\]$' "$scratch/out"
expect_exit 0 sion-run --help && expect_grep '^ +sion-run chatgpt models \[--json\]$' "$scratch/out"

done_testing
