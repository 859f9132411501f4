#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The seed's Docker transcript of `sion agent run`, against a real engine (need_docker: no bridge,
# no iptables, a busybox image named by digest): the workspace belongs to a user, the container runs
# as them, what it writes stays theirs, and it has no network. The command is the seed's without
# /etc/alpine-release and wget's -T (busybox's static wget crashes with it when the name lookup fails). Then the seed's refusals that need an
# engine's image name, and an image that is not on the machine, which is never pulled.
. "$(dirname "$0")/lib.sh"
command -v useradd >/dev/null || skip "useradd is not installed (Debian package passwd)"
need_docker

user="siondk$$"
EXTRA_CLEANUP='userdel "$user" 2>/dev/null'
useradd --no-create-home --home-dir /nonexistent --shell /usr/sbin/nologin --user-group "$user" ||
    { fail "cannot create the user $user"; done_testing; exit 1; }
uid=$(id -u "$user")
cd "$scratch" || exit 1
mkdir laptop
echo 'from the workspace' >laptop/hello.txt
chown -R "$user:$user" laptop
command='id -u; cat hello.txt; echo made > made.txt; wget -q -O - http://example.com 2>&1 | head -n 1'
python3 - "$command" >docker.json <<'PY'
import json, sys
print(json.dumps({"turns": [
    {"calls": [{"tool": "shell", "input": {"command": sys.argv[1]}}]},
    {"text": "The container runs busybox as the workspace's owner, and has no network."}]}))
PY
id=$(sion agent create coder) && ok || fail "sion agent create coder"
agent="${id:0:8}…${id:60:4}"

expect_exit 0 sion agent run coder "$agent" --task 'Say what the sandbox is.' --model script:docker.json \
    --workspace laptop --shell "docker:$SION_TEST_IMAGE" --autonomy L3
sed -E -e 's/session [0-9a-f]{16}/session f10fc217e0789987/' -e "s/agent ${id:0:8}/agent d85ed254/" \
    "$scratch/out" >got
cat >want <<TXT
session f10fc217e0789987 for agent d85ed254
→ shell {"command":"$command"}
← exit status 0
--- stdout
$uid
from the workspace
wget: bad address 'example.com'
agent: The container runs busybox as the workspace's owner, and has no network.
session f10fc217e0789987: done
TXT
if cmp -s want got; then ok; else
    fail "the Docker transcript differs from the seed's"
    diff want got >&2
fi
[ "$(stat -c %u:%g laptop/made.txt)" = "$uid:$uid" ] && ok || fail "made.txt is not the workspace owner's"
[ "$(cat laptop/made.txt)" = made ] && ok || fail "made.txt does not say made"
[ -z "$(docker ps -q --filter label=sion-sandbox)" ] && ok || fail "a sion-sandbox container is left"

# The session's settings keep the image: a continued session runs in it again.
session=$(sed -n 's/^session \([0-9a-f]\{16\}\) for agent .*/\1/p' "$scratch/out")
expect_exit 0 sion agent show "$session" --json
expect_grep "\"shell\":\"docker:$SION_TEST_IMAGE\"" "$scratch/out"

# Refusals of the seed that name an image; each exits 1 before anything runs.
expect_exit 1 sion agent run coder "$agent" --task x --model script:docker.json --workspace laptop \
    --shell "docker:$SION_TEST_IMAGE" --sandbox-network bridge
expect_err "error: Docker's \"bridge\" network does not restrict where a command connects: name a network you set up"
expect_exit 1 sion agent run coder "$agent" --task x --model script:docker.json --workspace laptop \
    --shell "docker:$SION_TEST_IMAGE" --sandbox-network host
expect_grep '^error: .*host' "$scratch/err"

# An image that is not on the machine: the sandbox does not work, and nothing is pulled.
absent="${SION_TEST_IMAGE%@*}@sha256:$(printf '0%.0s' {1..64})"
expect_exit 1 sion agent run coder "$agent" --task x --model script:docker.json --workspace laptop \
    --shell "docker:$absent"
expect_grep "^error: the sandbox does not work: .*is not on this machine" "$scratch/err"
[ "$(wc -l <"$scratch/err")" -eq 1 ] && ok || fail "the refusal is not one line"
if docker image inspect "$absent" >/dev/null 2>&1; then fail "$absent was pulled"; else ok; fi

done_testing
