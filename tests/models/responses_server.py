#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""A stand-in of OpenAI's Responses API (POST {base}/responses), written from its documentation,
for sion's suites: it checks what it is sent and answers as the API does, streamed or whole.

Checked (a request that breaks a rule gets 400 and the log names the rule): the path, the bearer
key, model, stream true, store false, instructions a text, input items (messages with input_text
or output_text parts, the person's pictures as input_image parts: a data URL of a picture type in
base64 whose bytes are of that type, and detail low, high or auto; function_call items with call_id,
name and arguments that are JSON text, each function_call_output answering a call before it, its
output a text or a list of input_text and input_image parts, every call answered before the next
message), no item carrying an id (nothing is stored to look one up by), flat function tools (with
--tools-in-input only in a first additional_tools item of role developer, none in `tools`),
reasoning.effort, include reasoning.encrypted_content, max_output_tokens (--room) or none
(--no-room). Reasoning given back: each reasoning item must be one this server wrote for this
model, exactly as it wrote it but for its id, right before the item that followed it; with
--reasoning-back the reasoning of the calls given back must be there.

Refusals (what the API refuses that sion could not know): --no-reasoning refuses any request that
asks for reasoning (include or reasoning), as a model without it does; --refuse-kept N refuses the
first N requests that give reasoning back, as reasoning sealed under another organization is.

A reply of the script (standin.py has the shared ones):
  {"text": "…", "reasoning": "…", "encrypted": false, "calls": [{"name": "…", "input": {…}}],
   "usage": {"input_tokens": 10, "output_tokens": 5, "cached_tokens": 3}, "whole": true,
   "failed": {"code": "usage_limit_reached", "message": "…"}, "incomplete": true, "cut": true,
   "crlf": true, "split": true, "comments": true}
"failed" sends response.failed after the first events; "cut" closes before the end; "encrypted"
false leaves the reasoning item without its encrypted content.
"""
import json
import os
import sys

sys.dont_write_bytecode = True  # no __pycache__ beside the sources
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import standin  # noqa: E402

EFFORTS = {"none", "minimal", "low", "medium", "high", "xhigh"}


class Responses(standin.Standin):
    turns_key = "input"

    @staticmethod
    def add_arguments(parser):
        parser.add_argument("--path", default="/v1/responses")
        parser.add_argument("--room", dest="room", action="store_true", default=True)
        parser.add_argument("--no-room", dest="room", action="store_false")
        parser.add_argument("--no-reasoning", action="store_true")
        parser.add_argument("--refuse-kept", type=int, default=0)
        parser.add_argument("--reasoning-back", action="store_true")
        parser.add_argument("--tools-in-input", action="store_true",
                            help="tools only in an additional_tools input item, as a ChatGPT plan takes them")

    def __init__(self, args):
        super().__init__(args)
        self.items = 0
        self.reasoning = {}  # encrypted content -> (model, item without id, what followed it)
        self.by_call = {}  # call id -> encrypted content of the reasoning before it
        self.refused_kept = 0

    def key_of(self, headers):
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
        if not headers.get("authorization", "").startswith("Bearer "):
            bad.append("no bearer token")
        if not isinstance(body.get("model"), str) or not body["model"]:
            bad.append("model is missing")
        if body.get("stream") is not True or body.get("store") is not False:
            bad.append("not streamed with store false")
        if "instructions" in body and not isinstance(body["instructions"], str):
            bad.append("instructions is not a text")
        if "previous_response_id" in body:
            bad.append("previous_response_id with store false")
        room = body.get("max_output_tokens")
        if self.args.room and (not isinstance(room, int) or not 0 < room <= 64000):
            bad.append("max_output_tokens is %r" % room)
        if not self.args.room and room is not None:
            bad.append("max_output_tokens is sent to a backend that takes none")
        asks = "include" in body or "reasoning" in body
        if asks:
            if body.get("include") != ["reasoning.encrypted_content"]:
                bad.append("include is %r" % body.get("include"))
            effort = body.get("reasoning", {}).get("effort")
            if effort is not None and effort not in EFFORTS:
                bad.append("reasoning.effort %r" % effort)
        if asks and self.args.no_reasoning:
            refused.append("Encrypted content is not supported with this model.")
        tools = body.get("tools", [])
        if self.args.tools_in_input:
            if "tools" in body or "tool_choice" in body:
                bad.append("tools are not in an additional_tools input item")
            items = body.get("input") if isinstance(body.get("input"), list) else []
            tools = [t for item in items if item.get("type") == "additional_tools"
                     for t in (item.get("tools") if item.get("role") == "developer" else [None])]
        for i, tool in enumerate(tools):
            if not isinstance(tool, dict) or tool.get("type") != "function" or not tool.get("name") \
                    or not isinstance(tool.get("parameters"), dict):
                bad.append("tools.%d is not a flat function with parameters" % i)
        gives_back = self.check_input(body.get("model"), body.get("input"), bad)
        if gives_back and self.refused_kept < self.args.refuse_kept:
            self.refused_kept += 1
            refused.append("The encrypted content for item rs_1 could not be verified.")
        return bad, refused

    def check_input(self, model, items, bad):
        """Checks the input items; whether reasoning was given back."""
        if not isinstance(items, list) or not items:
            bad.append("input is empty")
            return False
        pending, calls_seen, gives_back = set(), set(), False
        for i, item in enumerate(items):
            where = "input.%d" % i
            kind = item.get("type")
            if "id" in item:
                bad.append("%s carries an id under store false" % where)
            if kind == "function_call_output":
                if item.get("call_id") not in pending:
                    bad.append("%s answers %r, which is not a call waiting" % (where, item.get("call_id")))
                pending.discard(item.get("call_id"))
                output = item.get("output")
                if isinstance(output, list) and output:
                    for k, part in enumerate(output):
                        self.check_part("tool", part, "%s.output.%d" % (where, k), bad)
                elif not isinstance(output, str):
                    bad.append("%s has no output text" % where)
                continue
            if kind == "function_call":
                try:
                    json.loads(item.get("arguments"))
                except (TypeError, ValueError):
                    bad.append("%s: arguments are not JSON text" % where)
                if not item.get("call_id") or not item.get("name"):
                    bad.append("%s: a call without call_id or name" % where)
                pending.add(item.get("call_id"))
                calls_seen.add(item.get("call_id"))
                continue
            if kind == "additional_tools" and self.args.tools_in_input:
                if i != 0:
                    bad.append("%s: the tools are not the first item" % where)
                continue
            if kind == "reasoning":
                gives_back = True
                self.check_reasoning(model, item, items[i + 1] if i + 1 < len(items) else None, where, bad)
                continue
            if pending:
                bad.append("%s comes before calls %s are answered" % (where, sorted(pending)))
                pending = set()
            if kind != "message" or item.get("role") not in ("user", "assistant", "developer", "system"):
                bad.append("%s is not a message" % where)
                continue
            content = item.get("content")
            if not isinstance(content, list) or not content:
                bad.append("%s: no content parts" % where)
                continue
            for k, part in enumerate(content):
                self.check_part(item["role"], part, "%s.content.%d" % (where, k), bad)
        if pending:
            bad.append("calls %s are not answered" % sorted(pending))
        if self.args.reasoning_back:
            given = {it.get("encrypted_content") for it in items if it.get("type") == "reasoning"}
            for call_id in calls_seen:
                mine = self.by_call.get(call_id)
                if mine and self.reasoning[mine][0] == model and mine not in given:
                    bad.append("the reasoning before call %s is not given back" % call_id)
        return gives_back

    @staticmethod
    def check_part(role, part, where, bad):
        """An assistant's parts are output_text; the person's (and a call's output, role "tool")
        input_text, or input_image (a picture as a data URL of an image type in base64 whose
        bytes are of that type, or a URL; detail low, high or auto)."""
        kind = part.get("type") if isinstance(part, dict) else None
        if role != "assistant" and kind == "input_image":
            url = part.get("image_url")
            fault = None if isinstance(url, str) and url.startswith("https://") else standin.data_url_fault(url)
            if fault and isinstance(url, str) and url.startswith("data:"):
                bad.append("%s: image_url is not a data URL of a picture: %s" % (where, fault))
            elif fault:
                bad.append("%s: image_url is not a data URL of a picture" % where)
            if part.get("detail", "auto") not in ("low", "high", "auto"):
                bad.append("%s: detail %r is not low, high or auto" % (where, part.get("detail")))
            return
        want = "output_text" if role == "assistant" else "input_text"
        if kind != want or not isinstance(part.get("text"), str):
            bad.append("%s is not %s" % (where, want))

    def check_reasoning(self, model, item, after, where, bad):
        mine = self.reasoning.get(item.get("encrypted_content"))
        if mine is None or mine[0] != model:
            bad.append("%s: reasoning that this model did not write" % where)
            return
        if item != mine[1]:
            bad.append("%s: reasoning not as it was written: %s" % (where, json.dumps(item, sort_keys=True)))
        follows = None
        if after is not None:
            follows = ("function_call", after.get("call_id")) if after.get("type") == "function_call" \
                else ("message", after.get("content", [{}])[0].get("text"))
        if follows != mine[2]:
            bad.append("%s: reasoning given back before %r, not before %r" % (where, follows, mine[2]))

    def next_id(self, prefix):
        self.items += 1
        return "%s_%d" % (prefix, self.items)

    def output_items(self, reply, model):
        out = []
        calls = []
        for call in reply.get("calls", []):
            calls.append({"id": self.next_id("fc"), "type": "function_call", "status": "completed",
                          "call_id": call.get("id") or self.next_id("call"), "name": call["name"],
                          "arguments": json.dumps(call.get("input", {}))})
        message = None
        if reply.get("text"):
            message = {"id": self.next_id("msg"), "type": "message", "role": "assistant", "status": "completed",
                       "content": [{"type": "output_text", "text": reply["text"], "annotations": []}]}
        if reply.get("reasoning"):
            item = {"id": self.next_id("rs"), "type": "reasoning",
                    "summary": [{"type": "summary_text", "text": reply["reasoning"]}]}
            if reply.get("encrypted", True):
                item["encrypted_content"] = "enc-%d-%s" % (self.items, model)
                first = message or (calls[0] if calls else None)
                follows = None
                if first is not None:
                    follows = ("message", reply["text"]) if first is message else ("function_call", first["call_id"])
                kept = {k: v for k, v in item.items() if k != "id"}
                with self.lock:
                    self.reasoning[item["encrypted_content"]] = (model, kept, follows)
                    for c in calls:
                        self.by_call[c["call_id"]] = item["encrypted_content"]
            out.append(item)
        if message:
            out.append(message)
        return out + calls

    def answer(self, handler, reply, body):
        model = body["model"]
        output = self.output_items(reply, model)
        given = reply.get("usage", {})
        usage = {"input_tokens": given.get("input_tokens", max(1, len(json.dumps(body)) // 4)),
                 "input_tokens_details": {"cached_tokens": given.get("cached_tokens", 0)},
                 "output_tokens": given.get("output_tokens", 20),
                 "output_tokens_details": {"reasoning_tokens": 0}}
        usage["total_tokens"] = usage["input_tokens"] + usage["output_tokens"]
        status = "incomplete" if reply.get("incomplete") else "completed"
        response = {"id": "resp_1", "object": "response", "status": status, "model": model,
                    "output": output, "usage": usage}
        if reply.get("whole"):
            return self.send_json(handler, 200, response)
        self.start_stream(handler)
        events = [("response.created", {"response": dict(response, status="in_progress", output=[])})]
        for index, item in enumerate(output):
            events += self.item_events(index, item)
        if reply.get("failed"):
            failed = dict(response, status="failed", error=reply["failed"])
            events = events[:2] + [("response.failed", {"response": failed})]
        elif reply.get("cut"):
            events = events[:-1]
        else:
            events.append(("response.incomplete" if status == "incomplete" else "response.completed",
                           {"response": response}))
        seq = []
        for n, (name, data) in enumerate(events):
            data = dict(data, type=name, sequence_number=n)
            seq.append((name, json.dumps(data)))
        self.write_events(handler, seq, reply)

    def item_events(self, index, item):
        def ev(name, **data):
            return (name, dict(data, output_index=index))
        kind = item["type"]
        if kind == "reasoning":
            added = {"id": item["id"], "type": "reasoning", "summary": []}
            text = item["summary"][0]["text"]
            out = [ev("response.output_item.added", item=added),
                   ev("response.reasoning_summary_part.added", item_id=item["id"], summary_index=0,
                      part={"type": "summary_text", "text": ""})]
            out += [ev("response.reasoning_summary_text.delta", item_id=item["id"], summary_index=0,
                       delta=text[k:k + 7]) for k in range(0, len(text), 7)]
            return out + [ev("response.output_item.done", item=item)]
        if kind == "message":
            text = item["content"][0]["text"]
            out = [ev("response.output_item.added", item=dict(item, content=[]))]
            out += [ev("response.output_text.delta", item_id=item["id"], content_index=0, delta=text[k:k + 5])
                    for k in range(0, len(text), 5)]
            return out + [ev("response.output_text.done", item_id=item["id"], content_index=0, text=text),
                          ev("response.output_item.done", item=item)]
        args = item["arguments"]
        out = [ev("response.output_item.added", item=dict(item, arguments="", status="in_progress"))]
        out += [ev("response.function_call_arguments.delta", item_id=item["id"], delta=args[k:k + 4])
                for k in range(0, len(args), 4)]
        return out + [ev("response.function_call_arguments.done", item_id=item["id"], arguments=args),
                      ev("response.output_item.done", item=item)]


if __name__ == "__main__":
    standin.serve(Responses, "A stand-in of OpenAI's Responses API")
