#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""A stand-in of OpenAI's chat completions (POST {base}/chat/completions) and the servers that
speak it, written from their documentation, for sion's suites: it checks what it is sent and
answers as they do, streamed or whole.

Checked (a request that breaks a rule gets 400 and the log names the rule): the path, the key
(--auth bearer: Authorization: Bearer; api-key: Azure's api-key header and no Authorization; none),
model, messages (a system message only first; each tool message answering a call of the assistant
message before it, every call answered before anything else; arguments a JSON text; a user's
content a text or a list of text parts and image_url parts, each a data URL of a picture whose
bytes are of the type it names, detail low, high or auto), tools,
stream with stream_options.include_usage, the answer's room in --max-field and not in the other,
reasoning_effort, Mistral's tool ids of nine letters and digits (--mistral). Reasoning given back
(--reasoning-back, as DeepSeek and Kimi ask): an assistant message of the current task (after the
person's last) that made calls must carry the reasoning the server gave with it, under the name it
gave it by; reasoning on another message, or reasoning this server did not write, is a mistake.

A reply of the script (standin.py has the shared ones):
  {"text": "…", "reasoning": "…", "reasoning_field": "reasoning_content" | "reasoning",
   "calls": [{"name": "…", "input": {…}}], "finish_reason": "stop", "whole": true,
   "usage": {"prompt_tokens": 10, "completion_tokens": 5, "cached_tokens": 3},
   "error_chunk": "message", "cut": true, "crlf": true, "split": true, "comments": true}
"error_chunk" sends {"error": …} after the first chunks, as OpenRouter does; "cut" closes the
connection before the end.
"""
import json
import os
import re
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import standin  # noqa: E402

EFFORTS = {"none", "minimal", "low", "medium", "high", "xhigh"}
MISTRAL_ID = re.compile(r"^[a-zA-Z0-9]{9}$")


class Chat(standin.Standin):
    @staticmethod
    def add_arguments(parser):
        parser.add_argument("--path", default="/v1/chat/completions")
        parser.add_argument("--auth", choices=["bearer", "api-key", "none"], default="bearer")
        parser.add_argument("--max-field", choices=["max_tokens", "max_completion_tokens"],
                            default="max_completion_tokens")
        parser.add_argument("--mistral", action="store_true")
        parser.add_argument("--reasoning-back", action="store_true")

    def __init__(self, args):
        super().__init__(args)
        self.calls = 0
        self.reasoning = {}  # call id -> (field, text) the server gave with it

    def key_of(self, headers):
        if self.args.auth == "api-key":
            return headers.get("api-key")
        auth = headers.get("authorization", "")
        return auth[7:] if auth.startswith("Bearer ") else None

    def error_body(self, status, message):
        code = {400: "invalid_request_error", 401: "invalid_api_key", 429: "rate_limit_exceeded"}
        return {"error": {"message": message, "type": code.get(status, "server_error"), "param": None,
                          "code": code.get(status)}}

    def check(self, path, headers, body):
        bad, refused = [], []
        if path != self.args.path:
            bad.append("path %s is not %s" % (path, self.args.path))
        if self.args.auth == "bearer" and not headers.get("authorization", "").startswith("Bearer "):
            bad.append("no bearer token")
        if self.args.auth == "api-key" and (not headers.get("api-key") or "authorization" in headers):
            bad.append("no api-key header, or an Authorization header beside it")
        if self.args.auth == "none" and "authorization" in headers:
            bad.append("an Authorization header to a server that takes none")
        if not isinstance(body.get("model"), str) or not body["model"]:
            bad.append("model is missing")
        if body.get("stream") is not True or body.get("stream_options", {}).get("include_usage") is not True:
            bad.append("not streamed with stream_options.include_usage")
        other = "max_tokens" if self.args.max_field == "max_completion_tokens" else "max_completion_tokens"
        room = body.get(self.args.max_field)
        if not isinstance(room, int) or not 0 < room <= 64000 or other in body:
            bad.append("%s is %r and %s is %r" % (self.args.max_field, room, other, body.get(other)))
        if "reasoning_effort" in body and body["reasoning_effort"] not in EFFORTS:
            bad.append("reasoning_effort %r" % body["reasoning_effort"])
        for i, tool in enumerate(body.get("tools", [])):
            f = tool.get("function", {})
            if tool.get("type") != "function" or not f.get("name") or not isinstance(f.get("parameters"), dict):
                bad.append("tools.%d is not a function with parameters" % i)
        self.check_messages(body.get("messages"), bad)
        return bad, refused

    def check_messages(self, messages, bad):
        if not isinstance(messages, list) or not messages:
            bad.append("messages is empty")
            return
        last_user = max((i for i, m in enumerate(messages) if m.get("role") == "user"), default=-1)
        pending = set()
        for i, m in enumerate(messages):
            role = m.get("role")
            where = "messages.%d" % i
            if role == "tool":
                if m.get("tool_call_id") not in pending:
                    bad.append("%s answers %r, which is not a call waiting" % (where, m.get("tool_call_id")))
                pending.discard(m.get("tool_call_id"))
                if not isinstance(m.get("content"), str):
                    bad.append("%s has no text" % where)
                continue
            if pending:
                bad.append("%s comes before calls %s are answered" % (where, sorted(pending)))
                pending = set()
            if role in ("system", "developer"):
                if i != 0:
                    bad.append("%s: a system message after the start" % where)
            elif role == "user":
                if not isinstance(m.get("content"), (str, list)):
                    bad.append("%s has no content" % where)
                elif isinstance(m["content"], list):
                    self.check_parts(m["content"], where, bad)
            elif role == "assistant":
                self.check_assistant(m, where, i > last_user, bad)
                pending = {c.get("id") for c in m.get("tool_calls", [])}
            else:
                bad.append("%s has role %r" % (where, role))
        if pending:
            bad.append("calls %s are not answered" % sorted(pending))

    @staticmethod
    def check_parts(parts, where, bad):
        """A user's content parts: {"type": "text", "text"} or {"type": "image_url", "image_url":
        {"url": a data URL of a picture, "detail"?}}."""
        if not parts:
            bad.append("%s: an empty list of parts" % where)
        for k, part in enumerate(parts):
            at = "%s.content.%d" % (where, k)
            kind = part.get("type") if isinstance(part, dict) else None
            if kind == "text":
                if not isinstance(part.get("text"), str):
                    bad.append("%s: a text part without text" % at)
            elif kind == "image_url":
                image = part.get("image_url")
                fault = standin.data_url_fault(image.get("url")) if isinstance(image, dict) \
                    else "image_url is not an object"
                if fault:
                    bad.append("%s: %s" % (at, fault))
                elif image.get("detail", "auto") not in ("low", "high", "auto"):
                    bad.append("%s: detail %r is not low, high or auto" % (at, image.get("detail")))
            else:
                bad.append("%s: a part of type %r" % (at, kind))

    def check_assistant(self, m, where, in_task, bad):
        calls = m.get("tool_calls", [])
        if m.get("content") is None and not calls:
            bad.append("%s has neither content nor calls" % where)
        for c in calls:
            f = c.get("function", {})
            if c.get("type") != "function" or not f.get("name") or not isinstance(f.get("arguments"), str):
                bad.append("%s: a call that is not a function with arguments text" % where)
                continue
            try:
                json.loads(f["arguments"])
            except ValueError:
                bad.append("%s: arguments are not JSON" % where)
            if self.args.mistral and not MISTRAL_ID.match(str(c.get("id"))):
                bad.append("%s: tool id %r is not 9 letters and digits" % (where, c.get("id")))
        given = [(f, m[f]) for f in ("reasoning_content", "reasoning") if f in m]
        mine = [self.reasoning[c.get("id")] for c in calls if c.get("id") in self.reasoning]
        for field, text in given:
            if not in_task:
                bad.append("%s: %s given back outside its task" % (where, field))
            elif (field, text) not in mine:
                bad.append("%s: %s that this model did not write" % (where, field))
        if self.args.reasoning_back and in_task and mine and mine[0] not in given:
            bad.append("%s: The `%s` in the thinking mode must be passed back to the API"
                       % (where, mine[0][0]))

    def answer(self, handler, reply, body):
        model = body["model"]
        calls = []
        for call in reply.get("calls", []):
            self.calls += 1
            call_id = call.get("id") or ("%09d" % self.calls if self.args.mistral else "call_%d" % self.calls)
            calls.append({"id": call_id, "name": call["name"], "arguments": json.dumps(call.get("input", {}))})
        field = reply.get("reasoning_field", "reasoning_content")
        if reply.get("reasoning"):
            for c in calls:
                self.reasoning[c["id"]] = (field, reply["reasoning"])
        given = reply.get("usage", {})
        usage = {"prompt_tokens": given.get("prompt_tokens", max(1, len(json.dumps(body)) // 4)),
                 "completion_tokens": given.get("completion_tokens", 20),
                 "prompt_tokens_details": {"cached_tokens": given.get("cached_tokens", 0)}}
        usage["total_tokens"] = usage["prompt_tokens"] + usage["completion_tokens"]
        finish = reply.get("finish_reason") or ("tool_calls" if calls else "stop")
        if reply.get("whole"):
            message = {"role": "assistant", "content": reply.get("text")}
            if reply.get("reasoning"):
                message[field] = reply["reasoning"]
            if calls:
                message["tool_calls"] = [{"id": c["id"], "type": "function",
                                          "function": {"name": c["name"], "arguments": c["arguments"]}}
                                         for c in calls]
            return self.send_json(handler, 200, {
                "id": "chatcmpl-1", "object": "chat.completion", "created": 0, "model": model,
                "choices": [{"index": 0, "message": message, "finish_reason": finish}], "usage": usage})
        self.start_stream(handler)

        def chunk(delta, finish_reason=None, choices=True):
            c = {"id": "chatcmpl-1", "object": "chat.completion.chunk", "created": 0, "model": model,
                 "choices": [{"index": 0, "delta": delta, "finish_reason": finish_reason}] if choices else []}
            return json.dumps(c)
        chunks = [chunk({"role": "assistant", "content": ""})]
        text = reply.get("reasoning", "")
        chunks += [chunk({field: text[k:k + 8]}) for k in range(0, len(text), 8)]
        text = reply.get("text", "")
        chunks += [chunk({"content": text[k:k + 6]}) for k in range(0, len(text), 6)]
        if reply.get("error_chunk"):
            chunks.append(json.dumps({"error": {"message": reply["error_chunk"], "code": 502}}))
        elif not reply.get("cut"):
            for i, c in enumerate(calls):
                chunks.append(chunk({"tool_calls": [{"index": i, "id": c["id"], "type": "function",
                                                     "function": {"name": c["name"], "arguments": ""}}]}))
                args = c["arguments"]
                chunks += [chunk({"tool_calls": [{"index": i, "function": {"arguments": args[k:k + 4]}}]})
                           for k in range(0, len(args), 4)]
            chunks.append(chunk({}, finish))
            chunks.append(json.dumps({"id": "chatcmpl-1", "object": "chat.completion.chunk", "created": 0,
                                      "model": model, "choices": [], "usage": usage}))
            chunks.append("[DONE]")
        self.write_events(handler, [(None, c) for c in chunks], reply)


if __name__ == "__main__":
    standin.serve(Chat, "A stand-in of OpenAI's chat completions")
