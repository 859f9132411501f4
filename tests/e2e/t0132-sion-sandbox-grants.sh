#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# sion-sandbox run --grants-fd: the declared network's proxy writes a grant's credential into the
# requests to its host on its path, ending their TLS with sion's own authority, which the sandbox
# trusts. An HTTPS API stand-in (bearer_api.py, on loopback addresses other than 127.0.0.1, which
# the sandbox reaches directly) wants `Authorization: Bearer <token>`: Python and curl in the
# sandbox get through on the grant's path and nowhere else; another host gets no credential; a
# granted host whose certificate does not verify is refused (502), not signed again; the token is in
# none of the sandbox's environments, command lines, files or outputs. Both with a root-owned
# workspace and with one a user owns (bwrap runs as that user). Malformed and undeclared grants are
# refused before anything runs, and no message holds a value.
. "$(dirname "$0")/lib.sh"

need_bwrap
py=/usr/bin/python3
[ -x "$py" ] || skip "$py is missing (Debian package python3)"
command -v curl >/dev/null || skip "curl is not installed (Debian package curl)"

mkdir -p "$SION_HOME" "$scratch/tmp" "$scratch/work"
export TMPDIR="$scratch/tmp"
background=()
EXTRA_CLEANUP='for p in "${background[@]}"; do kill -9 "$p" 2>/dev/null; done'
trap 'eval "$EXTRA_CLEANUP"; rm -rf "$scratch"' EXIT
sbx() { timeout 120 sion-sandbox "$@"; }

tls_authority "$scratch/ca"
tls_certificate "$scratch/ca" api "IP:127.0.0.2,IP:127.0.0.3"
tls_authority "$scratch/rogue"
tls_certificate "$scratch/rogue" api "IP:127.0.0.4"
token="tok-$(head -c 24 /dev/urandom | od -An -tx1 | tr -d ' \n')"
printf '%s\n' "$token" >"$scratch/token"

# api ADDRESS CERT: the stand-in on ADDRESS; its port in $port.
api() {
    rm -f "$scratch/port"
    "$py" "$SION_SOURCE_DIR/tests/e2e/bearer_api.py" "$1" "$2" "$scratch/token" "$scratch/api.log" \
        "$scratch/port" 2>"$scratch/api.err" &
    background+=("$!")
    wait_until 30 test -s "$scratch/port" || fail "the API stand-in on $1 did not start: $(cat "$scratch/api.err")"
    port=$(cat "$scratch/port")
}
api 127.0.0.2 "$scratch/ca/api.pem"
granted=$port
api 127.0.0.3 "$scratch/ca/api.pem"
other=$port
api 127.0.0.4 "$scratch/rogue/api.pem"
rogue=$port

printf '{"host":"127.0.0.2","port":%s,"path":"/v1","value":"Bearer %s"}\n{"host":"127.0.0.4","port":%s,"value":"Bearer %s"}\n' \
    "$granted" "$token" "$rogue" "$token" >"$scratch/grants"
allow=(--network declared --allow-host "127.0.0.2:$granted" --allow-host "127.0.0.3:$other" --allow-host "127.0.0.4:$rogue")
# The proxy trusts the stand-in's authority (and not the rogue one's).
export SSL_CERT_FILE="$scratch/ca/ca.pem"

# What the command does: each URL with Python's urllib (the status and the body), one with curl
# when there is one, then everything in the sandbox a secret could be in.
cat >"$scratch/probe.py" <<'PY'
import os, subprocess, sys, urllib.error, urllib.request
granted, other, rogue = sys.argv[1:4]
for url in (f"https://127.0.0.2:{granted}/v1/items", f"https://127.0.0.2:{granted}/v2/items",
            f"https://127.0.0.2:{granted}/v1/..%2fv2", f"https://127.0.0.3:{other}/v1/items",
            f"https://127.0.0.4:{rogue}/v1/items"):
    try:
        answer = urllib.request.urlopen(url, timeout=30)
        print(answer.status, answer.read().decode(), flush=True)
    except urllib.error.HTTPError as e:
        print(e.code, e.read().decode().strip(), flush=True)
    except Exception as e:
        print("failed", type(e).__name__, flush=True)
out = subprocess.run(["curl", "-sS", f"https://127.0.0.2:{granted}/v1/curl"],
                     capture_output=True, text=True).stdout
print("curl", out, flush=True)
print("trust", os.environ.get("SSL_CERT_FILE"), os.environ.get("NODE_EXTRA_CA_CERTS"), flush=True)
sys.path.insert(0, "/workspace")
sys.dont_write_bytecode = True
import seen
seen.dump("/workspace/seen")
PY

# probe WHAT WORKSPACE: the probe run in WORKSPACE with the grants, and what it must show.
probe() {
    local what=$1 work=$2
    rm -f "$work/seen" "$work/probe.py" "$work/seen.py"
    cp "$scratch/probe.py" "$SION_SOURCE_DIR/tests/fixtures/mcp/seen.py" "$work/" &&
        chmod 644 "$work/probe.py" "$work/seen.py"
    : >"$scratch/api.log"
    expect_exit 0 sbx run --workspace "$work" "${allow[@]}" --grants-fd 3 \
        -- python3 probe.py "$granted" "$other" "$rogue" 3<"$scratch/grants" || return
    expect_out "200 {\"path\": \"/v1/items\", \"authorized\": true}
401 {\"path\": \"/v2/items\", \"authorized\": false}
401 {\"path\": \"/v1/..%2fv2\", \"authorized\": false}
401 {\"path\": \"/v1/items\", \"authorized\": false}
502 the certificate of 127.0.0.4 does not verify: The certificate is not correctly signed by the trusted CA
curl {\"path\": \"/v1/curl\", \"authorized\": true}
trust /run/sion/ca-bundle.pem /run/sion/egress-ca.pem" || sed 's/^/  | /' "$scratch/err" >&2
    expect_grep "^sion-sandbox: the proxy refused a granted host: the certificate of 127.0.0.4 does not verify" "$scratch/err"
    # Only the granted path carried a credential; the rogue host was never sent a request.
    expect_text "$scratch/api.log" "$what: the API's log" "$(printf '%s\n' \
        '{"address": "127.0.0.2", "path": "/v1/items", "authorization": true, "authorized": true}' \
        '{"address": "127.0.0.2", "path": "/v2/items", "authorization": false, "authorized": false}' \
        '{"address": "127.0.0.2", "path": "/v1/..%2fv2", "authorization": false, "authorized": false}' \
        '{"address": "127.0.0.3", "path": "/v1/items", "authorization": false, "authorized": false}' \
        '{"address": "127.0.0.2", "path": "/v1/curl", "authorization": true, "authorized": true}')"
    [ -s "$work/seen" ] && ok || fail "$what: the probe saw nothing"
    for f in "$work/seen" "$scratch/out" "$scratch/err"; do
        if grep -qF -- "$token" "$f"; then fail "$what: the token is in $f"; else ok; fi
    done
    [ -z "$(ls -A "$TMPDIR")" ] && ok || fail "$what: the proxy's directory was left: $(ls -A "$TMPDIR")"
}

probe "a root-owned workspace" "$scratch/work"
# The authority was made once, private, and is used again.
expect_text <(stat -c %a "$SION_HOME/agents/egress-ca.pem") "the authority's mode" 600
sum=$(sha256sum <"$SION_HOME/agents/egress-ca.pem")

user_workspace "$scratch/work" sgrant
probe "a user's workspace" "$scratch/work"
[ "$(sha256sum <"$SION_HOME/agents/egress-ca.pem")" = "$sum" ] && ok || fail "the authority was made again"

# Without grants nothing of this is there: the sandbox trusts what it always did.
expect_exit 0 sbx run --workspace "$scratch/work" "${allow[@]}" -- sh -c 'echo "${SSL_CERT_FILE:-none}"; ls /run/sion' &&
    expect_out 'none
proxy.sock
sion-sandbox'

# --- grants refused before anything runs ---------------------------------------------------------
refused() { # EXIT MESSAGE GRANTS ARGS...: the run with GRANTS on fd 3 is refused so
    local code=$1 message=$2 grants=$3
    shift 3
    expect_exit "$code" sbx run "$@" --grants-fd 3 -- sh -c 'echo ran' 3<<<"$grants" &&
        expect_out '' && expect_err "sion-sandbox: $message"
}
refused 78 "the grant for https://127.0.0.3/v1 needs its host declared: add --network declared --allow-host 127.0.0.3" \
    '{"host":"127.0.0.3","path":"/v1","value":"Bearer x"}' "${allow[@]}"
refused 78 "the grant for https://127.0.0.2:$granted/ needs its host declared: add --network declared --allow-host 127.0.0.2:$granted" \
    "{\"host\":\"127.0.0.2\",\"port\":$granted,\"value\":\"Bearer x\"}" --network none
refused 65 "grant 1: 'port' is 0: give 1-65535" '{"host":"127.0.0.2","port":0,"value":"v"}' "${allow[@]}"
refused 65 "grant 2: 'value' is not one line of visible text" \
    "{\"host\":\"127.0.0.2\",\"port\":$granted,\"value\":\"v\"}
{\"host\":\"127.0.0.3\",\"port\":$other,\"value\":\"Bearer $token\\r\\nX-Forged: 1\"}" "${allow[@]}"
grep -qF -- "$token" "$scratch/err" && fail "a refused grant's message holds its value" || ok
refused 65 "grant 1: invalid JSON at byte 8" '{"host":' "${allow[@]}"
refused 78 "grants need the bubblewrap sandbox: a Docker network has no proxy of sion's to write them" \
    '{"host":"127.0.0.2","value":"v"}' --backend "docker:busybox@sha256:$(printf '%064d' 0)" --network sion-test
SSL_CERT_FILE="$scratch/none.pem" refused 78 "cannot read the trusted certificates '$scratch/none.pem': install ca-certificates, or set SSL_CERT_FILE: No such file or directory" \
    "{\"host\":\"127.0.0.2\",\"port\":$granted,\"value\":\"v\"}" "${allow[@]}"
expect_exit 64 sbx run --grants-fd 99 -- true && expect_err "sion-sandbox: --grants-fd 99 is not an open descriptor"
expect_exit 64 sbx run --grants-fd 1x -- true && expect_err "sion-sandbox: --grants-fd takes a descriptor's number from 3 up, not '1x'"

done_testing
