#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""A stand-in for AWS Bedrock's Converse API, written from AWS's documentation, for tests.

It listens on 127.0.0.1 (an unused port, written to --port-file once it listens) and CHECKS each
request as Bedrock would: POST /model/<model id, percent-encoded>/converse; a Signature Version 4
signature it recomputes itself from what it received (the path encoded once more, as for every
service but S3), with the given access key, for the region and service "bedrock", made within 15
minutes, a session token signed when one is given; or a bearer token that is one of --api-key; and
a Converse body: roles alternating from the user's, blocks of known kinds, text not blank, tool
results answering the calls of the turn before (their content json, text, image, document or
video blocks), tools declared when the conversation has calls, images of format png, jpeg, gif or
webp whose source.bytes is base64 of a picture of that format.
For Claude's and Nova's models it checks the cache points (after the system prompt and at the end
of the conversation) and that the reasoning it signed comes back, before the turn's other blocks,
exactly as it was sent. A request that fails a check is answered 400 ValidationException with what
was wrong.

Answers come from --script, a JSON file {"turns": [TURN, ...]}, one a request that passed:
  {"content": [blocks], "stopReason": "tool_use", "usage": {...}}  a Converse answer
  {"status": 429, "type": "ThrottlingException", "message": "..."}  an error (x-amzn-ErrorType)
  {"malformed": "text"}                                             200 with this body
  {"cut": true}                                                     200, the body cut short
A turn may also hold "refuse_kept": true: a request that gives reasoning back is then refused
(400, as Bedrock refuses a signature of another key's) and the turn waits for the next request.
--api-key KEY=STATUS makes that key be refused with STATUS (403, 429). Every request is logged,
one JSON line each, to --log: {"path", "headers", "body", "verdict", "kept_start"} (standin.py's
kept_start(): whether the body starts byte for byte as the one before it did, up to that one's
last turn). It stops when killed or after --lifetime seconds.
"""

import argparse
import calendar
import hashlib
import hmac
import json
import os
import re
import sys
import threading
import time
import urllib.parse
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

sys.dont_write_bytecode = True  # no __pycache__ beside the sources
import standin  # noqa: E402

BLOCK_KINDS = {"text", "image", "document", "toolUse", "toolResult", "reasoningContent",
               "cachePoint", "guardContent", "video"}
TOOL_ID = re.compile(r"^[a-zA-Z0-9_-]{1,64}$")


class Refusal(Exception):
    pass


RESULT_KINDS = {"json", "text", "image", "document", "video"}


def image_fault(value):
    """What is wrong with an image block's value, or None."""
    if not isinstance(value, dict) or value.get("format") not in ("png", "jpeg", "gif", "webp") \
            or not isinstance(value.get("source"), dict) or list(value["source"]) != ["bytes"]:
        return "a malformed image"
    return standin.picture_fault("image/" + value["format"], value["source"]["bytes"])


def uri_encode(text, keep_slash):
    safe = "-._~" + ("/" if keep_slash else "")
    return urllib.parse.quote(text, safe=safe)


def canonical_query(query):
    pairs = []
    for piece in query.split("&") if query else []:
        if not piece:
            continue
        name, _, value = piece.partition("=")
        pairs.append((uri_encode(urllib.parse.unquote(name), False),
                      uri_encode(urllib.parse.unquote(value), False)))
    return "&".join(f"{n}={v}" for n, v in sorted(pairs))


def signing_key(secret, date, region, service):
    key = ("AWS4" + secret).encode()
    for part in (date, region, service, "aws4_request"):
        key = hmac.new(key, part.encode(), hashlib.sha256).digest()
    return key


class Stand:
    def __init__(self, args):
        self.args = args
        with open(args.script) as f:
            self.turns = json.load(f)["turns"]
        self.next = 0
        self.signed = []  # reasoning blocks it sent, in order, that must come back
        self.lock = threading.Lock()
        self.previous = None  # the last request's body, as text
        self.keys = {}
        for given in args.api_key:
            key, _, status = given.partition("=")
            self.keys[key] = int(status) if status else 0

    def log(self, entry):
        with self.lock, open(self.args.log, "a") as f:
            f.write(json.dumps(entry) + "\n")

    # --- authorization -------------------------------------------------------------------

    def check_auth(self, handler, raw_path, query, body):
        auth = handler.headers.get("Authorization", "")
        if auth.startswith("Bearer "):
            key = auth[7:]
            if key not in self.keys:
                raise Refusal((403, "AccessDeniedException", "the bearer token is not a Bedrock API key"))
            if self.keys[key]:
                kind = "ThrottlingException" if self.keys[key] == 429 else "AccessDeniedException"
                raise Refusal((self.keys[key], kind, "this key is " + ("limited" if self.keys[key] == 429 else "refused")))
            return
        if not self.args.access_key:
            raise Refusal((403, "AccessDeniedException", "no bearer token"))
        m = re.fullmatch(r"AWS4-HMAC-SHA256 Credential=([^/]+)/(\d{8})/([^/]+)/([^/]+)/aws4_request, "
                         r"SignedHeaders=([a-z0-9;-]+), Signature=([0-9a-f]{64})", auth)
        if not m:
            raise Refusal((403, "IncompleteSignatureException", f"malformed Authorization: {auth[:60]}"))
        akid, date, region, service, signed, signature = m.groups()
        if akid != self.args.access_key:
            raise Refusal((403, "UnrecognizedClientException", f"unknown access key {akid}"))
        if region != self.args.region or service != "bedrock":
            raise Refusal((403, "SignatureDoesNotMatch", f"scope {region}/{service}, want {self.args.region}/bedrock"))
        stamp = handler.headers.get("X-Amz-Date", "")
        try:
            when = calendar.timegm(time.strptime(stamp, "%Y%m%dT%H%M%SZ"))
        except ValueError:
            raise Refusal((403, "IncompleteSignatureException", "no X-Amz-Date"))
        if abs(when - time.time()) > 900 or stamp[:8] != date:
            raise Refusal((403, "InvalidSignatureException", "signature not yet current or expired"))
        names = signed.split(";")
        for need in ("host", "x-amz-date"):
            if need not in names:
                raise Refusal((403, "SignatureDoesNotMatch", f"{need} is not signed"))
        token = handler.headers.get("X-Amz-Security-Token")
        if self.args.session_token:
            if token != self.args.session_token or "x-amz-security-token" not in names:
                raise Refusal((403, "UnrecognizedClientException", "the security token is missing or not signed"))
        headers = []
        for name in names:
            values = handler.headers.get_all(name) or []
            if not values:
                raise Refusal((403, "SignatureDoesNotMatch", f"signed header {name} was not sent"))
            joined = ",".join(" ".join(v.split()) for v in values)
            headers.append(f"{name}:{joined}\n")
        creq = "\n".join([handler.command, uri_encode(raw_path, True), canonical_query(query),
                          "".join(headers), signed, hashlib.sha256(body).hexdigest()])
        sts = "\n".join(["AWS4-HMAC-SHA256", stamp, f"{date}/{region}/bedrock/aws4_request",
                         hashlib.sha256(creq.encode()).hexdigest()])
        want = hmac.new(signing_key(self.args.secret_key, date, region, "bedrock"), sts.encode(),
                        hashlib.sha256).hexdigest()
        if not hmac.compare_digest(want, signature):
            raise Refusal((403, "SignatureDoesNotMatch",
                           "The request signature we calculated does not match the signature you provided"))

    # --- the body ------------------------------------------------------------------------

    def check_body(self, model, body):
        if not isinstance(body.get("messages"), list) or not body["messages"]:
            raise Refusal((400, "ValidationException", "messages is missing or empty"))
        caching = "anthropic.claude" in model or "amazon.nova" in model
        declared = {t["toolSpec"]["name"] for t in body.get("toolConfig", {}).get("tools", []) if "toolSpec" in t}
        calls = set()
        for i, m in enumerate(body["messages"]):
            want_role = "user" if i % 2 == 0 else "assistant"
            if m.get("role") != want_role:
                raise Refusal((400, "ValidationException", f"messages[{i}] is {m.get('role')}, want {want_role}"))
            content = m.get("content")
            if not isinstance(content, list) or not content:
                raise Refusal((400, "ValidationException", f"messages[{i}].content is empty"))
            answered = set()
            for j, block in enumerate(content):
                where = f"messages[{i}].content[{j}]"
                if len(block) != 1 or next(iter(block)) not in BLOCK_KINDS:
                    raise Refusal((400, "ValidationException", f"{where} is not one known block: {list(block)}"))
                kind, value = next(iter(block.items()))
                if kind == "text" and not value.strip():
                    raise Refusal((400, "ValidationException", f"{where}: the text field is blank"))
                if kind == "cachePoint":
                    if not caching:
                        raise Refusal((400, "ValidationException", f"{where}: {model} takes no cache points"))
                    if value != {"type": "default"}:
                        raise Refusal((400, "ValidationException", f"{where}: a malformed cache point"))
                if kind == "toolUse":
                    if want_role != "assistant" or not TOOL_ID.match(value.get("toolUseId", "")):
                        raise Refusal((400, "ValidationException", f"{where}: a malformed toolUse"))
                    if value.get("name") not in declared:
                        raise Refusal((400, "ValidationException", f"{where}: tool {value.get('name')} is not in toolConfig"))
                    if not isinstance(value.get("input"), dict):
                        raise Refusal((400, "ValidationException", f"{where}: toolUse.input is not an object"))
                    calls.add(value["toolUseId"])
                if kind == "toolResult":
                    if value.get("toolUseId") not in calls:
                        raise Refusal((400, "ValidationException", f"{where}: toolResult answers no toolUse"))
                    if "status" in value and "anthropic.claude" not in model:
                        raise Refusal((400, "ValidationException", f"{where}: {model} takes no toolResult status"))
                    answered.add(value["toolUseId"])
                    for k, part in enumerate(value.get("content") or [None]):
                        part_kind = next(iter(part)) if isinstance(part, dict) and len(part) == 1 else None
                        if part_kind not in RESULT_KINDS:
                            raise Refusal((400, "ValidationException", f"{where}.toolResult.content[{k}] is not one known block"))
                        if part_kind == "image" and (fault := image_fault(part["image"])):
                            raise Refusal((400, "ValidationException", f"{where}.toolResult.content[{k}]: {fault}"))
                if kind == "image" and (fault := image_fault(value)):
                    raise Refusal((400, "ValidationException", f"{where}: {fault}"))
            if want_role == "user":
                calls -= answered
        if caching:
            system = body.get("system", [])
            if system and system[-1] != {"cachePoint": {"type": "default"}}:
                raise Refusal((400, "ValidationException", "the system prompt does not end with a cache point"))
            if body["messages"][-1]["content"][-1] != {"cachePoint": {"type": "default"}}:
                raise Refusal((400, "ValidationException", "the conversation does not end with a cache point"))
        max_tokens = body.get("inferenceConfig", {}).get("maxTokens")
        if not isinstance(max_tokens, int) or max_tokens <= 0:
            raise Refusal((400, "ValidationException", "inferenceConfig.maxTokens is not a positive number"))

    def check_kept(self, body, turn):
        """The reasoning it signed comes back first in the assistant turn it came in."""
        given = [b for m in body["messages"] for b in m["content"] if "reasoningContent" in b]
        if turn.get("refuse_kept") and given:
            raise Refusal((400, "ValidationException", "The provided reasoning signature is invalid"))
        if turn.get("refuse_kept"):
            return
        assistants = [m for m in body["messages"] if m["role"] == "assistant"]
        for sent_index, blocks in self.signed:
            if sent_index >= len(assistants):
                continue
            got = assistants[sent_index]["content"][:len(blocks)]
            if got != blocks:
                raise Refusal((400, "ValidationException",
                               f"assistant turn {sent_index} does not start with the reasoning it came with"))

    # --- answers -------------------------------------------------------------------------

    def turn(self):
        with self.lock:
            if self.next >= len(self.turns):
                return None
            return self.turns[self.next]

    def used(self, turn, body):
        with self.lock:
            self.next += 1
            if "content" in turn:
                kept = [b for b in turn["content"] if "reasoningContent" in b
                        and ("signature" in b["reasoningContent"].get("reasoningText", {})
                             or "redactedContent" in b["reasoningContent"])]
                if kept:
                    turns_so_far = sum(1 for m in body["messages"] if m["role"] == "assistant")
                    self.signed.append((turns_so_far, kept))


def make_handler(stand):
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, *args):
            pass

        def reply(self, status, body, kind=None, close=False):
            data = body if isinstance(body, bytes) else json.dumps(body).encode()
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.send_header("x-amzn-RequestId", "00000000-0000-0000-0000-000000000000")
            if kind:
                self.send_header("x-amzn-ErrorType", kind)
            if close:
                self.send_header("Connection", "close")
            self.end_headers()
            self.wfile.write(data)

        def do_POST(self):
            length = int(self.headers.get("Content-Length", "0"))
            body_bytes = self.rfile.read(length)
            raw_path, _, query = self.path.partition("?")
            entry = {"path": self.path, "headers": {k.lower(): v for k, v in self.headers.items()}}
            try:
                m = re.fullmatch(r"/model/([^/]+)/converse", raw_path)
                if not m:
                    raise Refusal((404, "UnknownOperationException", f"no operation at {raw_path}"))
                model = urllib.parse.unquote(m.group(1))
                entry["model"] = model
                if stand.args.model and model != stand.args.model:
                    raise Refusal((404, "ResourceNotFoundException", f"model {model} is not served here"))
                stand.check_auth(self, raw_path, query, body_bytes)
                if self.headers.get("Content-Type") != "application/json":
                    raise Refusal((400, "ValidationException", "Content-Type is not application/json"))
                try:
                    body = json.loads(body_bytes)
                except ValueError:
                    entry["raw"] = body_bytes.decode("utf-8", "replace")
                    raise Refusal((400, "SerializationException", "the body is not JSON"))
                entry["body"] = body
                text = body_bytes.decode("utf-8", "replace")
                with stand.lock:
                    entry["kept_start"] = standin.kept_start(stand.previous, text, "messages")
                    stand.previous = text
                stand.check_body(model, body)
                turn = stand.turn()
                if turn is None:
                    raise Refusal((500, "InternalServerException", "the stand-in has no turn left"))
                stand.check_kept(body, turn)
            except Refusal as r:
                status, kind, message = r.args[0][:3]
                entry["verdict"] = f"{status} {kind}: {message}"
                stand.log(entry)
                self.reply(status, {"message": message}, kind)
                return
            stand.used(turn, body)
            entry["verdict"] = "answered"
            stand.log(entry)
            if "status" in turn:
                self.reply(turn["status"], {"message": turn.get("message", "")}, turn.get("type"))
            elif "malformed" in turn:
                self.reply(200, turn["malformed"].encode())
            elif turn.get("cut"):
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", "4096")
                self.end_headers()
                self.wfile.write(b'{"output":{"message":{"role":"assistant","content":[{"te')
                self.wfile.flush()
                self.close_connection = True
            else:
                usage = {"inputTokens": 10, "outputTokens": 5, "totalTokens": 15}
                usage.update(turn.get("usage", {}))
                self.reply(200, {
                    "output": {"message": {"role": "assistant", "content": turn["content"]}},
                    "stopReason": turn.get("stopReason", "end_turn"),
                    "usage": usage,
                    "metrics": {"latencyMs": 12},
                })

    return Handler


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--port-file", required=True)
    p.add_argument("--script", required=True)
    p.add_argument("--log", required=True)
    p.add_argument("--model", default="")
    p.add_argument("--region", default="us-east-1")
    p.add_argument("--access-key", default="")
    p.add_argument("--secret-key", default="")
    p.add_argument("--session-token", default="")
    p.add_argument("--api-key", action="append", default=[], help="KEY or KEY=STATUS to refuse it")
    p.add_argument("--lifetime", type=float, default=300, help="seconds before it stops by itself")
    args = p.parse_args()
    server = ThreadingHTTPServer(("127.0.0.1", 0), make_handler(Stand(args)))
    stop = threading.Timer(args.lifetime, server.shutdown)
    stop.daemon = True
    stop.start()
    with open(args.port_file + ".tmp", "w") as f:
        f.write(str(server.server_address[1]))
    os.rename(args.port_file + ".tmp", args.port_file)
    server.serve_forever()


if __name__ == "__main__":
    sys.exit(main())
