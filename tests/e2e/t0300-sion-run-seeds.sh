#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The seed's transcripts of `sion agent run`, byte for byte once ids are normalised: the primes
# session in the bubblewrap sandbox (the write, the script, the sandbox probe, the failed name
# lookup), its stored copy (show, show --json), and the refusals that keep a session from starting.
. "$(dirname "$0")/lib.sh"
need_bwrap

cd "$scratch" || exit 1
mkdir work
cp "$SION_SOURCE_DIR/examples/primes/shell.json" shell.json
id=$(sion agent create coder) && ok || fail "sion agent create coder"
[[ $id =~ ^[0-9a-f]{64}$ ]] && ok || fail "the agent id is 64 hex digits: $id"
expect_exit 0 sion agent list
expect_out "${id:0:8}…${id:60:4} coder L2"
agent="${id:0:8}…${id:60:4}"

# normalise FILE: the session's id as the seed's, the agent's short id as the seed's.
normalise() {
    sed -E -e 's/session [0-9a-f]{16}/session af88d6083cc5587b/' -e "s/agent ${id:0:8}/agent d85ed254/" "$1"
}

expect_exit 0 sion agent run coder "$agent" --task 'Count the primes below 60 with a Python script.' \
    --model script:shell.json --workspace work --shell --autonomy L3
normalise "$scratch/out" >"$scratch/got"
cat >"$scratch/want" <<'TXT'
session af88d6083cc5587b for agent d85ed254
→ write_file {"content":"primes = [n for n in range(2, 60) if all(n % d for d in range(2, n))]\nprint(len(primes), 'primes below 60:', primes)\n","path":"primes.py"}
← wrote 117 bytes to primes.py
→ shell {"command":"python3 primes.py"}
← exit status 0
--- stdout
17 primes below 60: [2, 3, 5, 7, 11, 13, 17, 19, 23, 29, 31, 37, 41, 43, 47, 53, 59]
→ shell {"command":"id; echo home=$HOME; ls /root ~/.sion 2>&1; touch /usr/local/x 2>&1; ls"}
← exit status 0
--- stdout
uid=10001(sandbox) gid=10001(sandbox) groups=10001(sandbox)
home=/workspace
ls: cannot access '/root': No such file or directory
ls: cannot access '/workspace/.sion': No such file or directory
touch: cannot touch '/usr/local/x': Read-only file system
primes.py
→ shell {"command":"python3 -c 'import urllib.request; urllib.request.urlopen(\"https://example.com\", timeout=5)' 2>&1 | tail -n 1"}
← exit status 0
--- stdout
urllib.error.URLError: <urlopen error [Errno -3] Temporary failure in name resolution>
agent: There are 17 primes below 60; the script is primes.py in the workspace.
session af88d6083cc5587b: done
TXT
if cmp -s "$scratch/want" "$scratch/got"; then ok; else
    fail "the primes transcript differs from the seed's"
    diff "$scratch/want" "$scratch/got" >&2
fi
[ -s "$scratch/err" ] && fail "the session wrote to stderr: $(cat "$scratch/err")" || ok
[ "$(cat work/primes.py | wc -c)" -eq 117 ] && ok || fail "primes.py is not the 117 bytes written"

# The stored session: listed, and shown as it ran, with the task as the person's line.
session=$(sed -n 's/^session \([0-9a-f]\{16\}\) for agent .*/\1/p' "$scratch/out")
expect_exit 0 sion agent sessions
expect_out "$session $agent done 4 calls Count the primes below 60 with a Python script."
expect_exit 0 sion agent show "${session:0:6}"
normalise "$scratch/out" >"$scratch/shown"
{ head -n 1 "$scratch/want"; echo 'you: Count the primes below 60 with a Python script.'; tail -n +2 "$scratch/want"; } >"$scratch/want-shown"
if cmp -s "$scratch/want-shown" "$scratch/shown"; then ok; else
    fail "show differs from the run"
    diff "$scratch/want-shown" "$scratch/shown" >&2
fi
expect_exit 0 sion agent show "$session" --json
python3 - "$scratch/out" "$session" <<'PY' && ok || fail "show --json: the events are not the session's"
import json, sys
events = [json.loads(line) for line in open(sys.argv[1])]
kinds = [e["event"] for e in events]
assert kinds == ["session", "task"] + ["call", "result"] * 4 + ["text", "end"], kinds
assert events[0]["session"] == sys.argv[2]
calls = [e for e in events if e["event"] == "call"]
assert [c["tool"] for c in calls] == ["write_file", "shell", "shell", "shell"]
assert all(c["effect"] == "write" and c["decision"] == "run" for c in calls)
results = [e for e in events if e["event"] == "result"]
assert results[1]["detail"]["exit"] == 0 and results[1]["detail"]["stdout"].startswith("17 primes")
assert events[-1]["state"] == "done" and events[-1]["calls"] == 4 and events[-1]["tainted"] is False
PY

# The refusals, each before anything runs or is stored: "error: …", exit 1.
sessions_before=$(sion agent sessions | wc -l)
refused() { # refused MESSAGE ARGS...: sion agent run ARGS exits 1 saying exactly MESSAGE
    local want=$1
    shift
    expect_exit 1 sion agent run coder "$agent" --task x --model script:shell.json "$@" &&
        expect_err "$want" && expect_out ""
}
refused 'error: with bubblewrap the network is none, declared or host, not sion-egress' \
    --workspace work --shell --sandbox-network sion-egress
refused 'error: alpine:3.20 is not pinned by digest: give name@sha256:<64 hex digits>' \
    --workspace work --shell docker:alpine:3.20
refused "error: Docker's \"bridge\" network does not restrict where a command connects: name a network you set up" \
    --workspace work --shell docker:mirror.gcr.io/library/alpine@sha256:d9e853e87e55526f6b2917df91a2115c36dd7c696a35be12163d44e6e2a4b6bc \
    --sandbox-network bridge
refused 'error: the workspace ~/.sion/.. and ~/.sion (wallets, sessions, skills) overlap: give a workspace apart from it' \
    --workspace ~/.sion/.. --shell
# Shell or not: read_file could read the keys otherwise.
refused 'error: the workspace ~/.sion/.. and ~/.sion (wallets, sessions, skills) overlap: give a workspace apart from it' \
    --workspace ~/.sion/..
mkdir -p ~/.sion/keys
refused 'error: the workspace ~/.sion/keys and ~/.sion (wallets, sessions, skills) overlap: give a workspace apart from it' \
    --workspace ~/.sion/keys
refused 'error: the directory ~ given with --sandbox-read and ~/.sion (wallets, sessions, skills) overlap: give a directory apart from it' \
    --workspace work --shell --sandbox-read ~
[ "$(sion agent sessions | wc -l)" -eq "$sessions_before" ] && ok || fail "a refused run stored a session"

done_testing
