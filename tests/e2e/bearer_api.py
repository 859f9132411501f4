#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""An HTTPS API stand-in that wants `Authorization: Bearer <token>`, for the grants' suites.

bearer_api.py ADDRESS CERT TOKEN_FILE LOG PORT_FILE: listens on ADDRESS (a loopback address) at
a port of the kernel's, written to PORT_FILE once it listens, with CERT (a certificate and its key,
PEM). Every request is answered 200 {"path": …, "authorized": true} when it carries the token, else
401 {"path": …, "authorized": false}, and logged to LOG as a JSON line: its path, whether it had an
Authorization header, and whether that was the token (never the header itself). It ends after
five minutes whatever happens: a stand-in a test forgot must not outlive it for long."""
import http.server
import json
import os
import ssl
import sys
import threading

address, cert, token_file, log_path, port_file = sys.argv[1:6]
token = open(token_file).read().strip()


class Api(http.server.BaseHTTPRequestHandler):
    def do_GET(self):
        given = self.headers.get("Authorization")
        authorized = given == "Bearer " + token
        with open(log_path, "a") as log:
            log.write(json.dumps({"address": address, "path": self.path,
                                  "authorization": given is not None,
                                  "authorized": authorized}) + "\n")
        body = json.dumps({"path": self.path, "authorized": authorized}).encode()
        self.send_response(200 if authorized else 401)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *_):
        pass


server = http.server.ThreadingHTTPServer((address, 0), Api)
context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
context.load_cert_chain(cert)
server.socket = context.wrap_socket(server.socket, server_side=True)
with open(port_file + ".tmp", "w") as f:
    f.write(str(server.server_address[1]))
os.rename(port_file + ".tmp", port_file)
threading.Timer(300, lambda: os._exit(0)).start()
server.serve_forever()
