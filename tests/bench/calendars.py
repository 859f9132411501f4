#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
# sion-calendar's list_events over a calendar of 5,000 events in Radicale, a report and never a gate
# (issue 22's goal: at most 300 ms). The events are made from a fixed seed (every run sees the
# same): single events in four zones, weekly and daily ones with COUNT, UNTIL and EXDATE, all-day and
# yearly ones, across 2026 and 2027; they go to Radicale in one PUT of the whole calendar, once, and
# Radicale's store is kept under the build directory for the next run. Radicale is started by
# tests/e2e/calendar_peer.sh on 127.0.0.3 and stopped at the end. Prints list_events over a week and
# over a month at the first call of a new server (discovery, and the whole calendar fetched by WebDAV
# sync and kept) and at a second call (a sync of what changed, then the kept objects expanded),
# list_calendars, Radicale's own calendar-query REPORT of the week and sync-collection REPORT of
# nothing changed, then sion-calendar's own part uncached: list_events against a stand-in that
# answers Radicale's REPORT of the range at once and knows no WebDAV sync. Checks that list_events
# gave the same answers from what it keeps as from the stand-in; exits 1 if not, 69 if radicale is
# missing, 0 otherwise. (Not calendar.py: a script of that name would be the standard library's calendar to
# every module it imports.)
#
#   tests/bench/calendars.py [--bin DIR] [--events N] [--runs N] [--cache DIR]
import argparse
import base64
import datetime
import difflib
import http.server
import json
import os
import random
import re
import shutil
import signal
import statistics
import subprocess
import sys
import threading
import time
import urllib.request

USER, PASSWORD = "alice", "bench-pw"
ZONES = {
    "Europe/Berlin": (1, 2, "-1SU", 3, "-1SU", 10),
    "America/New_York": (-5, -4, "2SU", 3, "1SU", 11),
    "Asia/Tokyo": (9, 9, None, None, None, None),
}


def vtimezone(name):
    std, dst, dst_day, dst_month, std_day, std_month = ZONES[name]
    def off(h):
        return f"{'+' if h >= 0 else '-'}{abs(h):02d}00"
    if dst_day is None:
        return (f"BEGIN:VTIMEZONE\nTZID:{name}\nBEGIN:STANDARD\nTZOFFSETFROM:{off(std)}\n"
                f"TZOFFSETTO:{off(std)}\nDTSTART:19700101T000000\nEND:STANDARD\nEND:VTIMEZONE\n")
    return (f"BEGIN:VTIMEZONE\nTZID:{name}\n"
            f"BEGIN:DAYLIGHT\nTZOFFSETFROM:{off(std)}\nTZOFFSETTO:{off(dst)}\n"
            f"DTSTART:19700301T020000\nRRULE:FREQ=YEARLY;BYMONTH={dst_month};BYDAY={dst_day}\nEND:DAYLIGHT\n"
            f"BEGIN:STANDARD\nTZOFFSETFROM:{off(dst)}\nTZOFFSETTO:{off(std)}\n"
            f"DTSTART:19701025T030000\nRRULE:FREQ=YEARLY;BYMONTH={std_month};BYDAY={std_day}\nEND:STANDARD\n"
            f"END:VTIMEZONE\n")


def events(n):
    """The calendar: n VEVENTs of a fixed seed, as one VCALENDAR."""
    rng = random.Random(22_680)
    first = datetime.datetime(2026, 1, 1)
    out = ["BEGIN:VCALENDAR", "VERSION:2.0", "PRODID:-//sion bench//EN"]
    out += [vtimezone(z).rstrip("\n") for z in ZONES]
    for i in range(n):
        start = first + datetime.timedelta(days=rng.randrange(0, 700), hours=rng.randrange(7, 19),
                                           minutes=rng.choice((0, 15, 30, 45)))
        zone = rng.choice(list(ZONES) + ["UTC"])
        kind = rng.random()
        stamp = start.strftime("%Y%m%dT%H%M%S")
        lines = ["BEGIN:VEVENT", f"UID:bench-{i:05d}", "DTSTAMP:20260101T000000Z",
                 f"SUMMARY:Event {i} {rng.choice(['review', 'sync', 'lunch', 'call', 'Übung'])}"]
        if kind < 0.05:
            day = start.strftime("%Y%m%d")
            lines += [f"DTSTART;VALUE=DATE:{day}", "DURATION:P1D"]
            if i % 2:
                lines.append("RRULE:FREQ=YEARLY")
        else:
            if zone == "UTC":
                lines.append(f"DTSTART:{stamp}Z")
            else:
                lines.append(f"DTSTART;TZID={zone}:{stamp}")
            lines.append(f"DURATION:PT{rng.choice((15, 30, 45, 60, 90))}M")
            if kind < 0.30:
                if rng.random() < 0.5:
                    lines.append(f"RRULE:FREQ=WEEKLY;COUNT={rng.randrange(10, 53)}")
                else:
                    until = start + datetime.timedelta(days=rng.randrange(30, 300))
                    lines.append(f"RRULE:FREQ=WEEKLY;UNTIL={until.strftime('%Y%m%dT%H%M%SZ')}")
                ex = start + datetime.timedelta(weeks=2)
                exstamp = ex.strftime("%Y%m%dT%H%M%S")
                lines.append(f"EXDATE:{exstamp}Z" if zone == "UTC" else f"EXDATE;TZID={zone}:{exstamp}")
            elif kind < 0.40:
                lines.append(f"RRULE:FREQ=DAILY;COUNT={rng.randrange(5, 31)}")
        lines.append("END:VEVENT")
        out += lines
    out.append("END:VCALENDAR")
    return "\r\n".join(out) + "\r\n"


def start_peer(root, store):
    helper = os.path.join(root, "tests", "e2e", "calendar_peer.sh")
    p = subprocess.run(["bash", "-c", '. "$1" && calendar_peer_start "$2" "$3" "$4" >/dev/null && '
                        'echo "$CALENDAR_PEER_URL $CALENDAR_PEER_PID"', "bash", helper, store, USER,
                        PASSWORD], capture_output=True, text=True, check=False)
    if p.returncode != 0:
        sys.exit(f"calendars.py: radicale did not start: {p.stderr.strip()}")
    url, pid = p.stdout.split()
    return url, int(pid)


def stop_peer(pid):
    try:
        os.kill(pid, signal.SIGTERM)
    except ProcessLookupError:
        return
    for _ in range(100):
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return
        time.sleep(0.1)
    os.kill(pid, signal.SIGKILL)


def request(url, method, body=b"", headers=None):
    req = urllib.request.Request(url, data=body or None, method=method)
    req.add_header("Authorization", "Basic " + base64.b64encode(f"{USER}:{PASSWORD}".encode()).decode())
    for k, v in (headers or {}).items():
        req.add_header(k, v)
    opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))
    with opener.open(req, timeout=600) as r:
        return r.status, r.read()


class Server:
    """sion-calendar, asked one request at a time."""

    def __init__(self, binary, url):
        env = dict(os.environ, CALDAV_URL=url, CALDAV_USERNAME=USER, CALDAV_PASSWORD=PASSWORD)
        for k in ("http_proxy", "https_proxy", "HTTPS_PROXY", "all_proxy", "ALL_PROXY"):
            env.pop(k, None)
        self.p = subprocess.Popen([binary], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                  stderr=subprocess.DEVNULL, env=env)
        self.next_id = 0
        self.ask("initialize", {"protocolVersion": "2025-11-25", "capabilities": {},
                                "clientInfo": {"name": "bench", "version": "1"}})

    def ask(self, method, params):
        self.next_id += 1
        line = json.dumps({"jsonrpc": "2.0", "id": self.next_id, "method": method, "params": params})
        self.p.stdin.write(line.encode() + b"\n")
        self.p.stdin.flush()
        answer = json.loads(self.p.stdout.readline())
        if "error" in answer:
            sys.exit(f"calendars.py: {method} failed: {answer['error']}")
        return answer["result"]

    def call(self, tool, arguments):
        start = time.perf_counter()
        result = self.ask("tools/call", {"name": tool, "arguments": arguments})
        took = time.perf_counter() - start
        text = result["content"][0]["text"]
        if result.get("isError"):
            sys.exit(f"calendars.py: {tool} failed: {text}")
        return took, text

    def close(self):
        self.p.stdin.close()
        self.p.wait()


def report_body(start, end):
    return ('<?xml version="1.0" encoding="utf-8"?><c:calendar-query xmlns:d="DAV:" '
            'xmlns:c="urn:ietf:params:xml:ns:caldav"><d:prop><d:getetag/><c:calendar-data/></d:prop>'
            '<c:filter><c:comp-filter name="VCALENDAR"><c:comp-filter name="VEVENT">'
            f'<c:time-range start="{start}" end="{end}"/></c:comp-filter></c:comp-filter></c:filter>'
            '</c:calendar-query>').encode()


def sync_body(token):
    return ('<?xml version="1.0" encoding="utf-8"?><d:sync-collection xmlns:d="DAV:" '
            f'xmlns:c="urn:ietf:params:xml:ns:caldav"><d:sync-token>{token}</d:sync-token>'
            '<d:sync-level>1</d:sync-level><d:prop><d:getetag/></d:prop></d:sync-collection>').encode()


def stand_in(reports):
    """A server on 127.0.0.3 that answers at once what Radicale answered: its URL is the calendar's,
    which a PROPFIND finds to be one, and a REPORT of a range gets Radicale's answer of that range
    (`reports`, by the range's start as the REPORT writes it); a sync-collection REPORT gets what
    Radicale answered the range's, with no sync-token: no WebDAV sync, nothing kept. What
    list_events takes against it is sion-calendar's own part, uncached."""
    calendar = ('<?xml version="1.0"?><d:multistatus xmlns:d="DAV:" xmlns:c="urn:ietf:params:xml:ns:caldav">'
                f'<d:response><d:href>/{USER}/bench/</d:href><d:propstat><d:prop><d:resourcetype>'
                '<d:collection/><c:calendar/></d:resourcetype><d:displayname>bench</d:displayname>'
                '</d:prop><d:status>HTTP/1.1 200 OK</d:status></d:propstat></d:response>'
                '</d:multistatus>').encode()

    class Handler(http.server.BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, *a):
            pass

        def answer(self, body):
            self.send_response(207)
            self.send_header("Content-Type", "application/xml; charset=utf-8")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def do_PROPFIND(self):
            self.rfile.read(int(self.headers.get("Content-Length", 0)))
            self.answer(calendar)

        def do_REPORT(self):
            body = self.rfile.read(int(self.headers.get("Content-Length", 0)))
            starts = [k for k in reports if k.encode() in body]
            self.answer(reports[starts[0]] if starts else b"<d:multistatus xmlns:d=\"DAV:\"/>")

    server = http.server.ThreadingHTTPServer(("127.0.0.3", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server, f"http://127.0.0.3:{server.server_address[1]}/{USER}/bench/"


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    root = os.path.normpath(os.path.join(here, "..", ".."))
    ap = argparse.ArgumentParser()
    ap.add_argument("--bin", default=os.path.join(root, "build", "release", "bin"))
    ap.add_argument("--events", type=int, default=5000)
    ap.add_argument("--runs", type=int, default=10)
    ap.add_argument("--cache", default=None, help="where Radicale's store is kept (BIN/../bench-calendar)")
    args = ap.parse_args()
    if shutil.which("radicale") is None:
        print("calendars.py: radicale is not installed (Debian package radicale)", file=sys.stderr)
        return 69
    binary = os.path.join(args.bin, "sion-calendar")
    cache = args.cache or os.path.join(os.path.dirname(os.path.abspath(args.bin)), "bench-calendar")
    store = os.path.join(cache, f"radicale-{args.events}")
    done = store + ".complete"
    if not os.path.exists(done):
        shutil.rmtree(store, ignore_errors=True)
    os.makedirs(store, exist_ok=True)
    url, pid = start_peer(root, store)
    try:
        if not os.path.exists(done):
            print(f"putting {args.events} events into Radicale (once, kept in {store}) ...", flush=True)
            t = time.perf_counter()
            status, _ = request(url + f"{USER}/bench/", "PUT", events(args.events).encode(),
                                {"Content-Type": "text/calendar; charset=utf-8"})
            if status not in (200, 201, 204):
                sys.exit(f"calendars.py: PUT of the calendar answered {status}")
            open(done, "w").close()
            print(f"put in {time.perf_counter() - t:.0f} s", flush=True)
        week = {"calendar": f"/{USER}/bench/", "start": "2026-10-19", "end": "2026-10-26", "limit": 1000}
        month = {"calendar": f"/{USER}/bench/", "start": "2026-10-01", "end": "2026-11-01", "limit": 1000}
        # Radicale builds its cache of the items at the first REPORT: not counted.
        first_server = Server(binary, url)
        first_server.call("list_events", week)
        first_server.close()
        firsts = {"week": [], "month": []}
        for _ in range(3):
            for name, arguments in (("week", week), ("month", month)):
                s = Server(binary, url)
                took, _ = s.call("list_events", arguments)
                firsts[name].append(took)
                s.close()
        server = Server(binary, url)
        _, week_text = server.call("list_events", week)
        weeks = [server.call("list_events", week)[0] for _ in range(args.runs)]
        months = [server.call("list_events", month)[0] for _ in range(args.runs)]
        _, month_text = server.call("list_events", month)
        lists = [server.call("list_calendars", {})[0] for _ in range(args.runs)]
        server.close()
        reports, syncs, answers = [], [], {}
        objects = 0
        for start, end in (("20261001T000000Z", "20261101T000000Z"), ("20261019T000000Z", "20261026T000000Z")):
            body = report_body(start, end)
            for _ in range(args.runs):
                t = time.perf_counter()
                status, answer = request(url + f"{USER}/bench/", "REPORT", body,
                                         {"Depth": "1", "Content-Type": "application/xml"})
                reports.append(time.perf_counter() - t)
            answers[start] = answer
        reports = reports[args.runs:]  # the week's
        objects = answer.count(b"calendar-data>") // 2
        _, answer = request(url + f"{USER}/bench/", "REPORT", sync_body(""), {"Content-Type": "application/xml"})
        token = answer.split(b"sync-token>")[1].split(b"<")[0].decode()
        for _ in range(args.runs):
            t = time.perf_counter()
            request(url + f"{USER}/bench/", "REPORT", sync_body(token), {"Content-Type": "application/xml"})
            syncs.append(time.perf_counter() - t)
    finally:
        stop_peer(pid)
    server, stand_in_url = stand_in(answers)
    ours_server = Server(binary, stand_in_url)
    _, ours_text = ours_server.call("list_events", week)
    ours = [ours_server.call("list_events", week)[0] for _ in range(args.runs)]
    _, ours_month_text = ours_server.call("list_events", month)
    ours_server.close()
    server.shutdown()

    def count(text):
        first = text.splitlines()[0]
        return 0 if first.startswith("no events") else int(first.split()[0])

    ms = lambda xs: statistics.median(xs) * 1000
    print(f"list_events over a calendar of {args.events} events in Radicale "
          f"(weekly, daily, yearly, all-day; four zones), median of {args.runs}")
    print(f"  a week  ({count(week_text):4d} occurrences of {objects} objects), second call: "
          f"{ms(weeks):8.1f} ms   goal <= 300 ms")
    print(f"  a month ({count(month_text):4d} occurrences), second call:                 {ms(months):8.1f} ms")
    print(f"  a week, first call of a new server (discovery, whole sync): {ms(firsts['week']):8.1f} ms")
    print(f"  a month, first call of a new server:                        {ms(firsts['month']):8.1f} ms")
    print(f"  list_calendars:                                              {ms(lists):8.1f} ms")
    print(f"  Radicale's calendar-query REPORT of the week (urllib):       {ms(reports):8.1f} ms")
    print(f"  Radicale's sync-collection REPORT, nothing changed:          {ms(syncs):8.1f} ms")
    print(f"  sion-calendar's own part, uncached (the week's answer at once): {ms(ours):8.1f} ms   "
          f"({objects} objects read, {count(ours_text)} occurrences)")
    if count(week_text) < objects or count(week_text) == 0 or count(month_text) < count(week_text):
        print(f"calendars.py: list_events found {count(week_text)} occurrences in the week, "
              f"Radicale gave {objects} objects", file=sys.stderr)
        return 1
    # The stand-in names the calendar otherwise: the occurrences are compared without its name.
    def occurrences(text):
        return re.sub(r"; calendar [^\n]*", "", text)

    for kept, asked in ((week_text, ours_text), (month_text, ours_month_text)):
        kept, asked = occurrences(kept), occurrences(asked)
        if kept != asked:
            print("calendars.py: list_events answered otherwise from what it keeps than from "
                  "Radicale's REPORT of the range:", file=sys.stderr)
            sys.stderr.writelines(difflib.unified_diff(asked.splitlines(True), kept.splitlines(True),
                                                       "uncached", "kept", n=0))
            return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
