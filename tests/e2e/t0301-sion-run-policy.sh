#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# sion-run's policy, every autonomy level against every effect the builtin tools have: read
# (read_file), write (write_file, and shell without a network), external (shell with
# --sandbox-network host). Each call runs, asks or is refused as DESIGN.md's table says, in the
# transcript and the --json events, and a refused call leaves no file behind. With no terminal, or
# with --json, an "ask" is refused and says why; at a terminal (a pseudo-terminal here) the person's
# y runs the call, n or the end of input refuses it. What an external shell call returns taints the
# session, and the next external call needs one level more, in this run and in the next. A call of a
# tool there is not is answered as such and the session goes on.
. "$(dirname "$0")/lib.sh"

need_bwrap
command -v python3 >/dev/null || skip "python3 is not installed"
python3 -c 'import jsonschema' 2>/dev/null || skip "python3-jsonschema is not installed"
command -v setsid >/dev/null || skip "setsid is not installed (Debian package util-linux)"

work="$scratch/work"
scripts="$scratch/scripts"
mkdir -p "$work" "$scripts" "$scratch/events"
kept=0
cd "$scratch" || exit 1
echo hello >"$work/in.txt"
pty_answer="$SION_SOURCE_DIR/tests/e2e/pty_answer.py"

expect_exit 0 sion-run create coder && agent=$(cat "$scratch/out")
short=${agent:0:8}

# A read, a write of a file, a shell command that writes one, then the end.
cat >"$scripts/effects.json" <<'JSON'
{"turns": [
  {"calls": [{"tool": "read_file", "input": {"path": "in.txt"}}]},
  {"calls": [{"tool": "write_file", "input": {"path": "out.txt", "content": "hi\n"}}]},
  {"calls": [{"tool": "shell", "input": {"command": "echo ran > shell.txt; echo ran"}}]},
  {"text": "done"}
]}
JSON
# One shell command that writes a file, with a network.
cat >"$scripts/external.json" <<'JSON'
{"turns": [
  {"calls": [{"tool": "shell", "input": {"command": "echo ran > net.txt; echo ran"}}]},
  {"text": "done"}
]}
JSON

# run ARGS...: a run of the agent with no controlling terminal and nothing on stdin, bounded.
run() { timeout 120 setsid -w sion-run run coder "$short" --task 'Try each effect' --workspace "$work" --shell "$@" </dev/null; }
# session_id: the session the last run printed first.
session_id() { sed -n '1s/^session \([0-9a-f]\{16\}\) for agent [0-9a-f]\{8\}.*$/\1/p' "$scratch/out"; }
# why TOOL EFFECT LEVEL DECISION FROM: lib/policy.cpp's explain(), for a tool whose effect runs on
# its own from level FROM (the table's column, given here, not computed).
why() {
    local what="$1 is a $2"
    [ "$2" = read ] && what="$1 only reads"
    [ "$2" = external ] && what="$1 is external"
    case $4 in
    run) printf '%s, which runs on its own from L%s' "$what" "$5" ;;
    ask) printf '%s, which asks a person at L%s' "$what" "$3" ;;
    refuse) printf '%s, refused at L%s: it runs on its own from L%s and asks at L%s' "$what" "$3" "$5" $(($5 - 1)) ;;
    esac
}
# said DECISION WHY RAN ABSENT: what the model is shown of a call so decided with no one to ask
# (ABSENT says why): RAN when it ran. result …: its line in the transcript. state DECISION: its state.
said() {
    case $1 in
    run) printf '%s' "$3" ;;
    ask) printf '%s, and there is no one to ask here (%s)' "$2" "$4" ;;
    refuse) printf '%s' "$2" ;;
    esac
}
result() {
    case $1 in
    run) printf '← %s' "$(said "$@")" ;;
    *) printf '✗ %s' "$(said "$@")" ;;
    esac
}
state() { case $1 in run) echo ok ;; *) echo refused ;; esac; }
# The events of a --json run, one line each, the members that matter; fails on a line that is not
# a JSON object.
cat >"$scratch/events.py" <<'PY'
import json, sys
for line in open(sys.argv[1]):
    e = json.loads(line)
    kind = e["event"]
    if kind == "call":
        print("call", e["tool"], e.get("effect", "-"), e.get("decision", "-"), e.get("why", "-"), sep=" | ")
    elif kind == "result":
        print("result", e["tool"], e["state"], e["text"], "tainted" if e["tainted"] else "-", sep=" | ")
    elif kind == "end":
        print("end", e["state"], e["calls"], "tainted" if e["tainted"] else "-", sep=" | ")
    elif kind not in ("session", "text"):
        print(kind)
PY
# keep_events: the last command's stdout, JSON events, kept to be checked against their schema.
keep_events() { cp "$scratch/out" "$scratch/events/$((++kept)).jsonl"; }
events() { keep_events && expect_exit 0 python3 "$scratch/events.py" "$scratch/events/$kept.jsonl"; }
# no_file NAME...: the workspace has none of them.
no_file() {
    local f
    for f in "$@"; do
        [ ! -e "$work/$f" ] && ok || fail "$f was made by a call that did not run"
    done
}
# has_file WHEN NAME CONTENT: it was made, with that content.
has_file() { [ "$(cat "$work/$2" 2>/dev/null)" = "$3" ] && ok || fail "$1: $2 holds '$(cat "$work/$2" 2>&1)', want '$3'"; }

# The table, level by level: what a read, a write and an external call come to.
read_d=(ask run run run run run run)
write_d=(refuse refuse ask run run run run)
external_d=(refuse refuse refuse refuse ask run run)
for level in 0 1 2 3 4 5 6; do
    rd=${read_d[$level]} wd=${write_d[$level]} xd=${external_d[$level]}
    read_why=$(why read_file read "$level" "$rd" 1)
    file_why=$(why write_file write "$level" "$wd" 3)
    shell_why=$(why shell write "$level" "$wd" 3)
    net_why=$(why shell external "$level" "$xd" 5)

    # read and write, with no terminal: the transcript, line for line.
    rm -f "$work/out.txt" "$work/shell.txt"
    expect_exit 0 run --model "script:$scripts/effects.json" --autonomy "L$level"
    sid=$(session_id)
    expect_out "session $sid for agent $short
→ read_file {\"path\":\"in.txt\"}
$(result "$rd" "$read_why" "     1	hello" "no terminal")
→ write_file {\"content\":\"hi\\n\",\"path\":\"out.txt\"}
$(result "$wd" "$file_why" "wrote 3 bytes to out.txt" "no terminal")
→ shell {\"command\":\"echo ran > shell.txt; echo ran\"}
$(result "$wd" "$shell_why" "exit status 0
--- stdout
ran" "no terminal")
agent: done
session $sid: done" && expect_err ''
    if [ "$wd" = run ]; then
        has_file "L$level" out.txt hi && has_file "L$level" shell.txt ran
    else
        no_file out.txt shell.txt
    fi

    # The same with --json: each call's effect, decision and why, each result's state.
    rm -f "$work/out.txt" "$work/shell.txt"
    expect_exit 0 run --model "script:$scripts/effects.json" --autonomy "L$level" --json && expect_err ''
    events && expect_out "call | read_file | read | $rd | $read_why
result | read_file | $(state "$rd") | $(said "$rd" "$read_why" "     1	hello" --json) | -
call | write_file | write | $wd | $file_why
result | write_file | $(state "$wd") | $(said "$wd" "$file_why" "wrote 3 bytes to out.txt" --json) | -
call | shell | write | $wd | $shell_why
result | shell | $(state "$wd") | $(said "$wd" "$shell_why" "exit status 0
--- stdout
ran" --json) | -
end | done | 3 | -"
    [ "$wd" = run ] || no_file out.txt shell.txt

    # A shell with the machine's network: external, and what it returns taints the session.
    rm -f "$work/net.txt"
    expect_exit 0 run --model "script:$scripts/external.json" --sandbox-network host --autonomy "L$level"
    sid=$(session_id)
    tainted=
    [ "$xd" = run ] && tainted='
the session is tainted: what shell returned came from outside'
    expect_out "session $sid for agent $short
→ shell {\"command\":\"echo ran > net.txt; echo ran\"}
$(result "$xd" "$net_why" "exit status 0
--- stdout
ran" "no terminal")$tainted
agent: done
session $sid: done" && expect_err ''
    expect_exit 0 run --model "script:$scripts/external.json" --sandbox-network host --autonomy "L$level" --json
    events && expect_out "call | shell | external | $xd | $net_why
result | shell | $(state "$xd") | $(said "$xd" "$net_why" "exit status 0
--- stdout
ran" --json) | $([ "$xd" = run ] && echo tainted || echo -)
end | done | 1 | $([ "$xd" = run ] && echo tainted || echo -)"
    if [ "$xd" = run ]; then has_file "L$level" net.txt ran; else no_file net.txt; fi
done

# Taint: at L5 the first external call runs and taints the session; the next one needs L6, so at L5
# it asks (refused, no terminal); a write still runs from L3, and a read from L1.
cat >"$scripts/taint.json" <<'JSON'
{"turns": [
  {"calls": [{"tool": "shell", "input": {"command": "echo from outside"}}]},
  {"calls": [{"tool": "shell", "input": {"command": "echo again > again.txt; echo again"}}]},
  {"calls": [{"tool": "write_file", "input": {"path": "after.txt", "content": "after"}}]},
  {"calls": [{"tool": "read_file", "input": {"path": "in.txt"}}]},
  {"text": "done"}
]}
JSON
rm -f "$work/again.txt" "$work/after.txt"
expect_exit 0 run --model "script:$scripts/taint.json" --sandbox-network host --autonomy L5
tainted_sid=$(session_id)
taint_ask="shell is external, which asks a person at L5, since the session is tainted"
expect_out "session $tainted_sid for agent $short
→ shell {\"command\":\"echo from outside\"}
← exit status 0
--- stdout
from outside
the session is tainted: what shell returned came from outside
→ shell {\"command\":\"echo again > again.txt; echo again\"}
✗ $taint_ask, and there is no one to ask here (no terminal)
→ write_file {\"content\":\"after\",\"path\":\"after.txt\"}
← wrote 5 bytes to after.txt
→ read_file {\"path\":\"in.txt\"}
←      1	hello
agent: done
session $tainted_sid: done"
no_file again.txt
has_file taint after.txt after
# show says so, as the run did, and its end event says the session is tainted.
expect_exit 0 sion-run show "$tainted_sid"
expect_grep '^the session is tainted: what shell returned came from outside$' "$scratch/out"
expect_grep "^✗ $taint_ask, and there is no one to ask here \\(no terminal\\)\$" "$scratch/out"
expect_exit 0 sion-run show "$tainted_sid" --json && keep_events
expect_grep '^\{"event":"end","session":"'"$tainted_sid"'","state":"done","calls":4,"tainted":true,' "$scratch/out"
expect_grep '^\{"event":"result","call":"call_1_1","tool":"shell","state":"ok",.*"tainted":true,' "$scratch/out"
# With --json the ask is refused for that reason.
rm -f "$work/again.txt" "$work/after.txt"
expect_exit 0 run --model "script:$scripts/taint.json" --sandbox-network host --autonomy L5 --json
events && expect_out "call | shell | external | run | shell is external, which runs on its own from L5
result | shell | ok | exit status 0
--- stdout
from outside | tainted
call | shell | external | ask | $taint_ask
result | shell | refused | $taint_ask, and there is no one to ask here (--json) | -
call | write_file | write | run | write_file is a write, which runs on its own from L3
result | write_file | ok | wrote 5 bytes to after.txt | -
call | read_file | read | run | read_file only reads, which runs on its own from L1
result | read_file | ok |      1	hello | -
end | done | 4 | tainted"
no_file again.txt
# At L6 the second external call runs, the session already tainted.
rm -f "$work/again.txt"
expect_exit 0 run --model "script:$scripts/taint.json" --sandbox-network host --autonomy L6 --json
events && expect_out "call | shell | external | run | shell is external, which runs on its own from L5
result | shell | ok | exit status 0
--- stdout
from outside | tainted
call | shell | external | run | shell is external, which runs on its own from L6, since the session is tainted
result | shell | ok | exit status 0
--- stdout
again | -
call | write_file | write | run | write_file is a write, which runs on its own from L3
result | write_file | ok | wrote 5 bytes to after.txt | -
call | read_file | read | run | read_file only reads, which runs on its own from L1
result | read_file | ok |      1	hello | -
end | done | 4 | tainted"
has_file L6 again.txt again
# The taint is the session's: continued, its first external call already needs L6.
echo '{"turns": [{"calls": [{"tool": "shell", "input": {"command": "echo later > later.txt"}}]}, {"text": "done"}]}' >"$scripts/later.json"
expect_exit 0 timeout 120 setsid -w sion-run run coder "$short" --task 'Once more' --session "$tainted_sid" \
    --model "script:$scripts/later.json" </dev/null
expect_out "session $tainted_sid for agent $short, continued
→ shell {\"command\":\"echo later > later.txt\"}
✗ $taint_ask, and there is no one to ask here (no terminal)
agent: done
session $tainted_sid: done"
no_file later.txt

# A tool there is not: answered as such, and the session goes on to its next turn.
cat >"$scripts/unknown.json" <<'JSON'
{"turns": [
  {"calls": [{"tool": "notes_add_note", "input": {"name": "release", "text": "Ship it."}}]},
  {"calls": [{"tool": "read_file", "input": {"path": "in.txt"}}]},
  {"text": "done"}
]}
JSON
expect_exit 0 run --model "script:$scripts/unknown.json" --autonomy L3
sid=$(session_id)
expect_out "session $sid for agent $short
→ notes_add_note {\"name\":\"release\",\"text\":\"Ship it.\"}
✗ there is no tool named notes_add_note
→ read_file {\"path\":\"in.txt\"}
←      1	hello
agent: done
session $sid: done"
expect_exit 0 run --model "script:$scripts/unknown.json" --autonomy L3 --json
events && expect_out "call | notes_add_note | - | - | -
result | notes_add_note | error | there is no tool named notes_add_note | -
call | read_file | read | run | read_file only reads, which runs on its own from L1
result | read_file | ok |      1	hello | -
end | done | 2 | -"

# A person at a terminal. pty [ANSWER...] -- ARGS: a run with a pseudo-terminal as its controlling
# terminal, the answers typed at its questions, what went through the terminal in $scratch/tty.
pty() {
    local answers=()
    while [ "$1" != -- ]; do answers+=("$1") && shift; done
    shift
    python3 "$pty_answer" --log "$scratch/tty" --timeout 120 "${answers[@]}" -- \
        sion-run run coder "$short" --task 'Ask me' --workspace "$work" --shell "$@"
}
expect_tty() { expect_text "$scratch/tty" terminal "$1"; }
ask_file="→ write_file {\"content\":\"hi\\n\",\"path\":\"out.txt\"}
write_file is a write, which asks a person at L2. Run it? [y/N] "
ask_shell="→ shell {\"command\":\"echo ran > shell.txt; echo ran\"}
shell is a write, which asks a person at L2. Run it? [y/N] "

# y runs the call (the file is written), n refuses it.
rm -f "$work/out.txt" "$work/shell.txt"
expect_exit 0 pty y n -- --model "script:$scripts/effects.json" --autonomy L2 && expect_err ''
sid=$(session_id)
expect_out "session $sid for agent $short
→ read_file {\"path\":\"in.txt\"}
←      1	hello
→ write_file {\"content\":\"hi\\n\",\"path\":\"out.txt\"}
← wrote 3 bytes to out.txt
→ shell {\"command\":\"echo ran > shell.txt; echo ran\"}
✗ the person did not allow this call (shell is a write, which asks a person at L2)
agent: done
session $sid: done"
expect_tty "${ask_file}y
${ask_shell}n"
has_file pty out.txt hi
no_file shell.txt
# Yes, in any case, is a y; the end of input is a no.
rm -f "$work/out.txt"
expect_exit 0 pty EOF Yes -- --model "script:$scripts/effects.json" --autonomy L2 && expect_err ''
expect_grep '^✗ the person did not allow this call \(write_file is a write, which asks a person at L2\)$' "$scratch/out"
expect_grep '^← exit status 0$' "$scratch/out"
no_file out.txt
has_file pty shell.txt ran
expect_tty "${ask_file}
${ask_shell}Yes"
# At L0 even a read asks.
expect_exit 0 pty y -- --model "script:$scripts/unknown.json" --autonomy L0 && expect_err ''
expect_grep '^←      1	hello$' "$scratch/out"
expect_tty '→ read_file {"path":"in.txt"}
read_file only reads, which asks a person at L0. Run it? [y/N] y'
# --json is for a program: no one is asked, even at a terminal.
rm -f "$work/out.txt" "$work/shell.txt"
expect_exit 0 pty -- --model "script:$scripts/effects.json" --autonomy L2 --json && expect_err '' && keep_events
expect_grep '"state":"refused","text":"write_file is a write, which asks a person at L2, and there is no one to ask here \(--json\)"' "$scratch/out"
expect_tty ''
no_file out.txt shell.txt
# An external call allowed at L4 taints the session; the next one is refused there (it runs from L6
# now, and asks at L5), without asking.
rm -f "$work/again.txt"
expect_exit 0 pty y -- --model "script:$scripts/taint.json" --sandbox-network host --autonomy L4 && expect_err ''
sid=$(session_id)
expect_out "session $sid for agent $short
→ shell {\"command\":\"echo from outside\"}
← exit status 0
--- stdout
from outside
the session is tainted: what shell returned came from outside
→ shell {\"command\":\"echo again > again.txt; echo again\"}
✗ shell is external, refused at L4: it runs on its own from L6 and asks at L5, since the session is tainted
→ write_file {\"content\":\"after\",\"path\":\"after.txt\"}
← wrote 5 bytes to after.txt
→ read_file {\"path\":\"in.txt\"}
←      1	hello
agent: done
session $sid: done"
expect_tty '→ shell {"command":"echo from outside"}
shell is external, which asks a person at L4. Run it? [y/N] y'
no_file again.txt
# At L5 the tainted session's external call asks, and a y runs it.
expect_exit 0 pty y -- --model "script:$scripts/taint.json" --sandbox-network host --autonomy L5 && expect_err ''
expect_tty "→ shell {\"command\":\"echo again > again.txt; echo again\"}
$taint_ask. Run it? [y/N] y"
has_file L5 again.txt again

# Every event printed above passes schemas/run.event.json.
expect_exit 0 python3 "$SION_SOURCE_DIR/tests/e2e/check_run_events.py" "$SION_SOURCE_DIR/schemas" "$scratch"/events/*.jsonl &&
    expect_out ''

done_testing
