#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# sion's own servers in one session (seed 000, "sion's own servers"): mail, calendar and documents
# put on the shelf with `sion agent mcp add --first-party`, their settings kept as credentials, each
# run in bubblewrap and reaching its real peer through the sandbox's proxy (Dovecot and Postfix on
# 127.0.0.2 over TLS by the suite's own authority, Radicale on 127.0.0.3); a session on a scripted
# model reads mail, lists and makes events, searches and writes documents, drafts a reply and sends
# mail: reads taint, a send on a tainted session needs one level more, and a send repeated is
# answered from the journal and never made twice. No password is anywhere a session keeps.
. "$(dirname "$0")/lib.sh"
need_bwrap
command -v python3 >/dev/null || skip "python3 is not installed"
command -v sqlite3 >/dev/null || skip "sqlite3 is not installed (Debian package sqlite3)"
command -v doveadm >/dev/null || skip "dovecot is not installed (Debian packages dovecot-imapd, dovecot-lmtpd)"
command -v radicale >/dev/null || skip "radicale is not installed (Debian package radicale)"
[ "$(id -u)" -eq 0 ] || skip "Dovecot and Postfix are started as root"
. "$SION_SOURCE_DIR/tests/e2e/mail_peers.sh"
. "$SION_SOURCE_DIR/tests/e2e/calendar_peer.sh"

cd "$scratch" || exit 1
mail_password='mail-pw-3c1f9a07e2'
cal_password='cal-pw-8d24b61f05'
trap 'mail_peers_stop "$scratch/mail" >/dev/null 2>&1; calendar_peer_stop >/dev/null 2>&1; rm -rf "$scratch"' EXIT
chmod 711 "$scratch" # Dovecot and Postfix reach their directories as their own users
mail_peers_start "$scratch/mail" "$mail_password" >/dev/null || { fail "the mail peers did not start"; done_testing; exit 1; }
calendar_peer_start "$scratch/cal" alice "$cal_password" >/dev/null || { fail "Radicale did not start"; done_testing; exit 1; }
calendar_peer_mkcalendar /alice/work/ Work || fail "MKCALENDAR /alice/work/"

# A message in alice's inbox, from outside.
cat >review.eml <<'EOF'
From: Bob <bob@example.org>
To: Alice <alice@example.org>
Subject: Quarterly review
Date: Mon, 07 Dec 2026 09:00:00 +0000
Message-ID: <review-1@example.org>
Content-Type: text/plain; charset=utf-8

Can we meet on Thursday at 10:00 to go through the figures?
EOF
doveadm -c "$MAIL_PEERS_DOVECOT" save -u alice@example.org <review.eml || fail "doveadm save"
mkdir -p docs trust
printf '# Figures\n\nThe quarterly review covers revenue and the hiring plan.\n' >docs/figures.md
cp "$MAIL_PEERS_CA" trust/ca.pem

# The settings: the passwords kept sealed, the rest in the environment; the authority's certificate
# shown to the servers' sandboxes.
printf '%s\n' "$mail_password" | expect_exit 0 sion agent credential add MAIL_PASSWORD
printf '%s\n' "$cal_password" | expect_exit 0 sion agent credential add CALDAV_PASSWORD
export MAIL_ADDRESS=alice@example.org
export MAIL_IMAP_URL="imaps://127.0.0.2:$MAIL_IMAPS_PORT" MAIL_SMTP_URL="smtps://127.0.0.2:$MAIL_SMTPS_PORT"
export CALDAV_URL="$CALENDAR_PEER_URL" CALDAV_USERNAME=alice
export SSL_CERT_FILE="$scratch/trust/ca.pem"
version=$(sion-mail --version | cut -d' ' -f2)

expect_exit 0 timeout 60 sion agent mcp add mail --first-party mail --sandbox-read trust
expect_grep "^MCP server mail \\(sion-mail $version, protocol 2025-11-25\\): reviewed tools$" "$scratch/out"
expect_grep '^list_folders \(read\): ' "$scratch/out"
expect_grep '^search_mail \(read\): ' "$scratch/out"
expect_grep '^read_mail \(read\): ' "$scratch/out"
expect_grep '^draft_mail \(write\): ' "$scratch/out"
expect_grep '^send_mail \(external\): ' "$scratch/out"
expect_exit 0 timeout 60 sion agent mcp add cal --first-party calendar
expect_grep '^list_calendars \(read\): ' "$scratch/out"
expect_grep '^list_events \(read\): ' "$scratch/out"
expect_grep '^create_event \(write\): ' "$scratch/out"
expect_grep '^delete_event \(write\): ' "$scratch/out"
expect_exit 0 timeout 60 sion agent mcp add docs --first-party documents --dir docs
expect_exit 0 sion agent mcp list
expect_grep "^mail: $SION_BIN/sion-mail, in bwrap$" "$scratch/out"
expect_grep "^cal: $SION_BIN/sion-calendar, in bwrap$" "$scratch/out"

# The session: read, list, make, search, write, draft; then a send, which a tainted session at L5
# may not make on its own.
mkdir -p scripts work
cat >scripts/day.json <<'EOF'
{"turns": [
  {"calls": [{"tool": "mail_search_mail", "input": {"subject": "review"}}]},
  {"calls": [{"tool": "mail_read_mail", "input": {"uid": 1}}]},
  {"calls": [{"tool": "cal_list_events", "input": {"start": "2026-12-10", "end": "2026-12-11", "time_zone": "Europe/Berlin"}}]},
  {"calls": [{"tool": "cal_create_event", "input": {"summary": "Quarterly review", "start": "2026-12-10T10:00:00", "end": "2026-12-10T11:00:00", "time_zone": "Europe/Berlin"}}]},
  {"calls": [{"tool": "docs_search_documents", "input": {"query": "quarterly review"}}]},
  {"calls": [{"tool": "docs_write_document", "input": {"path": "notes/review.md", "text": "# Review\n\nThursday 10:00, the figures.\n"}}]},
  {"calls": [{"tool": "mail_draft_mail", "input": {"in_reply_to": 1, "text": "Thursday at 10:00 suits me."}}]},
  {"calls": [{"tool": "mail_send_mail", "input": {"to": ["bob@example.org"], "subject": "Figures for Thursday", "text": "The figures are in the notes."}}]},
  {"text": "planned"}]}
EOF
cat >scripts/send.json <<'EOF'
{"turns": [
  {"calls": [{"tool": "mail_send_mail", "input": {"to": ["bob@example.org"], "subject": "Figures for Thursday", "text": "The figures are in the notes."}}]},
  {"calls": [{"tool": "mail_send_mail", "input": {"to": ["bob@example.org"], "subject": "Figures for Thursday", "text": "The figures are in the notes."}}]},
  {"text": "sent"}]}
EOF
expect_exit 0 sion agent create coder && agent=$(cat "$scratch/out")
run() { timeout 180 setsid -w sion agent run coder "${agent:0:8}" --workspace work --mcp mail --mcp cal --mcp docs "$@" </dev/null; }
expect_exit 0 run --task 'Plan the review.' --model script:scripts/day.json --autonomy L5 --json
cp "$scratch/out" day.jsonl
python3 - day.jsonl <<'PY' && ok || fail "the day's session did not go as it should"
import json, sys
events = [json.loads(l) for l in open(sys.argv[1])]
results = [e for e in events if e["event"] == "result"]
got = [(r["tool"], r["state"]) for r in results]
assert got == [("mail_search_mail", "ok"), ("mail_read_mail", "ok"), ("cal_list_events", "ok"),
               ("cal_create_event", "ok"), ("docs_search_documents", "ok"),
               ("docs_write_document", "ok"), ("mail_draft_mail", "ok"),
               ("mail_send_mail", "refused")], got
text = {r["tool"]: r["text"] for r in results}
assert "Quarterly review" in text["mail_search_mail"], text["mail_search_mail"]
assert "Can we meet on Thursday at 10:00" in text["mail_read_mail"], text["mail_read_mail"]
assert "figures.md" in text["docs_search_documents"], text["docs_search_documents"]
# Mail read taints; the send is external, and a tainted session needs L6 for it.
assert results[0]["tainted"] is True
assert "tainted" in text["mail_send_mail"], text["mail_send_mail"]
calls = {e["tool"]: e for e in events if e["event"] == "call"}
assert calls["mail_read_mail"]["effect"] == "read"
assert calls["cal_create_event"]["effect"] == "write"
assert calls["mail_draft_mail"]["effect"] == "write"
assert calls["mail_send_mail"]["effect"] == "external"
end = events[-1]
assert end["event"] == "end" and end["state"] == "done" and end["tainted"] is True, end
PY
session=$(python3 -c 'import json,sys; print(next(json.loads(l)["session"] for l in open(sys.argv[1]) if json.loads(l)["event"] == "session"))' day.jsonl)

# What the servers did, as their peers and the folder have it.
[ "$(cat docs/notes/review.md)" = "# Review

Thursday 10:00, the figures." ] && ok || fail "write_document did not write the note"
grep -rl --include='*.ics' --exclude-dir=.Radicale.cache 'SUMMARY:Quarterly review' "$CALENDAR_PEER_STORE/alice/work/" >/dev/null && ok || fail "the event is not in Radicale's store"
grep -rh --include='*.ics' --exclude-dir=.Radicale.cache '^DTSTART' "$CALENDAR_PEER_STORE/alice/work/" | grep -q 'TZID=Europe/Berlin:20261210T100000' && ok ||
    fail "the event does not begin at 10:00 in Europe/Berlin"
doveadm -c "$MAIL_PEERS_DOVECOT" fetch -u alice@example.org hdr mailbox Drafts all >drafts.txt || fail "doveadm fetch Drafts"
grep -q '^In-Reply-To: <review-1@example.org>' drafts.txt && ok || fail "the draft is not a reply to the review mail"
grep -q '^Subject: Re: Quarterly review' drafts.txt && ok || fail "the draft's subject is not the reply's"
[ "$(doveadm -c "$MAIL_PEERS_DOVECOT" search -u bob@example.org mailbox INBOX all | wc -l)" -eq 0 ] && ok ||
    fail "the refused send reached bob"

# The send, at L6: made once; the same send again is answered from the journal.
expect_exit 0 run --task 'Send it.' --model script:scripts/send.json --autonomy L6 --session "$session" --json
python3 - "$scratch/out" <<'PY' && ok || fail "the send was not made once and answered from the journal once"
import json, sys
results = [json.loads(l) for l in open(sys.argv[1])]
results = [e for e in results if e["event"] == "result"]
assert [(r["tool"], r["state"]) for r in results] == [("mail_send_mail", "ok"), ("mail_send_mail", "ok")], results
assert results[0]["text"].startswith("sent to bob@example.org as <"), results
assert results[1]["text"] == "[made before in this session: not made again; its answer then]\n" + results[0]["text"], results
PY
bobs() { doveadm -c "$MAIL_PEERS_DOVECOT" search -u bob@example.org mailbox INBOX all | wc -l; }
arrived() { [ "$(bobs)" -ge 1 ]; }
wait_until 20 arrived ||
    fail "the mail sent did not arrive in bob's inbox"
sleep 1
[ "$(bobs)" -eq 1 ] && ok ||
    fail "bob's inbox does not hold exactly one message: the send was made twice"
doveadm -c "$MAIL_PEERS_DOVECOT" fetch -u bob@example.org hdr mailbox INBOX all >sent.txt || fail "doveadm fetch INBOX"
grep -q '^Subject: Figures for Thursday' sent.txt && ok || fail "the mail sent has not its subject"
grep -qi '^Auto-Submitted' sent.txt && fail "the mail sent carries Auto-Submitted" || ok
grep -qi '^Message-ID: <' sent.txt && ok || fail "the mail sent has no Message-ID"

# No password anywhere the session keeps, nor in what it printed.
sqlite3 "$SION_HOME/sion.db" .dump >db.txt
expect_exit 0 sion agent show "$session" --json
cat "$scratch/out" >>db.txt
for secret in "$mail_password" "$cal_password"; do
    grep -rqF "$secret" db.txt day.jsonl work docs && fail "a password is where the session keeps things" || ok
done

done_testing
