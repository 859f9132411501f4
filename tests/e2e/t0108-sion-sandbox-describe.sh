#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# sion-sandbox describe: the options judged as exec and serve judge them, pre-flight included, and
# the sandbox they describe printed as one JSON object (schemas/sandbox.describe.json), running
# nothing; a refusal is {"error":{"code","message"}} on stdout, the same line exec says on stderr,
# and exec's status (78, or 64 for a malformed number). serve judges them alike and answers
# sandbox/describe with the same object. sion-run asks describe before a session without a shell
# starts (a sion-sandbox that answers nonsense refuses it, "cannot ask sion-sandbox about the
# sandbox: …"); a session with a shell asks its serve alone, whose refusal is shown the same way.
. "$(dirname "$0")/lib.sh"

need_jsonschema
work="$scratch/work"
mkdir -p "$work" "$scratch/tools" "$SION_HOME"
cd "$work" || exit 1
sbx() { timeout 60 sion-sandbox "$@"; }

# What the options describe, the directories resolved, the rest as given; the defaults are the seed's.
expect_exit 0 sbx describe --sandbox-read ../tools --timeout 5 --memory 1G && expect_err '' &&
    expect_json_lines sandbox.describe.json 1 &&
    expect_out "{\"workspace\":\"$work\",\"workspace_as_given\":\".\",\"reads\":[\"$scratch/tools\"],\"reads_as_given\":[\"../tools\"],\"backend\":\"bwrap\",\"network\":\"none\",\"allow_hosts\":[],\"limits\":{\"timeout\":5,\"cpu\":120,\"memory\":1073741824,\"file_size\":536870912,\"output\":65536,\"processes\":256},\"home\":\"$SION_HOME\",\"home_as_given\":\"~/.sion\"}"
expect_exit 0 sbx describe --workspace ~/../work --network declared --allow-host api.example.org:443 &&
    expect_json_lines sandbox.describe.json 1 &&
    expect_grep "^\{\"workspace\":\"$work\",\"workspace_as_given\":\"~/../work\",.*\"network\":\"declared\",\"allow_hosts\":\[\"api.example.org:443\"\]," "$scratch/out"

# Nothing runs: a Docker image that no engine has is described all the same.
digest=$(printf '%064d' 0)
expect_exit 0 env PATH=/nonexistent "$SION_BIN/sion-sandbox" describe --backend "docker:none/such@sha256:$digest" --network egress &&
    expect_json_lines sandbox.describe.json 1 &&
    expect_grep "\"backend\":\"docker:none/such@sha256:$digest\",\"network\":\"named\",\"network_name\":\"egress\"," "$scratch/out"

# serve answers sandbox/describe with the same object, as it judged its options before it started.
expect_exit 0 sbx describe --sandbox-read ../tools --timeout 5 --memory 1G && cp "$scratch/out" "$scratch/described"
printf '%s\n' '{"jsonrpc":"2.0","id":1,"method":"sandbox/describe"}' \
    '{"jsonrpc":"2.0","id":2,"method":"sandbox/close"}' >"$scratch/req"
expect_exit 0 sbx serve --sandbox-read ../tools --timeout 5 --memory 1G <"$scratch/req" &&
    expect_json_lines envelope.schema.json 2 &&
    expect_out "{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":$(cat "$scratch/described")}
{\"jsonrpc\":\"2.0\",\"id\":2,\"result\":{}}"

# refused EXIT MESSAGE OPTIONS…: describe and serve refuse as exec does, in the same words and with
# the same status, and describe prints the refusal as JSON on stdout.
refused() {
    local want=$1 message=$2
    shift 2
    expect_exit "$want" sbx exec "$@" -- true && expect_out '' && expect_err "sion-sandbox: $message"
    expect_exit "$want" sbx serve "$@" </dev/null && expect_out '' && expect_err "sion-sandbox: $message"
    expect_exit "$want" sbx describe "$@" && expect_err "sion-sandbox: $message" &&
        expect_json_lines sandbox.describe.json 1 &&
        expect_out "$(python3 -c 'import json,sys; print(json.dumps({"error": {"code": int(sys.argv[1]), "message": sys.argv[2]}}, separators=(",", ":"), ensure_ascii=False))' "$want" "$message")"
}
refused 78 'the workspace ~/.sion/.. and ~/.sion (wallets, sessions, skills) overlap: give a workspace apart from it' \
    --workspace ~/.sion/..
refused 78 'the directory ~ given with --sandbox-read and ~/.sion (wallets, sessions, skills) overlap: give a directory apart from it' \
    --sandbox-read ~
refused 78 "cannot use the workspace 'nowhere': No such file or directory" --workspace nowhere
refused 78 'alpine:3.20 is not pinned by digest: give name@sha256:<64 hex digits>' --backend docker:alpine:3.20
refused 78 'with bubblewrap the network is none, declared or host, not sion-egress' --network sion-egress
refused 78 '--allow-host is for the declared network: add --network declared' --allow-host example.org
refused 64 "option '--timeout' needs a whole number of seconds, not 'x'" --timeout x
refused 64 "option '--memory': '8K' is too little: give 16M or more" --memory 8K

# describe's own usage: no operands, known options only; one line, nothing on stdout.
expect_exit 64 sbx describe ls && expect_out '' && expect_err "sion-sandbox: unexpected operand 'ls'"
expect_exit 64 sbx describe --no-such && expect_out '' && [ "$(wc -l <"$scratch/err")" -eq 1 ] && ok || fail "one line"

# sion-run shows describe's refusal as the seeds show a refused session ("error: …", 1), and so an
# answer it cannot read.
expect_exit 0 sion-run create coder && agent=$(cut -c1-8 "$scratch/out")
echo '{"turns": [{"text": "hello"}]}' >"$scratch/hello.json"
run() { timeout 60 sion-run run coder "$agent" --task hi --model "script:$scratch/hello.json" "$@" </dev/null; }
expect_exit 1 run --workspace ~/.sion/.. && expect_out '' &&
    expect_err 'error: the workspace ~/.sion/.. and ~/.sion (wallets, sessions, skills) overlap: give a workspace apart from it'
# With a shell, serve judges the options as the sandbox starts, and its refusal is shown the same way.
expect_exit 1 run --workspace ~/.sion/.. --shell && expect_out '' &&
    expect_err 'error: the workspace ~/.sion/.. and ~/.sion (wallets, sessions, skills) overlap: give a workspace apart from it'
expect_exit 1 run --workspace "$work" --shell --sandbox-network sion-egress && expect_out '' &&
    expect_err 'error: with bubblewrap the network is none, declared or host, not sion-egress'
mkdir -p "$scratch/fake"
for prog in "$SION_BIN"/sion-*; do ln -s "$prog" "$scratch/fake/"; done
rm "$scratch/fake/sion-sandbox"
printf '#!/bin/sh\necho not json\necho "sion-sandbox: something broke" >&2\nexit 70\n' >"$scratch/fake/sion-sandbox"
chmod +x "$scratch/fake/sion-sandbox"
expect_exit 1 env SION_EXEC_PATH="$scratch/fake" sion-run run coder "$agent" --task hi \
    --model "script:$scratch/hello.json" --workspace "$work" </dev/null && expect_out '' &&
    expect_err 'error: cannot ask sion-sandbox about the sandbox: sion-sandbox: something broke'
printf '#!/bin/sh\necho %s\n' "'{\"error\":{\"code\":70,\"message\":\"odd\"}}'" >"$scratch/fake/sion-sandbox"
expect_exit 1 env SION_EXEC_PATH="$scratch/fake" sion-run run coder "$agent" --task hi \
    --model "script:$scratch/hello.json" --workspace "$work" </dev/null &&
    expect_err 'error: cannot ask sion-sandbox about the sandbox: {"code":70,"message":"odd"}'
expect_exit 0 sion-run sessions && expect_out ''

# A session with a shell asks sion-sandbox once, its serve, and keeps the workspace serve resolved.
printf '#!/bin/sh\necho "$1" >>"%s"\nexec "%s" "$@"\n' "$scratch/asked" "$SION_BIN/sion-sandbox" >"$scratch/fake/sion-sandbox"
expect_exit 0 env SION_EXEC_PATH="$scratch/fake" sion-run run coder "$agent" --task hi \
    --model "script:$scratch/hello.json" --workspace ~/../work --shell --sandbox-read ../tools </dev/null &&
    expect_grep '^agent: hello$' "$scratch/out" && sid=$(sed -n 's/^session \([0-9a-f]*\) for .*/\1/p' "$scratch/out")
[ "$(cat "$scratch/asked")" = serve ] && ok || fail "sion-sandbox asked: $(tr '\n' ' ' <"$scratch/asked")"
expect_exit 0 sion-run show "$sid" --json &&
    expect_grep "\"workspace\":\"$work\",\"shell\":\"bwrap\",\"sandbox_read\":\[\"$scratch/tools\"\]" "$scratch/out"

done_testing
