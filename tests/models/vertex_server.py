#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""A stand-in for Google Vertex AI and its token endpoint, written from Google's documentation.

It listens on 127.0.0.1 (an unused port, written to --port-file once it listens) and serves:
  POST /token  Google's OAuth 2.0 token endpoint. A service account's grant
      (urn:ietf:params:oauth:grant-type:jwt-bearer) is CHECKED: an RS256 JWT whose signature it
      verifies against --rsa-modulus (hex) and --rsa-exponent, with kid --key-id, iss
      --client-email, aud this endpoint's URL, the cloud-platform scope, and iat and exp within
      the hour around now. A refresh_token grant must carry --client-id, --client-secret and
      --refresh-token. Each mints a new token "ya29.stand-in-N", good for --expires-in seconds.
  POST /v1/projects/P/locations/L/publishers/google/models/M:streamGenerateContent?alt=sse
      Gemini, CHECKED as gemini_server.py checks it; authorized by a token it minted (or
      --token), in project --project at --location.
  POST /v1/publishers/google/models/M:streamGenerateContent?alt=sse
      Gemini in express mode: x-goog-api-key one of --api-key.
  POST /v1/projects/P/locations/L/publishers/anthropic/models/M:streamRawPredict
      Claude: Anthropic's Messages body CHECKED: anthropic_version "vertex-2023-10-16", no model,
      stream true, max_tokens, roles alternating from the user's, tool results first in the turn
      after the calls they answer, image blocks and tool results' content as anthropic_server.py
      checks them, cache_control on the system prompt's last block and on the
      conversation's last block and nowhere else, and every thinking block it sent back exactly
      as it sent it, where it was. Answers stream as Anthropic's events.
Turns come from --script as gemini_server.py's for Gemini; for Claude {"content": [blocks],
"stop_reason": "end_turn", "usage": {...}}, {"status": 529, "message": "..."} (Google-shaped when
"google": true), or {"overloaded": true} (an error event after message_start). Every request is
logged, one JSON line each, to --log, tokens minted among them ({"path": "/token", "verdict"}).
"""

import base64
import hashlib
import json
import re
import sys
import threading
import time
import urllib.parse

sys.dont_write_bytecode = True  # no __pycache__ beside the sources
import anthropic_server  # noqa: E402
import gemini_server  # noqa: E402
from gemini_server import Refusal, refuse  # noqa: E402

JWT_BEARER = "urn:ietf:params:oauth:grant-type:jwt-bearer"
SCOPE = "https://www.googleapis.com/auth/cloud-platform"
# DigestInfo of SHA-256, as EMSA-PKCS1-v1_5 prefixes the hash (RFC 8017, 9.2).
SHA256_INFO = bytes.fromhex("3031300d060960864801650304020105000420")


def b64url(text):
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


def check_jwt(jwt, args, audience):
    try:
        header_b64, claims_b64, signature_b64 = jwt.split(".")
        header = json.loads(b64url(header_b64))
        claims = json.loads(b64url(claims_b64))
        signature = b64url(signature_b64)
    except ValueError:
        refuse("invalid_grant: the assertion is not a JWT")
    if header != {"alg": "RS256", "typ": "JWT", "kid": args.key_id}:
        refuse(f"invalid_grant: a JWT header of {header}")
    n = int(args.rsa_modulus, 16)
    size = (n.bit_length() + 7) // 8
    digest = hashlib.sha256(f"{header_b64}.{claims_b64}".encode()).digest()
    want = b"\x00\x01" + b"\xff" * (size - 3 - len(SHA256_INFO) - len(digest)) + b"\x00" + SHA256_INFO + digest
    got = pow(int.from_bytes(signature, "big"), args.rsa_exponent, n).to_bytes(size, "big")
    if len(signature) != size or got != want:
        refuse("invalid_grant: Invalid JWT Signature.")
    now = time.time()
    if claims.get("iss") != args.client_email or claims.get("aud") != audience or claims.get("scope") != SCOPE:
        refuse(f"invalid_grant: claims for {claims.get('iss')} at {claims.get('aud')}, scope {claims.get('scope')}")
    if not (abs(claims.get("iat", 0) - now) < 300 and 0 < claims.get("exp", 0) - claims["iat"] <= 3600):
        refuse("invalid_grant: Invalid JWT: Token must be a short-lived token (60 minutes) and in a reasonable timeframe.")


def anthropic_events(turn):
    """A Claude answer as the Messages API streams it."""
    usage = {"input_tokens": 10, "output_tokens": 1, "cache_creation_input_tokens": 0, "cache_read_input_tokens": 0}
    usage.update({k: v for k, v in turn.get("usage", {}).items() if k != "output_tokens"})
    yield "message_start", {"message": {"id": "msg_vrtx_01", "type": "message", "role": "assistant",
                                        "content": [], "model": "claude", "usage": usage}}
    if turn.get("overloaded"):
        yield "error", {"error": {"type": "overloaded_error", "message": "Overloaded"}}
        return
    for i, block in enumerate(turn.get("content", [])):
        kind = block["type"]
        start = {"type": kind}
        if kind == "text":
            start["text"] = ""
        elif kind == "thinking":
            start["thinking"] = ""
        elif kind == "tool_use":
            start.update(id=block["id"], name=block["name"], input={})
        elif kind == "redacted_thinking":
            start["data"] = block["data"]
        yield "content_block_start", {"index": i, "content_block": start}
        if kind == "text":
            yield "content_block_delta", {"index": i, "delta": {"type": "text_delta", "text": block["text"]}}
        elif kind == "thinking":
            yield "content_block_delta", {"index": i, "delta": {"type": "thinking_delta", "thinking": block["thinking"]}}
            yield "content_block_delta", {"index": i, "delta": {"type": "signature_delta", "signature": block["signature"]}}
        elif kind == "tool_use":
            text = json.dumps(block["input"])
            for piece in (text[: len(text) // 2], text[len(text) // 2:]):
                yield "content_block_delta", {"index": i, "delta": {"type": "input_json_delta", "partial_json": piece}}
        yield "content_block_stop", {"index": i}
    yield "message_delta", {"delta": {"stop_reason": turn.get("stop_reason", "end_turn"), "stop_sequence": None},
                            "usage": {"output_tokens": turn.get("usage", {}).get("output_tokens", 5)}}
    yield "message_stop", {}


def check_claude(body, signed):
    if body.get("anthropic_version") != "vertex-2023-10-16":
        refuse(f"anthropic_version is {body.get('anthropic_version')!r}")
    if "model" in body:
        refuse("model: Extra inputs are not permitted")
    if body.get("stream") is not True or not isinstance(body.get("max_tokens"), int):
        refuse("stream must be true and max_tokens a number")
    messages = body.get("messages") or []
    if not messages:
        refuse("messages: at least one message is required")
    marks = []
    for t, tool in enumerate(body.get("tools", [])):
        if "cache_control" in tool:
            marks.append(f"tools[{t}]")
    system = body.get("system", [])
    if isinstance(system, list):
        for s, block in enumerate(system):
            if "cache_control" in block:
                marks.append(f"system[{s}]")
    calls = []
    for i, m in enumerate(messages):
        want = "user" if i % 2 == 0 else "assistant"
        if m.get("role") != want:
            refuse(f"messages.{i}: roles must alternate, starting with user")
        content = m["content"] if isinstance(m["content"], list) else [{"type": "text", "text": m["content"]}]
        for j, block in enumerate(content):
            if "cache_control" in block:
                marks.append(f"messages[{i}][{j}]")
            where = f"messages.{i}.content.{j}"
            if block.get("type") == "image" and (fault := anthropic_server.image_fault(block)):
                refuse(f"{where}: {fault}")
            if block.get("type") == "tool_result":
                for fault in anthropic_server.result_content_faults(block.get("content"), where):
                    refuse(fault)
        results = [b["tool_use_id"] for b in content if b.get("type") == "tool_result"]
        if calls:
            if results != calls or any(b.get("type") != "tool_result" for b in content[: len(results)]):
                refuse(f"messages.{i}: tool_result blocks must come first and answer each tool_use of the turn before")
        calls = [b["id"] for b in content if b.get("type") == "tool_use"]
    last = messages[-1]
    want = ([f"system[{len(system) - 1}]"] if isinstance(system, list) and system else []) + \
        [f"messages[{len(messages) - 1}][{len(last['content']) - 1 if isinstance(last['content'], list) else 0}]"]
    if marks != want:
        refuse(f"cache breakpoints at {marks}, want {want}")
    assistants = [m for m in messages if m["role"] == "assistant"]
    for index, blocks in signed:
        if index < len(assistants):
            kept = [b for b in assistants[index]["content"] if b.get("type") in ("thinking", "redacted_thinking")]
            if kept != blocks or assistants[index]["content"][: len(blocks)] != blocks:
                refuse("messages: thinking blocks must be given back as they came, where they came")


class Handler(gemini_server.Handler):
    vertex_path = re.compile(r"/v1(?:/projects/([^/]+)/locations/([^/]+))?/publishers/(google|anthropic)/models/"
                             r"([^/:]+):(streamGenerateContent|generateContent|streamRawPredict|rawPredict)")

    def do_POST(self):
        if self.path == "/token":
            return self.token()
        path, _, query = self.path.partition("?")
        m = self.vertex_path.fullmatch(path)
        raw = self.read_body()
        entry = {"path": self.path, "headers": {k.lower(): v for k, v in self.headers.items()}}
        args = self.server.args
        try:
            if not m:
                refuse(f"no method at {path}", 404, "NOT_FOUND")
            project, location, publisher, model, method = m.groups()
            if project is None:
                if publisher != "google":
                    refuse("express mode serves Google's models only", 404, "NOT_FOUND")
                self.authorize()
            else:
                if (project, location) != (args.project, args.location):
                    refuse(f"project {project} at {location} is not served here", 403, "PERMISSION_DENIED")
                auth = self.headers.get("Authorization", "")
                if not auth.startswith("Bearer ") or auth[7:] not in self.server.tokens:
                    refuse("Request had invalid authentication credentials.", 401, "UNAUTHENTICATED")
            if args.model and model != args.model:
                refuse(f"model {model} is not found", 404, "NOT_FOUND")
            try:
                body = json.loads(raw)
            except ValueError:
                refuse("Invalid JSON payload received.")
            entry["body"] = body
            entry["kept_start"] = self.kept_start(raw, "contents" if publisher == "google" else "messages")
            turn = self.server.script.turn(body if publisher == "google" else None)
            if publisher == "google":
                model_turns = gemini_server.check_contents(body)
                if turn is None:
                    refuse("the stand-in has no turn left", 500, "INTERNAL")
                self.server.script.check_signed(body["contents"], model_turns, turn)
            else:
                if method != "streamRawPredict":
                    refuse("Claude is asked for streamRawPredict here", 404, "NOT_FOUND")
                check_claude(body, self.server.claude_signed)
                if turn is None:
                    refuse("the stand-in has no turn left", 500, "INTERNAL")
        except Refusal as r:
            status, code, message = r.args[0]
            entry["verdict"] = f"{status} {code}: {message}"
            self.log_entry(entry)
            self.send_json(status, gemini_server.google_error(status, message))
            return
        entry["verdict"] = "answered"
        self.log_entry(entry)
        if publisher == "google":
            self.server.script.used(turn, model_turns)
            return self.answer(turn, method == "streamGenerateContent" and query == "alt=sse")
        self.server.script.used(turn, [])
        kept = [b for b in turn.get("content", []) if b["type"] in ("thinking", "redacted_thinking")]
        if kept:
            self.server.claude_signed.append((sum(1 for x in body["messages"] if x["role"] == "assistant"), kept))
        self.claude_answer(turn)

    def claude_answer(self, turn):
        if "status" in turn:
            if turn.get("google"):
                return self.send_json(turn["status"], gemini_server.google_error(turn["status"], turn["message"]))
            error = {"type": "error", "error": {"type": "overloaded_error", "message": turn["message"]}}
            return self.send_json(turn["status"], error)
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Connection", "close")
        self.end_headers()
        self.close_connection = True
        for name, data in anthropic_events(turn):
            data = dict(data, type=name)
            self.wfile.write(f"event: {name}\ndata: {json.dumps(data)}\n\n".encode())
            self.wfile.flush()

    def token(self):
        args = self.server.args
        fields = dict(urllib.parse.parse_qsl(self.read_body().decode()))
        entry = {"path": "/token", "grant_type": fields.get("grant_type")}
        try:
            if self.headers.get("Content-Type") != "application/x-www-form-urlencoded":
                refuse("invalid_request: not a form")
            audience = f"http://127.0.0.1:{self.server.server_address[1]}/token"
            if fields.get("grant_type") == JWT_BEARER:
                check_jwt(fields.get("assertion", ""), args, audience)
            elif fields.get("grant_type") == "refresh_token":
                if (fields.get("client_id"), fields.get("client_secret"), fields.get("refresh_token")) != \
                        (args.client_id, args.client_secret, args.refresh_token):
                    refuse("invalid_grant: Bad Request")
            else:
                refuse("unsupported_grant_type: Invalid grant_type")
        except Refusal as r:
            entry["verdict"] = r.args[0][2]
            self.log_entry(entry)
            error, _, description = r.args[0][2].partition(": ")
            return self.send_json(400, {"error": error, "error_description": description})
        with self.server.lock:
            token = f"ya29.stand-in-{len(self.server.tokens) + 1}"
            self.server.tokens.add(token)
        entry["verdict"] = "minted " + token
        self.log_entry(entry)
        self.send_json(200, {"access_token": token, "expires_in": args.expires_in, "token_type": "Bearer"})


def main():
    p = gemini_server.arguments(__doc__.splitlines()[0])
    p.add_argument("--project", default="sion-test")
    p.add_argument("--location", default="global")
    p.add_argument("--token", action="append", default=[], help="a token given, not minted")
    p.add_argument("--expires-in", type=int, default=3600)
    p.add_argument("--client-email", default="")
    p.add_argument("--key-id", default="")
    p.add_argument("--rsa-modulus", default="1")
    p.add_argument("--rsa-exponent", type=int, default=65537)
    p.add_argument("--client-id", default="")
    p.add_argument("--client-secret", default="")
    p.add_argument("--refresh-token", default="")
    args = p.parse_args()
    gemini_server.serve(Handler, args, tokens=set(args.token), claude_signed=[], lock=threading.Lock())


if __name__ == "__main__":
    sys.exit(main())
