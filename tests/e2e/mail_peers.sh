# SPDX-License-Identifier: MIT
# Real mail peers for the suites and the bench, sourced (not run): Dovecot for IMAP (plain with
# STARTTLS offered, and IMAPS), LMTP delivery and SASL authentication, and Postfix for SMTP
# submission (plain with STARTTLS offered, and SMTPS), authenticating through Dovecot's auth service
# and delivering by LMTP into Dovecot. Everything listens on 127.0.0.2 (not 127.0.0.1: a sandbox
# bypasses its proxy for 127.0.0.1), on free ports, with its configuration, state, mail and logs
# under one directory of the caller's; nothing of the system's own configuration is read or
# changed. Needs root (Dovecot and Postfix drop to their own users), openssl, python3.
#
#   . tests/e2e/mail_peers.sh
#   mail_peers_start DIR PASSWORD   # users alice@example.org and bob@example.org, both with PASSWORD;
#                                   # certificates by DIR/tls/ca.pem (trust it with SSL_CERT_FILE)
#   ... $MAIL_IMAP_PORT $MAIL_IMAPS_PORT $MAIL_SMTP_PORT $MAIL_SMTPS_PORT $MAIL_LMTP_PORT
#       $MAIL_PEERS_CA (the authority's certificate) and $MAIL_PEERS_DOVECOT (its configuration,
#       for `doveadm -c "$MAIL_PEERS_DOVECOT" save -u alice@example.org < message`)
#   mail_peers_token DIR USER       # prints an OAuth 2.0 access token (a JWT Dovecot validates
#                                   # itself) both servers take with OAUTHBEARER or XOAUTH2
#   mail_peers_stop DIR             # stops both; safe to call twice, or after a failed start
#
# DIR and its parents must be searchable by other users (Dovecot and Postfix drop to theirs): a
# suite gives its scratch directory mode 711 first. mail_peers_start returns non-zero, having said why on stderr, when a peer cannot start (within
# 20 s); it exits nothing, so a suite decides whether that is a skip or a failure. Running it as a
# program (`bash tests/e2e/mail_peers.sh start DIR PASSWORD`) prints the ports as NAME=VALUE lines
# and leaves the peers running; `bash tests/e2e/mail_peers.sh stop DIR` stops them.

mail_peers_host=127.0.0.2

# mail_peers_ports N: N free TCP ports of 127.0.0.2, a line each.
mail_peers_ports() {
    python3 - "$1" "$mail_peers_host" <<'PY'
import socket, sys
held = []
for _ in range(int(sys.argv[1])):
    s = socket.socket()
    s.bind((sys.argv[2], 0))
    held.append(s)
    print(s.getsockname()[1])
PY
}

# mail_peers_listening PORT: whether something accepts connections on 127.0.0.2:PORT.
mail_peers_listening() {
    python3 -c 'import socket,sys; socket.create_connection((sys.argv[1], int(sys.argv[2])), 1).close()' \
        "$mail_peers_host" "$1" 2>/dev/null
}

mail_peers_tls() { # DIR: DIR/tls/ca.pem and DIR/tls/server.{crt,key} for 127.0.0.2
    local d="$1/tls"
    mkdir -p "$d"
    openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -days 2 \
        -subj '/CN=sion mail test CA' -keyout "$d/ca.key" -out "$d/ca.pem" 2>"$d/err" &&
        openssl req -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -subj "/CN=$mail_peers_host" \
            -keyout "$d/server.key" -out "$d/server.csr" 2>>"$d/err" &&
        openssl x509 -req -in "$d/server.csr" -CA "$d/ca.pem" -CAkey "$d/ca.key" -CAcreateserial \
            -days 2 -out "$d/server.crt" \
            -extfile <(printf 'subjectAltName=IP:%s,DNS:localhost\nbasicConstraints=CA:FALSE\n' "$mail_peers_host") \
            2>>"$d/err" || { cat "$d/err" >&2; return 1; }
    chmod 644 "$d/server.crt" "$d/ca.pem"
    chmod 640 "$d/server.key" && chgrp postfix "$d/server.key" 2>/dev/null || true
}

mail_peers_dovecot_conf() { # DIR PASSWORD
    local d="$1/dovecot"
    mkdir -p "$d/mail" "$d/state"
    chown mail:mail "$d/mail"
    printf '%s:{PLAIN}%s\n' alice@example.org "$2" bob@example.org "$2" >"$d/users"
    chmod 644 "$d/users"
    cat >"$d/dovecot.conf" <<EOF
protocols = imap lmtp
listen = $mail_peers_host
base_dir = $d/run
state_dir = $d/state
log_path = $d/log
info_log_path = $d/log
instance_name = sion-mail-test-$$
ssl = yes
ssl_cert = <$1/tls/server.crt
ssl_key = <$1/tls/server.key
disable_plaintext_auth = no
auth_mechanisms = plain login oauthbearer xoauth2
first_valid_uid = 8
first_valid_gid = 8
default_login_user = dovenull
default_internal_user = dovecot
mail_location = maildir:$d/mail/%u
passdb {
  driver = passwd-file
  mechanisms = plain login
  args = scheme=PLAIN username_format=%u $d/users
}
passdb {
  driver = oauth2
  mechanisms = oauthbearer xoauth2
  args = $d/oauth2.conf
}
userdb {
  driver = static
  args = uid=mail gid=mail home=$d/mail/%u allow_all_users=yes
}
namespace inbox {
  inbox = yes
  separator = /
  mailbox Drafts {
    special_use = \\Drafts
    auto = subscribe
  }
  mailbox Sent {
    special_use = \\Sent
    auto = subscribe
  }
  mailbox Trash {
    special_use = \\Trash
    auto = subscribe
  }
}
service imap-login {
  inet_listener imap {
    address = $mail_peers_host
    port = $MAIL_IMAP_PORT
  }
  inet_listener imaps {
    address = $mail_peers_host
    port = $MAIL_IMAPS_PORT
    ssl = yes
  }
}
service lmtp {
  inet_listener lmtp {
    address = $mail_peers_host
    port = $MAIL_LMTP_PORT
  }
}
service auth {
  inet_listener {
    address = $mail_peers_host
    port = $MAIL_AUTH_PORT
  }
}
protocol lmtp {
  auth_username_format = %u
}
EOF
    # OAuth 2.0 bearer tokens: JWTs signed with HS256 under DIR/dovecot/keys/default/HS256/default
    # (base64), validated by Dovecot itself; mail_peers_token USER prints one.
    mkdir -p "$d/keys/default/HS256"
    head -c 32 /dev/urandom | base64 -w0 >"$d/keys/default/HS256/default"
    chmod -R a+rX "$d/keys"
    cat >"$d/oauth2.conf" <<EOF2
introspection_mode = local
local_validation_key_dict = fs:posix:prefix=$d/keys/
username_attribute = sub
EOF2
    MAIL_PEERS_DOVECOT="$d/dovecot.conf"
}

mail_peers_postfix_conf() { # DIR
    local d="$1/postfix"
    mkdir -p "$d/etc" "$d/queue" "$d/data"
    chown postfix "$d/data"
    cat >"$d/etc/main.cf" <<EOF
compatibility_level = 3.6
queue_directory = $d/queue
data_directory = $d/data
mail_owner = postfix
setgid_group = postdrop
myhostname = mail.example.org
mydomain = example.org
mydestination =
inet_interfaces = all
inet_protocols = ipv4
mynetworks = 127.0.0.2/32
maillog_file = $d/log
maillog_file_prefixes = $d
virtual_mailbox_domains = example.org
virtual_transport = lmtp:inet:$mail_peers_host:$MAIL_LMTP_PORT
smtpd_sasl_auth_enable = yes
smtpd_sasl_type = dovecot
smtpd_sasl_path = inet:$mail_peers_host:$MAIL_AUTH_PORT
smtpd_tls_cert_file = $1/tls/server.crt
smtpd_tls_key_file = $1/tls/server.key
smtpd_tls_security_level = may
smtpd_tls_auth_only = no
smtpd_relay_restrictions = permit_sasl_authenticated, reject
smtpd_recipient_restrictions = permit_sasl_authenticated, reject
alias_maps =
alias_database =
biff = no
EOF
    cat >"$d/etc/master.cf" <<EOF
$mail_peers_host:$MAIL_SMTP_PORT inet n - n - - smtpd
$mail_peers_host:$MAIL_SMTPS_PORT inet n - n - - smtpd -o smtpd_tls_wrappermode=yes
pickup    unix  n       -       n       60      1       pickup
cleanup   unix  n       -       n       -       0       cleanup
qmgr      unix  n       -       n       300     1       qmgr
rewrite   unix  -       -       n       -       -       trivial-rewrite
bounce    unix  -       -       n       -       0       bounce
defer     unix  -       -       n       -       0       bounce
trace     unix  -       -       n       -       0       bounce
verify    unix  -       -       n       -       1       verify
flush     unix  n       -       n       1000?   0       flush
proxymap  unix  -       -       n       -       -       proxymap
smtp      unix  -       -       n       -       -       smtp
relay     unix  -       -       n       -       -       smtp
showq     unix  n       -       n       -       -       showq
error     unix  -       -       n       -       -       error
retry     unix  -       -       n       -       -       error
discard   unix  -       -       n       -       -       discard
lmtp      unix  -       -       n       -       -       lmtp
anvil     unix  -       -       n       -       1       anvil
scache    unix  -       -       n       -       1       scache
postlog   unix-dgram n  -       n       -       1       postlogd
tlsmgr    unix  -       -       n       1000?   1       tlsmgr
EOF
    postfix -c "$d/etc" set-permissions >/dev/null 2>&1 || true
    postfix -c "$d/etc" check 2>"$d/check.err" || { cat "$d/check.err" >&2; return 1; }
}

# mail_peers_token DIR USER: an OAuth 2.0 access token for USER that Dovecot (and Postfix through
# it) takes, valid for an hour.
mail_peers_token() {
    python3 - "$1/dovecot/keys/default/HS256/default" "$2" <<'PY'
import base64, hashlib, hmac, json, sys, time
key = base64.b64decode(open(sys.argv[1]).read())
b64 = lambda b: base64.urlsafe_b64encode(b).rstrip(b"=").decode()
now = int(time.time())
head = b64(json.dumps({"alg": "HS256", "typ": "JWT", "kid": "default"}).encode())
body = b64(json.dumps({"sub": sys.argv[2], "iat": now, "nbf": now, "exp": now + 3600}).encode())
sig = b64(hmac.new(key, f"{head}.{body}".encode(), hashlib.sha256).digest())
print(f"{head}.{body}.{sig}")
PY
}

mail_peers_start() { # DIR PASSWORD
    local dir="$1" ports
    command -v dovecot >/dev/null || { echo "mail_peers: dovecot is not installed (Debian package dovecot-imapd)" >&2; return 1; }
    command -v postfix >/dev/null || { echo "mail_peers: postfix is not installed (Debian package postfix)" >&2; return 1; }
    [ "$(id -u)" -eq 0 ] || { echo "mail_peers: Dovecot and Postfix are started as root" >&2; return 1; }
    mkdir -p "$dir" && chmod 755 "$dir"
    if ! runuser -u postfix -- test -x "$dir" 2>/dev/null; then
        echo "mail_peers: '$dir' cannot be reached by the users postfix and mail: give its parents mode 711" >&2
        return 1
    fi
    ports=$(mail_peers_ports 6) || return 1
    read -r MAIL_IMAP_PORT MAIL_IMAPS_PORT MAIL_SMTP_PORT MAIL_SMTPS_PORT MAIL_LMTP_PORT MAIL_AUTH_PORT <<<"$(echo $ports)"
    export MAIL_IMAP_PORT MAIL_IMAPS_PORT MAIL_SMTP_PORT MAIL_SMTPS_PORT MAIL_LMTP_PORT MAIL_AUTH_PORT
    mail_peers_tls "$dir" || return 1
    MAIL_PEERS_CA="$dir/tls/ca.pem"
    mail_peers_dovecot_conf "$dir" "$2"
    export MAIL_PEERS_CA MAIL_PEERS_DOVECOT
    dovecot -c "$MAIL_PEERS_DOVECOT" </dev/null >/dev/null 2>"$dir/dovecot/start.err" ||
        { cat "$dir/dovecot/start.err" >&2; return 1; }
    mail_peers_postfix_conf "$dir" || return 1
    postfix -c "$dir/postfix/etc" start </dev/null >/dev/null 2>"$dir/postfix/start.err" ||
        { cat "$dir/postfix/start.err" >&2; return 1; }
    local port tenths
    for port in "$MAIL_IMAP_PORT" "$MAIL_IMAPS_PORT" "$MAIL_LMTP_PORT" "$MAIL_SMTP_PORT" "$MAIL_SMTPS_PORT"; do
        tenths=200
        until mail_peers_listening "$port"; do
            tenths=$((tenths - 1))
            [ "$tenths" -gt 0 ] || { echo "mail_peers: nothing listens on $mail_peers_host:$port after 20 s" >&2; return 1; }
            sleep 0.1
        done
    done
}

# mail_peers_alive PID: whether PID runs (a zombie left for an init that does not reap does not).
mail_peers_alive() {
    local stat
    stat=$(cat "/proc/$1/stat" 2>/dev/null) || return 1
    stat=${stat##*) }
    [ "${stat%% *}" != Z ]
}

mail_peers_stop() { # DIR
    local dir="$1" pid
    [ -d "$dir/postfix/etc" ] && postfix -c "$dir/postfix/etc" stop >/dev/null 2>&1
    if [ -f "$dir/dovecot/run/master.pid" ]; then
        pid=$(cat "$dir/dovecot/run/master.pid")
        kill "$pid" 2>/dev/null
        local tenths=100
        while mail_peers_alive "$pid" && [ "$tenths" -gt 0 ]; do
            tenths=$((tenths - 1))
            sleep 0.1
        done
        kill -KILL "$pid" 2>/dev/null
        rm -f "$dir/dovecot/run/master.pid"
    fi
    return 0
}

if [ "${BASH_SOURCE[0]}" = "$0" ]; then
    case "${1:-}" in
    start)
        mail_peers_start "$2" "$3" || exit 1
        for v in MAIL_IMAP_PORT MAIL_IMAPS_PORT MAIL_SMTP_PORT MAIL_SMTPS_PORT MAIL_LMTP_PORT MAIL_PEERS_CA MAIL_PEERS_DOVECOT; do
            printf '%s=%s\n' "$v" "${!v}"
        done
        ;;
    stop) mail_peers_stop "$2" ;;
    *)
        echo "usage: bash tests/e2e/mail_peers.sh start DIR PASSWORD | stop DIR" >&2
        exit 64
        ;;
    esac
fi
