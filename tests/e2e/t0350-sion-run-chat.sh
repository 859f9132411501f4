#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# sion-run chat, the console, driven through a pseudo-terminal and through pipes (pty_drive.py):
# messages in turn, each a run of one session kept in sion.db; the model's text shown as it streams
# (a stand-in of Anthropic's API holds its stream until the test has seen the first part);
# Ctrl-C and /stop mid-turn, and at rest; Ctrl-D and /exit; the history, 0600; /help, /model
# (first of all, kept with the session), /system (sent after the conversation, the start the
# provider caches unchanged), /usage and a token budget counted over the chat; the seed's notes
# server (a real MCP server over sion-mcp): /prompts, /prompt tainting the session, a server's
# question answered by the next line, and cancelled when no one answers within --question-timeout,
# /stop taking effect once it is; a policy question answered by the next line; and bad input.
. "$(dirname "$0")/lib.sh"
need_bwrap
command -v python3 >/dev/null || skip "python3 is not installed"
command -v sqlite3 >/dev/null || skip "sqlite3 is not installed (Debian package sqlite3)"
. "$SION_SOURCE_DIR/tests/models/standin.sh"
unset ANTHROPIC_API_KEY ANTHROPIC_BASE_URL NO_COLOR
export ANTHROPIC_API_KEY=sk-ant-test-0350

cd "$scratch" || exit 1
mkdir -p scripts
db="$SION_HOME/sion.db"
expect_exit 0 sion-run create coder && agent=$(cat "$scratch/out")
short=${agent:0:8}

# chat STEPS [--pipes] ARGS...: the console of coder's agent, driven by the steps in STEPS (a file)
# through a pseudo-terminal, or with --pipes through pipes; what it showed in $scratch/shown.
chat() {
    local steps=$1 mode=()
    shift
    [ "${1:-}" = --pipes ] && mode=(--pipes) && shift
    timeout 120 python3 "$SION_SOURCE_DIR/tests/e2e/pty_drive.py" "${mode[@]}" --log "$scratch/shown" \
        --timeout 30 "$steps" -- sion-run chat coder "$short" --color never "$@"
}
# steps TEXT: the steps file $scratch/steps.
steps() { printf '%s\n' "$1" >"$scratch/steps"; }
session_of() { sed -n 's/^session \([0-9a-f]\{16\}\) for agent .*$/\1/p' "$scratch/shown" | head -n 1; }
expect_shown() { expect_text "$scratch/shown" "what the console showed" "$1"; }

# --- Through pipes: messages in turn, the commands, the session they make ------------------------
cat >scripts/two.json <<'EOF'
{"turns": [{"text": "hello"}, {"text": "again,\nwith two lines"}]}
EOF
steps 'send   
send Say hello
expect : done
send /help
expect /exit
send /model
expect first first
send /bogus
send /system
expect no standing
send Once more
expect : done
send /usage
expect budget
send /exit'
expect_exit 0 chat "$scratch/steps" --pipes --model "script:$scratch/scripts/two.json"
sid=$(session_of)
expect_shown "session $sid for agent $short
agent: hello
session $sid: done
Say what the agent is to do; each message is a run of the session. Commands:
  /help                      this list
  /model [M]                 the models, first first; M (provider:model) first of all
  /system [TEXT | --off]     your standing instructions, sent at the end of each turn
  /usage                     the tokens used, cache reads and writes apart; the budget
  /stop                      stop the run under way (Ctrl-C at a terminal)
  /prompts                   the prompts of the session's MCP servers
  /prompt SERVER PROMPT [NAME=VALUE...]
                             say a server's prompt as your message
  /mcp                       the MCP servers this agent has, and the shelf's others
  /mcp add NAME URL          find one: on the shelf, and this agent has it
  /mcp add NAME sse URL      the same, for a server of the old transport
  /mcp add NAME COMMAND...   one the agent starts itself, in a sandbox
  /mcp NAME                  give this agent one on the shelf
  /mcp login NAME [ADDRESS]  its consent screen in your browser, or where it landed
  /mcp drop NAME             take it off this agent; it stays on the shelf
  /mcp forget NAME           take it off the shelf, and off every agent that had it
  /mcp logout NAME           give its account back, for everyone
  /exit                      end the chat (Ctrl-D)
models, first first: script:$scratch/scripts/two.json
no standing instructions: /system TEXT gives them
session $sid for agent $short, continued
agent: again,
with two lines
session $sid: done
this chat: 170 tokens in (0 read from the cache, 0 written to it), 8 out
no token budget (--budget-tokens)"
expect_err "sion-run: there is no command /bogus: /help lists them"
# One session, two runs; show tells them as the chat did. A chat on pipes keeps no history.
expect_exit 0 sion-run show "$sid" --color never && expect_grep '^agent: again,$' "$scratch/out"
[ "$(sqlite3 "$db" "SELECT count(*) FROM sessions")" = 1 ] && ok || fail "the chat made more than one session"
[ "$(sqlite3 "$db" "SELECT count(*) FROM messages WHERE session = '$sid' AND json_extract(content, '\$.role') = 'user'")" = 2 ] &&
    ok || fail "the session does not keep both messages"
[ ! -e "$SION_HOME/chat_history" ] && ok || fail "a chat on pipes kept a history"
# The end of input ends it as /exit does; a chat with nothing said makes no session.
steps 'eof'
expect_exit 0 chat "$scratch/steps" --pipes --model "script:$scratch/scripts/two.json" && expect_shown ''
[ "$(sqlite3 "$db" "SELECT count(*) FROM sessions")" = 1 ] && ok || fail "a chat with nothing said made a session"

# --- A streamed answer; Ctrl-C mid-turn and at rest; Ctrl-D; the history ---------------------------
cat >scripts/stream.json <<EOF
[{"text": "The first part. And the rest of it.", "hold": "$scratch/release", "hold_after": 4},
 {"text": "Wait for it", "hold": "$scratch/never", "hold_after": 4},
 {"text": "back again"}]
EOF
start_standin a anthropic_server "$scratch/scripts/stream.json"
steps "expect sion chat with agent $short of coder: /help for commands, Ctrl-D to end
expect > 
send Tell me
expect agent: The fir
touch $scratch/release
expect : done
expect > 
send Another
expect agent: Wait fo
interrupt
expect stopped: the person stopped it
expect > 
type /half-typed
interrupt
expect > 
send Once more
expect : done
expect > 
eof"
export ANTHROPIC_BASE_URL=$a_url
expect_exit 0 chat "$scratch/steps" --model anthropic:claude-opus-5-5
sid=$(session_of)
# The first part was on the terminal before the stand-in let the rest go (it held the stream until
# $scratch/release was made, which the steps did only once they had seen it).
expect_grep "^agent: The first part. And the rest of it.\$" "$scratch/shown"
expect_grep "^agent: Wait fo\\^C\$" "$scratch/shown"
expect_grep "^session $sid: stopped: the person stopped it\$" "$scratch/shown"
expect_grep "^agent: back again\$" "$scratch/shown"
expect_grep '"holding": ".*/never"' "$a_log"
# The stopped run is kept as it ended; the message after it runs on.
expect_exit 0 sion-run sessions --json && expect_grep "\"session\":\"$sid\".*\"state\":\"done\"" "$scratch/out"
[ "$(stat -c %a "$SION_HOME/chat_history")" = 600 ] && ok || fail "the history is not 0600"
expect_grep '^Tell\\040me$' "$SION_HOME/chat_history"
expect_grep '^Once\\040more$' "$SION_HOME/chat_history"
if grep -q 'half-typed' "$SION_HOME/chat_history"; then fail "a line given up is in the history"; else ok; fi

# /stop on pipes mid-turn stops it; at rest it says nothing is under way.
start_standin b anthropic_server "$scratch/scripts/stream.json"
rm -f "$scratch/release"
steps "send Tell me
expect agent: The fir
touch $scratch/release
expect : done
send Another
expect agent: Wait fo
send /stop
expect stopped: the person stopped it
send /stop
expect nothing is under way to stop
eof"
export ANTHROPIC_BASE_URL=$b_url
expect_exit 0 chat "$scratch/steps" --pipes --model anthropic:claude-opus-5-5
# SIGINT on pipes with nothing under way ends the chat, as it ends any filter.
steps 'send /model
expect chosen with its first message
interrupt'
expect_exit 130 chat "$scratch/steps" --pipes --model "script:$scratch/scripts/two.json"

# --- /model first of all, /system after the conversation, a budget over the chat --------------------
cat >scripts/standing.json <<'EOF'
[{"text": "one"}, {"text": "two"}, {"text": "three"}]
EOF
start_standin c anthropic_server "$scratch/scripts/standing.json"
steps "send /model anthropic:claude-haiku-5-5
expect comes first of all
send /model nonsense
send First
expect : done
send /model
expect first first
send /system Answer in French.
expect from the next turn
send Second
expect : done
send /system
expect standing instructions: Answer in French.
send /system --off
expect are off
send Third
expect : done
eof"
export ANTHROPIC_BASE_URL=$c_url
expect_exit 0 chat "$scratch/steps" --pipes --model anthropic:claude-opus-5-5
sid=$(session_of)
expect_grep '^models, first first: anthropic:claude-haiku-5-5, anthropic:claude-opus-5-5$' "$scratch/shown"
expect_err "sion-run: invalid model 'nonsense': give provider:model"
python3 - "$c_log" <<'PY' && ok || fail "the stand-in was not sent what /model and /system say"
import json, sys
asked = [e for e in map(json.loads, open(sys.argv[1])) if "path" in e]
assert [a["body"]["model"] for a in asked] == ["claude-haiku-5-5"] * 3, [a["body"]["model"] for a in asked]
def last_text(a):
    content = a["body"]["messages"][-1]["content"]
    return content if isinstance(content, str) else " ".join(b.get("text", "") for b in content)
assert "Answer in French." not in last_text(asked[0])
said = last_text(asked[1])
assert said.index("Second") < said.index("## The person's instructions for this chat\nAnswer in French."), said
assert "Answer in French." not in last_text(asked[2])
# The system prompt is the same every turn, and so is the start of the conversation.
assert len({json.dumps(a["body"]["system"]) for a in asked}) == 1
assert all(a["kept_start"] for a in asked[1:]), [a["kept_start"] for a in asked]
PY
[ "$(sqlite3 "$db" "SELECT json_extract(settings, '\$.models[0]') FROM sessions WHERE id = '$sid'")" = anthropic:claude-haiku-5-5 ] &&
    ok || fail "the session does not keep the model chosen with /model first"

cat >scripts/many.json <<'EOF'
{"turns": [{"text": "one", "usage": {"input_tokens": 400, "output_tokens": 100}},
           {"text": "two", "usage": {"input_tokens": 400, "output_tokens": 100}}]}
EOF
steps 'send First
expect : done
send /usage
expect tokens left
send Second
expect stopped
eof'
expect_exit 0 chat "$scratch/steps" --pipes --model "script:$scratch/scripts/many.json" --budget-tokens 550
expect_grep '^budget: 50 of 550 tokens left$' "$scratch/shown"
expect_grep ': stopped: the token budget of 550 tokens is spent \(500 used\)$' "$scratch/shown"

# --- The seed's notes server: prompts, a server's question, a policy question -------------------
cp "$SION_SOURCE_DIR/examples/mcp-notes/notes-server.py" .
mkdir -p notes
printf 'Ship on Friday.\n' >notes/release.txt
expect_exit 0 sion agent mcp add notes --dir notes -- python3 notes-server.py
cat >scripts/notes.json <<'EOF'
{"turns": [{"text": "It says to ship on Friday."},
           {"calls": [{"tool": "notes_add_note", "input": {"name": "plan", "text": ""}}]},
           {"text": "kept it"},
           {"calls": [{"tool": "notes_add_note", "input": {"name": "later", "text": ""}}]},
           {"text": "no answer came"}]}
EOF
steps 'send /prompts
expect notes summarize: Summarize a note.
expect (required)
send /prompt notes
send /prompt ghost summarize name=release
send /prompt notes summarize name=release
expect : done
send Keep a plan.
expect Run it? [y/N]
send y
expect What should the note
send Write the plan.
expect : done
send Keep another.
expect Run it? [y/N]
send yes
expect What should the note
send /stop
expect stopped: the person stopped it
send /exit'
expect_exit 0 chat "$scratch/steps" --pipes --model "script:$scratch/scripts/notes.json" --mcp notes --question-timeout 2
sid=$(session_of)
expect_grep '^notes summarize: Summarize a note\.$' "$scratch/shown"
expect_grep '^  name \(required\): The note.s name$' "$scratch/shown"
expect_grep '^the session is tainted: its task is the prompt notes:summarize' "$scratch/shown"
expect_grep 'MCP server notes asked for input: .*accepted' "$scratch/shown"
expect_grep 'MCP server notes asked for input: .*cancelled' "$scratch/shown"
[ "$(cat notes/plan.txt)" = 'Write the plan.' ] && ok || fail "the note answered in the chat was not kept"
[ ! -e notes/later.txt ] && ok || fail "a note whose question was cancelled was kept"
expect_grep '^sion-run: give a server and its prompt: /prompt SERVER PROMPT \[NAME=VALUE...\]$' "$scratch/err"
expect_grep '^sion-run: the session has no MCP server ghost: /prompts lists its servers. prompts$' "$scratch/err"
[ "$(sqlite3 "$db" "SELECT tainted FROM sessions WHERE id = '$sid'")" = 1 ] && ok || fail "a prompt did not taint the session"
# At a terminal the server's question is asked there, and cancelled as well when no one answers.
cat >scripts/asks.json <<'EOF'
{"turns": [{"calls": [{"tool": "notes_add_note", "input": {"name": "unanswered", "text": ""}}]},
           {"text": "no answer came"}]}
EOF
steps "expect > 
send Keep a note.
expect What should the note 'unanswered' say?
expect : done
expect > 
eof"
expect_exit 0 chat "$scratch/steps" --model "script:$scratch/scripts/asks.json" --mcp notes --autonomy L3 \
    --question-timeout 1
expect_grep 'MCP server notes asked for input: .*cancelled' "$scratch/shown"
[ ! -e notes/unanswered.txt ] && ok || fail "a note whose question no one answered was kept"

# --- The example scripts/demo shows: a chat on standard input, with a shell in bubblewrap -----------
mkdir -p demo
printf '%s\n' 'Count the primes below 60 with a Python script.' /usage 'And below 100?' |
    timeout 120 sion-run chat coder "$short" --model "script:$SION_SOURCE_DIR/examples/primes/chat.json" \
        --workspace demo --shell --autonomy L3 >"$scratch/out" 2>"$scratch/err" && ok ||
    fail "the demo's chat did not end well: $(cat "$scratch/err")"
expect_grep '^17 primes below 60$' "$scratch/out"
expect_grep '^agent: There are 17 primes below 60; the script is primes.py in the workspace.$' "$scratch/out"
expect_grep '^this chat: [0-9]+ tokens in \(0 read from the cache, 0 written to it\), [0-9]+ out$' "$scratch/out"
expect_grep '^25 primes below 100$' "$scratch/out"
expect_grep '^agent: Below 100 there are 25.$' "$scratch/out"

# --- Bad input ---------------------------------------------------------------------------------------
expect_exit 64 sion-run chat coder && expect_err "sion-run: give a profile and an agent: sion-run chat PROFILE AGENT"
expect_exit 64 sion-run chat coder "$short" extra && expect_err "sion-run: unexpected operand 'extra'"
expect_exit 64 sion-run chat coder "$short" --question-timeout 0 &&
    expect_err "sion-run: --question-timeout takes seconds, 1 to 86400, not '0'"
expect_exit 64 sion-run chat coder "$short" --task x && expect_grep "unknown option '--task'" "$scratch/err"
expect_exit 64 sion-run chat coder "$short" --login-port 0 &&
    expect_err "sion-run: --login-port takes a port from 1 to 65535, not '0'"
python3 -c 'print("x" * (1024 * 1024 + 1))' >long.line
steps "send /system 'open quote
send /prompt notes summarize =x
send /model one:a two:b
send $(cat long.line)
send /model
expect chosen with its first message
eof"
expect_exit 0 chat "$scratch/steps" --pipes --model "script:$scratch/scripts/two.json"
expect_text "$scratch/err" "stderr" "sion-run: a quote (') is left open
sion-run: give the prompt's arguments as NAME=VALUE, not '=x'
sion-run: give one model: /model provider:model
sion-run: a line of more than 1048576 bytes was not read: say it in parts"
# The front door's chat is this one.
steps 'send /model
expect chosen with its first message
eof'
expect_exit 0 timeout 60 python3 "$SION_SOURCE_DIR/tests/e2e/pty_drive.py" --pipes --log "$scratch/shown" \
    "$scratch/steps" -- sion agent chat coder "$short" --model "script:$scratch/scripts/two.json"

done_testing
