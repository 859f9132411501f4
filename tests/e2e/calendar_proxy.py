#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
# A forward proxy for t0680: CONNECT tunnels (https) and absolute-form requests (http), on
# 127.0.0.1 and a free port it prints; each request's line (method and target) is appended to the
# file named by its one argument, so that the suite can tell what went through it.
import http.client
import socket
import socketserver
import sys
import threading

LOG = sys.argv[1]


def note(line):
    with open(LOG, "a") as f:
        f.write(line + "\n")


def pipe(a, b):
    try:
        while True:
            chunk = a.recv(65536)
            if not chunk:
                break
            b.sendall(chunk)
    except OSError:
        pass
    finally:
        try:
            b.shutdown(socket.SHUT_WR)
        except OSError:
            pass


class Handler(socketserver.StreamRequestHandler):
    def handle(self):
        line = self.rfile.readline(65536).decode("latin-1").rstrip("\r\n")
        if not line:
            return
        method, target, _ = line.split(" ", 2)
        headers = []
        while True:
            h = self.rfile.readline(65536).decode("latin-1")
            if h in ("\r\n", "\n", ""):
                break
            headers.append(h.rstrip("\r\n"))
        note(f"{method} {target}")
        if method == "CONNECT":
            host, port = target.rsplit(":", 1)
            upstream = socket.create_connection((host, int(port)), 30)
            self.wfile.write(b"HTTP/1.1 200 Connection established\r\n\r\n")
            self.wfile.flush()
            t = threading.Thread(target=pipe, args=(upstream, self.connection), daemon=True)
            t.start()
            pipe(self.connection, upstream)
            t.join(60)
            upstream.close()
            return
        # http://host:port/path
        rest = target.split("://", 1)[1]
        hostport, _, path = rest.partition("/")
        host, _, port = hostport.partition(":")
        length = 0
        out = {}
        for h in headers:
            k, _, v = h.partition(":")
            if k.lower() in ("proxy-connection", "connection", "keep-alive"):
                continue
            out[k] = v.strip()
            if k.lower() == "content-length":
                length = int(v)
        body = self.rfile.read(length) if length else None
        c = http.client.HTTPConnection(host, int(port or 80), timeout=30)
        c.request(method, "/" + path, body=body, headers=out)
        r = c.getresponse()
        data = r.read()
        self.wfile.write(f"HTTP/1.1 {r.status} {r.reason}\r\n".encode())
        for k, v in r.getheaders():
            if k.lower() not in ("transfer-encoding", "connection", "content-length"):
                self.wfile.write(f"{k}: {v}\r\n".encode("latin-1"))
        self.wfile.write(f"Content-Length: {len(data)}\r\nConnection: close\r\n\r\n".encode())
        self.wfile.write(data)


class Server(socketserver.ThreadingTCPServer):
    daemon_threads = True
    allow_reuse_address = True


s = Server(("127.0.0.1", 0), Handler)
print(s.server_address[1], flush=True)
s.serve_forever()
