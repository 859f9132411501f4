#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Compaction (seed 001, "What a model is sent"): a long scripted session, kept within
# --context-chars 4000 and --context-messages 20, against the stand-ins of Anthropic's Messages,
# OpenAI's Chat Completions and Responses and Gemini (tests/models/), which check every request.
# Long results before the last messages are cut to a line; the middle is replaced by a summary
# whose narrative the model writes from the middle given as data with no tools; a call is never
# sent without its result; the start of what is sent stays the same between compactions; the
# summary after several compactions still lists the session's first lasting calls (kept apart from
# the conversation); `show` says where each compaction happened and keeps every message; a
# compacted session continues; a journaled call whose result was cut, made again, is answered from
# the journal; bad limits are refused.
. "$(dirname "$0")/lib.sh"
. "$SION_SOURCE_DIR/tests/models/standin.sh"

cd "$scratch" || exit 1
export ANTHROPIC_API_KEY=sk-ant-test-0001 OPENAI_API_KEY=sk-openai-0001 GEMINI_API_KEY=AIza-test-0001
unset ANTHROPIC_BASE_URL OPENAI_BASE_URL GEMINI_BASE_URL
agent=$(sion agent create coder) || exit 1
mkdir -p work/notes work/out

# 24 notes of 700 characters; 24 turns: a write every fourth, reads of the notes otherwise (some
# by other spellings of their paths), then "Done."; narratives for whenever the model is asked.
# scripts/<provider>.json, in each stand-in's form.
python3 - <<'PY'
import json, os
os.makedirs("scripts", exist_ok=True)
for k in range(1, 25):
    with open(f"work/notes/f{k:02}.txt", "w") as f:
        f.write((f"note {k:02}: " + "lorem ipsum " * 80)[:699] + "\n")
calls = []
for k in range(1, 25):
    if k % 4 == 0:
        calls.append(("write_file", {"path": f"out/w{k:02}.txt", "content": f"written at turn {k}\n"}))
    else:
        path = [f"notes/f{k:02}.txt", f"./notes/f{k:02}.txt", f"/workspace/notes/f{k:02}.txt"][k % 3]
        calls.append(("read_file", {"path": path}))
narratives = [f"NARRATIVE {n}: the agent read notes and wrote files." for n in range(1, 9)]
anthropic = [{"calls": [{"name": t, "input": i}]} for t, i in calls] + [{"text": "Done."}]
anthropic += [{"toolless": True, "text": n} for n in narratives]
json.dump(anthropic, open("scripts/anthropic.json", "w"))
json.dump(anthropic, open("scripts/openai.json", "w"))
gemini = [{"parts": [{"functionCall": {"name": t, "args": i}, "thoughtSignature": f"c2lnLT{k:02}"}]}
          for k, (t, i) in enumerate(calls)] + [{"parts": [{"text": "Done."}]}]
gemini += [{"toolless": True, "parts": [{"text": n}]} for n in narratives]
json.dump({"turns": gemini}, open("scripts/gemini.json", "w"))
PY

# long NAME SERVER SCRIPT MODEL VAR=VALUE... [-- STAND-IN ARGS...]: the long session with MODEL at
# the stand-in SERVER playing SCRIPT, its URL for @URL@ in the VALUEs, within $LIMITS (4000
# characters and 20 messages when unset); its transcript in $scratch/NAME.out.
long() {
    local name=$1 model=$4
    start_standin_for "$1" "$2" "$3" "${@:5}"
    # shellcheck disable=SC2086 # the limits are words
    expect_exit 0 env "${standin_env[@]}" timeout 120 setsid -w sion agent run coder "$agent" --model "$model" \
        --workspace work --autonomy L3 ${LIMITS:---context-chars 4000 --context-messages 20} \
        --task 'Read the notes and write the files.' </dev/null
    cp "$scratch/out" "$scratch/$name.out"
}

# checks NAME: what every provider's run must show. The main requests are those with tools; the
# narratives' have none.
checks() {
    local log out=$scratch/$1.out
    eval "log=\$${1}_log"
    expect_query "$log" '[x for e in r for x in e.get("violations", [])] + [e["verdict"] for e in r if e.get("verdict", "answered") != "answered"] + [e for e in entries if "unanswered" in e]' '[]'
    local compactions summaries
    compactions=$(grep -c '^the conversation is compacted: ' "$out")
    summaries=$(grep -c '^the conversation is compacted: .*messages summarized' "$out")
    [ "$compactions" -ge 4 ] && [ "$summaries" -ge 3 ] && ok ||
        fail "$1: $compactions compactions, $summaries summaries: want at least 4 and 3"
    # One narrative request a summary, with no tools; 25 main requests, 24 calls and "Done.".
    expect_query "$log" 'len([e for e in r if not e["body"].get("tools")])' "$summaries"
    expect_query "$log" 'len([e for e in r if e["body"].get("tools")])' '25'
    # Between compactions each main request starts as the one before did: a start changes only
    # at a compaction (kept_start false), whose narrative, if any, is asked in between.
    expect_query "$log" 'sum(1 for e in r[1:] if e["body"].get("tools") and e["kept_start"] is False)' "$compactions"
    grep -q '^session [0-9a-f]\{16\}: done$' "$out" && ok || fail "$1: the long session did not end done"
}

long a anthropic_server scripts/anthropic.json anthropic:claude-opus-5-5 ANTHROPIC_BASE_URL=@URL@
sid=$(session_id)
checks a
# The cuts come first, each result a line; the first summary once cutting is not enough.
expect_grep '^the conversation is compacted: [0-9]+ results? cut; the model is sent [0-9]+ messages, [0-9]+ characters$' "$scratch/a.out"
expect_query "$a_log" '[c["content"] for e in r if e["body"].get("tools") for m in e["body"]["messages"] for c in m["content"] if isinstance(c, dict) and c.get("type") == "tool_result" and isinstance(c.get("content"), str) and c["content"].startswith("[cut")][:1]' \
    '["[cut to keep the conversation short: read_file'"'"'s result of 706 characters; make the call again to see it]"]'
# What the narrative was given: the middle as data between marked lines, no tools, its own prompt.
expect_query "$a_log" '[(e["body"]["system"][0]["text"][:38], e["body"]["messages"][0]["content"][0]["text"][:17], "tools" in e["body"]) for e in r if not e["body"].get("tools")][:1]' \
    '[["You write the summary of a part of an ", "----- the record ", false]]'
expect_query "$a_log" 'all("[the agent calls read_file]" in e["body"]["messages"][0]["content"][0]["text"] for e in r if not e["body"].get("tools"))' 'true'
# The last request: the task, then the summary, then at most 20 more messages; the summary lists
# every write of the session (the first made before the first compaction) and the latest
# narrative.
last='[e for e in r if e["body"].get("tools")][-1]["body"]["messages"]'
expect_query "$a_log" "[b.get(\"text\", \"\")[:40] for b in $last[0][\"content\"]]" \
    '["Read the notes and write the files.", "The runtime'"'"'s summary of the session'"'"'s f"]'
expect_query "$a_log" "len($last) <= 20" 'true'
summary="$last[0][\"content\"][1][\"text\"]"
expect_query "$a_log" "[w in $summary for w in ['- write_file {\"content\":\"written at turn 4\\\\n\",\"path\":\"out/w04.txt\"}: ok', 'out/w08.txt', 'out/w12.txt', 'out/w16.txt']]" \
    '[true, true, true, true]'
expect_query "$a_log" "'NARRATIVE $(grep -c 'messages summarized' "$scratch/a.out")' in $summary" 'true'
# show: every call kept, each compaction where it happened, the run's lines in order.
expect_exit 0 sion agent show "$sid"
[ "$(grep -c '^→ ' "$scratch/out")" -eq 24 ] && ok || fail "show does not show the 24 calls"
[ "$(grep -c '^the conversation is compacted: ' "$scratch/out")" -eq "$(grep -c '^the conversation is compacted: ' "$scratch/a.out")" ] &&
    ok || fail "show does not show each compaction"
diff <(grep -v '^you: ' "$scratch/out" | sed '/^session .*: done$/d') <(sed '/^session .*: done$/d' "$scratch/a.out") >/dev/null &&
    ok || fail "show does not show the run as it was: $(diff <(grep -v '^you: ' "$scratch/out") "$scratch/a.out" | head -5)"
expect_exit 0 sion agent show "$sid" --json
cp "$scratch/out" "$scratch/show.jsonl"
expect_exit 0 python3 "$SION_SOURCE_DIR/tests/e2e/check_run_events.py" "$SION_SOURCE_DIR/schemas" "$scratch/show.jsonl"
expect_query "$scratch/show.jsonl" '[(e["cut"] > 0, e["summarized"] > 0, "summary" in e) for e in entries if e["event"] == "compacted"][:3]' \
    '[[true, false, false], [true, false, false], [false, true, true]]'

# The compacted session continues: its first request starts with the task and the summary (which
# the new task may take past the messages again, and compact).
printf '%s\n' '[{"text": "Still here."}, {"toolless": true, "text": "NARRATIVE again."}]' >scripts/again.json
start_standin a2 anthropic_server scripts/again.json
expect_exit 0 env ANTHROPIC_BASE_URL="$a2_url" timeout 60 setsid -w sion agent run coder "$agent" \
    --session "$sid" --task 'Are you there?' </dev/null
expect_query "$a2_log" '[x for e in r for x in e["violations"]]' '[]'
first='[e for e in r if e["body"].get("tools")][0]["body"]["messages"]'
expect_query "$a2_log" "[b.get('text', '')[:30] for b in $first[0]['content']]" \
    '["Read the notes and write the f", "The runtime'"'"'s summary of the s"]'
expect_query "$a2_log" "[b['text'] for b in $first[-1]['content']][-1]" '"Are you there?"'

# With room for them (a summary is a quarter of 30000 characters), a summary gives the latest of
# the notes read, the start of what each read returned, each path one way however a call wrote it.
LIMITS="--context-chars 30000 --context-messages 14" long b anthropic_server scripts/anthropic.json \
    anthropic:claude-opus-5-5 ANTHROPIC_BASE_URL=@URL@
summary="[e for e in r if e[\"body\"].get(\"tools\")][-1][\"body\"][\"messages\"][0][\"content\"][1][\"text\"]"
found="set(__import__('re').findall(r'\\n- (\\S+), by read_file:\\n +1\\tnote ', $summary))"
expect_query "$b_log" "[len($found) >= 5, all(__import__('re').fullmatch(r'notes/f[0-9]{2}\\.txt', p) for p in $found), sorted({'notes/f13.txt', 'notes/f17.txt'} & $found)]" \
    '[true, true, ["notes/f13.txt", "notes/f17.txt"]]'
expect_query "$b_log" "[x for e in r for x in e['violations']]" '[]'

# The other providers: the same session, well formed for each API.
long o openai_server scripts/openai.json openai:gpt-5 OPENAI_BASE_URL=@URL@/v1
checks o
long p responses_server scripts/openai.json openai-responses:gpt-5 OPENAI_BASE_URL=@URL@/v1
checks p
long g gemini_server scripts/gemini.json gemini:gemini-3-pro GEMINI_BASE_URL=@URL@ -- --model gemini-3-pro --api-key AIza-test-0001
checks g

# A narrative that fails: the summary keeps its other parts, says so, and the session goes on.
python3 - <<'PY'
import json
turns = json.load(open("scripts/anthropic.json"))
turns = [t for t in turns if not t.get("toolless")]
turns += [{"toolless": True, "status": 529, "message": "Overloaded"}] * 8
json.dump(turns, open("scripts/failing.json", "w"))
PY
long f anthropic_server scripts/failing.json anthropic:claude-opus-5-5 ANTHROPIC_BASE_URL=@URL@
expect_query "$f_log" '[x for e in r for x in e["violations"]]' '[]'
expect_grep '^session [0-9a-f]{16}: done$' "$scratch/f.out"
expect_query "$f_log" "$(printf '%s' "$last" | sed 's/\$//')[0][\"content\"][1][\"text\"].split(\"\\n\")[-1][:64]" \
    '"What happened in those messages could not be summarised (the mod"'

# A journaled call (an MCP server's tool that is not idempotent, played by
# tests/tools/fake-mcp-bridge.py found as sion-mcp) whose result was cut, made again: answered from
# the journal, not sent to the server twice.
mkdir -p fake
printf '#!/bin/sh\nexec python3 "%s/tests/tools/fake-mcp-bridge.py" "$@"\n' "$SION_SOURCE_DIR" >fake/sion-mcp
chmod +x fake/sion-mcp
python3 - <<'PY'
import json
tool = {"name": "notes_send", "description": "Send a note", "effect": "write", "idempotent": False, "taints": False,
        "inputSchema": {"type": "object", "properties": {"to": {"type": "string"}}}}
json.dump({"servers": {"notes": {"state": "connected", "protocol": "2025-06-18", "server": {"name": "notes", "version": "1"},
                                 "tools": [tool]}},
           "calls": {"notes_send": [{"text": "sent to {to}: " + "receipt " * 75}]}}, open("bridge.json", "w"))
send = {"calls": [{"name": "notes_send", "input": {"to": "ana"}}]}
reads = [{"calls": [{"name": "read_file", "input": {"path": f"notes/f{k:02}.txt"}}]} for k in range(1, 7)]
json.dump([send] + reads + [send, {"text": "Sent."}] + [{"toolless": True, "text": "NARRATIVE"}] * 4,
          open("scripts/journal.json", "w"))
PY
start_standin j anthropic_server scripts/journal.json
expect_exit 0 env SION_EXEC_PATH="$scratch/fake" SION_FAKE_MCP="$scratch/bridge.json" SION_FAKE_MCP_LOG="$scratch/bridge.log" \
    ANTHROPIC_BASE_URL="$j_url" timeout 60 setsid -w sion agent run coder "$agent" --model anthropic:claude-opus-5-5 \
    --mcp notes --workspace work --autonomy L3 --context-chars 4000 --context-messages 20 --task 'Send the note.' </dev/null
expect_query "$j_log" '[x for e in r for x in e["violations"]]' '[]'
expect_grep '^the conversation is compacted: 1 result cut; ' "$scratch/out"
expect_query "$j_log" 'sorted({c["content"] for e in r for m in e["body"]["messages"] for c in m["content"] if c.get("type") == "tool_result" and "notes_send" in str(c["content"])})' \
    '["[cut to keep the conversation short: notes_send'"'"'s result of 613 characters; make the call again to see it]"]'
expect_grep '^← \[made before in this session: not made again; its answer then\]$' "$scratch/out"
expect_query "$scratch/bridge.log" 'len([e for e in entries if e.get("method") == "tools/call"])' '1'

# The scripted model's summary turn: a narrative that says nothing is no narrative, and says so.
python3 - <<'PY'
import json
turns = [{"calls": [{"tool": "read_file", "input": {"path": f"notes/f{k:02}.txt"}}]} for k in range(1, 6)]
turns += [{"summary": True, "calls": [{"tool": "read_file", "input": {"path": "notes/f01.txt"}}]}, {"text": "Done."}]
json.dump({"turns": turns}, open("scripts/mute.json", "w"))
PY
expect_exit 0 sion agent run coder "$agent" --model script:scripts/mute.json --workspace work --autonomy L3 \
    --context-messages 6 --task 'Read five notes.'
expect_grep '^the conversation is compacted: [0-9]+ messages summarized; ' "$scratch/out"
expect_exit 0 sion agent show "$(session_id)" --json
expect_query "$scratch/out" '[e["summary"].split("\n")[-1] for e in entries if e["event"] == "compacted" and "summary" in e][:1]' \
    '["What happened in those messages could not be summarised (the model wrote none): the calls and things above are what is kept of them."]'

# Bad limits are refused, nothing stored.
before=$(sion agent sessions "$agent" | wc -l)
expect_exit 64 sion agent run coder "$agent" --model script:scripts/again.json --task x --context-chars 10
expect_grep "^sion-run: --context-chars takes a whole number of 2000 or more, not '10'$" "$scratch/err"
expect_exit 64 sion agent run coder "$agent" --model script:scripts/again.json --task x --context-messages many
expect_grep "^sion-run: --context-messages takes a whole number of 6 or more, not 'many'$" "$scratch/err"
[ "$(sion agent sessions "$agent" | wc -l)" -eq "$before" ] && ok || fail "a refused run stored a session"

done_testing
