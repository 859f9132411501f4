#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
# The web for the fetch_url and web_search suite (tests/e2e/t0331), on 127.0.0.1 only: real pages
# that nobody here wrote (files of Debian's documentation, given with --page NAME=PATH) and pages
# made to break a reader, and stand-ins of three search APIs written from their documentation:
#   Brave Search   GET /res/v1/web/search?q=&count=&freshness=pd|pw|pm|py, X-Subscription-Token
#   Tavily         POST /search {"query", "max_results", "time_range"}, Authorization: Bearer KEY
#   SearXNG        GET /search?q=&format=json&time_range=day|week|month|year
# Each checks the request as its API documents it and answers 400 naming what is wrong. A query of
# "busy" is answered 429 and "boom" 503; a key "bad" 401, in each API's error form. Every request
# is logged as a JSON line. It ends after --lifetime seconds.
import argparse
import json
import os
import sys
import threading
import time
import urllib.parse
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

KEY = "test-search-key-0123456789"

# A one-page PDF whose text is "Hello from a PDF page.", written by hand (PDF 1.4, 7.5.4's xref).
def pdf():
    objs = [b"<< /Type /Catalog /Pages 2 0 R >>",
            b"<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
            b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 300 144] /Contents 4 0 R "
            b"/Resources << /Font << /F1 5 0 R >> >> >>",
            None,
            b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>"]
    stream = b"BT /F1 12 Tf 20 100 Td (Hello from a PDF page.) Tj ET"
    objs[3] = b"<< /Length %d >>\nstream\n" % len(stream) + stream + b"\nendstream"
    out = b"%PDF-1.4\n"
    offsets = []
    for i, o in enumerate(objs, 1):
        offsets.append(len(out))
        out += b"%d 0 obj\n" % i + o + b"\nendobj\n"
    xref = len(out)
    out += b"xref\n0 %d\n0000000000 65535 f \n" % (len(objs) + 1)
    for off in offsets:
        out += b"%010d 00000 n \n" % off
    out += b"trailer\n<< /Size %d /Root 1 0 R >>\nstartxref\n%d\n%%%%EOF\n" % (len(objs) + 1, xref)
    return out


def results(n, prefix):
    return [{"title": f"{prefix} result {i}", "url": f"https://example.org/{prefix.lower()}/{i}",
             "snippet": f"The <strong>{i}</strong>th thing found."} for i in range(1, n + 1)]


class Handler(BaseHTTPRequestHandler):
    server_version = "standin/1"

    def log_message(self, *args):
        pass

    def log(self, body=None):
        entry = {"method": self.command, "path": self.path, "headers": dict(self.headers)}
        if body is not None:
            entry["body"] = body
        with self.server.lock, open(self.server.log, "a") as f:
            f.write(json.dumps(entry) + "\n")

    def send(self, status, body, ctype="application/json", extra=()):
        if isinstance(body, (dict, list)):
            body = json.dumps(body)
        if isinstance(body, str):
            body = body.encode()
        self.send_response(status)
        self.send_header("Content-Type", ctype)
        self.send_header("Content-Length", str(len(body)))
        for k, v in extra:
            self.send_header(k, v)
        self.end_headers()
        self.wfile.write(body)

    def do_GET(self):
        self.log()
        url = urllib.parse.urlsplit(self.path)
        q = urllib.parse.parse_qs(url.query)
        p = url.path
        if p.startswith("/page/"):
            name = p[len("/page/"):]
            if name not in self.server.pages:
                return self.send(404, "no such page\n", "text/plain")
            return self.send(200, open(self.server.pages[name], "rb").read(), "text/html")
        if p == "/to-page":  # a redirect to a real page, relative
            return self.send(302, b"", "text/plain", [("Location", "/page/" + q["name"][0])])
        if p == "/to-private":  # a redirect to this machine by a name that is not allowed
            return self.send(302, b"", "text/plain",
                             [("Location", f"http://localhost:{self.server.server_port}/page/x")])
        if p == "/loop":
            return self.send(302, b"", "text/plain", [("Location", "/loop")])
        if p == "/big":
            return self.send(200, b"<p>" + b"big " * (2 << 20) + b"</p>", "text/html")
        if p == "/slow":
            time.sleep(60)
            return self.send(200, "<p>late</p>", "text/html")
        if p == "/latin1":
            return self.send(200, "caf\u00e9 cr\u00e8me\n".encode("latin-1"),
                             "text/plain; charset=ISO-8859-1")
        if p == "/bogus-charset":
            return self.send(200, b"plain words \xff\n", "text/plain; charset=x-no-such-charset")
        if p == "/meta-charset":
            return self.send(200, "<html><head><meta charset=\"windows-1252\"><title>Meta"
                             "</title></head><body><p>na\u00efve \u201cquotes\u201d</p></body>"
                             "</html>".encode("cp1252"), "text/html")
        if p == "/data.json":
            return self.send(200, {"answer": 42})
        if p == "/picture.png":
            return self.send(200, b"\x89PNG\r\n\x1a\n" + b"\0" * 64, "image/png")
        if p == "/doc.pdf":
            return self.send(200, pdf(), "application/pdf")
        if p == "/res/v1/web/search":
            return self.brave(q)
        if p == "/search":
            return self.searxng(q)
        return self.send(404, "no such page\n", "text/plain")

    def do_POST(self):
        length = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(length)
        try:
            body = json.loads(raw)
        except ValueError:
            body = None
        self.log(body)
        if self.path != "/search":
            return self.send(404, {"detail": {"error": "Not Found"}})
        return self.tavily(body)

    # https://api-dashboard.search.brave.com/app/documentation/web-search/get-started
    def brave(self, q):
        token = self.headers.get("X-Subscription-Token")
        if token == "bad":
            return self.send(401, {"type": "ErrorResponse", "error": {
                "code": "SUBSCRIPTION_TOKEN_INVALID", "detail": "The provided subscription token is invalid.", "status": 401}})
        if token != KEY:
            return self.send(400, {"error": {"detail": f"X-Subscription-Token is {token!r}"}})
        if "application/json" not in (self.headers.get("Accept") or ""):
            return self.send(400, {"error": {"detail": "Accept must take application/json"}})
        query = q.get("q", [""])[0]
        count = int(q.get("count", ["20"])[0])
        fresh = q.get("freshness", [None])[0]
        if not query or not 1 <= count <= 20 or fresh not in (None, "pd", "pw", "pm", "py"):
            return self.send(422, {"error": {"detail": f"bad parameters: {q}"}})
        if query == "busy":
            return self.send(429, {"type": "ErrorResponse", "error": {
                "code": "RATE_LIMITED", "detail": "Request rate limit exceeded for plan.", "status": 429}})
        if query == "boom":
            return self.send(503, "upstream unavailable", "text/plain")
        hits = [{"title": r["title"], "url": r["url"], "description": r["snippet"]}
                for r in results(count, "Brave")]
        if fresh:
            hits[0]["title"] += f" ({fresh})"
        return self.send(200, {"type": "search", "query": {"original": query},
                               "web": {"type": "search", "results": hits}})

    # https://docs.tavily.com/documentation/api-reference/endpoint/search
    def tavily(self, body):
        auth = self.headers.get("Authorization") or ""
        if auth == "Bearer bad":
            return self.send(401, {"detail": {"error": "Unauthorized: missing or invalid API key."}})
        if auth != "Bearer " + KEY:
            return self.send(400, {"detail": {"error": f"Authorization is {auth!r}"}})
        if not isinstance(body, dict) or not isinstance(body.get("query"), str):
            return self.send(400, {"detail": {"error": "query is required"}})
        n = body.get("max_results", 5)
        tr = body.get("time_range")
        if not isinstance(n, int) or not 0 <= n <= 20 or tr not in (None, "day", "week", "month", "year"):
            return self.send(400, {"detail": {"error": f"bad parameters: {body}"}})
        if body["query"] == "busy":
            return self.send(429, {"detail": {"error": "Your request has been blocked due to excessive requests."}})
        if body["query"] == "boom":
            return self.send(500, {"detail": {"error": "Internal Server Error"}})
        hits = [{"title": r["title"], "url": r["url"], "content": r["snippet"], "score": 0.9}
                for r in results(n, "Tavily")]
        if tr:
            hits[0]["title"] += f" ({tr})"
        return self.send(200, {"query": body["query"], "results": hits, "response_time": 0.1})

    # https://docs.searxng.org/dev/search_api.html
    def searxng(self, q):
        if q.get("format", [""])[0] != "json":
            return self.send(403, "format must be json", "text/html")
        query = q.get("q", [""])[0]
        tr = q.get("time_range", [None])[0]
        if not query or tr not in (None, "day", "week", "month", "year"):
            return self.send(400, "bad parameters", "text/html")
        if query == "boom":
            return self.send(502, "Bad Gateway", "text/html")
        hits = [{"title": r["title"], "url": r["url"], "content": r["snippet"], "engine": "x"}
                for r in results(12, "SearXNG")]
        if tr:
            hits[0]["title"] += f" ({tr})"
        return self.send(200, {"query": query, "number_of_results": 12, "results": hits})


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--port-file", required=True)
    ap.add_argument("--log", required=True)
    ap.add_argument("--page", action="append", default=[])
    ap.add_argument("--lifetime", type=float, default=300)
    a = ap.parse_args()
    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    server.daemon_threads = True
    server.log = a.log
    server.lock = threading.Lock()
    server.pages = dict(p.split("=", 1) for p in a.page)
    threading.Timer(a.lifetime, lambda: os._exit(0)).start()
    with open(a.port_file + ".tmp", "w") as f:
        f.write(str(server.server_port))
    os.rename(a.port_file + ".tmp", a.port_file)
    server.serve_forever()


if __name__ == "__main__":
    main()
