#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# sion-sandbox check: one line each on stdout, "ok: " or "fail: " with the fix; 0 when all is ok,
# 69 when the sandbox is unavailable (no bwrap, user namespaces refused, no Docker engine, an image
# not on the machine), 78 when the configuration is refused (the seed's overlap messages).
. "$(dirname "$0")/lib.sh"

need_bwrap

work="$scratch/work"
mkdir -p "$work" "$SION_HOME"
cd "$work" || exit 1
sbx() { timeout 120 sion-sandbox "$@"; }
version=$(bwrap --version | sed -n 's/^bubblewrap //p')

# All is well here; what bounds the processes is t0106's, who a command is t0107's; the memory
# cgroup's kills are t0102's.
bound='^ok: processes bounded: (pids\.max 256 in each sandbox.s own cgroup|RLIMIT_NPROC 256 for uid [0-9]+)'
memory='^ok: memory bounded: (4 GiB for each sandbox, in its own cgroup beneath /sys/fs/cgroup[^ ]* \(cgroup v[12]\), with no swap|RLIMIT_DATA 4 GiB a process \(no memory cgroup: .+\))$'
if [ "$(id -u)" -eq 0 ]; then
    who="ok: commands run as uid 2000010001, never root (10001 inside); the workspace is idmapped so that what they write is 0:0's"
else
    who="ok: commands run as uid $(id -u), who runs sion-sandbox (10001 inside)"
fi
expect_exit 0 sbx check && expect_err '' && expect_grep "$bound" "$scratch/out" &&
    expect_grep "$memory" "$scratch/out" && sed -i '$d' "$scratch/out" && sed -i '$d' "$scratch/out" && expect_out "ok: the workspace $work and ~/.sion are apart
ok: bwrap $version found
ok: user namespaces allowed
ok: a command ran in the sandbox (id -u: 10001)
$who"
mkdir -p "$scratch/tools"
expect_exit 0 sbx check --sandbox-read "$scratch/tools" --network host &&
    expect_grep '^ok: no --sandbox-read directory shows ~/\.sion$' "$scratch/out" &&
    expect_grep '^ok: a command ran in the sandbox \(id -u: 10001\)$' "$scratch/out"

# As root, with a workspace of another user's: the workspace is idmapped to them.
if [ "$(id -u)" -eq 0 ]; then
    owned="$scratch/owned"
    mkdir -p "$owned" && chown 65534:65534 "$owned"
    expect_exit 0 sbx check --workspace "$owned" && expect_grep "$bound" "$scratch/out" &&
        expect_grep "$memory" "$scratch/out" && sed -i '$d' "$scratch/out" &&
        sed -i '$d' "$scratch/out" && expect_out "ok: the workspace $owned and ~/.sion are apart
ok: bwrap $version found
ok: user namespaces allowed
ok: a command ran in the sandbox (id -u: 10001)
ok: commands run as uid 2000010001, never root (10001 inside); the workspace is idmapped so that what they write is 65534:65534's"
fi

# bwrap is found through PATH: without it, the package to install.
expect_exit 69 env PATH=/nonexistent "$SION_BIN/sion-sandbox" check &&
    expect_out "ok: the workspace $work and ~/.sion are apart
fail: bwrap not found: install the Debian package bubblewrap" && expect_err ''

# User namespaces refused: bwrap's words, and a fix named from the kernel's settings.
mkdir -p "$scratch/fakebin"
cat >"$scratch/fakebin/bwrap" <<'SH'
#!/bin/sh
[ "$1" = --version ] && { echo 'bubblewrap 0.8.0'; exit 0; }
echo 'bwrap: setting up uid map: Permission denied' >&2
exit 1
SH
chmod +x "$scratch/fakebin/bwrap"
chmod 711 "$scratch" # as root, bwrap runs as uid 2000010001, who must reach it
expect_exit 69 env PATH="$scratch/fakebin:$PATH" "$SION_BIN/sion-sandbox" check
expect_grep '^ok: bwrap 0\.8\.0 found$' "$scratch/out"
expect_grep '^fail: user namespaces refused \(bwrap: setting up uid map: Permission denied\): (allow them with sysctl|AppArmor restricts them)' "$scratch/out"
grep -q '^ok: a command ran' "$scratch/out" && fail "a command was said to run without user namespaces" || ok

# The configuration refused: 78, the seed's words, and nothing run.
expect_exit 78 sbx check --workspace ~/.sion/..
expect_grep '^fail: the workspace ~/\.sion/\.\. and ~/\.sion \(wallets, sessions, skills\) overlap: give a workspace apart from it$' "$scratch/out"
grep -q '^ok: a command ran' "$scratch/out" && fail "a command ran in a refused workspace" || ok
expect_exit 78 sbx check --sandbox-read ~
expect_grep '^fail: the directory ~ given with --sandbox-read and ~/\.sion \(wallets, sessions, skills\) overlap: give a directory apart from it$' "$scratch/out"
grep -q '^ok: a command ran' "$scratch/out" && fail "a command ran with ~/.sion shown" || ok

# Options as exec takes them (no --json, no command).
expect_exit 64 sbx check --json
expect_exit 64 sbx check -- true &&
    expect_err 'sion-sandbox: check takes no command: sion-sandbox check [options]'

# Docker: an engine that does not answer.
absent="sion-test/absent@sha256:$(printf '%064d' 0)"
if command -v docker >/dev/null; then
    expect_exit 69 env DOCKER_HOST="unix://$scratch/no-engine.sock" "$SION_BIN/sion-sandbox" check --backend "docker:$absent" &&
        expect_out "ok: the workspace $work and ~/.sion are apart
fail: no Docker engine answers at 'unix://$scratch/no-engine.sock': start it (systemctl start docker), or install Debian's docker.io"
else
    expect_exit 69 sbx check --backend "docker:$absent" &&
        expect_grep "^fail: docker is not installed: install Debian's docker.io$" "$scratch/out"
fi

# Docker: an engine of the suite's own (as root), an image it has and one it has not (no pull). The
# workspace is root's: the container runs as uid 2000010001 with it idmapped.
envdir="$scratch/docker"
if [ "$(id -u)" -eq 0 ] &&
    "$SION_SOURCE_DIR/scripts/docker-test-env" start "$envdir" >"$scratch/env" 2>"$scratch/env.err"; then
    trap '"$SION_SOURCE_DIR/scripts/docker-test-env" stop "$envdir" >/dev/null 2>&1; rm -rf "$scratch"' EXIT
    eval "$(cat "$scratch/env")"
    expect_exit 0 sbx check --backend "docker:$SION_TEST_IMAGE" && expect_out "ok: the workspace $work and ~/.sion are apart
ok: the Docker engine answers
ok: image '$SION_TEST_IMAGE' is on this machine
ok: a command ran in the sandbox (id -u: 2000010001)"
    missing="${SION_TEST_IMAGE%@*}@sha256:$(printf '%064d' 0)"
    expect_exit 69 sbx check --backend "docker:$missing" && expect_out "ok: the workspace $work and ~/.sion are apart
ok: the Docker engine answers
fail: image '$missing' is not on this machine: load it first (docker pull or docker load), sion never pulls"
    docker image inspect "$missing" >/dev/null 2>&1 && fail "$missing was pulled" || ok
else
    printf 'note: no Docker engine of our own here (%s): the image checks were not run\n' \
        "$(head -n 1 "$scratch/env.err" 2>/dev/null || echo 'not root')" >&2
fi

done_testing
