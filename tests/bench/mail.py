#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
# sion-mail's search_mail over a mailbox of 10,000 messages in Dovecot, a report and never a gate
# (issue 22's goal: at most 300 ms). Dovecot and Postfix are started by tests/e2e/mail_peers.sh on
# 127.0.0.2 in a directory of their own and stopped after; the messages (a fixed seed: every run sees
# the same) are written into alice's Maildir before Dovecot first opens it, and indexed once by a
# first search that is not counted. Each figure is the median of --runs calls on one running
# sion-mail (its IMAP connection kept between calls), beside Python's imaplib doing the same
# UID SEARCH and UID FETCH of the 20 newest headers on a connection of its own, with their ratio.
# Exits 69 if Dovecot or Postfix cannot run here (not root, not installed), 1 if a search fails or
# the two disagree on how many match, 0 otherwise.
#
#   tests/bench/mail.py [--bin DIR] [--messages N] [--runs N]
import argparse
import imaplib
import json
import os
import random
import shutil
import ssl
import statistics
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
WORDS = ("orchard harvest ledger quarter budget minutes council report summary figure apple pear "
         "plum damson medlar cider press barrel season frost spring autumn market price").split()
SENDERS = [f"grower{i}@example.net" for i in range(50)]
RARE = "quincunx@example.org"  # the sender of one message in 500


def message(i, rng):
    sender = RARE if i % 500 == 7 else rng.choice(SENDERS)
    subject = " ".join(rng.choices(WORDS, k=rng.randint(3, 7))).capitalize()
    if i % 10 == 3:
        subject = "Gr\u00fc\u00dfe: " + subject
    body = "\n".join(" ".join(rng.choices(WORDS, k=12)) for _ in range(rng.randint(5, 40)))
    day = 1 + i % 28
    return (f"From: Grower <{sender}>\r\nTo: alice@example.org\r\n"
            f"Subject: =?UTF-8?B?{__import__('base64').b64encode(subject.encode()).decode()}?=\r\n"
            f"Date: Mon, {day:02d} Nov 2026 10:00:00 +0000\r\nMessage-ID: <bench-{i}@example.net>\r\n"
            f"MIME-Version: 1.0\r\nContent-Type: text/plain; charset=utf-8\r\n\r\n{body}\r\n")


def fill(maildir, count):
    rng = random.Random(22)
    cur = os.path.join(maildir, "cur")
    for sub in ("cur", "new", "tmp"):
        os.makedirs(os.path.join(maildir, sub), exist_ok=True)
    base = int(time.time()) - count
    for i in range(count):
        flags = "S" if i % 3 else ""
        name = f"{base + i}.M{i}P1.bench:2,{flags}"
        with open(os.path.join(cur, name), "w", encoding="utf-8", newline="") as f:
            f.write(message(i, rng))
    subprocess.run(["chown", "-R", "mail:mail", os.path.dirname(maildir)], check=True)


def start_peers(directory, password):
    out = subprocess.run(["bash", os.path.join(ROOT, "tests/e2e/mail_peers.sh"), "start", directory,
                          password], capture_output=True, text=True)
    if out.returncode != 0:
        sys.stderr.write(out.stderr)
        return None
    return dict(line.split("=", 1) for line in out.stdout.splitlines() if "=" in line)


class Server:
    def __init__(self, binary, env):
        self.proc = subprocess.Popen([binary], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                     env=env, text=True, encoding="utf-8")
        self.next_id = 0

    def call(self, tool, arguments):
        self.next_id += 1
        line = json.dumps({"jsonrpc": "2.0", "id": self.next_id, "method": "tools/call",
                           "params": {"name": tool, "arguments": arguments}})
        start = time.perf_counter()
        self.proc.stdin.write(line + "\n")
        self.proc.stdin.flush()
        answer = json.loads(self.proc.stdout.readline())
        elapsed = (time.perf_counter() - start) * 1000
        result = answer["result"]
        return elapsed, result["content"][0]["text"], result.get("isError", False)

    def close(self):
        self.proc.stdin.close()
        self.proc.wait(timeout=30)


def imaplib_search(conn, criteria):
    """What search_mail asks, through imaplib: the matching UIDs, then the 20 newest's headers."""
    start = time.perf_counter()
    if any(ord(c) > 127 for c in criteria):
        typ, data = conn.uid("SEARCH", "CHARSET", "UTF-8", criteria.encode())
    else:
        typ, data = conn.uid("SEARCH", criteria)
    uids = sorted(int(u) for u in data[0].split()) if data and data[0] else []
    if uids:
        page = ",".join(str(u) for u in uids[-20:])
        conn.uid("FETCH", page, "(UID FLAGS INTERNALDATE BODY.PEEK[HEADER.FIELDS (DATE FROM SUBJECT)])")
    return (time.perf_counter() - start) * 1000, len(uids)


def matched(text):
    if text.startswith("no messages"):
        return 0
    return int(text.split(" ", 1)[0].rstrip("+"))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--bin", default=os.path.join(ROOT, "build/release/bin"))
    ap.add_argument("--messages", type=int, default=10000)
    ap.add_argument("--runs", type=int, default=9)
    args = ap.parse_args()
    if os.geteuid() != 0 or not shutil.which("dovecot") or not shutil.which("postfix"):
        print("mail.py: Dovecot and Postfix are started as root (Debian packages dovecot-imapd, "
              "dovecot-lmtpd, postfix)", file=sys.stderr)
        return 69
    work = tempfile.mkdtemp(prefix="sion-bench-mail.")
    os.chmod(work, 0o711)
    peers = os.path.join(work, "peers")
    password = "bench-password"
    try:
        ports = start_peers(peers, password)
        if ports is None:
            print("mail.py: the mail peers did not start", file=sys.stderr)
            return 69
        start = time.perf_counter()
        fill(os.path.join(peers, "dovecot/mail/alice@example.org"), args.messages)
        made = time.perf_counter() - start
        env = dict(os.environ, MAIL_ADDRESS="alice@example.org", MAIL_PASSWORD=password,
                   MAIL_IMAP_URL=f"imap://127.0.0.2:{ports['MAIL_IMAP_PORT']}",
                   MAIL_SMTP_URL=f"smtp://127.0.0.2:{ports['MAIL_SMTP_PORT']}",
                   SSL_CERT_FILE=ports["MAIL_PEERS_CA"])
        for name in ("ALL_PROXY", "all_proxy"):
            env.pop(name, None)
        server = Server(os.path.join(args.bin, "sion-mail"), env)
        start = time.perf_counter()
        _, text, err = server.call("search_mail", {})
        indexed = time.perf_counter() - start
        if err:
            print(f"mail.py: search_mail failed: {text}", file=sys.stderr)
            return 1
        conn = imaplib.IMAP4("127.0.0.2", int(ports["MAIL_IMAP_PORT"]))
        conn.starttls(ssl.create_default_context(cafile=ports["MAIL_PEERS_CA"]))
        conn.login("alice@example.org", password)
        conn.select("INBOX")
        cases = [
            ("every message (no criteria)", {}, "ALL"),
            (f"from:{RARE} (1 in 500)", {"from": RARE}, f'FROM "{RARE}"'),
            ("subject:'Grüße' (1 in 10, non-ASCII)", {"subject": "Grüße"}, 'SUBJECT "Grüße"'),
            ("unseen (1 in 3)", {"unseen": True}, "UNSEEN"),
            ("text:'quincunx' (headers and bodies)", {"text": "quincunx"}, 'TEXT "quincunx"'),
        ]
        print(f"search_mail over {args.messages} messages in Dovecot (written in {made:.1f} s, "
              f"indexed by a first search in {indexed:.1f} s), median of {args.runs}:")
        status = 0
        for label, arguments, criteria in cases:
            ours, theirs = [], []
            count = their_count = 0
            for _ in range(args.runs):
                ms, text, err = server.call("search_mail", arguments)
                if err:
                    print(f"mail.py: search_mail {arguments} failed: {text}", file=sys.stderr)
                    return 1
                ours.append(ms)
                count = matched(text)
                ms, their_count = imaplib_search(conn, criteria)
                theirs.append(ms)
            a, b = statistics.median(ours), statistics.median(theirs)
            goal = "   goal <= 300 ms" if label.startswith(("every", "from")) else ""
            print(f"  {label:40s} {count:6d} match  search_mail {a:7.1f} ms   imaplib {b:7.1f} ms"
                  f"   ratio {a / b:.2f}x{goal}")
            if count != their_count:
                print(f"mail.py: search_mail found {count}, imaplib {their_count}", file=sys.stderr)
                status = 1
        conn.logout()
        server.close()
        return status
    finally:
        subprocess.run(["bash", os.path.join(ROOT, "tests/e2e/mail_peers.sh"), "stop", peers],
                       capture_output=True)
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
