#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# sion-sandbox serve: sandbox/exec in one warm sandbox, several requests in flight answered by id as
# they end, bad requests answered with their errors, sandbox/close after what runs, the end of
# input, and the limits of exec (fork bomb, memory, file size, CPU, output) each ending with a clear
# result while the session goes on.
. "$(dirname "$0")/lib.sh"

need_bwrap
command -v python3 >/dev/null || skip "python3 is not installed"

work="$scratch/work"
mkdir -p "$work"
if [ "$(id -u)" -eq 0 ]; then
    # The fork bomb needs RLIMIT_NPROC, which the kernel does not apply to root's processes: the
    # workspace is a user's, so bwrap runs as them.
    EXTRA_CLEANUP='exec 3>&- 4<&- 2>/dev/null'
    user_workspace "$work" sionsrv
fi
cd "$work" || exit 1

# A whole session from a file: every answer, then the exit status.
req() { printf '{"jsonrpc":"2.0","id":%s,"method":"%s","params":%s}\n' "$1" "$2" "$3"; }
{
    req 1 sandbox/exec '{"command":"sleep 1; echo slow"}'
    req 2 sandbox/exec '{"argv":["echo","fast"]}'
    req 3 sandbox/exec '{"command":"id; echo home=$HOME; ls /root ~/.sion 2>&1; touch /usr/local/x 2>&1; ls"}'
    req 4 sandbox/exec '{"command":"cat; echo $V","stdin":"in\n","env":{"V":"env"}}'
    req 5 sandbox/exec '{"argv":["no-such-program"]}'
    req 6 sandbox/exec '{"cmd":"x"}'
    req 7 sandbox/frob '{}'
    req 8 sandbox/exec '{"command":"sleep 60","timeout":1}'
    req 9 sandbox/close '{}'
    req 10 sandbox/exec '{"command":"echo too late"}'
} >"$scratch/session"
expect_exit 0 timeout 60 sion-sandbox serve --workspace "$work" --timeout 5 <"$scratch/session"
answer() { grep "^{\"jsonrpc\":\"2.0\",\"id\":$1," "$scratch/out"; }
expect_grep '^\{"jsonrpc":"2.0","id":2,"result":\{"exit":0,"signal":null,"timed_out":false,"stdout":"fast\\n","stderr":"","truncated":false,' "$scratch/out"
expect_grep '^\{"jsonrpc":"2.0","id":1,"result":\{"exit":0,"signal":null,"timed_out":false,"stdout":"slow\\n",' "$scratch/out"
expect_grep "^\\{\"jsonrpc\":\"2.0\",\"id\":3,\"result\":\\{\"exit\":0,\"signal\":null,\"timed_out\":false,\"stdout\":\"uid=10001\\(sandbox\\) gid=10001\\(sandbox\\) groups=10001\\(sandbox\\)\\\\nhome=/workspace\\\\nls: cannot access '/root': No such file or directory\\\\nls: cannot access '/workspace/.sion': No such file or directory\\\\ntouch: cannot touch '/usr/local/x': Read-only file system\\\\n\"," "$scratch/out"
expect_grep '"id":4,"result":\{"exit":0,"signal":null,"timed_out":false,"stdout":"in\\nenv\\n"' "$scratch/out"
expect_grep "\"id\":5,\"result\":\\{\"exit\":127,\"signal\":null,\"timed_out\":false,\"stdout\":\"\",\"stderr\":\"sion-sandbox: cannot run 'no-such-program': No such file or directory\\\\n\"" "$scratch/out"
expect_grep "^\\{\"jsonrpc\":\"2.0\",\"id\":6,\"error\":\\{\"code\":-32602,\"message\":\"invalid params: give either 'command' or 'argv'\"\\}\\}$" "$scratch/out"
expect_grep '^\{"jsonrpc":"2.0","id":7,"error":\{"code":-32601,' "$scratch/out"
expect_grep '"id":8,"result":\{"exit":124,"signal":9,"timed_out":true,' "$scratch/out"
expect_grep '^\{"jsonrpc":"2.0","id":9,"result":\{\}\}$' "$scratch/out"
expect_grep '^\{"jsonrpc":"2.0","id":10,"error":\{"code":-32600,"message":"the session is closing: no more commands"\}\}$' "$scratch/out"
# Answers come as commands end: the fast one before the slow one, close last of the commands.
[ "$(answer 2 | head -c 0; grep -n '"id":2,' "$scratch/out" | cut -d: -f1)" -lt "$(grep -n '"id":1,' "$scratch/out" | cut -d: -f1)" ] &&
    ok || fail "the fast command was not answered before the slow one"
[ "$(grep -n '"id":9,' "$scratch/out" | cut -d: -f1)" -gt "$(grep -n '"id":1,' "$scratch/out" | cut -d: -f1)" ] &&
    ok || fail "close was answered before a command in flight"
expect_err ''

# The end of input ends the session once every request is answered.
req 1 sandbox/exec '{"command":"sleep 1; echo done"}' >"$scratch/session"
expect_exit 0 timeout 60 sion-sandbox serve --workspace "$work" <"$scratch/session"
expect_grep '"id":1,"result":\{"exit":0,"signal":null,"timed_out":false,"stdout":"done\\n"' "$scratch/out"

# An answer longer than a line of the pipes' default cap (1 MiB) still comes through from the init.
req 1 sandbox/exec '{"command":"head -c 1500000 /dev/zero | tr \"\\\\0\" a"}' >"$scratch/session"
expect_exit 0 timeout 60 sion-sandbox serve --workspace "$work" --output 2M <"$scratch/session"
[ "$(grep -o 'a' "$scratch/out" | wc -l)" -ge 1500000 ] && ok || fail "the 1.5 MB answer did not come whole"

# A refused configuration: 78 before anything starts.
expect_exit 78 sion-sandbox serve --workspace ~/.sion/.. </dev/null &&
    expect_err 'sion-sandbox: the workspace ~/.sion/.. and ~/.sion (wallets, sessions, skills) overlap: give a workspace apart from it'

# Limits, one request after another in one session, each followed by a command that runs normally.
# Memory is bounded by the sandbox's memory cgroup, whose kill is said, or else by RLIMIT_DATA.
expect_exit 0 sion-sandbox check --workspace "$work"
memory_cgroup=$(grep '^ok: memory bounded: .* in its own cgroup' "$scratch/out")
coproc SBX { timeout 300 sion-sandbox serve --workspace "$work" --timeout 60 --cpu 2 --memory 256M --file-size 1M --output 1K 2>"$scratch/serve.err"; }
sbx_pid=$SBX_PID # bash unsets SBX_PID once it has reaped the coprocess
exec 3>&"${SBX[1]}" 4<&"${SBX[0]}"
eval "exec ${SBX[1]}>&- ${SBX[0]}<&-" # 3 and 4 are the only ends left: closing 3 ends its input
id=0
# call PARAMS: one request, its answer in $reply.
call() {
    id=$((id + 1))
    req "$id" sandbox/exec "$1" >&3
    reply=
    IFS= read -r -t 120 reply <&4 || fail "no answer to request $id ($1)"
}
next() {
    call '{"argv":["echo","next"]}'
    case $reply in
    *'"result":{"exit":0,"signal":null,"timed_out":false,"stdout":"next\n",'*) ok ;;
    *) fail "the command after the limit did not run normally: $reply" ;;
    esac
}
expect_reply() {
    if [[ $reply =~ $1 ]]; then ok; else fail "answer '$reply' does not match '$1'"; fi
}

# RLIMIT_NPROC: a child each, up to 300, all killed and reaped before the command ends.
call '{"argv":["python3","-c","import os, signal\npids = []\ntry:\n    for _ in range(300):\n        pid = os.fork()\n        if pid == 0:\n            signal.pause()\n            os._exit(0)\n        pids.append(pid)\n    print(\"forked 300\")\nexcept OSError as e:\n    print(\"fork failed after\", len(pids), e.strerror)\nfor pid in pids:\n    os.kill(pid, signal.SIGKILL)\nfor pid in pids:\n    os.waitpid(pid, 0)"]}'
expect_reply '"stdout":"fork failed after [0-9]+ Resource temporarily unavailable\\n"'
next
call '{"command":"(bomb() { bomb | bomb & }; bomb) & exec sleep 60","timeout":3}'
expect_reply '"result":\{"exit":124,"signal":9,"timed_out":true,'
next
call '{"argv":["python3","-c","x = bytearray(1 << 30)"]}'
if [ "$memory_cgroup" ]; then
    expect_reply '"result":\{"exit":137,"signal":9,"timed_out":false,"out_of_memory":true,'
else
    expect_reply '"result":\{"exit":1,.*MemoryError\\n"'
fi
next
call '{"command":"exec head -c 10G /dev/zero > big"}'
expect_reply '"result":\{"exit":153,"signal":25,"timed_out":false,'
[ "$(stat -c %s big)" = 1048576 ] && ok || fail "big is $(stat -c %s big) bytes, want 1048576"
next
call '{"command":"while :; do :; done"}'
expect_reply '"result":\{"exit":152,"signal":24,"timed_out":false,'
next
call '{"command":"yes | head -c 1G","timeout":100}'
expect_reply '"stdout":"(y\\n){512}\[\.\.\. 1073740800 more bytes cut\]\\n",.*"truncated":true'
next
exec 3>&-
wait "$sbx_pid"
[ $? -eq 0 ] && ok || fail "serve did not end with 0 at the end of its input"
[ -s "$scratch/serve.err" ] && fail "serve wrote to stderr: $(head -n 3 "$scratch/serve.err")" || ok

done_testing
