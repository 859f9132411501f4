# SPDX-License-Identifier: MIT
# A Radicale CalDAV server for the tests and the benchmarks, on a loopback address other than
# 127.0.0.1 (127.0.0.3: inside sion's sandbox requests to 127.0.0.1 never take the proxy). Source it,
# then:
#
#   calendar_peer_start DIR [USER PASSWORD]
#       starts Radicale (htpasswd, plain) with its configuration, users, storage and log under DIR,
#       on a free port of 127.0.0.3, and waits (20 s at most) until it answers. Sets
#       CALENDAR_PEER_URL (http://127.0.0.3:PORT/), CALENDAR_PEER_PORT, CALENDAR_PEER_PID,
#       CALENDAR_PEER_STORE (the collections' directory) and prints the URL. The user is
#       alice / secret when none is given. With CALENDAR_PEER_CERT and CALENDAR_PEER_KEY set (PEM
#       files: a certificate for IP:127.0.0.3 and its key), it serves https, and the URL is
#       https://127.0.0.3:PORT/. Returns 1 (saying why on stderr) when it cannot start, 125 when
#       Radicale is not installed.
#   calendar_peer_stop
#       stops it (SIGTERM, then SIGKILL after 10 s) and waits for it.
#   calendar_peer_mkcalendar PATH [NAME]
#       MKCALENDAR of PATH ("/alice/work/") as the user, display name NAME: 0 when it answered 201.
#
# Nothing else is changed: the caller's traps are its own (call calendar_peer_stop from them).
# Needs python3 (a free port; MKCALENDAR) and radicale (Debian package radicale).

calendar_peer_start() {
    local dir=$1 user=${2:-alice} password=${3:-secret}
    command -v radicale >/dev/null || { echo "radicale is not installed (Debian package radicale)" >&2; return 125; }
    mkdir -p "$dir/collections" || return 1
    printf '%s:%s\n' "$user" "$password" >"$dir/users"
    CALENDAR_PEER_USER=$user CALENDAR_PEER_PASSWORD=$password
    local tries=0
    while [ "$tries" -lt 5 ]; do
        tries=$((tries + 1))
        CALENDAR_PEER_PORT=$(python3 -c 'import socket
s = socket.socket(); s.bind(("127.0.0.3", 0)); print(s.getsockname()[1]); s.close()') || return 1
        local scheme=http tls=""
        if [ -n "${CALENDAR_PEER_CERT:-}" ] && [ -n "${CALENDAR_PEER_KEY:-}" ]; then
            scheme=https
            tls="ssl = True
certificate = $CALENDAR_PEER_CERT
key = $CALENDAR_PEER_KEY"
        fi
        cat >"$dir/config" <<CONF
[server]
hosts = 127.0.0.3:$CALENDAR_PEER_PORT
max_connections = 20
timeout = 30
$tls
[auth]
type = htpasswd
htpasswd_filename = $dir/users
htpasswd_encryption = plain
delay = 0
[storage]
filesystem_folder = $dir/collections
[logging]
level = warning
CONF
        radicale --config "$dir/config" </dev/null >>"$dir/radicale.log" 2>&1 &
        CALENDAR_PEER_PID=$!
        local tenths=200
        while [ "$tenths" -gt 0 ]; do
            if ! kill -0 "$CALENDAR_PEER_PID" 2>/dev/null; then
                break # it ended: the port was taken after all, or the configuration is wrong
            fi
            if python3 -c 'import socket, sys
socket.create_connection(("127.0.0.3", int(sys.argv[1])), 1).close()' "$CALENDAR_PEER_PORT" 2>/dev/null; then
                CALENDAR_PEER_URL="$scheme://127.0.0.3:$CALENDAR_PEER_PORT/"
                CALENDAR_PEER_STORE="$dir/collections/collection-root"
                export CALENDAR_PEER_URL CALENDAR_PEER_PORT CALENDAR_PEER_PID CALENDAR_PEER_STORE
                echo "$CALENDAR_PEER_URL"
                return 0
            fi
            tenths=$((tenths - 1))
            sleep 0.1
        done
        if kill -0 "$CALENDAR_PEER_PID" 2>/dev/null; then
            kill -KILL "$CALENDAR_PEER_PID" 2>/dev/null
            wait "$CALENDAR_PEER_PID" 2>/dev/null
            echo "radicale did not answer on 127.0.0.3:$CALENDAR_PEER_PORT within 20 seconds" >&2
            tail -n 5 "$dir/radicale.log" >&2
            return 1
        fi
        wait "$CALENDAR_PEER_PID" 2>/dev/null
    done
    echo "radicale could not start on 127.0.0.3:" >&2
    tail -n 5 "$dir/radicale.log" >&2
    return 1
}

calendar_peer_stop() {
    [ -n "${CALENDAR_PEER_PID:-}" ] || return 0
    kill -TERM "$CALENDAR_PEER_PID" 2>/dev/null
    local tenths=100
    while kill -0 "$CALENDAR_PEER_PID" 2>/dev/null && [ "$tenths" -gt 0 ]; do
        tenths=$((tenths - 1))
        sleep 0.1
    done
    kill -KILL "$CALENDAR_PEER_PID" 2>/dev/null
    wait "$CALENDAR_PEER_PID" 2>/dev/null
    CALENDAR_PEER_PID=
    return 0
}

calendar_peer_mkcalendar() {
    python3 - "$CALENDAR_PEER_URL" "$CALENDAR_PEER_USER" "$CALENDAR_PEER_PASSWORD" "$1" "${2:-}" <<'PY'
import base64, sys, urllib.request
from xml.sax.saxutils import escape
url, user, password, path, name = sys.argv[1:]
body = ('<?xml version="1.0" encoding="utf-8"?><C:mkcalendar xmlns:D="DAV:" '
        'xmlns:C="urn:ietf:params:xml:ns:caldav"><D:set><D:prop>'
        + (f'<D:displayname>{escape(name)}</D:displayname>' if name else '')
        + '<C:supported-calendar-component-set><C:comp name="VEVENT"/></C:supported-calendar-component-set>'
        '</D:prop></D:set></C:mkcalendar>').encode()
req = urllib.request.Request(url.rstrip('/') + path, data=body, method='MKCALENDAR')
req.add_header('Authorization', 'Basic ' + base64.b64encode(f'{user}:{password}'.encode()).decode())
req.add_header('Content-Type', 'application/xml; charset=utf-8')
opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))
try:
    with opener.open(req, timeout=30) as r:
        sys.exit(0 if r.status == 201 else 1)
except Exception as e:
    print(f'MKCALENDAR {path}: {e}', file=sys.stderr)
    sys.exit(1)
PY
}
