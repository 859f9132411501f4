#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""A stand-in for Google's Gemini API (generateContent), written from Google's documentation.

It listens on 127.0.0.1 (an unused port, written to --port-file once it listens) and CHECKS each
request as Gemini would: POST /v1beta/models/<model>:streamGenerateContent?alt=sse (or
:generateContent); x-goog-api-key one of --api-key (KEY=STATUS refuses that key with STATUS); a
body of contents whose roles alternate from the user's, parts of known kinds, function responses
answering the calls of the model turn before them, one for each, in order, tools declared for
every call, and inlineData of a mimeType and base64 data (a picture of a type Gemini reads, PNG,
JPEG, WebP, HEIC or HEIF, its bytes of that type). Gemini 3's rule on thought signatures: in the
current turn (since the last user content that is not only function responses) the first
functionCall part of every model step carries a thoughtSignature; and every part it signed comes
back exactly as it sent it (its text runs joined), the signature on the same part. A request that fails a check is answered 400
INVALID_ARGUMENT with what was wrong. Vertex AI's stand-in (vertex_server.py) uses the same checks.

Answers come from --script, {"turns": [TURN, ...]}, one a request that passed:
  {"parts": [...], "finishReason": "STOP", "usage": {...}}  streamed as Server-Sent Events with
      CRLF line ends, each part its own event, a text part cut in two events (its thoughtSignature
      on the second), the finishReason and usageMetadata on the last
  {"status": 503, "message": "..."}   an error, Google-shaped, with RetryInfo for 429 and 503
  {"stream_error": {"code": 503, "message": "..."}, "parts": [...]}  the parts, then an error event
  {"cut": true, "parts": [...]}       the parts, then the stream ends with no finishReason
  {"malformed": "text"}               200, text/event-stream, this as the one event's data
  "refuse_kept": true on a turn: a request that gives a signature back is refused (400) and the
      turn waits for the next request
  "toolless": true on a turn: it answers only a request that declares no tools, which takes the
      first such turn left (a summary the client asks for whenever it does)
Every request is logged, one JSON line each, to --log: {"path", "headers", "body", "verdict",
"kept_start"} (standin.py's kept_start(): whether the body starts byte for byte as the one before
it did, up to that one's last turn).
It stops when killed or after --lifetime seconds.
"""

import argparse
import base64
import json
import os
import re
import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

sys.dont_write_bytecode = True  # no __pycache__ beside the sources
import standin  # noqa: E402

PART_KINDS = {"text", "inlineData", "fileData", "functionCall", "functionResponse", "executableCode",
              "codeExecutionResult"}
PART_EXTRAS = {"thought", "thoughtSignature"}
UNSIGNED = "skip_thought_signature_validator"
# The pictures Gemini reads (its documentation's list); a GIF is none of them.
IMAGE_TYPES = {"image/png", "image/jpeg", "image/webp", "image/heic", "image/heif"}


class Refusal(Exception):
    pass


def refuse(message, status=400, code="INVALID_ARGUMENT"):
    raise Refusal((status, code, message))


def inline_fault(data):
    """What is wrong with an inlineData part's value, or None."""
    if not isinstance(data, dict) or set(data) != {"mimeType", "data"}:
        return "inlineData is not {mimeType, data}"
    kind = data["mimeType"]
    if isinstance(kind, str) and kind.startswith("image/") and kind not in IMAGE_TYPES:
        return f"Unsupported MIME type: {kind}"
    if kind in standin.PICTURE_TYPES:
        return standin.picture_fault(kind, data["data"])
    try:
        base64.b64decode(data["data"], validate=True)
    except (TypeError, ValueError):
        return "inlineData.data is not base64"
    return None


def check_contents(body):
    """The checks Gemini makes of a body; returns the model turns' indexes in contents."""
    contents = body.get("contents")
    if not isinstance(contents, list) or not contents:
        refuse("contents is not specified")
    declared = set()
    for tool in body.get("tools", []):
        for d in tool.get("functionDeclarations", []):
            if not isinstance(d.get("parametersJsonSchema", d.get("parameters")), dict):
                refuse(f"function {d.get('name')} has no schema")
            declared.add(d["name"])
    pending = []  # the calls of the last model turn, to be answered
    for i, c in enumerate(contents):
        want = "user" if i % 2 == 0 else "model"
        if c.get("role") != want:
            refuse(f"contents[{i}].role is {c.get('role')}, want {want}")
        parts = c.get("parts")
        if not isinstance(parts, list) or not parts:
            refuse(f"contents[{i}].parts must not be empty")
        responses = []
        for j, p in enumerate(parts):
            kinds = [k for k in p if k in PART_KINDS]
            if len(kinds) != 1 or any(k not in PART_KINDS | PART_EXTRAS for k in p):
                refuse(f"contents[{i}].parts[{j}] is not one known part: {sorted(p)}")
            kind = kinds[0]
            if kind == "functionCall":
                if want != "model" or p["functionCall"].get("name") not in declared:
                    refuse(f"contents[{i}].parts[{j}]: a call of an undeclared function")
                if not isinstance(p["functionCall"].get("args", {}), dict):
                    refuse(f"contents[{i}].parts[{j}]: args is not an object")
            if kind == "functionResponse":
                fr = p["functionResponse"]
                if want != "user" or not isinstance(fr.get("response"), dict):
                    refuse(f"contents[{i}].parts[{j}]: a malformed functionResponse")
                responses.append(fr)
            if kind == "inlineData" and (fault := inline_fault(p["inlineData"])):
                refuse(f"contents[{i}].parts[{j}]: {fault}")
        if want == "model":
            pending = [p["functionCall"] for p in parts if "functionCall" in p]
        else:
            if pending and [r["name"] for r in responses] != [c["name"] for c in pending]:
                refuse(f"contents[{i}]: the function responses do not answer the calls of the turn before, in order")
            for r, call in zip(responses, pending):
                if "id" in r and r["id"] != call.get("id"):
                    refuse(f"contents[{i}]: a function response names the id of no call")
            if responses and not pending:
                refuse(f"contents[{i}]: function responses to no call")
            pending = []
    # Gemini 3 checks the current turn: the first call of every step carries a signature.
    start = 0
    for i, c in enumerate(contents):
        if c["role"] == "user" and any("functionResponse" not in p for p in c["parts"]):
            start = i
    for i in range(start, len(contents)):
        calls = [p for p in contents[i]["parts"] if "functionCall" in p]
        if calls and "thoughtSignature" not in calls[0]:
            refuse(f"Function call is missing a thought_signature in functionCall parts (contents[{i}])")
    gen = body.get("generationConfig", {})
    if not isinstance(gen.get("maxOutputTokens", 1), int) or gen.get("maxOutputTokens", 1) <= 0:
        refuse("generationConfig.maxOutputTokens is not a positive number")
    thinking = gen.get("thinkingConfig", {})
    if "thinkingLevel" in thinking and "thinkingBudget" in thinking:
        refuse("thinkingLevel and thinkingBudget cannot both be set")
    return [i for i, c in enumerate(contents) if c["role"] == "model"]


def kept_parts(parts):
    """What a client that keeps the answer's parts gives back: thought summaries left out unless signed."""
    return [p for p in parts if not p.get("thought") or "thoughtSignature" in p]


class Script:
    """The turns a stand-in plays, and the signed parts that must come back.

    A turn marked "toolless": true answers only a request that declares no tools (a summary the
    client asks for), and such a request takes the first of those left, if any: so a script need
    not know when the client will ask. A model turn that carries a signature the stand-in sent must
    come back as it was sent, wherever it is in contents (a client may leave earlier turns out)."""

    def __init__(self, path):
        with open(path) as f:
            self.turns = json.load(f)["turns"]
        self.taken = [False] * len(self.turns)
        self.signed = {}  # a signature sent -> the parts of its turn, as they must come back
        self.lock = threading.Lock()

    def turn(self, body=None):
        toolless = isinstance(body, dict) and not body.get("tools")
        with self.lock:
            free = [i for i, taken in enumerate(self.taken) if not taken]
            marked = [i for i in free if self.turns[i].get("toolless")]
            if toolless and marked:
                return self.turns[marked[0]]
            rest = [i for i in free if not self.turns[i].get("toolless")]
            return self.turns[rest[0]] if rest else None

    def check_signed(self, contents, model_turns, turn):
        given = any("thoughtSignature" in p and p["thoughtSignature"] != UNSIGNED
                    for c in contents for p in c["parts"])
        if turn.get("refuse_kept"):
            if given:
                refuse("Corrupted thought signature.")
            return
        for index in model_turns:
            parts = contents[index]["parts"]
            for p in parts:
                want = self.signed.get(p.get("thoughtSignature"))
                if want is not None and parts != want:
                    refuse(f"model turn contents[{index}] does not come back as it was sent, its signatures on their parts")

    def used(self, turn, model_turns):
        with self.lock:
            self.taken[next(i for i, t in enumerate(self.turns) if t is turn)] = True
            parts = turn.get("parts", [])
            if "status" not in turn:
                for p in parts:
                    if "thoughtSignature" in p:
                        self.signed[p["thoughtSignature"]] = kept_parts(parts)


def sse_events(parts):
    """The parts as a stream sends them: each its own event, a text cut in two."""
    for p in parts:
        if "text" in p and len(p["text"]) > 1:
            half = len(p["text"]) // 2
            first = {k: v for k, v in p.items() if k != "thoughtSignature"}
            first["text"] = p["text"][:half]
            second = dict(p)
            second["text"] = p["text"][half:]
            yield [first]
            yield [second]
        else:
            yield [p]


def google_error(status, message):
    names = {400: "INVALID_ARGUMENT", 403: "PERMISSION_DENIED", 404: "NOT_FOUND", 429: "RESOURCE_EXHAUSTED",
             500: "INTERNAL", 503: "UNAVAILABLE", 504: "DEADLINE_EXCEEDED"}
    error = {"code": status, "message": message, "status": names.get(status, "UNKNOWN")}
    if status in (429, 503):
        error["details"] = [{"@type": "type.googleapis.com/google.rpc.RetryInfo", "retryDelay": "1s"}]
    return {"error": error}


class Handler(BaseHTTPRequestHandler):
    """Answers generateContent; a subclass says how a request is authorized and where models are."""

    protocol_version = "HTTP/1.1"
    path_pattern = re.compile(r"/v1beta/models/([^/:]+):(streamGenerateContent|generateContent)")

    def log_message(self, *args):
        pass

    def send_json(self, status, body, close=False):
        data = json.dumps(body).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json; charset=UTF-8")
        self.send_header("Content-Length", str(len(data)))
        if close:
            self.send_header("Connection", "close")
        self.end_headers()
        self.wfile.write(data)

    def authorize(self):
        key = self.headers.get("x-goog-api-key")
        keys = self.server.keys
        if key not in keys:
            refuse("API key not valid. Please pass a valid API key.", 400)
        if keys[key]:
            refuse("this key is limited" if keys[key] == 429 else "this key is refused", keys[key],
                   "RESOURCE_EXHAUSTED" if keys[key] == 429 else "PERMISSION_DENIED")

    def log_entry(self, entry):
        with self.server.log_lock, open(self.server.args.log, "a") as f:
            f.write(json.dumps(entry) + "\n")

    def kept_start(self, raw, turns_key):
        """standin.py's kept_start() of this request's body against the one before it."""
        text = raw.decode("utf-8", "replace")
        with self.server.log_lock:
            kept = standin.kept_start(self.server.previous, text, turns_key)
            self.server.previous = text
        return kept

    def read_body(self):
        return self.rfile.read(int(self.headers.get("Content-Length", "0")))

    def do_POST(self):
        raw = self.read_body()
        path, _, query = self.path.partition("?")
        entry = {"path": self.path, "headers": {k.lower(): v for k, v in self.headers.items()}}
        try:
            m = self.path_pattern.fullmatch(path)
            if not m:
                refuse(f"no method at {path}", 404, "NOT_FOUND")
            model, method = m.group(1), m.group(2)
            if self.server.args.model and model != self.server.args.model:
                refuse(f"models/{model} is not found", 404, "NOT_FOUND")
            self.authorize()
            try:
                body = json.loads(raw)
            except ValueError:
                refuse("Invalid JSON payload received.")
            entry["body"] = body
            entry["kept_start"] = self.kept_start(raw, "contents")
            model_turns = check_contents(body)
            turn = self.server.script.turn(body)
            if turn is None:
                refuse("the stand-in has no turn left", 500, "INTERNAL")
            self.server.script.check_signed(body["contents"], model_turns, turn)
        except Refusal as r:
            status, code, message = r.args[0]
            entry["verdict"] = f"{status} {code}: {message}"
            self.log_entry(entry)
            self.send_json(status, google_error(status, message))
            return
        self.server.script.used(turn, model_turns)
        entry["verdict"] = "answered"
        self.log_entry(entry)
        self.answer(turn, method == "streamGenerateContent" and query == "alt=sse")

    def answer(self, turn, streamed):
        if "status" in turn:
            self.send_json(turn["status"], google_error(turn["status"], turn.get("message", "")))
            return
        usage = {"promptTokenCount": 100, "candidatesTokenCount": 10, "totalTokenCount": 110}
        usage.update(turn.get("usage", {}))
        last = {"candidates": [{"content": {"role": "model", "parts": []},
                                "finishReason": turn.get("finishReason", "STOP"), "index": 0}],
                "usageMetadata": usage, "modelVersion": "stand-in"}
        if not streamed:
            last["candidates"][0]["content"]["parts"] = turn.get("parts", [])
            self.send_json(200, last)
            return
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Connection", "close")
        self.end_headers()
        self.close_connection = True
        if "malformed" in turn:
            self.wfile.write(b"data: " + turn["malformed"].encode() + b"\r\n\r\n")
            return
        for parts in sse_events(turn.get("parts", [])):
            chunk = {"candidates": [{"content": {"role": "model", "parts": parts}, "index": 0}]}
            self.wfile.write(b"data: " + json.dumps(chunk).encode() + b"\r\n\r\n")
            self.wfile.flush()
        if "stream_error" in turn:
            error = google_error(turn["stream_error"]["code"], turn["stream_error"]["message"])
            self.wfile.write(b"data: " + json.dumps(error).encode() + b"\r\n\r\n")
            return
        if turn.get("cut"):
            return
        self.wfile.write(b"data: " + json.dumps(last).encode() + b"\r\n\r\n")


def serve(handler, args, **extra):
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    server.args = args
    server.script = Script(args.script)
    server.log_lock = threading.Lock()
    server.previous = None  # the last request's body, as text
    server.keys = {}
    for given in getattr(args, "api_key", []):
        key, _, status = given.partition("=")
        server.keys[key] = int(status) if status else 0
    for name, value in extra.items():
        setattr(server, name, value)
    with open(args.port_file + ".tmp", "w") as f:
        f.write(str(server.server_address[1]))
    os.rename(args.port_file + ".tmp", args.port_file)
    stop = threading.Timer(args.lifetime, server.shutdown)
    stop.daemon = True
    stop.start()
    server.serve_forever()


def arguments(description):
    p = argparse.ArgumentParser(description=description)
    p.add_argument("--port-file", required=True)
    p.add_argument("--script", required=True)
    p.add_argument("--log", required=True)
    p.add_argument("--model", default="")
    p.add_argument("--api-key", action="append", default=[], help="KEY or KEY=STATUS to refuse it")
    p.add_argument("--lifetime", type=float, default=300, help="seconds before it stops by itself")
    return p


def main():
    serve(Handler, arguments(__doc__.splitlines()[0]).parse_args())


if __name__ == "__main__":
    sys.exit(main())
