# SPDX-License-Identifier: MIT
# Shared by the end-to-end suites: where the built programs are, a private scratch directory, and
# assertions that name what failed. Source it first thing: . "$(dirname "$0")/lib.sh"
set -u
: "${SION_SOURCE_DIR:?run the suites through ctest}"
: "${SION_BIN:?run the suites through ctest}"
export PATH="$SION_BIN:$PATH"
export SION_EXEC_PATH="$SION_BIN"
export LC_ALL=C.UTF-8

scratch=$(mktemp -d "${TMPDIR:-/tmp}/sion-e2e.XXXXXX")
export HOME="$scratch/home" SION_HOME="$scratch/home/.sion"
mkdir -p "$HOME"
trap 'rm -rf "$scratch"' EXIT
failures=0
checks=0

fail() {
    printf 'FAIL: %s\n' "$*" >&2
    failures=$((failures + 1))
}

ok() { checks=$((checks + 1)); }

# expect_exit CODE CMD...: runs CMD with stdout in $scratch/out and stderr in $scratch/err, and checks
# its exact exit status.
expect_exit() {
    local want=$1
    shift
    "$@" >"$scratch/out" 2>"$scratch/err"
    local got=$?
    if [ "$got" -ne "$want" ]; then
        fail "exit $got, want $want: $*"
        sed 's/^/  stderr: /' "$scratch/err" >&2
        return 1
    fi
    ok
}

# expect_out TEXT / expect_err TEXT: the last expect_exit's stdout or stderr is exactly TEXT.
expect_out() { expect_text "$scratch/out" stdout "$1"; }
expect_err() { expect_text "$scratch/err" stderr "$1"; }

expect_text() {
    local file=$1 what=$2 want=$3 got
    got=$(cat "$file")
    if [ "$got" != "$want" ]; then
        fail "$what differs"
        printf '  want: %s\n  got:  %s\n' "$want" "$got" >&2
        return 1
    fi
    ok
}

# expect_grep PATTERN FILE: FILE has a line matching the extended regular expression.
expect_grep() {
    if ! grep -qE -- "$1" "$2"; then
        fail "no line matches '$1' in $2"
        sed 's/^/  | /' "$2" | head -n 20 >&2
        return 1
    fi
    ok
}

# need_jsonschema: skips unless python3 can check JSON Schemas of draft 2020-12 (python3-jsonschema).
need_jsonschema() {
    command -v python3 >/dev/null || skip "python3 is not installed"
    python3 -c 'import jsonschema; jsonschema.Draft202012Validator' 2>/dev/null ||
        skip "python3 cannot import jsonschema with draft 2020-12 (Debian package python3-jsonschema)"
}

# expect_json_lines SCHEMA COUNT: the last expect_exit's stdout is COUNT lines, each a JSON object
# that passes schemas/SCHEMA (a list's, as run.sessions.json). Needs need_jsonschema.
expect_json_lines() {
    local lines
    lines=$(wc -l <"$scratch/out")
    if [ "$lines" -ne "$2" ]; then
        fail "$lines lines, want $2 of $1"
        sed 's/^/  | /' "$scratch/out" >&2
        return 1
    fi
    if ! python3 "$SION_SOURCE_DIR/tests/e2e/check_run_events.py" --schema "$1" \
        "$SION_SOURCE_DIR/schemas" "$scratch/out" >"$scratch/schema-check" 2>&1; then
        fail "stdout fails $1"
        sed 's/^/  | /' "$scratch/schema-check" >&2
        return 1
    fi
    ok
}

# need_bwrap: skips unless bubblewrap is installed and can make a sandbox here.
need_bwrap() {
    command -v bwrap >/dev/null || skip "bwrap is not installed (Debian package bubblewrap)"
    bwrap --unshare-all --unshare-user --ro-bind /usr /usr --symlink usr/lib64 /lib64 \
        --symlink usr/lib /lib -- /usr/bin/true 2>/dev/null ||
        skip "bwrap cannot make a sandbox here (user namespaces refused)"
}

# user_workspace DIR PREFIX: run by root, makes a user named PREFIX<pid> (in $user) that owns DIR, and
# puts a copy of sion-sandbox they may run first on PATH: bwrap runs as the workspace's owner, who must
# reach the workspace and the program. The user is removed at exit, after EXTRA_CLEANUP runs.
user_workspace() {
    command -v useradd >/dev/null || skip "useradd is not installed (Debian package passwd)"
    user="$2$$"
    useradd --no-create-home --home-dir /nonexistent --shell /usr/sbin/nologin --user-group "$user" ||
        skip "cannot create a user for the test"
    trap 'eval "${EXTRA_CLEANUP:-}"; userdel "$user" 2>/dev/null; rm -rf "$scratch"' EXIT
    chown "$user:$user" "$1"
    chmod 711 "$scratch"
    mkdir -p "$scratch/bin" && cp "$SION_BIN/sion-sandbox" "$scratch/bin/" && chmod 755 "$scratch/bin"
    export PATH="$scratch/bin:$PATH"
}

# wait_until SECONDS COMMAND...: runs COMMAND every tenth of a second until it succeeds, for at
# most SECONDS; fails when it never did. A bound on waiting, never a timed assertion.
wait_until() {
    local tenths=$(($1 * 10))
    shift
    until "$@"; do
        tenths=$((tenths - 1))
        [ "$tenths" -gt 0 ] || return 1
        sleep 0.1
    done
}

# stop_job SIGNAL PID SECONDS: sends SIGNAL to PID, a background job of this shell, and waits at
# most SECONDS for it to end (then fails, and kills it); sets $status to how it ended.
stop_job() {
    kill "-$1" "$2"
    if ! wait_until "$3" eval '! kill -0 '"$2"' 2>/dev/null'; then
        fail "pid $2 went on after SIG$1"
        kill -KILL "$2" 2>/dev/null
    fi
    wait "$2"
    status=$?
}

# skip WHY: exit 125 with the reason on stderr (CI installs what suites need, so it never skips).
skip() {
    printf 'SKIP: %s\n' "$*" >&2
    exit 125
}

# done_testing: the closing line, and the status ctest sees.
done_testing() {
    printf '%d passed, %d failed\n' "$checks" "$failures"
    [ "$failures" -eq 0 ]
}

# need_docker: as root, starts scripts/docker-test-env's private engine, registry and busybox image
# under $scratch/docker (DOCKER_HOST, SION_TEST_IMAGE and SION_TEST_REGISTRY exported) and stops them
# at exit, after EXTRA_CLEANUP runs. Skips when the engine cannot run here (not root, or the reason
# docker-test-env gives).
need_docker() {
    [ "$(id -u)" -eq 0 ] || skip "dockerd needs root: the Docker suites run as root (CI does)"
    docker_dir="$scratch/docker"
    trap 'eval "${EXTRA_CLEANUP:-}"; "$SION_SOURCE_DIR/scripts/docker-test-env" stop "$docker_dir" >/dev/null 2>&1; rm -rf "$scratch"' EXIT
    local code=0
    "$SION_SOURCE_DIR/scripts/docker-test-env" start "$docker_dir" >"$scratch/docker.env" 2>"$scratch/docker.err" ||
        code=$?
    if [ "$code" -eq 69 ] || [ "$code" -eq 77 ]; then
        cat "$scratch/docker.err" >&2
        skip "the Docker engine cannot run here: $(head -n 1 "$scratch/docker.err")"
    elif [ "$code" -ne 0 ]; then
        cat "$scratch/docker.err" >&2
        fail "docker-test-env start exited $code"
        done_testing
        exit 1
    fi
    eval "$(cat "$scratch/docker.env")"
    : "${DOCKER_HOST:?}" "${SION_TEST_IMAGE:?}" "${SION_TEST_REGISTRY:?}"
}

# tls_authority DIR: a certificate authority made here, DIR/ca.pem (and its key), for the suites'
# TLS servers. tls_certificate DIR NAME SAN: DIR/NAME.pem, a certificate it signs for SAN
# ("DNS:localhost,IP:127.0.0.1") followed by its key, as Python's ssl takes them. (openssl)
tls_authority() {
    command -v openssl >/dev/null || skip "openssl is not installed (Debian package openssl)"
    mkdir -p "$1"
    openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -days 2 \
        -subj '/CN=sion test CA' -keyout "$1/ca.key" -out "$1/ca.pem" 2>"$1/err" &&
        ok || fail "openssl could not make the CA: $(cat "$1/err")"
}
tls_certificate() {
    openssl req -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -subj "/CN=$2" \
        -keyout "$1/$2.key" -out "$1/$2.csr" 2>"$1/err" &&
        openssl x509 -req -in "$1/$2.csr" -CA "$1/ca.pem" -CAkey "$1/ca.key" -CAcreateserial \
            -days 2 -out "$1/$2.crt" \
            -extfile <(printf 'subjectAltName=%s\nbasicConstraints=CA:FALSE\n' "$3") 2>>"$1/err" &&
        cat "$1/$2.crt" "$1/$2.key" >"$1/$2.pem" && ok ||
        fail "openssl could not make the certificate of $2: $(cat "$1/err")"
}
