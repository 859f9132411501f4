#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# sion-run credential list --json: one JSON object a credential kept, in the order of their names,
# that passes schemas/run.credential-list.json: its name, and whether the variable is set in the
# environment too; never a value, neither in the JSON nor in the text, which stays as it was. An
# empty list prints nothing; --json goes with list alone; a malformed invocation with --json is
# still the one-line usage error (64).
. "$(dirname "$0")/lib.sh"
need_jsonschema
cd "$scratch" || exit 1
unset ANTHROPIC_API_KEY OPENAI_API_KEY GEMINI_API_KEY

anthropic=sk-ant-listed-5e0b7d21c4
openai=sk-openai-listed-a93c04
gemini='gemini-listed-77f1e0b2'

# Nothing kept (and no store): nothing, exit 0.
expect_exit 0 sion-run credential list --json && expect_out ''
expect_exit 0 sion-run credential list && expect_out ''

printf '%s\n' "$openai" | sion-run credential add OPENAI_API_KEY && ok || fail "credential add OPENAI_API_KEY"
printf '%s\n' "$anthropic" | sion-run credential add ANTHROPIC_API_KEY && ok || fail "credential add ANTHROPIC_API_KEY"
printf '%s\n' "$gemini" | sion-run credential add GEMINI_API_KEY && ok || fail "credential add GEMINI_API_KEY"
printf 'x\n' | sion-run credential add X_1 && ok || fail "credential add X_1"

# The text as it was; the JSON in the same order, each name and whether the environment has it.
expect_exit 0 sion-run credential list && expect_out 'ANTHROPIC_API_KEY
GEMINI_API_KEY
OPENAI_API_KEY
X_1'
expect_exit 0 sion-run credential list --json && expect_json_lines run.credential-list.json 4 &&
    expect_out '{"name":"ANTHROPIC_API_KEY","in_environment":false}
{"name":"GEMINI_API_KEY","in_environment":false}
{"name":"OPENAI_API_KEY","in_environment":false}
{"name":"X_1","in_environment":false}'
# Set in the environment (not empty): said so; an empty one is not set.
expect_exit 0 env GEMINI_API_KEY=from-env OPENAI_API_KEY= sion-run credential list --json &&
    expect_json_lines run.credential-list.json 4 &&
    expect_out '{"name":"ANTHROPIC_API_KEY","in_environment":false}
{"name":"GEMINI_API_KEY","in_environment":true}
{"name":"OPENAI_API_KEY","in_environment":false}
{"name":"X_1","in_environment":false}'
python3 - "$scratch/out" <<'PY' && ok || fail "the members of credential list --json"
import json, sys
lines = [json.loads(line) for line in open(sys.argv[1], encoding="utf-8")]
assert [sorted(l) for l in lines] == [["in_environment", "name"]] * 4, lines
assert [l["in_environment"] for l in lines] == [False, True, False, False], lines
PY
# No value anywhere in what was printed.
for value in "$anthropic" "$openai" "$gemini"; do
    ! grep -qF -- "$value" "$scratch/out" "$scratch/err" && ok || fail "credential list --json printed a value"
done

# After a remove, one fewer; all removed, nothing again.
expect_exit 0 sion-run credential remove X_1
expect_exit 0 sion-run credential list --json && expect_json_lines run.credential-list.json 3
for name in ANTHROPIC_API_KEY GEMINI_API_KEY OPENAI_API_KEY; do
    expect_exit 0 sion-run credential remove "$name"
done
expect_exit 0 sion-run credential list --json && expect_out ''

# --json goes with list alone; malformed invocations are the usage error, nothing on stdout.
expect_exit 64 sion-run credential add NEW_KEY --json </dev/null &&
    expect_err "sion-run: --json goes with list: sion-run credential list --json" && expect_out ''
expect_exit 64 sion-run credential remove NEW_KEY --json &&
    expect_err "sion-run: --json goes with list: sion-run credential list --json"
expect_exit 64 sion-run credential list NEW_KEY --json && expect_err "sion-run: unexpected operand 'NEW_KEY'" &&
    expect_out ''
expect_exit 64 sion-run credential list --json=1 && expect_err "sion-run: option '--json' takes no argument"
expect_exit 64 sion-run credential --json &&
    expect_err "sion-run: a command is needed: add, list or remove (see --help)"

expect_exit 0 sion-run credential --help && expect_grep '^       sion-run credential list \[--json\]$' "$scratch/out"
expect_exit 0 sion-run --help && expect_grep '^ +sion-run credential list \[--json\]$' "$scratch/out"

done_testing
