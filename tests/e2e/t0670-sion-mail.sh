#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# sion-mail (issue 22, seed 000's "sion's own servers") against real peers: Dovecot (IMAP with
# STARTTLS and IMAPS, LMTP delivery, SASL for Postfix) and Postfix (SMTP submission with STARTTLS
# and SMTPS, authenticating through Dovecot's auth service, delivering to Dovecot by LMTP), both on
# 127.0.0.2, started by tests/e2e/mail_peers.sh with the tests' own authority (trusted through
# SSL_CERT_FILE) and stopped at exit. Checked: the seed's row (the five tools and their effects);
# settings missing, each call one line naming what to set; list_folders' special uses; messages
# saved with `doveadm save` (multipart, quoted-printable, base64, HTML only, encoded words,
# an attachment) found by each criterion of search_mail and read by read_mail; a reply drafted in
# Drafts with In-Reply-To and References; a message sent arriving in bob's inbox with Date and
# Message-ID and no Auto-Submitted, a copy in Sent, non-ASCII both ways; a wrong password, a server
# down, an untrusted certificate, a token refused and a failing token command, each one line, and
# the next call working; a good OAuth token (OAUTHBEARER) taken by both servers.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/t0620-helpers.bash"
. "$(dirname "$0")/mail_peers.sh"

command -v python3 >/dev/null || skip "python3 is not installed"
command -v dovecot >/dev/null || skip "dovecot is not installed (Debian packages dovecot-imapd, dovecot-lmtpd)"
command -v postfix >/dev/null || skip "postfix is not installed (Debian package postfix)"
[ "$(id -u)" -eq 0 ] || skip "Dovecot and Postfix are started as root"
fixtures="$SION_SOURCE_DIR/tests/fixtures/mail"
cd "$scratch" || exit 1

# serve: sion-mail with the request lines of stdin.
serve() { expect_exit 0 sion-mail; }
# text ID: the text of the answer to request ID.
text() { got "$1" content.0.text; }
expect_text_of() { text "$2" >"$scratch/got" 2>&1; expect_text "$scratch/got" "answer $2" "$1"; }
expect_error_of() { expect_py 'a('"$2"')["isError"] is True and a('"$2"')["content"][0]["text"] == '"$(python3 -c 'import json,sys; print(json.dumps(sys.argv[1]))' "$1")"; }

# -- The seed's row: five tools, their effects as the review takes them.
{
    req 1 initialize '{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}'
    req 2 tools/list
} | env -u MAIL_ADDRESS -u MAIL_IMAP_URL -u MAIL_SMTP_URL -u MAIL_PASSWORD sion-mail >"$scratch/out" 2>"$scratch/err" && ok || fail "sion-mail ended badly"
expect_py 'a(1)["serverInfo"]["name"] == "sion-mail"'
expect_py '[t["name"] for t in a(2)["tools"]] == ["list_folders", "search_mail", "read_mail", "draft_mail", "send_mail"]'
expect_py 'all(t["annotations"]["readOnlyHint"] is True and t["annotations"]["openWorldHint"] is False for t in a(2)["tools"][:3])'
expect_py '[(t["annotations"]["readOnlyHint"], t["annotations"]["destructiveHint"], t["annotations"]["idempotentHint"], t["annotations"]["openWorldHint"]) for t in a(2)["tools"][3:]] == [(False, False, False, False), (False, False, False, True)]'
expect_py 'a(2)["tools"][2]["inputSchema"]["required"] == ["uid"]'

# -- Not set up: every call one line naming what to set, and the server goes on.
{
    call 1 list_folders
    call 2 search_mail '{"subject":"x"}'
    call 3 send_mail '{"to":["bob@example.org"],"text":"x"}'
} | env -u MAIL_ADDRESS -u MAIL_IMAP_URL -u MAIL_SMTP_URL -u MAIL_PASSWORD -u MAIL_TOKEN_COMMAND sion-mail >"$scratch/out" 2>&1
expect_error_of "mail is not set up: MAIL_IMAP_URL is not set; keep it with sion agent credential add MAIL_IMAP_URL" 1
expect_error_of "mail is not set up: MAIL_IMAP_URL is not set; keep it with sion agent credential add MAIL_IMAP_URL" 2
expect_error_of "mail is not set up: MAIL_SMTP_URL is not set; keep it with sion agent credential add MAIL_SMTP_URL" 3

# -- The peers.
password="pw-$$-quince"
peers="$scratch/peers"
EXTRA_CLEANUP='mail_peers_stop "$peers"'
trap 'mail_peers_stop "$peers"; rm -rf "$scratch"' EXIT
chmod 711 "$scratch"
if ! mail_peers_start "$peers" "$password" 2>"$scratch/peers.err"; then
    fail "the mail peers did not start: $(cat "$scratch/peers.err")"
    done_testing
    exit 1
fi
ok
for m in mixed html alternative; do
    doveadm -c "$MAIL_PEERS_DOVECOT" save -u alice@example.org <"$fixtures/$m.eml" && ok || fail "doveadm save $m"
done
export SSL_CERT_FILE="$MAIL_PEERS_CA" MAIL_ADDRESS=alice@example.org MAIL_PASSWORD="$password"
export MAIL_IMAP_URL="imap://127.0.0.2:$MAIL_IMAP_PORT" MAIL_SMTP_URL="smtp://127.0.0.2:$MAIL_SMTP_PORT"
unset MAIL_USERNAME MAIL_TOKEN_COMMAND ALL_PROXY all_proxy
yesterday=$(date -u -d yesterday +%F)
tomorrow=$(date -u -d tomorrow +%F)

# -- Folders, search by each criterion, and reading (plain IMAP with STARTTLS).
{
    call 1 list_folders
    call 2 search_mail
    call 3 search_mail '{"from":"Müller"}'
    call 4 search_mail '{"to":"carol@example.net"}'
    call 5 search_mail '{"subject":"Köln"}'
    call 6 search_mail '{"text":"damson"}'
    call 7 search_mail "{\"since\":\"$yesterday\"}"
    call 8 search_mail "{\"before\":\"$yesterday\"}"
    call 9 search_mail "{\"before\":\"$tomorrow\",\"from\":\"bob\"}"
    call 10 search_mail '{"unseen":true,"limit":1,"offset":1}'
    call 11 read_mail '{"uid":1}'
    call 12 read_mail '{"uid":2}'
    call 13 read_mail '{"uid":3,"folder":"INBOX"}'
    call 14 search_mail '{"unseen":true}'
    call 15 search_mail '{"subject":"a \"quoted\" word\\\\ and ) paren"}'
    call 16 search_mail '{"subject":"x\r\nA1 LOGOUT"}'
    call 17 search_mail '{"since":"yesterday"}'
    call 18 read_mail '{"uid":99}'
    call 19 search_mail '{"folder":"Nowhere"}'
    call 20 read_mail '{"uid":1,"folder":"INBOX\r\nA1 DELETE Sent"}'
} | serve
expect_text_of 'INBOX: 3 messages, 3 unseen
Drafts (\Drafts): 0 messages, 0 unseen
Sent (\Sent): 0 messages, 0 unseen
Trash (\Trash): 0 messages, 0 unseen' 1
expect_text_of "3 messages match in 'INBOX', newest first; all shown:
uid 3 | Wed, 09 Dec 2026 08:00:00 +0000 | Bob <bob@example.org> | Plans for the harvest | unseen
uid 2 | Tue, 08 Dec 2026 09:00:00 +0000 | Newsletter <news@example.com> | Orchard weekly | unseen
uid 1 | Mon, 07 Dec 2026 10:00:00 +0100 | Jürgen Müller <juergen@example.org> | Grüße aus Köln | unseen" 2
expect_py 'a(3)["content"][0]["text"].startswith("1 message matches") and "uid 1 |" in a(3)["content"][0]["text"]'
expect_py 'a(4)["content"][0]["text"].startswith("1 message matches") and "uid 3 |" in a(4)["content"][0]["text"]'
expect_py 'a(5)["content"][0]["text"].startswith("1 message matches") and "uid 1 |" in a(5)["content"][0]["text"]'
expect_py 'a(6)["content"][0]["text"].startswith("1 message matches") and "uid 2 |" in a(6)["content"][0]["text"]'
expect_py 'a(7)["content"][0]["text"].startswith("3 messages match")'
expect_text_of "no messages match in 'INBOX'" 8
expect_py 'a(9)["content"][0]["text"].startswith("1 message matches") and "uid 3 |" in a(9)["content"][0]["text"]'
expect_text_of "3 messages match in 'INBOX', newest first; 2 to 2 shown:
uid 2 | Tue, 08 Dec 2026 09:00:00 +0000 | Newsletter <news@example.com> | Orchard weekly | unseen" 10
expect_text_of "From: Jürgen Müller <juergen@example.org>
To: alice@example.org
Date: Mon, 07 Dec 2026 10:00:00 +0100
Subject: Grüße aus Köln
Message-ID: <mixed-1@example.org>
Attachments: report.pdf (application/pdf, 15 bytes) — not given

Schöne Grüße: the quince report is attached.
+ a line that starts with a plus
* and one with a star" 11
expect_py 'a(12)["content"][0]["text"].endswith("Subject: Orchard weekly\nMessage-ID: <html-1@example.com>\n\n# Medlar season\n\nThe damson trees are ready.")'
expect_py '"To: alice@example.org, Carol <carol@example.net>\nCc: dave@example.net\n" in a(13)["content"][0]["text"] and a(13)["content"][0]["text"].endswith("\n\nWe pick the parsnips on Friday.")'
expect_py 'a(14)["content"][0]["text"].startswith("3 messages match")' # reading left them unseen
expect_text_of "no messages match in 'INBOX'" 15
expect_error_of "search_mail: search text cannot hold a line break or a NUL" 16
expect_error_of "search_mail: 'yesterday' is not a date: give YYYY-MM-DD" 17
expect_error_of "read_mail: no message of uid 99 in 'INBOX': search_mail gives the UIDs" 18
expect_error_of "read_mail: a folder's name cannot hold a control character" 20
expect_py 'a(19)["isError"] is True and a(19)["content"][0]["text"].startswith("cannot search mail: '"'"'imap://127.0.0.2:'"$MAIL_IMAP_PORT"''"'"' has no folder '"'"'Nowhere'"'"'")'

# -- A reply drafted: in Drafts, flagged \Draft, threaded; then sent over TLS (IMAPS, SMTPS).
{
    call 1 draft_mail '{"in_reply_to":3,"text":"Friday suits me — Grüße"}'
} | serve
expect_py 'a(1)["content"][0]["text"] == "draft saved in '"'"'Drafts'"'"' as uid 1, to bob@example.org: Re: Plans for the harvest (a reply to <alt-1@example.org>)"'
doveadm -c "$MAIL_PEERS_DOVECOT" fetch -u alice@example.org 'flags hdr' mailbox Drafts all >"$scratch/draft" 2>&1 && ok || fail "doveadm fetch Drafts"
expect_grep 'flags: \\Seen \\Draft' "$scratch/draft"
expect_grep '^In-Reply-To: <alt-1@example.org>' "$scratch/draft"
expect_grep '^References: <older-0@example.org> <alt-1@example.org>' "$scratch/draft"
expect_grep '^To: Bob <bob@example.org>' "$scratch/draft"

subject='Ünïcödé Grüße from Köln'
{
    call 1 send_mail "{\"to\":[\"Bob <bob@example.org>\"],\"subject\":\"$subject\",\"text\":\"Hallo Bob — schöne Grüße.\\nZeile zwei.\"}"
} | MAIL_IMAP_URL="imaps://127.0.0.2:$MAIL_IMAPS_PORT" MAIL_SMTP_URL="smtps://127.0.0.2:$MAIL_SMTPS_PORT" serve
expect_py 'a(1)["content"][0]["text"].startswith("sent to bob@example.org as <") and a(1)["content"][0]["text"].endswith("; a copy is in '"'"'Sent'"'"'")'
id=$(text 1 | sed -n 's/^sent to bob@example.org as <\([^>]*\)>.*/\1/p')
arrived() { [ -n "$(doveadm -c "$MAIL_PEERS_DOVECOT" search -u bob@example.org mailbox INBOX header Message-ID "$id" 2>/dev/null)" ]; }
wait_until 60 arrived && ok || fail "the message sent never reached bob's inbox: $(tail -5 "$peers/postfix/log")"
doveadm -c "$MAIL_PEERS_DOVECOT" fetch -u bob@example.org hdr mailbox INBOX header Message-ID "$id" >"$scratch/arrived" 2>&1
expect_grep "^Message-I[Dd]: <$id>" "$scratch/arrived"
expect_grep '^Date: ' "$scratch/arrived"
expect_grep '^From: alice@example.org' "$scratch/arrived"
expect_grep '^Subject: =\?UTF-8\?' "$scratch/arrived"
if grep -qi '^Auto-Submitted' "$scratch/arrived"; then fail "the message sent carries Auto-Submitted"; else ok; fi
doveadm -c "$MAIL_PEERS_DOVECOT" search -u alice@example.org mailbox Sent header Message-ID "$id" >"$scratch/sent" 2>&1
[ -s "$scratch/sent" ] && ok || fail "no copy in alice's Sent"
# Bob reads it back: the subject and text as they were written.
{
    call 1 search_mail '{"subject":"Grüße from Köln"}'
    call 2 read_mail '{"uid":1}'
} | MAIL_ADDRESS=bob@example.org serve
expect_py '"| alice@example.org | '"$subject"' | unseen" in a(1)["content"][0]["text"]'
expect_py 'a(2)["content"][0]["text"].endswith("Subject: '"$subject"'\nMessage-ID: <'"$id"'>\n\nHallo Bob — schöne Grüße.\nZeile zwei.")'

# -- An address with a display name: it logs in as the address, and sends from the name and address.
{
    call 1 list_folders
    call 2 draft_mail '{"to":["bob@example.org"],"subject":"named","text":"x"}'
} | MAIL_ADDRESS='Alice Liddell <alice@example.org>' serve
expect_py 'a(1)["content"][0]["text"].startswith("INBOX: 3 messages")'
expect_py 'a(2)["content"][0]["text"].startswith("draft saved in '"'"'Drafts'"'"' as uid 2")'
doveadm -c "$MAIL_PEERS_DOVECOT" fetch -u alice@example.org hdr mailbox Drafts uid 2 >"$scratch/named" 2>&1
expect_grep '^From: Alice Liddell <alice@example.org>' "$scratch/named"

# -- Through an HTTP proxy, as in sion's sandbox: ALL_PROXY names it, NO_PROXY exempts 127.0.0.1
# only, and IMAP and SMTP are tunnelled with CONNECT.
proxy_port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
python3 - "$proxy_port" "$scratch/proxy.log" <<'PY' &
import socket, sys, threading
listener = socket.create_server(("127.0.0.1", int(sys.argv[1])))
log = open(sys.argv[2], "a", buffering=1)
def pipe(a, b):
    try:
        while (data := a.recv(65536)):
            b.sendall(data)
        b.shutdown(socket.SHUT_WR)
    except OSError:
        pass
def serve(client):
    head = b""
    while b"\r\n\r\n" not in head:
        chunk = client.recv(4096)
        if not chunk:
            return
        head += chunk
    line = head.split(b"\r\n", 1)[0].decode()
    log.write(line + "\n")
    method, target, _ = line.split(" ", 2)
    host, port = target.rsplit(":", 1)
    server = socket.create_connection((host, int(port)))
    client.sendall(b"HTTP/1.1 200 Connection established\r\n\r\n")
    threading.Thread(target=pipe, args=(client, server), daemon=True).start()
    pipe(server, client)
while True:
    c, _ = listener.accept()
    threading.Thread(target=serve, args=(c,), daemon=True).start()
PY
proxy=$!
proxy_up() { python3 -c 'import socket,sys; socket.create_connection(("127.0.0.1", int(sys.argv[1])), 1).close()' "$proxy_port" 2>/dev/null; }
wait_until 20 proxy_up && ok || fail "the proxy never listened"
{
    call 1 search_mail '{"from":"Müller"}'
    call 2 send_mail '{"to":["bob@example.org"],"subject":"through the proxy","text":"tunnelled"}'
} | ALL_PROXY="http://127.0.0.1:$proxy_port" NO_PROXY=localhost,127.0.0.1,::1 serve
expect_py 'a(1)["content"][0]["text"].startswith("1 message matches")'
expect_py 'a(2)["content"][0]["text"].startswith("sent to bob@example.org as <")'
expect_grep "^CONNECT 127.0.0.2:$MAIL_IMAP_PORT HTTP/1.1\$" "$scratch/proxy.log"
expect_grep "^CONNECT 127.0.0.2:$MAIL_SMTP_PORT HTTP/1.1\$" "$scratch/proxy.log"
stop_job TERM "$proxy" 10

# -- What goes wrong: each one line, and the next call works.
# serve COMMAND...: sion-mail as a coprocess, its pid and descriptors kept before bash unsets
# them (it does once the process has ended, which may be before `wait` is reached).
serve() {
    coproc MAIL { "$@" 2>"$scratch/coproc.err"; }
    mail_pid=$MAIL_PID to_mail=${MAIL[1]} from_mail=${MAIL[0]}
}
# finish: closes its input and waits for it to end well.
finish() {
    exec {to_mail}>&-
    wait "$mail_pid" && ok || fail "sion-mail ended badly"
}
serve sion-mail
ask() { # ask REQUEST: one line to the running server, its answer's text in $scratch/out
    printf '%s\n' "$1" >&"$to_mail"
    local line=""
    IFS= read -r -t 60 line <&"$from_mail" || fail "no answer to $1"
    printf '%s\n' "$line" >"$scratch/out"
}
# A wrong password (the users' file changed under the server), then the right one again.
cp "$peers/dovecot/users" "$scratch/users.good"
sed -i "s/{PLAIN}$password/{PLAIN}other/" "$peers/dovecot/users"
# Dovecot reads the users' file again within a few seconds of a change: libcurl's own tool says when.
logs_in() { curl -s --max-time 10 "$MAIL_IMAP_URL/" -u "alice@example.org:$password" -X NOOP >/dev/null; }
refused() { ! logs_in; }
wait_until 30 refused && ok || fail "Dovecot never took the changed password"
ask "$(call 1 list_folders)"
expect_error_of "cannot list folders: 'imap://127.0.0.2:$MAIL_IMAP_PORT' refused the password of 'alice@example.org': Authentication failed; check MAIL_PASSWORD (and MAIL_USERNAME)" 1
cp "$scratch/users.good" "$peers/dovecot/users"
wait_until 30 logs_in && ok || fail "Dovecot never took the password back"
ask "$(call 2 search_mail '{"from":"Müller"}')"
expect_py 'a(2)["content"][0]["text"].startswith("1 message matches")'
if grep -q -- "$password" "$scratch/coproc.err"; then fail "the password was shown"; else ok; fi
finish

# A server down: nothing listens on the port; then a forwarder to Dovecot starts there.
down=$(mail_peers_ports 1)
serve env MAIL_IMAP_URL="imap://127.0.0.2:$down" sion-mail
ask "$(call 1 list_folders)"
# (libcurl's words say how many milliseconds it tried: not compared)
expect_py 'a(1)["isError"] is True and __import__("re").fullmatch(r"cannot list folders: cannot reach '"'"'imap://127\.0\.0\.2:'"$down"''"'"': Failed to connect to 127\.0\.0\.2 port '"$down"' after [0-9]+ ms: Couldn'"'"'t connect to server; is the server up, and MAIL_IMAP_URL right\?", a(1)["content"][0]["text"])' 
forward() { # forward PORT: from 127.0.0.2:PORT to Dovecot's IMAP, in the background
python3 - "$1" "$MAIL_IMAP_PORT" <<'PY' &
import socket, sys, threading
listener = socket.create_server(("127.0.0.2", int(sys.argv[1])))
def pipe(a, b):
    try:
        while (data := a.recv(65536)):
            b.sendall(data)
        b.shutdown(socket.SHUT_WR)
    except OSError:
        pass
while True:
    client, _ = listener.accept()
    server = socket.create_connection(("127.0.0.2", int(sys.argv[2])))
    threading.Thread(target=pipe, args=(client, server), daemon=True).start()
    threading.Thread(target=pipe, args=(server, client), daemon=True).start()
PY
forwarder=$!
wait_until 20 mail_peers_listening "$1" && ok || fail "the forwarder never listened"
}
forward "$down"
ask "$(call 2 list_folders)"
expect_py 'a(2)["content"][0]["text"].startswith("INBOX: 3 messages")'
# The connection kept between calls is cut (the forwarder ends, another starts): the next call
# connects again.
stop_job TERM "$forwarder" 10
forward "$down"
ask "$(call 3 search_mail '{"from":"Müller"}')"
expect_py 'a(3)["content"][0]["text"].startswith("1 message matches")'
finish
stop_job TERM "$forwarder" 10

# OAuth 2.0: a token from MAIL_TOKEN_COMMAND (OAUTHBEARER to Dovecot, and to Postfix through it);
# one the server refuses, then a good one: the command runs again for the next call.
mail_peers_token "$peers" alice@example.org >"$scratch/good.token"
echo not.a.token >"$scratch/token"
serve env -u MAIL_PASSWORD MAIL_TOKEN_COMMAND="cat '$scratch/token'" sion-mail
ask "$(call 1 list_folders)"
expect_error_of "cannot list folders: 'imap://127.0.0.2:$MAIL_IMAP_PORT' refused the token of 'alice@example.org': Authentication failed; check what MAIL_TOKEN_COMMAND prints (and MAIL_USERNAME)" 1
cp "$scratch/good.token" "$scratch/token"
ask "$(call 2 search_mail '{"from":"Müller"}')"
expect_py 'a(2)["content"][0]["text"].startswith("1 message matches")'
ask "$(call 3 send_mail '{"to":"bob@example.org","subject":"by token","text":"sent with a bearer token"}')"
expect_py 'a(3)["content"][0]["text"].startswith("sent to bob@example.org as <") and a(3)["content"][0]["text"].endswith("; a copy is in '"'"'Sent'"'"'")'
finish
expect_grep 'sasl_method=OAUTHBEARER, sasl_username=alice@example.org' "$peers/postfix/log"
if grep -qF -- "$(cat "$scratch/good.token")" "$scratch/coproc.err" "$scratch/out"; then fail "the token was shown"; else ok; fi

# An untrusted certificate, and a token command that fails: one line each, the server goes on.
{
    call 1 list_folders
    req 2 tools/list
} | env -u SSL_CERT_FILE MAIL_IMAP_URL="imaps://127.0.0.2:$MAIL_IMAPS_PORT" sion-mail >"$scratch/out" 2>&1
expect_py 'a(1)["isError"] is True and a(1)["content"][0]["text"].startswith("cannot list folders: cannot reach '"'"'imaps://127.0.0.2:'"$MAIL_IMAPS_PORT"''"'"' over TLS: SSL certificate problem") and "\n" not in a(1)["content"][0]["text"]'
expect_py 'len(a(2)["tools"]) == 5'
{
    call 1 search_mail
    call 2 draft_mail '{"text":"x","to":["not an address"]}'
} | env -u MAIL_PASSWORD MAIL_TOKEN_COMMAND='echo "no token for you" >&2; exit 3' sion-mail >"$scratch/out" 2>&1
expect_error_of "cannot search mail: MAIL_TOKEN_COMMAND failed: no token for you" 1
expect_error_of "draft_mail: 'not an address' is not a mail address" 2

done_testing
