#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Files a command writes in the workspace belong to the workspace's owner outside: run by root, the
# command runs as uid 2000010001 with the workspace idmapped to its owner (a user's made here, root's
# own, one in a directory only root may enter), in exec and in serve; inside, the command is user
# 10001 all the same. Run by a user, files are that user's.
. "$(dirname "$0")/lib.sh"

need_bwrap

work="$scratch/work"
mkdir -p "$work"
sbx() { timeout 120 sion-sandbox "$@"; }

if [ "$(id -u)" -eq 0 ]; then
    user_workspace "$work" sionsbx
    uid=$(id -u "$user")
    gid=$(id -g "$user")
else
    uid=$(id -u)
    gid=$(id -g)
fi
echo "from the workspace" >"$work/hello.txt"
[ "$(id -u)" -eq 0 ] && chown "$uid:$gid" "$work/hello.txt"

# exec: the seed's check, as the Docker transcript has it, with bubblewrap.
expect_exit 0 sbx exec --workspace "$work" -- sh -c 'id -u; cat hello.txt; echo made > made.txt; mkdir sub; echo deep > sub/deep.txt' &&
    expect_out '10001
from the workspace'
for f in made.txt sub sub/deep.txt; do
    got=$(stat -c '%u:%g' "$work/$f")
    [ "$got" = "$uid:$gid" ] && ok || fail "$f belongs to $got, want $uid:$gid"
done

# A workspace in a directory only root may enter: root stages it, so it is reached all the same.
if [ "$(id -u)" -eq 0 ]; then
    mkdir -p "$scratch/closed/work" && chmod 700 "$scratch/closed" && chown "$user:$user" "$scratch/closed/work"
    expect_exit 0 sbx exec --workspace "$scratch/closed/work" -- sh -c 'echo in > in.txt; id -u' && expect_out 10001
    got=$(stat -c '%u:%g' "$scratch/closed/work/in.txt")
    [ "$got" = "$uid:$gid" ] && ok || fail "in.txt belongs to $got, want $uid:$gid"
fi

# serve: the same, through the warm sandbox.
printf '%s\n' '{"jsonrpc":"2.0","id":1,"method":"sandbox/exec","params":{"command":"echo warm > warm.txt; id -un"}}' \
    '{"jsonrpc":"2.0","id":2,"method":"sandbox/close"}' >"$scratch/req"
expect_exit 0 sbx serve --workspace "$work" <"$scratch/req"
expect_grep '^\{"jsonrpc":"2.0","id":1,"result":\{"exit":0,"signal":null,"timed_out":false,"stdout":"sandbox\\n",' "$scratch/out"
got=$(stat -c '%u:%g' "$work/warm.txt")
[ "$got" = "$uid:$gid" ] && ok || fail "warm.txt belongs to $got, want $uid:$gid"

# A workspace of root's, run by root: files are root's, though the command is uid 2000010001.
if [ "$(id -u)" -eq 0 ]; then
    mkdir -p "$scratch/rootwork"
    expect_exit 0 sbx exec --workspace "$scratch/rootwork" -- sh -c 'id -u; echo r > r.txt' && expect_out 10001
    [ "$(stat -c '%u:%g' "$scratch/rootwork/r.txt")" = 0:0 ] && ok || fail "r.txt is not root's"
fi

done_testing
