#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# sion-calendar (issue 22, seed 000's "sion's own servers") against a real Radicale on 127.0.0.3:
# the four tools of the seed's table with their effects; discovery from the bare server, from the
# principal and from one calendar; calendars made with MKCALENDAR listed; a new event found; a
# weekly event in Europe/Berlin across the October change of daylight saving time (the same hour
# there, an hour later in UTC); an all-day event; EXDATE, RDATE and an overriding RECURRENCE-ID;
# non-ASCII text both ways; delete_event and the server's store agreeing; what list_events keeps
# by WebDAV sync seeing another client's PUT, change and DELETE at the next call, a token the
# server no longer knows, and a server with no sync asked the range at every call; and the errors — a
# wrong password, a server down (and back), a token command that fails, a server that is no CalDAV
# server, XML and iCalendar that cannot be read, an object changed before its DELETE — each one
# line with isError, the server answering after; and the environment's proxy (127.0.0.3 is not
# exempt, as in sion's sandbox) for http and, through CONNECT, for https checked against
# SSL_CERT_FILE.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/calendar_peer.sh"

command -v python3 >/dev/null || skip "python3 is not installed"
command -v radicale >/dev/null || skip "radicale is not installed (Debian package radicale)"

cd "$scratch" || exit 1
trap 'calendar_peer_stop; for p in ${hostile_pid:-} ${proxy_pid:-}; do kill "$p" 2>/dev/null; done; rm -rf "$scratch"' EXIT
calendar_peer_start "$scratch/radicale" alice 'pw-Zebra-42' >"$scratch/url" || {
    code=$?
    [ "$code" -eq 125 ] && skip "radicale is not installed"
    fail "radicale did not start"
    done_testing
    exit 1
}
url=$(cat "$scratch/url")
calendar_peer_mkcalendar /alice/work/ Work && ok || fail "MKCALENDAR /alice/work/"
calendar_peer_mkcalendar /alice/home/ 'Zuhause Ü' && ok || fail "MKCALENDAR /alice/home/"
store="$CALENDAR_PEER_STORE/alice"

export CALDAV_URL=$url CALDAV_USERNAME=alice CALDAV_PASSWORD=pw-Zebra-42
unset CALDAV_TOKEN_COMMAND http_proxy https_proxy HTTPS_PROXY all_proxy ALL_PROXY no_proxy NO_PROXY

req() { printf '{"jsonrpc":"2.0","id":%s,"method":"%s","params":%s}\n' "$1" "$2" "${3:-{\}}"; }
call() { req "$1" tools/call "{\"name\":\"$2\",\"arguments\":${3:-{\}}}"; }
init() { req 0 initialize '{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}'; }
serve() { expect_exit 0 sion-calendar; }
# expect_py EXPR: a Python expression about the last serve's answers is true; a(ID) is the answer
# to request ID, t(ID) its text, e(ID) whether it is an error.
expect_py() {
    python3 - "$scratch/out" "$1" <<'PY' && ok || { fail "not true of the last serve: $1"; sed 's/^/  | /' "$scratch/out" >&2; }
import json, sys
messages = [json.loads(line) for line in open(sys.argv[1]) if line.strip()]
def a(rid):
    m = next(m for m in messages if m.get("id") == rid)
    return {"error": m["error"]} if "error" in m else m["result"]
def t(rid):
    return a(rid)["content"][0]["text"]
def e(rid):
    return a(rid).get("isError", False)
if not eval(sys.argv[2]):
    sys.exit(1)
PY
}
# text ID: the text of the answer to request ID in the last serve.
text() {
    python3 - "$scratch/out" "$1" <<'PY'
import json, sys
for line in open(sys.argv[1]):
    m = json.loads(line)
    if m.get("id") == int(sys.argv[2]):
        print(m["result"]["content"][0]["text"])
PY
}
expect_text_of() { text "$2" >"$scratch/got"; expect_text "$scratch/got" "answer $2" "$1"; }

# -- The seed's row: the four tools, and what their annotations make of them.
{ init; req 1 tools/list; } | serve
expect_py 'a(0)["serverInfo"]["name"] == "sion-calendar" and a(0)["protocolVersion"] == "2025-06-18"'
expect_py '[x["name"] for x in a(1)["tools"]] == ["list_calendars", "list_events", "create_event", "delete_event"]'
expect_py '{x["name"]: x["annotations"] for x in a(1)["tools"]}["list_calendars"] == {"title": "List calendars", "readOnlyHint": True, "openWorldHint": False}'
expect_py '{x["name"]: x["annotations"] for x in a(1)["tools"]}["list_events"] == {"title": "List events", "readOnlyHint": True, "openWorldHint": False}'
expect_py '{x["name"]: x["annotations"] for x in a(1)["tools"]}["create_event"] == {"title": "Create an event", "readOnlyHint": False, "destructiveHint": False, "idempotentHint": False, "openWorldHint": False}'
expect_py '{x["name"]: x["annotations"] for x in a(1)["tools"]}["delete_event"] == {"title": "Delete an event", "readOnlyHint": False, "destructiveHint": True, "idempotentHint": False, "openWorldHint": False}'
expect_py '{x["name"]: x["inputSchema"] for x in a(1)["tools"]}["create_event"]["required"] == ["summary", "start"]'
expect_py '{x["name"]: x["inputSchema"] for x in a(1)["tools"]}["delete_event"]["required"] == ["uid"]'

# -- Discovery: from the bare server (/.well-known/caldav), from the principal, from a calendar.
calendars="Zuhause Ü (path /alice/home/; holds VEVENT)
Work (path /alice/work/; holds VEVENT)"
{ init; call 1 list_calendars; } | serve
expect_text_of "$calendars" 1
{ init; call 1 list_calendars; } | CALDAV_URL=${url%/} serve
expect_text_of "$calendars" 1
{ init; call 1 list_calendars; } | CALDAV_URL=${url}alice/ serve
expect_text_of "$calendars" 1
{ init; call 1 list_calendars; } | CALDAV_URL=${url}alice/work/ serve
expect_text_of "Work (path /alice/work/; holds VEVENT)" 1

# -- A new event, found; a weekly one in Berlin across the change of 25 October 2026; an all-day
# one; non-ASCII text from the model to the server.
{
    init
    call 1 create_event '{"calendar":"work","summary":"Kick-off","start":"2026-10-20T14:30:00Z","duration":"PT45M","location":"Room 4"}'
    call 2 create_event '{"calendar":"Work","summary":"Weekly sync","start":"2026-10-15T10:00:00","end":"2026-10-15T11:00:00","time_zone":"Europe/Berlin","rrule":"FREQ=WEEKLY;COUNT=4"}'
    call 3 create_event '{"calendar":"/alice/home","summary":"Heiligabend","start":"2026-12-24","all_day":true}'
    call 4 create_event '{"calendar":"/alice/home/","summary":"Café ☕ mit Jürgen — 東京","start":"2026-10-21T18:00:00+02:00","time_zone":"Europe/Berlin","location":"Straße 5"}'
} | serve
expect_py 'all(not e(i) for i in range(1, 5))'
expect_py 't(1).startswith("created event '"'"'Kick-off'"'"' in Work: uid ") and ", href /alice/work/" in t(1)'
uid_kickoff=$(text 1 | sed -n 's/.*: uid \([^,]*\), href.*/\1/p')
uid_weekly=$(text 2 | sed -n 's/.*: uid \([^,]*\), href.*/\1/p')
uid_cafe=$(text 4 | sed -n 's/.*: uid \([^,]*\), href.*/\1/p')
[ -n "$uid_kickoff" ] && [ -n "$uid_weekly" ] && [ -n "$uid_cafe" ] && ok || fail "no uid in the answers"
[ -f "$store/work/$uid_kickoff.ics" ] && ok || fail "the store has no $uid_kickoff.ics"
expect_grep '^SUMMARY:Café ☕ mit Jürgen — 東京' "$store/home/$uid_cafe.ics"
expect_grep '^DTSTART;TZID=Europe/Berlin:20261015T100000' "$store/work/$uid_weekly.ics"
expect_grep '^TZID:Europe/Berlin' "$store/work/$uid_weekly.ics"

{
    init
    call 1 list_events '{"start":"2026-10-01","end":"2027-01-01"}'
    call 2 list_events '{"calendar":"work","start":"2026-10-22","end":"2026-10-30","time_zone":"Europe/Berlin"}'
    call 3 list_events '{"calendar":"Zuhause Ü","start":"2026-12-24T12:00:00Z","end":"2026-12-24T13:00:00Z"}'
    call 4 list_events '{"start":"2026-10-01","end":"2027-01-01","limit":2}'
} | serve
expect_text_of "7 events from 2026-10-01 00:00 to 2027-01-01 00:00 UTC:
2026-10-15 10:00 to 11:00 Europe/Berlin (08:00 to 09:00 UTC): Weekly sync; recurring; uid $uid_weekly; calendar Work
2026-10-20 14:30 to 15:15 UTC: Kick-off; at Room 4; uid $uid_kickoff; calendar Work
2026-10-21 18:00 to 19:00 Europe/Berlin (16:00 to 17:00 UTC): Café ☕ mit Jürgen — 東京; at Straße 5; uid $uid_cafe; calendar Zuhause Ü
2026-10-22 10:00 to 11:00 Europe/Berlin (08:00 to 09:00 UTC): Weekly sync; recurring; uid $uid_weekly; calendar Work
2026-10-29 10:00 to 11:00 Europe/Berlin (09:00 to 10:00 UTC): Weekly sync; recurring; uid $uid_weekly; calendar Work
2026-11-05 10:00 to 11:00 Europe/Berlin (09:00 to 10:00 UTC): Weekly sync; recurring; uid $uid_weekly; calendar Work
2026-12-24 all day: Heiligabend; uid $(text 1 | sed -n 's/.*Heiligabend; uid \([^;]*\);.*/\1/p'); calendar Zuhause Ü" 1
expect_text_of "2 events from 2026-10-22 00:00 to 2026-10-30 00:00 Europe/Berlin:
2026-10-22 10:00 to 11:00 Europe/Berlin (08:00 to 09:00 UTC): Weekly sync; recurring; uid $uid_weekly; calendar Work
2026-10-29 10:00 to 11:00 Europe/Berlin (09:00 to 10:00 UTC): Weekly sync; recurring; uid $uid_weekly; calendar Work" 2
expect_py 't(3).startswith("1 event from 2026-12-24 12:00 to 2026-12-24 13:00 UTC:\n2026-12-24 all day: Heiligabend; uid ")'
expect_py 't(4).endswith("\n… and 5 more: narrow the range, or raise limit") and len(t(4).split("\n")) == 4'

# -- An object written by another client: a daily event in New York with EXDATE, RDATE and an
# instance moved by RECURRENCE-ID; non-ASCII text from the server to the model.
python3 - "$url" >"$scratch/put.status" <<'PY'
import base64, sys, urllib.request
ics = """BEGIN:VCALENDAR
VERSION:2.0
PRODID:-//t0680//EN
BEGIN:VTIMEZONE
TZID:America/New_York
BEGIN:DAYLIGHT
TZOFFSETFROM:-0500
TZOFFSETTO:-0400
TZNAME:EDT
DTSTART:20070311T020000
RRULE:FREQ=YEARLY;BYMONTH=3;BYDAY=2SU
END:DAYLIGHT
BEGIN:STANDARD
TZOFFSETFROM:-0400
TZOFFSETTO:-0500
TZNAME:EST
DTSTART:20071104T020000
RRULE:FREQ=YEARLY;BYMONTH=11;BYDAY=1SU
END:STANDARD
END:VTIMEZONE
BEGIN:VEVENT
UID:standup-ny
DTSTAMP:20261001T000000Z
DTSTART;TZID=America/New_York:20261030T091500
DURATION:PT15M
SUMMARY:Stand-up «Équipe»
RRULE:FREQ=DAILY;COUNT=6
EXDATE;TZID=America/New_York:20261102T091500
RDATE;TZID=America/New_York:20261110T120000
END:VEVENT
BEGIN:VEVENT
UID:standup-ny
DTSTAMP:20261001T000000Z
RECURRENCE-ID;TZID=America/New_York:20261103T091500
DTSTART;TZID=America/New_York:20261103T140000
DURATION:PT30M
SUMMARY:Stand-up (moved)
END:VEVENT
END:VCALENDAR
""".replace("\n", "\r\n").encode()
req = urllib.request.Request(sys.argv[1] + "alice/work/standup.ics", data=ics, method="PUT")
req.add_header("Authorization", "Basic " + base64.b64encode(b"alice:pw-Zebra-42").decode())
req.add_header("Content-Type", "text/calendar; charset=utf-8")
opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))
print(opener.open(req, timeout=30).status)
PY
expect_text "$scratch/put.status" "PUT standup.ics" 201
{ init; call 1 list_events '{"calendar":"work","start":"2026-10-30","end":"2026-11-11","time_zone":"America/New_York"}'; } | serve
expect_text_of "7 events from 2026-10-30 00:00 to 2026-11-11 00:00 America/New_York:
2026-10-30 09:15 to 09:30 America/New_York (13:15 to 13:30 UTC): Stand-up «Équipe»; recurring; uid standup-ny; calendar Work
2026-10-31 09:15 to 09:30 America/New_York (13:15 to 13:30 UTC): Stand-up «Équipe»; recurring; uid standup-ny; calendar Work
2026-11-01 09:15 to 09:30 America/New_York (14:15 to 14:30 UTC): Stand-up «Équipe»; recurring; uid standup-ny; calendar Work
2026-11-03 14:00 to 14:30 America/New_York (19:00 to 19:30 UTC): Stand-up (moved); recurring; uid standup-ny; calendar Work
2026-11-04 09:15 to 09:30 America/New_York (14:15 to 14:30 UTC): Stand-up «Équipe»; recurring; uid standup-ny; calendar Work
2026-11-05 10:00 to 11:00 Europe/Berlin (09:00 to 10:00 UTC): Weekly sync; recurring; uid $uid_weekly; calendar Work
2026-11-10 12:00 to 12:15 America/New_York (17:00 to 17:15 UTC): Stand-up «Équipe»; recurring; uid standup-ny; calendar Work" 1

# -- delete_event: gone from the list and from the server's store; a second time, one line.
{
    init
    call 9 list_events '{"calendar":"work","start":"2026-10-20","end":"2026-11-11"}'
    call 1 delete_event "{\"uid\":\"$uid_kickoff\"}"
    call 2 delete_event '{"calendar":"work","uid":"standup-ny"}'
    call 3 list_events '{"calendar":"work","start":"2026-10-20","end":"2026-11-11"}'
    call 4 delete_event "{\"uid\":\"$uid_kickoff\"}"
    call 5 delete_event '{"calendar":"home","uid":"standup-ny"}'
} | serve
expect_py 'not e(9) and "Kick-off" in t(9) and "Stand-up" in t(9)'
expect_py 'not e(1) and t(1) == "deleted event '"'"'Kick-off'"'"' (uid '"$uid_kickoff"') from Work"'
expect_py 'not e(2) and t(2) == "deleted event '"'"'Stand-up «Équipe»'"'"' (uid standup-ny) from Work"'
expect_py '"Kick-off" not in t(3) and "Stand-up" not in t(3) and t(3).startswith("3 events from ")'
expect_py 'e(4) and t(4) == "no event of uid '"'$uid_kickoff'"' in any calendar"'
expect_py 'e(5) and t(5) == "no calendar '"'"'home'"'"': there are /alice/home/, /alice/work/"'
[ ! -e "$store/work/$uid_kickoff.ics" ] && [ ! -e "$store/work/standup.ics" ] && ok ||
    fail "the server's store still holds a deleted event"
[ -f "$store/work/$uid_weekly.ics" ] && ok || fail "the weekly event went too"

# -- What list_events keeps (WebDAV sync): another client's PUT, change and DELETE straight to
# Radicale, between calls of one server, are seen at the next call.
answered() { grep -q "\"id\":$1[,}]" "$scratch/out" 2>/dev/null; }
other() { # other METHOD SUMMARY: the other client's request on /alice/home/other-client.ics
    local ics="BEGIN:VCALENDAR\r\nVERSION:2.0\r\nPRODID:-//other//EN\r\nBEGIN:VEVENT\r\nUID:other-client\r\nDTSTAMP:20261001T000000Z\r\nDTSTART:20270302T100000Z\r\nDURATION:PT1H\r\nSUMMARY:$2\r\nEND:VEVENT\r\nEND:VCALENDAR\r\n"
    printf "$ics" | curl -sS --noproxy '*' -u alice:pw-Zebra-42 -X "$1" -H 'Content-Type: text/calendar; charset=utf-8' \
        ${2:+--data-binary @-} -o /dev/null -w '%{http_code}\n' "${url}alice/home/other-client.ics" >>"$scratch/other.status" 2>&1
}
march='{"calendar":"/alice/home/","start":"2027-03-01","end":"2027-03-08"}'
: >"$scratch/other.status"
{
    init
    call 61 list_events "$march"
    wait_until 30 answered 61
    other PUT 'Planning by another client'
    call 62 list_events "$march"
    wait_until 30 answered 62
    other PUT 'Planning moved on'
    call 63 list_events "$march"
    wait_until 30 answered 63
    other DELETE ''
    call 64 list_events "$march"
    wait_until 30 answered 64
    call 65 create_event '{"calendar":"/alice/home/","summary":"Ours","start":"2027-03-03T09:00:00Z"}'
    call 66 list_events "$march"
    wait_until 30 answered 66
} | serve
expect_text "$scratch/other.status" "the other client's statuses" "201
201
200"
expect_py 'not e(61) and t(61) == "no events from 2027-03-01 00:00 to 2027-03-08 00:00 UTC"'
expect_py 'not e(62) and t(62) == "1 event from 2027-03-01 00:00 to 2027-03-08 00:00 UTC:\n2027-03-02 10:00 to 11:00 UTC: Planning by another client; uid other-client; calendar Zuhause Ü"'
expect_py 'not e(63) and t(63) == "1 event from 2027-03-01 00:00 to 2027-03-08 00:00 UTC:\n2027-03-02 10:00 to 11:00 UTC: Planning moved on; uid other-client; calendar Zuhause Ü"'
expect_py 'not e(64) and t(64) == "no events from 2027-03-01 00:00 to 2027-03-08 00:00 UTC"'
expect_py 'not e(65) and t(66).startswith("1 event from ") and "Ours" in t(66)'
uid_ours=$(text 65 | sed -n 's/.*uid \([^,]*\),.*/\1/p')
{ init; call 1 delete_event "{\"uid\":\"$uid_ours\"}"; } | serve
expect_py 'not e(1)'

# -- Arguments: each one line, nothing sent.
{
    init
    call 1 list_events '{"start":"2026-13-01"}'
    call 2 create_event '{"summary":"x","start":"2026-10-22T10:00:00","calendar":"work"}'
    call 3 create_event '{"summary":"x","start":"2026-10-22T10:00:00","time_zone":"Mars/Olympus","calendar":"work"}'
    call 4 create_event '{"summary":"x","start":"2026-10-22T10:00:00Z","rrule":"FREQ=SOMETIMES","calendar":"work"}'
    call 5 create_event '{"start":"2026-10-22T10:00:00Z"}'
    call 6 create_event '{"summary":"x","start":"2026-10-22T10:00:00Z"}'
    call 7 list_events '{"calendar":"nowhere"}'
    call 8 list_events '{"limit":0}'
} | serve
expect_text_of "list_events: start '2026-13-01' is not an RFC 3339 date or date-time (2026-10-22, 2026-10-22T10:00:00+02:00)" 1
expect_text_of "create_event: start has no offset: give time_zone (an IANA name such as Europe/Berlin) or an offset (Z, +02:00)" 2
expect_text_of "create_event: time_zone 'Mars/Olympus' is not a time zone (an IANA name such as Europe/Berlin)" 3
expect_text_of "create_event: rrule 'FREQ=SOMETIMES' is not an RFC 5545 recurrence rule (FREQ=WEEKLY;COUNT=10)" 4
expect_text_of "create_event: member 'summary' is missing" 5
expect_text_of "give calendar: there are 2 (/alice/home/, /alice/work/)" 6
expect_text_of "no calendar 'nowhere': there are /alice/home/, /alice/work/" 7
expect_text_of "list_events: member 'limit' must be from 1 to 1000" 8
expect_py 'all(e(i) for i in range(1, 9))'

# -- Settings: missing ones name what to set; a wrong password and a failing token command are one
# line each, never the secret, and the server answers after.
{ init; call 1 list_calendars; req 2 ping; } | env -u CALDAV_URL sion-calendar >"$scratch/out" 2>"$scratch/err"
expect_text_of "the calendar is not set up: CALDAV_URL is not set; keep it with sion agent credential add CALDAV_URL" 1
{ init; call 1 list_calendars; } | env -u CALDAV_PASSWORD sion-calendar >"$scratch/out" 2>"$scratch/err"
expect_text_of "the calendar is not set up: CALDAV_PASSWORD or CALDAV_TOKEN_COMMAND is not set; keep one with sion agent credential add" 1
{ init; call 1 list_calendars; call 2 list_events; req 3 tools/list; } | CALDAV_PASSWORD=not-the-password serve
expect_text_of "the calendar server refused CALDAV_USERNAME 'alice' and CALDAV_PASSWORD (401 Unauthorized)" 1
expect_text_of "the calendar server refused CALDAV_USERNAME 'alice' and CALDAV_PASSWORD (401 Unauthorized)" 2
expect_py 'e(1) and e(2) and len(a(3)["tools"]) == 4'
grep -q 'not-the-password' "$scratch/out" "$scratch/err" && fail "the password was shown" || ok
{ init; call 1 list_calendars; call 2 create_event '{"summary":"x","start":"2026-10-22T10:00:00Z"}'; } |
    CALDAV_PASSWORD= CALDAV_TOKEN_COMMAND='echo "no token today" >&2; exit 3' serve
expect_text_of "CALDAV_TOKEN_COMMAND failed: it exited 3: no token today" 1
expect_text_of "CALDAV_TOKEN_COMMAND failed: it exited 3: no token today" 2
{ init; call 1 list_calendars; } | CALDAV_PASSWORD= CALDAV_TOKEN_COMMAND='echo tok-Secret-7' serve
expect_text_of "the calendar server refused the token of CALDAV_TOKEN_COMMAND (401 Unauthorized)" 1
grep -q 'tok-Secret-7' "$scratch/out" "$scratch/err" && fail "the token was shown" || ok

# -- A server down, then back: one process, one line while it is down, and it works again.
coproc SERVER { exec sion-calendar 2>"$scratch/server.err"; }
# Kept now: bash unsets SERVER and SERVER_PID once it has reaped the server.
server_pid=$SERVER_PID to_server=${SERVER[1]} from_server=${SERVER[0]}
ask() { # ask ID TOOL ARGS: one request, its answer's line in $scratch/out
    call "$1" "$2" "${3:-{\}}" >&"$to_server"
    local line=""
    IFS= read -r -t 120 line <&"$from_server" || fail "no answer to $2 ($1)"
    printf '%s\n' "$line" >"$scratch/out"
}
init >&"$to_server"
IFS= read -r -t 120 line <&"$from_server" && ok || fail "no answer to initialize"
ask 1 list_calendars
expect_text_of "$calendars" 1
calendar_peer_stop
ask 2 list_calendars
expect_py 'e(2) and t(2).startswith("the calendar server is out of reach: cannot reach '"'"'http://127.0.0.3:") and "\n" not in t(2)'
port=$CALENDAR_PEER_PORT
radicale --config "$scratch/radicale/config" </dev/null >>"$scratch/radicale/radicale.log" 2>&1 &
CALENDAR_PEER_PID=$!
wait_until 30 python3 -c 'import socket, sys
socket.create_connection(("127.0.0.3", int(sys.argv[1])), 1).close()' "$port" 2>/dev/null && ok ||
    fail "radicale did not come back on port $port"
ask 3 list_calendars
expect_text_of "$calendars" 3
exec {to_server}>&-
wait "$server_pid" && ok || fail "sion-calendar did not end well at the end of its input"

# -- A closed port from the start; a server that is no CalDAV server; hostile XML and iCalendar.
closed=$(python3 -c 'import socket
s = socket.socket(); s.bind(("127.0.0.3", 0)); print(s.getsockname()[1]); s.close()')
{ init; call 1 list_calendars; req 2 ping; } | CALDAV_URL="http://127.0.0.3:$closed/" serve
expect_py 'e(1) and t(1).startswith("the calendar server is out of reach: cannot reach '"'"'http://127.0.0.3:'"$closed"'/.well-known/caldav'"'"': ") and a(2) == {}'

cat >"$scratch/hostile.py" <<'PY'
# A server that answers WebDAV badly, by the first segment of the path.
import http.server, re, sys
MS = '<?xml version="1.0"?><d:multistatus xmlns:d="DAV:" xmlns:c="urn:ietf:params:xml:ns:caldav">%s</d:multistatus>'
CAL = ('<d:response><d:href>/%s/cal/</d:href><d:propstat><d:prop><d:resourcetype><d:collection/><c:calendar/>'
       '</d:resourcetype><d:displayname>Cal</d:displayname></d:prop><d:status>HTTP/1.1 200 OK</d:status></d:propstat></d:response>')
LAUGHS = ('<?xml version="1.0"?><!DOCTYPE d:multistatus [<!ENTITY a "aaaaaaaaaa"><!ENTITY b "&a;&a;&a;&a;&a;&a;&a;&a;">'
          ']><d:multistatus xmlns:d="DAV:"><d:response><d:href>&b;</d:href></d:response></d:multistatus>')
BADICS = ('<d:response><d:href>/bad-ics/cal/x.ics</d:href><d:propstat><d:prop><d:getetag>"1"</d:getetag>'
          '<c:calendar-data>BEGIN:VCALENDAR\r\nthis is not\r\nEND:VEVENT</c:calendar-data></d:prop>'
          '<d:status>HTTP/1.1 200 OK</d:status></d:propstat></d:response>')
ETAG = ('<d:response><d:href>/etag/cal/x.ics</d:href><d:propstat><d:prop><d:getetag>"1"</d:getetag>'
        '<c:calendar-data>BEGIN:VCALENDAR\r\nVERSION:2.0\r\nBEGIN:VEVENT\r\nUID:gone-soon\r\n'
        'DTSTART:20261001T100000Z\r\nSUMMARY:Soon gone\r\nEND:VEVENT\r\nEND:VCALENDAR\r\n</c:calendar-data>'
        '</d:prop><d:status>HTTP/1.1 200 OK</d:status></d:propstat></d:response>')
SYNCED = ('<d:response><d:href>/sync/cal/s.ics</d:href><d:propstat><d:prop><d:getetag>"VERSION"</d:getetag>'
          '<c:calendar-data>BEGIN:VCALENDAR\r\nVERSION:2.0\r\nBEGIN:VEVENT\r\nUID:synced\r\n'
          'DTSTART:20261002T100000Z\r\nSUMMARY:Synced VERSION\r\nEND:VEVENT\r\nEND:VCALENDAR\r\n</c:calendar-data>'
          '</d:prop><d:status>HTTP/1.1 200 OK</d:status></d:propstat></d:response><d:sync-token>t1</d:sync-token>')
fulls = 0
class H(http.server.BaseHTTPRequestHandler):
    def log_message(self, *a): pass
    def answer(self, status, body, ctype="application/xml"):
        b = body.encode()
        self.send_response(status); self.send_header("Content-Type", ctype)
        self.send_header("Content-Length", str(len(b))); self.end_headers(); self.wfile.write(b)
    def do_GET(self): self.answer(200, "<html><body>hello</body></html>", "text/html")
    def do_PROPFIND(self):
        self.rfile.read(int(self.headers.get("Content-Length", 0)))
        top = self.path.strip("/").split("/")[0]
        if top == "truncated": self.answer(207, (MS % CAL % top)[:120])
        elif top == "laughs": self.answer(207, LAUGHS)
        elif top == "html": self.answer(207, "<html><body>not DAV</body></html>")
        elif top == "wrong-ns": self.answer(207, (MS % CAL % top).replace('"DAV:"', '"urn:x-not-dav"'))
        elif top in ("bad-ics", "etag", "sync"): self.answer(207, MS % CAL % top)
        else: self.answer(405, "no")
    def do_REPORT(self):
        body = self.rfile.read(int(self.headers.get("Content-Length", 0))).decode()
        top = self.path.strip("/").split("/")[0]
        token = re.search(r"<d:sync-token>(.*?)</d:sync-token>", body)
        with open(sys.argv[1], "a") as log:
            print(top, "sync %r" % token.group(1) if token else "query", file=log)
        if top == "sync":  # WebDAV sync whose tokens run out at once
            global fulls
            if token is None: self.answer(500, "no queries here")
            elif token.group(1): self.answer(403, '<?xml version="1.0"?><d:error xmlns:d="DAV:"><d:valid-sync-token/></d:error>')
            else:
                fulls += 1
                self.answer(207, MS % SYNCED.replace("VERSION", str(fulls)))
        else: self.answer(207, MS % (ETAG if top == "etag" else BADICS))
    def do_DELETE(self):
        self.answer(412, "changed")
s = http.server.ThreadingHTTPServer(("127.0.0.3", 0), H)
print(s.server_address[1], flush=True)
s.serve_forever()
PY
python3 "$scratch/hostile.py" "$scratch/hostile.log" >"$scratch/hostile.port" 2>"$scratch/hostile.err" &
hostile_pid=$!
wait_until 30 test -s "$scratch/hostile.port" && ok || fail "the hostile server did not start"
hostile="http://127.0.0.3:$(cat "$scratch/hostile.port")"
{ init; call 1 list_calendars; req 2 ping; } | CALDAV_URL="$hostile/" serve
expect_text_of "'$hostile/.well-known/caldav' is not a CalDAV server: PROPFIND answered 405 Method Not Allowed" 1
expect_py 'a(2) == {}'
{ init; call 1 list_calendars; } | CALDAV_URL="$hostile/truncated/" serve
expect_text_of "cannot read the answer to PROPFIND '$hostile/truncated/': its XML is not well-formed" 1
{ init; call 1 list_calendars; } | CALDAV_URL="$hostile/laughs/" serve
expect_text_of "cannot read the answer to PROPFIND '$hostile/laughs/': its XML has a DTD (<!DOCTYPE>): entities are not expanded" 1
{ init; call 1 list_calendars; } | CALDAV_URL="$hostile/html/" serve
expect_text_of "cannot read the answer to PROPFIND '$hostile/html/': its answer is not a WebDAV multistatus" 1
{ init; call 1 list_calendars; } | CALDAV_URL="$hostile/wrong-ns/" serve
expect_text_of "cannot read the answer to PROPFIND '$hostile/wrong-ns/': its answer is not a WebDAV multistatus" 1
{ init; call 1 list_calendars; call 2 list_events '{"start":"2026-10-01"}'; call 3 list_events '{"start":"2026-10-01"}'; } |
    CALDAV_URL="$hostile/bad-ics/cal/" serve
expect_text_of "Cal (path /bad-ics/cal/)" 1
expect_text_of "no events from 2026-10-01 00:00 to 2026-10-08 00:00 UTC
(1 object the server gave is not iCalendar and left out)" 2
expect_text_of "no events from 2026-10-01 00:00 to 2026-10-08 00:00 UTC
(1 object the server gave is not iCalendar and left out)" 3
# A server whose answer to sync-collection has no sync-token knows no WebDAV sync: the query of
# the range at every call (asked once whether it syncs), nothing kept.
expect_text "$scratch/hostile.log" "the REPORTs of the server with no sync" "bad-ics sync ''
bad-ics query
bad-ics query"
# A token the server no longer knows (403 DAV:valid-sync-token): what was kept is dropped and
# fetched whole again, never answered from.
: >"$scratch/hostile.log"
{ init; call 1 list_events '{"start":"2026-10-01"}'; call 2 list_events '{"start":"2026-10-01"}'; } |
    CALDAV_URL="$hostile/sync/cal/" serve
expect_py 'not e(1) and "Synced 1" in t(1) and not e(2) and "Synced 2" in t(2) and "Synced 1" not in t(2)'
expect_text "$scratch/hostile.log" "the REPORTs of the server whose tokens run out" "sync sync ''
sync sync 't1'
sync sync ''"
# An object changed between REPORT and DELETE: If-Match fails, nothing is deleted.
{ init; call 1 delete_event '{"uid":"gone-soon"}'; req 2 ping; } | CALDAV_URL="$hostile/etag/cal/" serve
expect_text_of 'the event changed on the calendar server since it was read (its ETag is not "1"): nothing was deleted' 1
expect_py 'e(1) and a(2) == {}'

# -- Through the environment's proxy, as in sion's sandbox: 127.0.0.3 is a loopback address that
# no_proxy does not name, so plain http goes to the proxy in absolute form...
python3 "$SION_SOURCE_DIR/tests/e2e/calendar_proxy.py" "$scratch/proxy.log" >"$scratch/proxy.port" 2>"$scratch/proxy.err" &
proxy_pid=$!
wait_until 30 test -s "$scratch/proxy.port" && ok || fail "the proxy did not start"
proxy="http://127.0.0.1:$(cat "$scratch/proxy.port")"
{ init; call 1 list_calendars; } |
    CALDAV_URL="$hostile/bad-ics/cal/" http_proxy=$proxy NO_PROXY=localhost,127.0.0.1,::1 serve
expect_text_of "Cal (path /bad-ics/cal/)" 1
expect_grep "^PROPFIND $hostile/bad-ics/cal/\$" "$scratch/proxy.log"

# ... and https through a CONNECT tunnel, the server's certificate checked against SSL_CERT_FILE
# (the tests' own authority); without it, one line.
calendar_peer_stop
tls_authority "$scratch/tls"
tls_certificate "$scratch/tls" peer "IP:127.0.0.3"
mkdir -p "$scratch/radicale-tls" && cp -r "$scratch/radicale/collections" "$scratch/radicale-tls/"
CALENDAR_PEER_CERT="$scratch/tls/peer.crt" CALENDAR_PEER_KEY="$scratch/tls/peer.key" \
    calendar_peer_start "$scratch/radicale-tls" alice 'pw-Zebra-42' >"$scratch/url" &&
    ok || fail "radicale did not start with TLS"
tls_url=$(cat "$scratch/url")
case $tls_url in https://127.0.0.3:*) ok ;; *) fail "the peer's URL is '$tls_url'" ;; esac
{ init; call 1 list_calendars; call 2 list_events '{"calendar":"work","start":"2026-10-22","end":"2026-10-23"}'; } |
    CALDAV_URL=$tls_url SSL_CERT_FILE="$scratch/tls/ca.pem" HTTPS_PROXY=$proxy NO_PROXY=localhost,127.0.0.1,::1 serve
expect_text_of "$calendars" 1
expect_py 'not e(2) and "Weekly sync" in t(2)'
tls_port=${tls_url##*:}
expect_grep "^CONNECT 127.0.0.3:${tls_port%/}\$" "$scratch/proxy.log"
{ init; call 1 list_calendars; req 2 ping; } | CALDAV_URL=$tls_url SSL_CERT_FILE= serve
expect_py 'e(1) and t(1).startswith("the calendar server is out of reach: cannot reach '"'$tls_url"'.well-known/caldav'"'"': ") and "\n" not in t(1) and a(2) == {}'
kill "$proxy_pid" 2>/dev/null

done_testing
