#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# sion-sandbox exec with bubblewrap: the seed's probe prints exactly what the seed shows, the network
# is none, exit statuses pass through (126, 127, 128+n, 124), --json has every member, a request can
# come on stdin, and each refusal of the configuration exits 78 with the seed's words.
. "$(dirname "$0")/lib.sh"

need_bwrap

work="$scratch/work"
mkdir -p "$work" "$SION_HOME"
cd "$work" || exit 1
# sbx ARGS...: sion-sandbox, bounded whatever happens inside.
sbx() { timeout 120 sion-sandbox "$@"; }

# The seed's transcript, command for command.
cat >primes.py <<'PY'
primes = [n for n in range(2, 60) if all(n % d for d in range(2, n))]
print(len(primes), 'primes below 60:', primes)
PY
expect_exit 0 sbx exec -- sh -c 'python3 primes.py' &&
    expect_out '17 primes below 60: [2, 3, 5, 7, 11, 13, 17, 19, 23, 29, 31, 37, 41, 43, 47, 53, 59]'
expect_exit 0 sbx exec -- sh -c 'id; echo home=$HOME; ls /root ~/.sion 2>&1; touch /usr/local/x 2>&1; ls' &&
    expect_out "uid=10001(sandbox) gid=10001(sandbox) groups=10001(sandbox)
home=/workspace
ls: cannot access '/root': No such file or directory
ls: cannot access '/workspace/.sion': No such file or directory
touch: cannot touch '/usr/local/x': Read-only file system
primes.py" && expect_err ''
expect_exit 0 sbx exec -- sh -c 'python3 -c '\''import urllib.request; urllib.request.urlopen("https://example.com", timeout=5)'\'' 2>&1 | tail -n 1' &&
    expect_out 'urllib.error.URLError: <urlopen error [Errno -3] Temporary failure in name resolution>'

# What is hidden stays hidden: the home, $SION_HOME, and a secret of root's.
echo secret >"$SION_HOME/key"
expect_exit 0 sbx exec -- sh -c "cat '$SION_HOME/key' 2>&1; ls /home 2>&1; ls /etc/ssl/private 2>&1; cat /etc/shadow 2>&1; echo end"
expect_out "cat: $SION_HOME/key: No such file or directory
ls: cannot access '/home': No such file or directory
ls: cannot access '/etc/ssl/private': No such file or directory
cat: /etc/shadow: No such file or directory
end"

# Only loopback, no new user namespaces, no capabilities, a read-only root.
expect_exit 0 sbx exec -- sh -c 'tail -n +3 /proc/net/dev | cut -d: -f1 | tr -d " "; grep -E "^(CapEff|NoNewPrivs)" /proc/self/status; unshare -U true 2>/dev/null || echo no-userns; mkdir /x 2>&1 | sed "s/.*: //"'
expect_out 'lo
CapEff:	0000000000000000
NoNewPrivs:	1
no-userns
Read-only file system'

# The workspace is writable, /tmp private and writable, the environment the sandbox's own.
expect_exit 0 sbx exec -- sh -c 'echo made >made.txt && echo t >/tmp/t && cat /tmp/t && env | sort'
expect_grep '^HOME=/workspace$' "$scratch/out"
expect_grep '^USER=sandbox$' "$scratch/out"
expect_grep '^PATH=/usr/local/bin:/usr/bin:/bin:/usr/local/sbin:/usr/sbin:/sbin$' "$scratch/out"
grep -q '^SION_HOME=' "$scratch/out" && fail "SION_HOME leaked into the sandbox" || ok
[ "$(cat made.txt)" = made ] && ok || fail "made.txt was not written in the workspace"

# --sandbox-read shows a directory read-only at its own path.
mkdir -p "$scratch/tools" && echo tool >"$scratch/tools/t.txt"
expect_exit 0 sbx exec --sandbox-read "$scratch/tools" -- sh -c "cat '$scratch/tools/t.txt'; touch '$scratch/tools/x' 2>&1 | sed 's/.*: //'"
expect_out 'tool
Read-only file system'

# Exit statuses pass through.
expect_exit 3 sbx exec -- sh -c 'echo out; echo err >&2; exit 3' && expect_out out && expect_err err
expect_exit 127 sbx exec -- no-such-program &&
    expect_err "sion-sandbox: cannot run 'no-such-program': No such file or directory"
expect_exit 126 sbx exec -- /etc && expect_err "sion-sandbox: cannot run '/etc': Permission denied"
expect_exit 137 sbx exec -- sh -c 'kill -9 $$' &&
    expect_err 'sion-sandbox: the command was killed by SIGKILL (Killed)'
expect_exit 124 sbx exec --timeout 1 -- sh -c 'echo started; sleep 60' && expect_out started &&
    expect_err 'sion-sandbox: the command ran out of time (1 s) and was killed'
# How it ended is on a line of its own after a line the command left unfinished.
expect_exit 124 sbx exec --timeout 1 -- sh -c 'printf unfinished >&2; sleep 60' &&
    expect_err 'unfinished
sion-sandbox: the command ran out of time (1 s) and was killed'
expect_exit 137 sbx exec -- sh -c 'printf unfinished >&2; kill -9 $$' &&
    expect_err 'unfinished
sion-sandbox: the command was killed by SIGKILL (Killed)'

# stdin is the command's in argv form.
printf 'line one\nline two\n' >"$scratch/in"
expect_exit 0 sbx exec -- wc -l <"$scratch/in" && expect_out 2

# --json: one object with every member.
expect_exit 3 sbx exec --json -- sh -c 'printf out; printf err >&2; exit 3'
expect_grep '^\{"exit":3,"signal":null,"timed_out":false,"stdout":"out","stderr":"err","truncated":false,"wall_ms":[0-9]+,"cpu_ms":[0-9]+,"max_rss_kib":[0-9]+\}$' "$scratch/out"
expect_exit 124 sbx exec --json --timeout 1 -- sleep 60
expect_grep '^\{"exit":124,"signal":9,"timed_out":true,' "$scratch/out"

# A sandbox/exec params object on stdin: a shell string, its stdin, its environment.
echo '{"command":"cat; echo $GREETING","stdin":"fed\n","env":{"GREETING":"hello"}}' >"$scratch/req"
expect_exit 0 sbx exec --json <"$scratch/req"
expect_grep '"stdout":"fed\\nhello\\n"' "$scratch/out"
echo '{"argv":[]}' >"$scratch/req"
expect_exit 65 sbx exec <"$scratch/req" && expect_err "sion-sandbox: member 'argv' is empty"

# Output beyond --output is cut, with a line saying how much.
expect_exit 0 sbx exec --output 10 -- sh -c 'printf 0123456789abcdef'
expect_out '0123456789
[... 6 more bytes cut]'

# Refusals of the configuration: 78, one line each, the seed's words.
expect_exit 78 sbx exec --network sion-egress -- true &&
    expect_err 'sion-sandbox: with bubblewrap the network is none, declared or host, not sion-egress'
expect_exit 78 sbx exec --backend docker:alpine:3.20 -- true &&
    expect_err 'sion-sandbox: alpine:3.20 is not pinned by digest: give name@sha256:<64 hex digits>'
digest=$(printf '%064d' 0)
expect_exit 78 sbx exec --backend "docker:mirror.gcr.io/library/alpine@sha256:$digest" --network bridge -- true &&
    expect_err "sion-sandbox: Docker's \"bridge\" network does not restrict where a command connects: name a network you set up"
expect_exit 78 sbx exec --workspace ~/.sion/.. -- true &&
    expect_err 'sion-sandbox: the workspace ~/.sion/.. and ~/.sion (wallets, sessions, skills) overlap: give a workspace apart from it'
expect_exit 78 sbx exec --workspace "$SION_HOME/x/.." -- true &&
    expect_err 'sion-sandbox: the workspace ~/.sion/x/.. and ~/.sion (wallets, sessions, skills) overlap: give a workspace apart from it'
expect_exit 78 sbx exec --sandbox-read ~ -- true &&
    expect_err 'sion-sandbox: the directory ~ given with --sandbox-read and ~/.sion (wallets, sessions, skills) overlap: give a directory apart from it'
expect_exit 78 sbx exec --workspace "$scratch/none" -- true &&
    expect_err "sion-sandbox: cannot use the workspace '$scratch/none': No such file or directory"
expect_exit 78 sbx exec --allow-host example.org -- true &&
    expect_err 'sion-sandbox: --allow-host is for the declared network: add --network declared'

# Usage: 64.
expect_exit 64 sbx exec --timeout x -- true &&
    expect_err "sion-sandbox: option '--timeout' needs a whole number of seconds, not 'x'"
expect_exit 64 sbx frob && expect_err "sion-sandbox: unknown command 'frob': give exec, run, serve, check or describe (see --help)"

# No bwrap: 69, naming the package.
expect_exit 69 env PATH=/nonexistent "$SION_BIN/sion-sandbox" exec -- true &&
    expect_err 'sion-sandbox: cannot find bwrap: install bubblewrap (apt-get install bubblewrap)'

# Through the front door.
expect_exit 0 sion sandbox exec -- echo front && expect_out front

done_testing
