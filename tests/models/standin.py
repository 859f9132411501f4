# SPDX-License-Identifier: MIT
"""What the stand-ins of model providers share (Python standard library only).

A stand-in listens on 127.0.0.1 on a port the kernel picks, writes the port to --port-file once it
listens, and answers each request with the next reply of its --script (a JSON list; a reply with
"key" is only for requests made with that key). Every request is logged to --log as one JSON line:
{"path", "headers" (names lowercase), "body" (parsed JSON, or the text), "key", "violations"}. A
request that breaks the provider's documented rules gets HTTP 400 with what was wrong, which the
log keeps, so a suite can check that sion sent nothing wrong; a reply marked "toolless": true
answers only a request that declares no tools, which takes the first such reply left (a summary
the client asks for whenever it does); a request the script has no reply
for is logged as {"unanswered": path} and gets HTTP 500. Each entry's "kept_start" says whether
the request's text starts byte for byte as the one before it did, up to that one's last turn
(kept_start(): what a provider's prompt cache needs); null for the first. "members" lists the
body's members in the order they were sent (the log's "body" has its keys sorted). It stops on
SIGTERM or after --lifetime seconds, whichever is first. With --tls it speaks HTTPS. picture_fault() and data_url_fault() check
a picture as the providers take it: of a type they share, in base64, its bytes of that type.

Failure replies any stand-in understands:
  {"status": 529, "message": "Overloaded", "headers": {"retry-after": "1"}}   an error status
  {"slow": 5}                                 sleeps this long before the rest of the reply
  {"garbage": true}                           a 200 whose body is not what the API sends
  {"hold": FILE, "hold_after": N}             a stream stops after its first N events (0) until FILE
                                              exists (at most 60 s), and is logged {"holding": FILE}
"""
import argparse
import base64
import binascii
import json
import os
import re
import signal
import ssl
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


class Standin:
    """One provider's rules: subclasses check requests and write replies."""

    turns_key = "messages"  # the body's member that holds the conversation

    def __init__(self, args):
        self.args = args
        with open(args.script, encoding="utf-8") as f:
            self.replies = json.load(f)
        self.used = [False] * len(self.replies)
        self.lock = threading.Lock()
        self.log = open(args.log, "a", encoding="utf-8")
        self.previous = None  # the last request's text

    # --- for subclasses -------------------------------------------------------------------------
    def key_of(self, headers):
        """The key a request was made with, or None."""
        raise NotImplementedError

    def check(self, path, headers, body):
        """What breaks the provider's rules (sion's mistakes), and what the provider refuses that
        sion may have had no way to know (reasoning that no longer checks): two lists."""
        raise NotImplementedError

    def error_body(self, status, message):
        raise NotImplementedError

    def answer(self, handler, reply, body):
        """Writes a 200 reply to `handler` for the request `body`."""
        raise NotImplementedError

    # --- shared ---------------------------------------------------------------------------------
    def next_reply(self, key, toolless=False):
        """The first reply left for a request made with `key`. A reply marked "toolless": true
        answers only a request that declares no tools (a summary the client asks for), and such a
        request takes the first of those left, if any."""
        with self.lock:
            free = [i for i, reply in enumerate(self.replies)
                    if not self.used[i] and reply.get("key") in (None, key)]
            marked = [i for i in free if self.replies[i].get("toolless")]
            rest = [i for i in free if not self.replies[i].get("toolless")]
            pick = marked if toolless and marked else rest
            if not pick:
                return None
            self.used[pick[0]] = True
            return self.replies[pick[0]]

    def note(self, entry):
        with self.lock:
            self.log.write(json.dumps(entry, sort_keys=True) + "\n")
            self.log.flush()

    def handle(self, handler):
        length = int(handler.headers.get("Content-Length") or 0)
        raw = handler.rfile.read(length).decode("utf-8", "replace")
        headers = {k.lower(): v for k, v in handler.headers.items()}
        try:
            body = json.loads(raw)
        except ValueError:
            body = raw
        key = self.key_of(headers)
        violations, refusals = ["the body is not a JSON object"], []
        if isinstance(body, dict):
            violations, refusals = self.check(handler.path, headers, body)
        with self.lock:
            kept = kept_start(self.previous, raw, self.turns_key)
            self.previous = raw
        self.note({"path": handler.path, "headers": headers, "body": body, "key": key,
                   "violations": violations, "refusals": refusals, "kept_start": kept,
                   "members": list(body) if isinstance(body, dict) else []})
        if violations or refusals:
            return self.send_json(handler, 400, self.error_body(400, "; ".join(violations + refusals)))
        if not key_allowed(self.args, key):
            return self.send_json(handler, 401, self.error_body(401, "invalid x-api-key"))
        reply = self.next_reply(key, isinstance(body, dict) and not body.get("tools"))
        if reply is None:
            self.note({"unanswered": handler.path})
            return self.send_json(handler, 500, self.error_body(500, "the script has no reply left"))
        if reply.get("slow"):
            time.sleep(reply["slow"])
        if reply.get("status", 200) != 200:
            return self.send_json(handler, reply["status"],
                                  self.error_body(reply["status"], reply.get("message", "failed")),
                                  reply.get("headers", {}))
        if reply.get("garbage"):
            return self.send_raw(handler, 200, "application/json", b"<html>not JSON</html>")
        self.answer(handler, reply, body)

    def send_json(self, handler, status, obj, headers=None):
        self.send_raw(handler, status, "application/json", json.dumps(obj).encode(), headers)

    def send_raw(self, handler, status, content_type, data, headers=None):
        handler.send_response(status)
        handler.send_header("Content-Type", content_type)
        handler.send_header("Content-Length", str(len(data)))
        for name, value in (headers or {}).items():
            handler.send_header(name, value)
        handler.end_headers()
        handler.wfile.write(data)

    def hold(self, path):
        """Waits until the file `path` exists, at most 60 seconds: true when it came."""
        self.note({"holding": path})
        deadline = time.monotonic() + 60
        while not os.path.exists(path):
            if time.monotonic() > deadline:
                return False
            time.sleep(0.02)
        return True

    def start_stream(self, handler):
        handler.send_response(200)
        handler.send_header("Content-Type", "text/event-stream")
        handler.send_header("Cache-Control", "no-cache")
        handler.send_header("Connection", "close")
        handler.end_headers()
        handler.close_connection = True

    def write_events(self, handler, events, reply):
        """Writes SSE events ((name or None, data text)), as the reply's framing asks: "crlf" line
        ends, "split" (each event in two writes, cut in its middle), comments between events."""
        end = "\r\n" if reply.get("crlf") else "\n"
        for n, (name, data) in enumerate(events):
            if reply.get("hold") and n == reply.get("hold_after", 0):
                if not self.hold(reply["hold"]):
                    return
            text = ""
            if name is not None:
                text += "event: " + name + end
            text += "data: " + data + end + end
            if reply.get("comments"):
                text = ": keep-alive" + end + end + text
            pieces = [text[:len(text) // 2], text[len(text) // 2:]] if reply.get("split") else [text]
            for piece in pieces:
                handler.wfile.write(piece.encode())
                handler.wfile.flush()
                if reply.get("split"):
                    time.sleep(0.002)


def serve(standin_class, description):
    parser = argparse.ArgumentParser(description=description)
    parser.add_argument("--port-file", required=True)
    parser.add_argument("--script", required=True)
    parser.add_argument("--log", required=True)
    parser.add_argument("--keys", default="", help="comma-separated keys it takes; any when empty")
    parser.add_argument("--lifetime", type=float, default=300)
    parser.add_argument("--tls", help="a PEM file with its certificate and key: speak HTTPS")
    standin_class.add_arguments(parser)
    args = parser.parse_args()
    standin = standin_class(args)

    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def do_POST(self):  # noqa: N802 (http.server's name)
            try:
                standin.handle(self)
            except (BrokenPipeError, ConnectionResetError):
                pass

        def do_GET(self):  # noqa: N802 (http.server's name)
            """Stand-ins that serve GET (an issuer's pages and keys) define handle_get."""
            try:
                if hasattr(standin, "handle_get"):
                    standin.handle_get(self)
                else:
                    self.send_error(405)
            except (BrokenPipeError, ConnectionResetError):
                pass

        def log_message(self, *_):
            pass

    class Server(ThreadingHTTPServer):
        daemon_threads = True
        allow_reuse_address = True

    server = Server(("127.0.0.1", 0), Handler)
    standin.url = "http://127.0.0.1:%d" % server.server_address[1]
    if args.tls:
        # The handshake is made as a connection is taken: one the client breaks off (a certificate
        # it does not trust) ends there, logged as nothing.
        context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        context.load_cert_chain(args.tls)
        server.socket = context.wrap_socket(server.socket, server_side=True)
        standin.url = "https://localhost:%d" % server.server_address[1]
    tmp = args.port_file + ".tmp"
    with open(tmp, "w", encoding="utf-8") as f:
        f.write(str(server.server_address[1]))
    os.rename(tmp, args.port_file)
    signal.signal(signal.SIGTERM, lambda *_: threading.Thread(target=server.shutdown).start())
    threading.Timer(args.lifetime, server.shutdown).start()
    server.serve_forever(poll_interval=0.05)
    os._exit(0)


def kept_start(previous, text, turns_key):
    """Whether the request body `text` starts byte for byte as `previous` (the request before it)
    did, up to the last turn of `previous`'s conversation (its member `turns_key`): the start a
    provider's prompt cache holds. None when there is no previous request with a conversation. The
    last turn is found as json.dumps writes it compactly, so a sender that writes it otherwise is
    told False, never True."""
    if previous is None:
        return None
    try:
        turns = json.loads(previous)[turns_key]
        last = json.dumps(turns[-1], separators=(",", ":"), ensure_ascii=False)
    except (ValueError, KeyError, IndexError, TypeError):
        return None
    at = previous.rfind(last)
    return at > 0 and text.startswith(previous[:at])


def key_allowed(args, key):
    keys = [k for k in args.keys.split(",") if k]
    return not keys or key in keys


# The pictures the providers sion speaks share, known by their first bytes.
PICTURE_TYPES = ("image/png", "image/jpeg", "image/gif", "image/webp")


def picture_kind(data):
    """The media type of the bytes `data` by their signature, or None."""
    if data.startswith(b"\x89PNG\r\n\x1a\n"):
        return "image/png"
    if data.startswith(b"\xff\xd8\xff"):
        return "image/jpeg"
    if data.startswith((b"GIF87a", b"GIF89a")):
        return "image/gif"
    if len(data) >= 12 and data.startswith(b"RIFF") and data[8:12] == b"WEBP":
        return "image/webp"
    return None


def picture_fault(media_type, data):
    """What is wrong with a picture sent as `media_type` and the base64 text `data`, or None: the
    type one of PICTURE_TYPES, the text base64 (padded, no other characters), and its bytes a
    picture of that type."""
    if media_type not in PICTURE_TYPES:
        return "media type %r is not one of %s" % (media_type, ", ".join(PICTURE_TYPES))
    try:
        raw = base64.b64decode(data, validate=True) if isinstance(data, str) and data else None
    except (binascii.Error, ValueError):
        raw = None
    if raw is None or len(data) % 4:
        return "the data is not base64"
    kind = picture_kind(raw)
    if kind != media_type:
        return "the data is %s, not %s" % (kind or "no picture", media_type)
    return None


def data_url_fault(url):
    """What is wrong with a picture sent as a data URL (data:image/png;base64,…), or None."""
    m = re.fullmatch(r"data:([^;,]+);base64,(.*)", url, re.S) if isinstance(url, str) else None
    if not m:
        return "not a data URL of base64"
    return picture_fault(m.group(1), m.group(2))
