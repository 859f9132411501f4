#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Project instructions: a session reads $SION_HOME/AGENTS.md and the workspace's AGENTS.md files from
# its root down to the directory sion-run started in, root first, and puts them in its system
# prompt, as a stand-in of Anthropic's API sees it: the project's marked as the project's words, the
# nearer after. A file that is not UTF-8, or a link that leads out of the workspace, is left out
# and said so; the bound (32 KiB in all) cuts the farthest first; a continued session keeps what it
# began with, and --no-project-instructions leaves the workspace's out. `show` names the files.
. "$(dirname "$0")/lib.sh"
command -v python3 >/dev/null || skip "python3 is not installed"
. "$SION_SOURCE_DIR/tests/models/standin.sh"

unset ANTHROPIC_BASE_URL SION_MODEL_TIMEOUT
export ANTHROPIC_API_KEY=sk-ant-test-0001
ws="$scratch/ws"
mkdir -p "$ws/src/deep" "$ws/src/linked" "$ws/other" "$scratch/outside" "$SION_HOME"
printf 'Root: indent with tabs.\n' >"$ws/AGENTS.md"
printf 'Src: indent with spaces here.\n' >"$ws/src/AGENTS.md"
printf 'Other: never read.\n' >"$ws/other/AGENTS.md"
printf 'Latin-1 caf\xe9\n' >"$ws/src/deep/AGENTS.md"
printf 'Outside: must not be read.\n' >"$scratch/outside/AGENTS.md"
ln -s ../../../outside/AGENTS.md "$ws/src/linked/AGENTS.md"
printf 'Operator: be brief.\n' >"$SION_HOME/AGENTS.md"

python3 -c 'import json; print(json.dumps([{"text": "done"}] * 12))' >"$scratch/replies.json"
start_standin a anthropic_server "$scratch/replies.json"
agent=$(sion agent create coder) || exit 1
# run DIR ARGS...: a session started in DIR, on the stand-in, with no terminal, bounded.
run() { (cd "$1" && ANTHROPIC_BASE_URL=$a_url timeout 60 setsid -w sion agent run coder "$agent" --task x \
    --model anthropic:claude-opus-5-5 --workspace "$ws" "${@:2}" </dev/null); }
# system N: the system prompt of the stand-in's Nth request (from 0), its blocks joined.
system() { query "$a_log" "(lambda s: s if isinstance(s, str) else ''.join(b['text'] for b in s))(r[$1]['body'].get('system', ''))" | python3 -c 'import json, sys; print(json.load(sys.stdin), end="")'; }
# holds N TEXT...: request N's system prompt holds each TEXT, in this order.
holds() {
    local n=$1 prompt at=-1 i
    shift
    prompt=$(system "$n")
    for want in "$@"; do
        i=$(python3 -c 'import sys; print(sys.argv[1].find(sys.argv[2]))' "$prompt" "$want")
        if [ "$i" -le "$at" ]; then
            fail "request $n's system prompt does not hold '$want' after what came before: $prompt"
            return 1
        fi
        at=$i
    done
    ok
}
lacks() { # lacks N TEXT: request N's system prompt does not hold TEXT
    case "$(system "$1")" in *"$2"*) fail "request $1's system prompt holds '$2'" ;; *) ok ;; esac
}

# Started in src/deep: the operator's, the root's and src's, in that order; deep's is not UTF-8.
expect_exit 0 run "$ws/src/deep"
expect_grep '^instructions: \$SION_HOME/AGENTS\.md, AGENTS\.md, src/AGENTS\.md, src/deep/AGENTS\.md \(left out: it is not UTF-8 text, at byte 11\)$' "$scratch/out"
session=$(session_id)
holds 0 "The operator's own instructions" 'Operator: be brief.' "The project's instructions follow" \
    'not of the person you work for' '<instructions file="AGENTS.md">' 'Root: indent with tabs.' \
    '<instructions file="src/AGENTS.md">' 'Src: indent with spaces here.'
lacks 0 'Other: never read.'
lacks 0 'Latin-1'

# `show` names the files the session read.
expect_exit 0 sion agent show "$session"
expect_grep '^instructions: \$SION_HOME/AGENTS\.md, AGENTS\.md, src/AGENTS\.md, src/deep/AGENTS\.md \(left out' "$scratch/out"

# A continued session keeps the instructions it began with, though the file changed: the start of
# what the model is sent stays the same. A new session reads the change.
printf 'Root: indent with two spaces.\n' >"$ws/AGENTS.md"
expect_exit 0 run "$ws/src/deep" --session "$session"
[ "$(system 1)" = "$(system 0)" ] && ok || fail "the continued session's system prompt changed"
expect_exit 0 run "$ws/src/deep"
holds 2 'Root: indent with two spaces.'

# Started outside the workspace: its root's alone.
expect_exit 0 run "$scratch"
expect_grep '^instructions: \$SION_HOME/AGENTS\.md, AGENTS\.md$' "$scratch/out"

# A link that leads out of the workspace is not followed.
expect_exit 0 run "$ws/src/linked"
expect_grep "^instructions: \\\$SION_HOME/AGENTS\\.md, AGENTS\\.md, src/AGENTS\\.md, src/linked/AGENTS\\.md \\(left out: cannot read 'src/linked/AGENTS\\.md': 'src/linked/AGENTS\\.md' is outside the workspace\\)\$" "$scratch/out"
lacks 4 'Outside: must not be read.'

# --no-project-instructions: the operator's alone.
expect_exit 0 run "$ws/src" --no-project-instructions
expect_grep '^instructions: \$SION_HOME/AGENTS\.md$' "$scratch/out"
lacks 5 'Root:'
holds 5 'Operator: be brief.'

# The bound: 32 KiB in all, the nearest kept first. The root's 40,000 bytes of "é" are cut at a
# character's end, after the operator's 20 bytes and src's 30.
python3 -c 'import sys; sys.stdout.write("é" * 20000)' >"$ws/AGENTS.md"
expect_exit 0 run "$ws/src"
expect_grep '^instructions: \$SION_HOME/AGENTS\.md, AGENTS\.md \(cut at 32718 of 40000 bytes: the instructions are bounded at 32768 bytes in all\), src/AGENTS\.md$' "$scratch/out"
holds 6 'Operator: be brief.' 'éé' '[cut at 32718 of 40000 bytes' 'Src: indent with spaces here.'

# No file at all: no line, and the system prompt says nothing of instructions.
rm "$SION_HOME/AGENTS.md"
expect_exit 0 run "$scratch" --no-project-instructions
grep -q '^instructions:' "$scratch/out" && fail "a line about instructions with none read" || ok
lacks 7 'instructions'

done_testing
