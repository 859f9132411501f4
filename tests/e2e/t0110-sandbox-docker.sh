#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The Docker backend against a real engine: scripts/docker-test-env starts dockerd (no bridge, no
# iptables), a registry on 127.0.0.1 and a busybox image named by digest, all under this suite's
# scratch directory, and stops them at the end. Then:
#   - the backend's engine tests (test_sandboxd_docker's DockerEngine cases, which exist only with
#     SION_TEST_IMAGE set): the seed's transcript, limits, time limit, output cap, statuses, errors;
#   - sion-sandbox itself, once it is built: the seed's Docker transcript as a user made here, the
#     digest and network refusals, a missing image (and no pull), the time limit (no container
#     left), the output cap and a fork bomb;
#   - no container labelled sion-sandbox is left, and the registry was never asked for the image
#     that is not on this machine.
# Skips (125) only when the engine cannot run here: not root, or docker-test-env says why (69).
. "$(dirname "$0")/lib.sh"

user=
EXTRA_CLEANUP='[ -z "$user" ] || userdel "$user" >/dev/null 2>&1'
t0=$(date +%s%N)
need_docker
envdir=$docker_dir
printf 'docker-test-env: up in %d ms\n' $((($(date +%s%N) - t0) / 1000000))
ok

# An image the registry has and this machine has not: asking for it must not pull it.
mkdir -p "$scratch/absent"
echo absent >"$scratch/absent/marker"
absent_repo="$SION_TEST_REGISTRY/sion-test/absent"
if ! tar -C "$scratch/absent" -c . | docker import - "$absent_repo:latest" >/dev/null ||
    ! docker push "$absent_repo:latest" >/dev/null 2>&1; then
    fail "cannot push $absent_repo"
fi
absent=$(docker image inspect --format '{{range .RepoDigests}}{{println .}}{{end}}' "$absent_repo:latest" |
    grep -m1 "^$absent_repo@sha256:")
docker rmi -f "$absent_repo:latest" >/dev/null
if docker image inspect "$absent" >/dev/null 2>&1; then
    fail "$absent is still on this machine after docker rmi"
fi
export SION_TEST_ABSENT_IMAGE="$absent"
registry_lines=$(wc -l <"$envdir/registry.log")

check() { # check WHAT TEST...: TEST succeeds
    local what=$1
    shift
    if "$@"; then ok; else fail "$what"; fi
}

no_container_left() { # no_container_left WHAT: docker ps finds no sion-sandbox container
    docker ps -q --filter label=sion-sandbox >"$scratch/ps" 2>&1
    if [ -s "$scratch/ps" ]; then
        fail "$1: containers labelled sion-sandbox still run"
        docker ps --filter label=sion-sandbox >&2
        return 1
    fi
    ok
}

# --- the backend, through its engine tests ------------------------------------------------------
if "$SION_BIN/test_sandboxd_docker" --gtest_filter='DockerEngine.*' >"$scratch/engine.log" 2>&1; then
    ok
    grep -E '^\[  PASSED  \]' "$scratch/engine.log"
else
    fail "test_sandboxd_docker's DockerEngine tests failed"
    grep -E 'Failure|FAILED|Expected|Which is|^  ' "$scratch/engine.log" | head -n 60 >&2
fi
expect_grep '^\[       OK \] DockerEngine.SeedTranscript' "$scratch/engine.log"
no_container_left "after the engine tests"

# The seed's Docker transcript and the limits, through sion-sandbox exec ("${dk[@]}").
program_runs_docker() {
    # The seed's Docker transcript, on busybox: the owner's uid, a file read, one written that is
    # theirs outside, no network.
    expect_exit 0 "${dk[@]}" -- sh -c \
        'id -u; cat hello.txt; echo made > made.txt; wget -q -O - http://example.com 2>&1 | head -n 1'
    expect_out "$uid
from the workspace
wget: bad address 'example.com'"
    check "made.txt is $uid:$gid" [ "$(stat -c %u:%g "$ws/made.txt")" = "$uid:$gid" ]
    check "made.txt says made" [ "$(cat "$ws/made.txt")" = made ]

    # This program's stdin is the command's; --json gives the result object.
    printf 'piped in\n' | "${dk[@]}" -- cat >"$scratch/out" 2>"$scratch/err"
    check "a piped stdin reaches the command" [ "${PIPESTATUS[1]}" -eq 0 ]
    expect_out 'piped in'
    expect_exit 3 "${dk[@]}" --json -- sh -c 'echo hi; exit 3'
    check "--json gives exit, stdout and timed_out" python3 -c '
import json, sys
r = json.load(open(sys.argv[1]))
assert r["exit"] == 3 and r["stdout"] == "hi\n" and r["timed_out"] is False, r' "$scratch/out"

    # A missing image is a clear error, and nothing is pulled.
    expect_exit 69 sion-sandbox exec --backend "docker:$absent" --workspace "$ws" -- true
    expect_grep "image '$absent' is not on this machine: load it first \\(docker pull or docker load\\), sion never pulls\$" \
        "$scratch/err"
    if docker image inspect "$absent" >/dev/null 2>&1; then fail "$absent was pulled"; else ok; fi

    # The time limit kills the container, not only docker run.
    expect_exit 124 "${dk[@]}" --timeout 2 -- sh -c 'echo started; sleep 60'
    expect_out started
    no_container_left "after the time limit"

    # The output cap.
    expect_exit 0 "${dk[@]}" --output 1000 -- sh -c "head -c 100000 /dev/zero | tr '\\0' x"
    expect_grep '^\[\.\.\. 99000 more bytes cut\]$' "$scratch/out"

    # A fork bomb is bounded by the container's 256 processes, and the next command runs.
    "${dk[@]}" --timeout 20 -- sh -c 'b() { b | b & }; b; sleep 5; echo survived' \
        >"$scratch/out" 2>"$scratch/err"
    expect_grep "can't fork" "$scratch/err"
    expect_exit 0 "${dk[@]}" -- echo next
    expect_out next
    no_container_left "after the fork bomb"
}

# --- sion-sandbox, once it is built ---------------------------------------------------------------
if [ -x "$SION_BIN/sion-sandbox" ]; then
    # The workspace belongs to a user of its own, who the container runs as.
    user=sion-dk-$$
    useradd --no-create-home --shell /usr/sbin/nologin "$user" || fail "cannot create the user $user"
    uid=$(id -u "$user")
    gid=$(id -g "$user")
    ws="$scratch/laptop"
    mkdir -p "$ws"
    echo 'from the workspace' >"$ws/hello.txt"
    chown -R "$uid:$gid" "$ws"
    dk=(sion-sandbox exec --backend "docker:$SION_TEST_IMAGE" --workspace "$ws")

    # The seed's refusals.
    expect_exit 78 sion-sandbox exec --backend docker:alpine:3.20 --workspace "$ws" -- true
    expect_grep 'alpine:3.20 is not pinned by digest: give name@sha256:<64 hex digits>$' "$scratch/err"
    for net in bridge host; do
        expect_exit 78 "${dk[@]}" --network "$net" -- true
        expect_grep "Docker's \"$net\" network does not restrict where a command connects: name a network you set up\$" \
            "$scratch/err"
    done

    # Until the program calls the backend (sandboxd/docker.hpp's docker_exec), only its refusals
    # are tried; from then on, everything.
    if grep -rqs --include='*.cpp' --exclude=docker.cpp 'docker_exec' \
        "$SION_SOURCE_DIR/sandboxd" "$SION_SOURCE_DIR/cmd/sion-sandbox"; then
        program_runs_docker
    else
        printf 'note: sion-sandbox does not call docker_exec yet: only its refusals were tried\n' >&2
    fi
else
    printf 'note: %s is not built: only the backend was tested\n' "$SION_BIN/sion-sandbox" >&2
fi

# Nothing asked the registry for the image this machine does not have.
if tail -n +"$((registry_lines + 1))" "$envdir/registry.log" | grep -q "/v2/sion-test/absent/manifests"; then
    fail "the registry was asked for $absent: something pulled"
    tail -n +"$((registry_lines + 1))" "$envdir/registry.log" | grep "/v2/sion-test/absent" | head -n 5 >&2
else
    ok
fi
no_container_left "at the end"

done_testing
