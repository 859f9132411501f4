#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""A stand-in of Anthropic's Messages API (POST /v1/messages), written from its documentation,
for sion's suites: it checks what it is sent and answers as the API does, streamed or whole.

Checked (a request that breaks a rule gets 400 and the log names the rule): the x-api-key and
anthropic-version headers; model, max_tokens (at most 64,000), messages that start with the
person and alternate, blocks of the types each role may send, tool ids of [A-Za-z0-9_-]{1,64},
each tool_use answered by a tool_result first in the next turn, pictures as image blocks (a base64
source of image/jpeg, image/png, image/gif or image/webp whose bytes are of that type) and a
tool_result's content a text or a list of text and image blocks, at most four cache_control marks
and none on thinking, thinking settings (budget_tokens at least 1,024 and under max_tokens;
adaptive with output_config.effort), stream. Thinking given back must be as it was given, to the
model it was given by (signatures are HMACs of the model and the text): otherwise the request is
refused (400), as the API refuses thinking it cannot verify.

Prompt caching is modelled: the prefix up to each cache_control mark is written to the cache, and
the longest prefix written before is read from it, so usage says what the cache did.

A reply of the script (standin.py has the shared ones):
  {"text": "…", "thinking": "…", "redacted": true, "calls": [{"name": "…", "input": {…}}],
   "stop_reason": "end_turn", "whole": true, "unsigned": true,
   "error_event": {"type": "overloaded_error", "message": "Overloaded"}, "cut": true,
   "crlf": true, "split": true, "comments": true}
"unsigned" ends the thinking without its signature (stop_reason max_tokens); "error_event" sends
it after the first blocks; "cut" closes the connection before message_stop; "new_secret" signs
what follows with another key, so that thinking given before no longer checks. The usage of each
answer is logged as {"usage": …}.
"""
import base64
import hashlib
import hmac
import json
import os
import re
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import standin  # noqa: E402

TOOL_ID = re.compile(r"^[a-zA-Z0-9_-]{1,64}$")
BLOCKS = {"user": {"text", "image", "tool_result"},
          "assistant": {"text", "tool_use", "thinking", "redacted_thinking"}}
EFFORTS = {"low", "medium", "high", "xhigh", "max"}


def sign(secret, model, text):
    return base64.b64encode(hmac.new(secret, (model + "\0" + text).encode(), hashlib.sha256).digest()).decode()


def tokens(text):
    return max(1, len(text) // 4)


def image_fault(block):
    """What is wrong with an image block, or None: a base64 source of a picture of the type it
    names (standin.picture_fault)."""
    source = block.get("source")
    extra = set(block) - {"type", "source", "cache_control"}
    if extra:
        return "an image block with %s" % sorted(extra)
    if not isinstance(source, dict) or source.get("type") != "base64" \
            or set(source) != {"type", "media_type", "data"}:
        return "an image's source is not {type: base64, media_type, data}"
    return standin.picture_fault(source.get("media_type"), source.get("data"))


def result_content_faults(content, where):
    """What is wrong with a tool_result's content: none, a text, or a list of non-empty text
    blocks and image blocks."""
    if content is None or isinstance(content, str):
        return []
    if not isinstance(content, list) or not content:
        return ["%s: a tool_result's content is neither a text nor blocks" % where]
    faults = []
    for k, c in enumerate(content):
        at = "%s.content.%d" % (where, k)
        kind = c.get("type") if isinstance(c, dict) else None
        if kind == "text" and not c.get("text"):
            faults.append("%s: text blocks must be non-empty" % at)
        elif kind == "image":
            fault = image_fault(c)
            if fault:
                faults.append("%s: %s" % (at, fault))
        elif kind != "text":
            faults.append("%s: a tool_result may not hold %r" % (at, kind))
    return faults


def without_marks(obj):
    return {k: v for k, v in obj.items() if k != "cache_control"} if isinstance(obj, dict) else obj


class Anthropic(standin.Standin):
    @staticmethod
    def add_arguments(parser):
        pass

    def __init__(self, args):
        super().__init__(args)
        self.cache = set()
        self.calls = 0
        self.secret = b"stand-in signing key"

    def key_of(self, headers):
        return headers.get("x-api-key")

    def error_body(self, status, message):
        kind = {400: "invalid_request_error", 401: "authentication_error", 403: "permission_error",
                429: "rate_limit_error", 529: "overloaded_error"}.get(status, "api_error")
        return {"type": "error", "error": {"type": kind, "message": message}, "request_id": "req_1"}

    def check(self, path, headers, body):
        bad, refused = [], []
        if path != "/v1/messages":
            bad.append("path " + path + " is not /v1/messages")
        if not headers.get("x-api-key"):
            bad.append("no x-api-key header")
        if headers.get("anthropic-version") != "2023-06-01":
            bad.append("anthropic-version is %r" % headers.get("anthropic-version"))
        if not headers.get("content-type", "").startswith("application/json"):
            bad.append("content-type is not application/json")
        model = body.get("model")
        if not isinstance(model, str) or not model:
            bad.append("model is missing")
        max_tokens = body.get("max_tokens")
        if not isinstance(max_tokens, int) or not 0 < max_tokens <= 64000:
            bad.append("max_tokens is %r" % max_tokens)
        if body.get("stream") is not True:
            bad.append("stream is not true")
        self.check_system_and_tools(body, bad)
        self.check_messages(body, str(model), bad, refused)
        self.check_thinking(body, bad)
        marks = self.marks(body)
        if len(marks) > 4:
            bad.append("%d cache_control marks, more than 4" % len(marks))
        for where, mark in marks:
            if mark.get("type") != "ephemeral" or set(mark) - {"type", "ttl"}:
                bad.append("cache_control %r at %s" % (mark, where))
        return bad, refused

    def check_system_and_tools(self, body, bad):
        system = body.get("system")
        if system is not None and not isinstance(system, str):
            if not isinstance(system, list) or any(b.get("type") != "text" or not b.get("text") for b in system):
                bad.append("system is neither text nor text blocks")
        for i, tool in enumerate(body.get("tools", [])):
            schema = tool.get("input_schema")
            if not tool.get("name") or not isinstance(schema, dict) or schema.get("type") != "object":
                bad.append("tools.%d has no name or no object input_schema" % i)

    def check_messages(self, body, model, bad, refused):
        messages = body.get("messages")
        if not isinstance(messages, list) or not messages:
            bad.append("messages is empty")
            return
        pending = set()  # tool_use ids the next turn must answer
        for i, m in enumerate(messages):
            role = m.get("role")
            want = "user" if i % 2 == 0 else "assistant"
            if role != want:
                bad.append("messages.%d is %r, not %r: roles must alternate from the user" % (i, role, want))
                return
            content = m.get("content")
            if isinstance(content, str):
                content = [{"type": "text", "text": content}]
            if not isinstance(content, list) or not content:
                bad.append("messages.%d has no content" % i)
                continue
            answered = set()
            for j, b in enumerate(content):
                where = "messages.%d.content.%d" % (i, j)
                kind = b.get("type")
                if kind not in BLOCKS[role]:
                    bad.append("%s: a %s may not send %r" % (where, role, kind))
                elif kind == "text" and not b.get("text"):
                    bad.append("%s: text blocks must be non-empty" % where)
                elif kind == "image":
                    fault = image_fault(b)
                    if fault:
                        bad.append("%s: %s" % (where, fault))
                elif kind == "tool_use":
                    if not TOOL_ID.match(str(b.get("id"))) or not isinstance(b.get("input"), dict):
                        bad.append("%s: tool_use id %r or input is malformed" % (where, b.get("id")))
                elif kind == "tool_result":
                    if b.get("tool_use_id") not in pending:
                        bad.append("%s: tool_result for %r, which the turn before did not call" % (where, b.get("tool_use_id")))
                    if any(c.get("type") != "tool_result" for c in content[:j]):
                        bad.append("%s: tool_result blocks must come first" % where)
                    answered.add(b.get("tool_use_id"))
                    bad.extend(result_content_faults(b.get("content"), where))
                elif kind == "thinking":
                    if b.get("signature") != sign(self.secret, model, b.get("thinking", "")):
                        refused.append("%s: Invalid `signature` in `thinking` block" % where)
                    if set(b) - {"type", "thinking", "signature"}:
                        bad.append("%s: the thinking block was changed" % where)
                elif kind == "redacted_thinking":
                    if b.get("data") != "redacted:" + sign(self.secret, model, "redacted"):
                        refused.append("%s: Invalid `data` in `redacted_thinking` block" % where)
                if kind in ("thinking", "redacted_thinking") and "cache_control" in b:
                    bad.append("%s: cache_control on thinking" % where)
            if role == "user" and pending - answered:
                bad.append("messages.%d: tool_use ids %s have no tool_result" % (i, sorted(pending - answered)))
            pending = {b.get("id") for b in content if b.get("type") == "tool_use"} if role == "assistant" else set()
        if messages[-1].get("role") != "user":
            bad.append("the last message is not the user's")

    def check_thinking(self, body, bad):
        thinking = body.get("thinking")
        config = body.get("output_config")
        if thinking is None:
            if config is not None:
                bad.append("output_config without adaptive thinking")
            return
        kind = thinking.get("type")
        if kind == "enabled":
            budget = thinking.get("budget_tokens")
            if not isinstance(budget, int) or budget < 1024 or budget >= body.get("max_tokens", 0):
                bad.append("budget_tokens %r is under 1024 or not under max_tokens" % budget)
        elif kind == "adaptive":
            if not isinstance(config, dict) or config.get("effort") not in EFFORTS:
                bad.append("adaptive thinking with output_config %r" % config)
        elif kind != "disabled":
            bad.append("thinking type %r" % kind)
        if kind != "adaptive" and config is not None:
            bad.append("output_config without adaptive thinking")

    @staticmethod
    def marks(body):
        found = []
        for i, t in enumerate(body.get("tools", [])):
            if "cache_control" in t:
                found.append(("tools.%d" % i, t["cache_control"]))
        system = body.get("system")
        for i, b in enumerate(system if isinstance(system, list) else []):
            if "cache_control" in b:
                found.append(("system.%d" % i, b["cache_control"]))
        for i, m in enumerate(body.get("messages", [])):
            content = m.get("content")
            for j, b in enumerate(content if isinstance(content, list) else []):
                if "cache_control" in b:
                    found.append(("messages.%d.content.%d" % (i, j), b["cache_control"]))
        return found

    def cache_usage(self, body):
        """(uncached, read, written) input tokens, as prompt caching would count them."""
        system = body.get("system")
        flat = [("tool", t) for t in body.get("tools", [])]
        flat += [("system", b) for b in (system if isinstance(system, list) else [])]
        for m in body.get("messages", []):
            content = m.get("content")
            if isinstance(content, str):
                content = [{"type": "text", "text": content}]
            flat += [(m.get("role"), b) for b in content]
        text, prefixes = "", []
        for role, block in flat:
            text += role + json.dumps(without_marks(block), sort_keys=True)
            prefixes.append((hashlib.sha256(text.encode()).hexdigest(), tokens(text)))
        read = max((count for digest, count in prefixes if digest in self.cache), default=0)
        marked = [i for i, (_, block) in enumerate(flat) if "cache_control" in block]
        written = max(0, prefixes[marked[-1]][1] - read) if marked else 0
        self.cache.update(prefixes[i][0] for i in marked)
        return max(0, tokens(text) - read - written), read, written

    def blocks(self, reply, model):
        out = []
        if reply.get("redacted"):
            out.append({"type": "redacted_thinking", "data": "redacted:" + sign(self.secret, model, "redacted")})
        if "thinking" in reply:
            block = {"type": "thinking", "thinking": reply["thinking"]}
            if not reply.get("unsigned"):
                block["signature"] = sign(self.secret, model, reply["thinking"])
            out.append(block)
        if reply.get("text"):
            out.append({"type": "text", "text": reply["text"]})
        for call in reply.get("calls", []):
            self.calls += 1
            out.append({"type": "tool_use", "id": call.get("id", "toolu_%02d" % self.calls),
                        "name": call["name"], "input": call.get("input", {})})
        return out

    def answer(self, handler, reply, body):
        model = body["model"]
        uncached, read, written = self.cache_usage(body)
        usage = {"input_tokens": uncached, "cache_read_input_tokens": read,
                 "cache_creation_input_tokens": written, "output_tokens": reply.get("output_tokens", 25)}
        blocks = self.blocks(reply, model)
        self.note({"usage": usage})
        if reply.get("new_secret"):
            self.secret = b"another organization's key"
        stop = reply.get("stop_reason") or ("max_tokens" if reply.get("unsigned") else
                                            "tool_use" if reply.get("calls") else "end_turn")
        message = {"id": "msg_01", "type": "message", "role": "assistant", "model": model,
                   "stop_reason": None, "stop_sequence": None}
        if reply.get("whole"):
            message.update(content=blocks, stop_reason=stop, usage=usage)
            return self.send_json(handler, 200, message)
        self.start_stream(handler)
        start = dict(message, content=[], usage=dict(usage, output_tokens=1))
        events = [("message_start", {"type": "message_start", "message": start}),
                  ("ping", {"type": "ping"})]
        for i, block in enumerate(blocks):
            events += self.block_events(i, block)
            if i == 0 and reply.get("error_event"):
                events.append(("error", {"type": "error", "error": reply["error_event"]}))
                break
            if i == 0 and reply.get("cut"):
                break
        else:
            events.append(("message_delta", {"type": "message_delta",
                                             "delta": {"stop_reason": stop, "stop_sequence": None},
                                             "usage": {"output_tokens": usage["output_tokens"]}}))
            events.append(("message_stop", {"type": "message_stop"}))
        self.write_events(handler, [(name, json.dumps(data)) for name, data in events], reply)

    @staticmethod
    def block_events(i, block):
        kind = block["type"]
        empty = {"text": {"type": "text", "text": ""}, "thinking": {"type": "thinking", "thinking": ""},
                 "tool_use": dict(block, input={}), "redacted_thinking": block}[kind]
        events = [("content_block_start", {"type": "content_block_start", "index": i, "content_block": empty})]

        def delta(d):
            events.append(("content_block_delta", {"type": "content_block_delta", "index": i, "delta": d}))
        if kind == "text":
            for k in range(0, len(block["text"]), 7):
                delta({"type": "text_delta", "text": block["text"][k:k + 7]})
        elif kind == "thinking":
            for k in range(0, len(block["thinking"]), 9):
                delta({"type": "thinking_delta", "thinking": block["thinking"][k:k + 9]})
            if "signature" in block:
                delta({"type": "signature_delta", "signature": block["signature"]})
        elif kind == "tool_use":
            text = json.dumps(block["input"])
            for k in range(0, len(text), 5):
                delta({"type": "input_json_delta", "partial_json": text[k:k + 5]})
        events.append(("content_block_stop", {"type": "content_block_stop", "index": i}))
        return events


if __name__ == "__main__":
    standin.serve(Anthropic, "A stand-in of Anthropic's Messages API")
