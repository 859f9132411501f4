#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The journal survives SIGKILL at any instant: journal-crash (tests/tools) makes journaled calls
# whose side effect is a line in a file, and is killed at random moments, round after round, on the
# same sion.db. Afterwards the database passes its integrity check, no call's side effect happened
# twice, every call whose side effect happened has an entry (done, or pending: never absent), and a
# call left pending is answered "uncertain", never made again.
. "$(dirname "$0")/lib.sh"

if [ ! -x "$SION_BIN/journal-crash" ]; then
    fail "journal-crash is not built: build the target journal-crash (tests/tools) first"
    done_testing
    exit 1
fi

dir="$scratch/state"
effects="$scratch/effects"
mkdir -p "$dir"
rounds=200
deadline=15      # seconds for the killing rounds, whatever the machine's speed
many=1000000     # more inputs than any round gets through: every round ends killed

# value NAME: a "NAME N" line of the last check's stdout.
value() { sed -n "s/^$1 //p" "$scratch/out"; }

# kill_rounds N: N rounds (fewer once the deadline has passed), each starting the driver where the
# last one left off and SIGKILLing it after 0 to 20 ms, which lands anywhere from opening the
# database to the middle of a commit. Counts them in $killed; a driver that ends by itself fails.
killed=0
kill_rounds() {
    local round pid status
    for ((round = 0; round < $1 && SECONDS < deadline; round++)); do
        journal-crash run "$dir" "$effects" --inputs "$many" >/dev/null 2>"$scratch/run-err" &
        pid=$!
        sleep "$(printf '0.%03d' $((RANDOM % 21)))"
        kill -KILL "$pid" 2>/dev/null
        { wait "$pid"; } 2>/dev/null # no "Killed" line from bash for each round
        status=$?
        if [ "$status" -ne 137 ]; then
            fail "round $killed: journal-crash ended with $status before it was killed"
            sed 's/^/  stderr: /' "$scratch/run-err" >&2
            return 1
        fi
        killed=$((killed + 1))
    done
}

SECONDS=0
kill_rounds "$rounds"
# A kill between a side effect and its finish() is the case that matters most, and the rarest (the
# window is a sync and a commit wide): on a slow machine, more rounds until one has happened.
while [ "$SECONDS" -lt "$deadline" ] &&
    journal-crash check "$dir" "$effects" --inputs "$many" >"$scratch/out" 2>/dev/null &&
    [ "$(value pending_with_effect)" -eq 0 ]; do
    kill_rounds 20 || break
done
if [ "$killed" -ge 20 ]; then ok; else fail "only $killed rounds ran in ${deadline} s"; fi

# Nothing happened twice, and every line is whole: checked here without the fixture's help too.
if [ -s "$effects" ]; then ok; else fail "no round got as far as a side effect"; fi
dups=$(sort "$effects" | uniq -d | head -n 5)
if [ -z "$dups" ]; then ok; else fail "side effects happened twice: $dups"; fi
if grep -qvxE 'call [0-9]+' "$effects"; then
    fail "a side effect line is cut or damaged"
    grep -vxE 'call [0-9]+' "$effects" | head -n 5 | sed 's/^/  | /' >&2
else
    ok
fi

# The fixture's own check: integrity, no gap, an entry for every side effect, begin() answers.
expect_exit 0 journal-crash check "$dir" "$effects" --inputs "$many" && expect_err ''
entries=$(value entries)
done_=$(value done)
pending=$(value pending)
with_effect=$(value pending_with_effect)
printf '%d rounds killed: %s entries, %s done, %s pending (%s after their side effect)\n' \
    "$killed" "$entries" "$done_" "$pending" "$with_effect"
if [ "$((done_ + pending))" -eq "$entries" ]; then ok; else
    fail "$entries entries, but $done_ done and $pending pending"
fi
# Kills between begin() and finish() must have happened, or nothing was tested.
if [ "$pending" -gt 0 ]; then ok; else fail "no kill left a call pending"; fi
if [ "$with_effect" -gt 0 ]; then ok; else
    fail "no kill came between a side effect and its finish"
fi
lines=$(wc -l <"$effects")
if [ "$lines" -eq "$((done_ + with_effect))" ]; then ok; else
    fail "$lines side effects, but $done_ done and $with_effect pending after their side effect"
fi

# A run left to finish: done calls are answered from the record, pending ones are uncertain and
# not made, and only the ten new inputs proceed.
upto=$((entries + 10))
expect_exit 0 journal-crash run "$dir" "$effects" --inputs "$upto" --report && expect_err ''
cp "$scratch/out" "$scratch/report"
# expect_count KIND WANT: the report has WANT lines of KIND.
expect_count() {
    local got
    got=$(grep -c " $1\$" "$scratch/report")
    if [ "$got" -eq "$2" ]; then ok; else fail "$got inputs $1, want $2"; fi
}
expect_count recorded "$done_"
expect_count uncertain "$pending"
expect_count proceed 10
expect_exit 0 journal-crash check "$dir" "$effects" --inputs "$upto" && expect_out "entries $upto
done $((done_ + 10))
pending $pending
pending_with_effect $with_effect" && expect_err ''
dups=$(sort "$effects" | uniq -d | head -n 5)
if [ -z "$dups" ]; then ok; else fail "side effects happened twice after the last run: $dups"; fi

# The checker itself catches what it is there to catch: a side effect made twice, and one whose
# entry is missing.
cp -r "$dir" "$scratch/bad"
{ head -n 1 "$effects" && cat "$effects"; } >"$scratch/bad-effects"
expect_exit 1 journal-crash check "$scratch/bad" "$scratch/bad-effects" --inputs "$upto" &&
    expect_grep "^journal-crash: input [0-9]+: its side effect happened 2 times$" "$scratch/err"
printf 'call %d\n' "$((upto + 5))" >>"$effects"
expect_exit 1 journal-crash check "$dir" "$effects" --inputs "$((upto + 10))" &&
    expect_grep "^journal-crash: input $((upto + 5)): no entry, though its side effect happened$" \
        "$scratch/err"

done_testing
