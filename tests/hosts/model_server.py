#!/usr/bin/env python3
"""Scripted local model server for driving real coding-agent clients offline.

Python 3 standard library only.  Serves on 127.0.0.1 (a free port unless --port):

  * OpenAI chat completions   POST /v1/chat/completions  (Copilot CLI, Qwen Code; SSE or JSON)
  * Anthropic Messages        POST /v1/messages[?beta=true] (Claude Code; SSE or JSON)
  * Anthropic token count     POST /v1/messages/count_tokens
  * OpenAI Responses API      POST /v1/responses  (Codex CLI as juror or agent; SSE or JSON)
  * Gemini API                POST /v1beta/models/M:streamGenerateContent[?alt=sse],
                              M:generateContent, M:countTokens  (Gemini CLI juror)
  * model listings            GET  /v1/models, /models
  * anything else             GET/HEAD -> 200 {} ; other POST -> 404 JSON error

Usage:
  model_server.py --scenario S.json [--port-file F] [--log L.jsonl] [--var k=v ...]
                  [--impostor REQUESTED=REPORTED ...] [--no-model-header]

The port is printed as the first stdout line (and written to --port-file).

Scenario (JSON):
  {
    "name": "cross-family-ok",
    "prompt": "the root prompt the driver passes with -p",
    "model": "optional: model name the server reports (default: echo the request's model)",
    "vars": {"binding": "run_..."},
    "root": [                                   # the root agent's turns, in order
      {"bash": "judge-evidence marker --binding {{binding}}"},
      {"task": {"agent_type": "rubber-duck", "name": "...", "description": "...",
                "prompt": "ARIS_REVIEW_NONCE={{nonce}}\\n\\nReview ...", "model": "gpt-5.4"}},
      {"tool": "AnyTool", "input": {...}},      # raw tool call (name used as is)
      {"text": "final answer"}
    ],
    "reviewer": {                               # what the task/subagent child answers
      "text": "Score: 8/10\\nVerdict: ready ...",
      "error": {"status": 500, "message": "..."} # optional: child requests fail
    }
  }

Step selection is deterministic: for a root request the step index is the number of
assistant turns already in the request's conversation (at least the number of tool
results: OpenAI `role: tool` messages, Anthropic `tool_result` blocks).  A tool step
becomes one tool call; a text step (or running off the end of the script) ends the turn
with text.  A text step followed by more steps is useful when the client continues after
its final answer (e.g. a Claude Code Stop hook that exits 2).

Request classification:
  * child (reviewer): some user message contains a literal fragment of a scripted
    task prompt (the longest placeholder-free piece) -> the reviewer answer / error.
  * root: a user message contains the scenario's `prompt` (or no prompt is given).
  * other (e.g. title generation): a short plain text answer "OK".

Placeholders `{{name}}` in every string of a tool step are resolved, in order, from:
`--var name=value`, scenario `vars`, a scenario `capture` {"name": "regex"} matched
against the user messages or the tool results (group 1), and finally the most recent tool result text in
the conversation that contains `"name"` (the JSON string value after it; e.g. `{{nonce}}`
takes "nonce" from the `challenge` output).  An unresolved placeholder is left as is.

Copilot's `bash` tool is called as {"command": ..., "description": ...} (as
`run_shell_command` with the same arguments when a chat-completions request offers that tool
and no `bash`: Qwen Code, and Gemini CLI on the Gemini API); Claude Code's
`Bash` as {"command": ..., "description": ...}; Codex CLI's `exec_command` as {"cmd": ...,
"login": false, "yield_time_ms": 30000} updated with the step's "exec" object.  Copilot's `task` takes the task
object as arguments; for Claude Code a `task` step is sent as the `Agent` tool with
{"subagent_type": agent_type, "description": ..., "prompt": ...} plus "model" and
"run_in_background" when given (Claude Code's `model` enum is sonnet/opus/haiku/fable).
A raw `{"tool": ..., "input": {"prompt": ...}}` step also identifies its child by prompt.

Jurors (Responses API and Gemini API requests; a juror is asked once and answers text):
  "juror": {"text": "{\"verdict\":\"pass\",...}",        # the answer (default: a pass)
            "by_model": {"gpt-5.4-mini": "..."}}           # optional, per requested model
  "impostors": {"gpt-5.4-mini": "gemini-2.5-flash"}        # requested -> reported model
  "model_header": true                                     # Responses: send `openai-model`

Which model the server says answered (every API): `--impostor REQ=REP` / scenario
`impostors` for that requested model, else the scenario's `model`, else the request's
model. It goes where each API reports it: chat completions and Anthropic `model`,
Responses `response.model` (and the `openai-model` response header unless
`--no-model-header` / `"model_header": false`), Gemini `modelVersion`. Every juror
request is logged with `kind: "juror"`, `request_model` and `reported_model`.
"""

import argparse
import json
import os
import re
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import unquote, urlparse

PLACEHOLDER = re.compile(r"\{\{([A-Za-z0-9_.-]+)\}\}")
DEFAULT_JUROR_TEXT = '{"verdict":"pass","confidence":92,"flags":[]}'
GEMINI_PATH = re.compile(r"/models/([^/:]+):(streamGenerateContent|generateContent|countTokens)$")


# ----------------------------------------------------------------------------- helpers

def text_of(content):
    """Flatten OpenAI/Anthropic message content into plain text."""
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        parts = []
        for item in content:
            if isinstance(item, str):
                parts.append(item)
            elif isinstance(item, dict):
                if item.get("type") == "tool_result":
                    parts.append(text_of(item.get("content")))
                elif "text" in item and isinstance(item["text"], str):
                    parts.append(item["text"])
                elif "content" in item:
                    parts.append(text_of(item.get("content")))
        return "\n".join(parts)
    if isinstance(content, dict):
        return text_of(content.get("text") or content.get("content"))
    return str(content)


def system_text(req):
    sysv = req.get("system")
    out = text_of(sysv) if sysv is not None else ""
    for m in req.get("messages") or []:
        if m.get("role") in ("system", "developer"):
            out += "\n" + text_of(m.get("content"))
    return out


def user_texts(req):
    """Texts of user messages (excluding tool results); a Responses request's `input`
    messages count as messages."""
    out = []
    for c in gemini_contents(req, "user"):
        texts = [p["text"] for p in c.get("parts") or [] if isinstance(p, dict) and isinstance(p.get("text"), str)]
        if texts:
            out.append("\n".join(texts))
    for m in (req.get("messages") or []) + responses_items(req, "message"):
        if m.get("role") != "user":
            continue
        c = m.get("content")
        if isinstance(c, list):
            out.append(text_of([b for b in c if not (isinstance(b, dict) and b.get("type") == "tool_result")]))
        else:
            out.append(text_of(c))
    return out


def responses_items(req, kind):
    """The Responses API `input` items of `kind` (a message item may omit its type)."""
    items = req.get("input") if isinstance(req.get("input"), list) else []
    return [i for i in items if isinstance(i, dict) and i.get("type", "message") == kind]


def gemini_contents(req, role):
    """The Gemini API `contents` of `role` (`user`, `model`)."""
    contents = req.get("contents") if isinstance(req.get("contents"), list) else []
    return [c for c in contents if isinstance(c, dict) and c.get("role") == role]


def tool_results(req):
    """Ordered list of tool result texts in the conversation (all four APIs)."""
    out = [o if isinstance(o, str) else text_of(o)
           for o in (i.get("output") for i in responses_items(req, "function_call_output"))]
    for c in gemini_contents(req, "user"):
        for p in c.get("parts") or []:
            if isinstance(p, dict) and isinstance(p.get("functionResponse"), dict):
                out.append(json.dumps(p["functionResponse"].get("response")))
    for m in req.get("messages") or []:
        role = m.get("role")
        if role == "tool":
            out.append(text_of(m.get("content")))
        elif role == "user" and isinstance(m.get("content"), list):
            for b in m["content"]:
                if isinstance(b, dict) and b.get("type") == "tool_result":
                    out.append(text_of(b.get("content")))
    return out


def offered_tools(req):
    """The names of the function tools a chat-completions request offers."""
    return {(t.get("function") or {}).get("name") or t.get("name")
            for t in (req.get("tools") or []) if isinstance(t, dict)}


def longest_literal(s):
    pieces = [p.strip() for p in PLACEHOLDER.split(s)[::2]]
    pieces = [p for p in pieces if p]
    return max(pieces, key=len) if pieces else ""


class Scenario:
    def __init__(self, path, cli_vars):
        with open(path, "r", encoding="utf-8") as f:
            self.data = json.load(f)
        self.vars = dict(self.data.get("vars") or {})
        self.vars.update(cli_vars)
        self.root = list(self.data.get("root") or [])
        self.reviewer = dict(self.data.get("reviewer") or {})
        self.model = self.data.get("model")
        self.impostors = dict(self.data.get("impostors") or {})
        self.model_header = bool(self.data.get("model_header", True))
        self.juror = dict(self.data.get("juror") or {})
        self.prompt = self.data.get("prompt")
        if isinstance(self.prompt, str):
            self.prompt = self.substitute(self.prompt, [])
        # literal fragments identifying the child (reviewer) conversation
        self.child_keys = []
        for step in self.root:
            task = step.get("task") if isinstance(step, dict) else None
            if task is None and isinstance(step, dict) and isinstance(step.get("input"), dict):
                task = step["input"]  # raw tool step, e.g. Claude Code's Agent tool
            if isinstance(task, dict) and isinstance(task.get("prompt"), str):
                key = longest_literal(self.substitute(task["prompt"], [], keep_unresolved=True))
                if len(key) >= 8:
                    self.child_keys.append(key)
        extra = self.reviewer.get("match")
        if isinstance(extra, str) and extra:
            self.child_keys.append(extra)

    def lookup(self, name, results):
        if name in self.vars:
            return str(self.vars[name])
        pat = re.compile(r'"%s"\s*:\s*"((?:[^"\\]|\\.)*)"' % re.escape(name))
        for txt in reversed(results):
            m = pat.search(txt)
            if m:
                try:
                    return json.loads('"' + m.group(1) + '"')
                except ValueError:
                    return m.group(1)
        return None

    def substitute(self, value, results, keep_unresolved=True):
        whole = isinstance(value, str) and PLACEHOLDER.fullmatch(value)
        if whole:
            # A value that is one placeholder takes the resolved value's JSON type when it
            # is a number (a Codex CLI `write_stdin` `session_id`).
            v = self.lookup(whole.group(1), results)
            if v is not None and v.isdigit():
                return int(v)
        if isinstance(value, str):
            def rep(m):
                v = self.lookup(m.group(1), results)
                return m.group(0) if v is None else v
            return PLACEHOLDER.sub(rep, value)
        if isinstance(value, list):
            return [self.substitute(v, results, keep_unresolved) for v in value]
        if isinstance(value, dict):
            return {k: self.substitute(v, results, keep_unresolved) for k, v in value.items()}
        return value

    def reported_model(self, requested):
        """The model the server says answered a request for `requested`."""
        if requested in self.impostors:
            return self.impostors[requested]
        return self.model or requested or "scripted-model"

    def juror_text(self, requested):
        by_model = self.juror.get("by_model") or {}
        if requested in by_model:
            return by_model[requested]
        return self.juror.get("text", DEFAULT_JUROR_TEXT)

    def classify(self, req):
        users = user_texts(req)
        for key in self.child_keys:
            if any(key in u for u in users):
                return "child"
        if not self.prompt:
            return "root"
        if any(self.prompt in u for u in users):
            return "root"
        return "other"

    def root_action(self, req, flavor):
        """-> (step_index, action) where action is ("tool", name, input) or ("text", str)."""
        results = tool_results(req)
        n_assistant = sum(1 for m in req.get("messages") or [] if m.get("role") == "assistant")
        # A Responses conversation: each step taken is a function call or an answer; a
        # Gemini one: each model turn.
        n_assistant += len(responses_items(req, "function_call")) + len(gemini_contents(req, "model"))
        n_assistant += sum(1 for m in responses_items(req, "message") if m.get("role") == "assistant")
        idx = max(len(results), n_assistant)
        # "capture": {"name": "regex with one group"} reads a value from the user messages
        # (e.g. the prompt file a Copilot juror is told to view), or else from the tool
        # results, newest first (the session of a Codex CLI call still running); it
        # resolves like the most recent tool result.
        for name, pattern in (self.data.get("capture") or {}).items():
            for text in user_texts(req) + list(reversed(results)):
                m = re.search(pattern, text)
                if m:
                    results = results + [json.dumps({name: m.group(1)})]
                    break
        if idx >= len(self.root):
            return idx, ("text", self.data.get("default_text", "Done."))
        step = self.root[idx]
        if "text" in step:
            return idx, ("text", self.substitute(step["text"], results))
        if "bash" in step:
            cmd = self.substitute(step["bash"], results)
            desc = step.get("description") or "Run command"
            if flavor == "openai":
                # Qwen Code offers `run_shell_command` (Gemini CLI's name) and no `bash`.
                if "run_shell_command" in offered_tools(req) and "bash" not in offered_tools(req):
                    return idx, ("tool", "run_shell_command", {"command": cmd, "description": desc})
                return idx, ("tool", "bash", {"command": cmd, "description": desc})
            if flavor == "gemini":
                return idx, ("tool", "run_shell_command", {"command": cmd, "description": desc})
            if flavor == "responses":
                # Not a login shell, whose profile would reset the PATH the test set up;
                # the longest wait Codex CLI allows before it answers "still running".
                return idx, ("tool", "exec_command", dict({"cmd": cmd, "login": False, "yield_time_ms": 30000},
                                                           **(step.get("exec") or {})))
            return idx, ("tool", "Bash", {"command": cmd, "description": desc})
        if "task" in step:
            t = self.substitute(step["task"], results)
            if flavor == "openai":
                return idx, ("tool", step.get("tool_name", "task"), t)
            args = {"description": t.get("description", "review"), "prompt": t.get("prompt", ""),
                    "subagent_type": t.get("agent_type", "general-purpose")}
            for k in ("model", "run_in_background"):
                if k in t:
                    args[k] = t[k]
            return idx, ("tool", step.get("tool_name", "Agent"), args)
        if "tool" in step:
            return idx, ("tool", step["tool"], self.substitute(step.get("input") or {}, results))
        return idx, ("text", "Done.")


# ----------------------------------------------------------------------------- server

class State:
    def __init__(self, scenario, log_path):
        self.scenario = scenario
        self.log_path = log_path
        self.lock = threading.Lock()
        self.seq = 0
        self.ids = 0

    def next_id(self):
        with self.lock:
            self.ids += 1
            return self.ids

    def log(self, record):
        if not self.log_path:
            return
        with self.lock:
            self.seq += 1
            record = dict(record, seq=self.seq, time=time.time())
            with open(self.log_path, "a", encoding="utf-8") as f:
                f.write(json.dumps(record, ensure_ascii=False) + "\n")


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server_version = "judged-model-server/1"
    state = None  # type: State

    def log_message(self, fmt, *args):  # keep stderr quiet
        pass

    # -- plumbing
    def _read_body(self):
        n = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(n) if n > 0 else b""
        try:
            return raw, (json.loads(raw) if raw else {})
        except ValueError:
            return raw, None

    def _send_json(self, status, obj, extra_headers=None):
        body = json.dumps(obj).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        for k, v in (extra_headers or {}).items():
            self.send_header(k, v)
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(body)

    def _start_sse(self):
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Cache-Control", "no-cache")
        self.send_header("Connection", "close")
        self.end_headers()
        self.close_connection = True

    def _sse(self, data, event=None):
        chunk = ""
        if event:
            chunk += "event: %s\n" % event
        chunk += "data: %s\n\n" % (data if isinstance(data, str) else json.dumps(data))
        self.wfile.write(chunk.encode())
        self.wfile.flush()

    # -- verbs
    def do_HEAD(self):
        self._send_json(200, {})

    def do_GET(self):
        path = urlparse(self.path).path
        self.state.log({"method": "GET", "path": self.path, "headers": dict(self.headers)})
        if path.rstrip("/").endswith("/models"):
            names = [n for n in {self.state.scenario.model, "gpt-5.4", "claude-sonnet-4.6"} if n]
            data = [{"id": n, "object": "model", "type": "model", "display_name": n, "owned_by": "judged",
                     "created": 0, "created_at": "2026-01-01T00:00:00Z"} for n in sorted(names)]
            self._send_json(200, {"object": "list", "data": data, "has_more": False,
                                  "first_id": data[0]["id"], "last_id": data[-1]["id"]})
            return
        self._send_json(200, {})

    def do_POST(self):
        path = urlparse(self.path).path
        raw, req = self._read_body()
        if req is None or not isinstance(req, dict):
            self.state.log({"method": "POST", "path": self.path, "error": "bad json", "raw": raw[:2000].decode("utf-8", "replace")})
            self._send_json(400, {"error": {"type": "invalid_request_error", "message": "body is not JSON"}})
            return
        if path.endswith("/messages/count_tokens"):
            self.state.log({"method": "POST", "path": self.path, "kind": "count_tokens"})
            self._send_json(200, {"input_tokens": max(1, len(raw) // 4)})
            return
        if path.endswith("/chat/completions"):
            self._handle(req, "openai")
            return
        if path.endswith("/messages"):
            self._handle(req, "anthropic")
            return
        if path.endswith("/responses"):
            self._handle_responses(req)
            return
        gemini = GEMINI_PATH.search(path)
        if gemini:
            self._handle_gemini(req, unquote(gemini.group(1)), gemini.group(2))
            return
        self.state.log({"method": "POST", "path": self.path, "kind": "unknown", "body": req})
        self._send_json(404, {"error": {"type": "not_found_error", "message": "unsupported path %s" % path}})

    # -- core
    def _handle(self, req, flavor):
        sc = self.state.scenario
        kind = sc.classify(req)
        model = sc.reported_model(req.get("model"))
        entry = {"method": "POST", "path": self.path, "flavor": flavor, "kind": kind,
                 "request_model": req.get("model"), "stream": bool(req.get("stream")),
                 "n_messages": len(req.get("messages") or []),
                 "tools": [(t.get("function") or {}).get("name") or t.get("name") for t in (req.get("tools") or []) if isinstance(t, dict)],
                 "body": req}
        if kind == "child":
            err = sc.reviewer.get("error")
            if err:
                status = int(err.get("status", 500)) if isinstance(err, dict) else 500
                message = err.get("message", "scripted reviewer failure") if isinstance(err, dict) else str(err)
                entry["reply"] = {"error": status}
                self.state.log(entry)
                if flavor == "openai":
                    body = {"error": {"message": message, "type": "server_error", "code": "scripted_failure"}}
                else:
                    body = {"type": "error", "error": {"type": "api_error", "message": message}}
                self._send_json(status, body)
                return
            action = ("text", sc.reviewer.get("text", "Score: 8/10\nVerdict: ready\n\n1. Weakness: none\nMemory update: none"))
            idx = None
        elif kind == "root":
            idx, action = sc.root_action(req, flavor)
        else:
            idx, action = None, ("text", "OK")
        entry["step"] = idx
        entry["reply"] = action
        self.state.log(entry)
        call_id = None
        if action[0] == "tool":
            call_id = ("call_s%d" % idx) if flavor == "openai" else ("toolu_s%d_%s" % (idx, "0" * 16))
        if flavor == "openai":
            self._reply_openai(req, model, action, call_id, idx)
        else:
            self._reply_anthropic(req, model, action, call_id, idx)

    def _reply_openai(self, req, model, action, call_id, idx):
        rid = "chatcmpl-scripted-%s" % ("x" if idx is None else idx)
        created = int(time.time())
        usage = {"prompt_tokens": 100, "completion_tokens": 10, "total_tokens": 110}
        if action[0] == "tool":
            message = {"role": "assistant", "content": None,
                       "tool_calls": [{"id": call_id, "type": "function",
                                       "function": {"name": action[1], "arguments": json.dumps(action[2])}}]}
            finish = "tool_calls"
        else:
            message = {"role": "assistant", "content": action[1]}
            finish = "stop"
        if not req.get("stream"):
            self._send_json(200, {"id": rid, "object": "chat.completion", "created": created, "model": model,
                                  "choices": [{"index": 0, "message": message, "finish_reason": finish}],
                                  "usage": usage})
            return
        self._start_sse()

        def chunk(delta, finish_reason=None, **extra):
            d = {"id": rid, "object": "chat.completion.chunk", "created": created, "model": model,
                 "choices": [{"index": 0, "delta": delta, "finish_reason": finish_reason}]}
            d.update(extra)
            self._sse(d)

        chunk({"role": "assistant", "content": ""})
        if action[0] == "tool":
            chunk({"tool_calls": [{"index": 0, "id": call_id, "type": "function",
                                   "function": {"name": action[1], "arguments": ""}}]})
            chunk({"tool_calls": [{"index": 0, "function": {"arguments": json.dumps(action[2])}}]})
        else:
            chunk({"content": action[1]})
        chunk({}, finish)
        if (req.get("stream_options") or {}).get("include_usage"):
            self._sse({"id": rid, "object": "chat.completion.chunk", "created": created, "model": model,
                       "choices": [], "usage": usage})
        self._sse("[DONE]")

    def _reply_anthropic(self, req, model, action, call_id, idx):
        mid = "msg_scripted_%s" % ("x" if idx is None else idx)
        if action[0] == "tool":
            block = {"type": "tool_use", "id": call_id, "name": action[1], "input": action[2]}
            stop = "tool_use"
        else:
            block = {"type": "text", "text": action[1]}
            stop = "end_turn"
        usage = {"input_tokens": 100, "output_tokens": 10, "cache_creation_input_tokens": 0,
                 "cache_read_input_tokens": 0}
        if not req.get("stream"):
            self._send_json(200, {"id": mid, "type": "message", "role": "assistant", "model": model,
                                  "content": [block], "stop_reason": stop, "stop_sequence": None,
                                  "usage": usage})
            return
        self._start_sse()
        self._sse({"type": "message_start", "message": {
            "id": mid, "type": "message", "role": "assistant", "model": model, "content": [],
            "stop_reason": None, "stop_sequence": None,
            "usage": dict(usage, output_tokens=1)}}, "message_start")
        if block["type"] == "tool_use":
            self._sse({"type": "content_block_start", "index": 0,
                       "content_block": {"type": "tool_use", "id": call_id, "name": action[1], "input": {}}},
                      "content_block_start")
            self._sse({"type": "content_block_delta", "index": 0,
                       "delta": {"type": "input_json_delta", "partial_json": json.dumps(action[2])}},
                      "content_block_delta")
        else:
            self._sse({"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}},
                      "content_block_start")
            self._sse({"type": "content_block_delta", "index": 0,
                       "delta": {"type": "text_delta", "text": action[1]}}, "content_block_delta")
        self._sse({"type": "content_block_stop", "index": 0}, "content_block_stop")
        self._sse({"type": "message_delta", "delta": {"stop_reason": stop, "stop_sequence": None},
                   "usage": {"output_tokens": 10}}, "message_delta")
        self._sse({"type": "message_stop"}, "message_stop")

    # -- jurors: the OpenAI Responses API (Codex CLI) and the Gemini API (Gemini CLI)
    def _log_juror(self, api, requested, reported, text, extra=None):
        entry = {"method": "POST", "path": self.path, "flavor": api, "kind": "juror",
                 "request_model": requested, "reported_model": reported, "reply": ["text", text]}
        entry.update(extra or {})
        self.state.log(entry)

    def _next_action(self, req, flavor, requested, reported, extra):
        """-> (step_index, action) for a Codex CLI or Gemini CLI request: the scripted root
        agent's next step when the scenario has a root script and this is the root
        conversation, the reviewer's answer for a child, and otherwise the juror's verdict.
        Only an agent's scenario names its prompt; a juror's answers every request."""
        sc = self.state.scenario
        kind = sc.classify(req) if sc.prompt else "juror"
        idx = None
        if kind == "root" and sc.root:
            idx, action = sc.root_action(req, flavor)
        elif kind == "child":
            action = ("text", sc.reviewer.get("text", "Score: 8/10\nVerdict: ready"))
        else:
            action = ("text", sc.juror_text(requested))
            self._log_juror(flavor, requested, reported, action[1], extra)
            return idx, action
        self.state.log(dict(extra, method="POST", path=self.path, flavor=flavor, kind=kind,
                            request_model=requested, reported_model=reported, step=idx, reply=action))
        return idx, action

    def _handle_responses(self, req):
        """A Codex CLI request (see `_next_action`)."""
        sc = self.state.scenario
        requested = req.get("model")
        reported = sc.reported_model(requested)
        extra = {"headers": dict(self.headers), "input": req.get("input"),
                 "instructions_chars": len(req.get("instructions") or ""),
                 "tools": [t.get("name") or t.get("type") for t in (req.get("tools") or []) if isinstance(t, dict)]}
        idx, action = self._next_action(req, "responses", requested, reported, extra)
        stream = req.get("stream") is not False
        created = int(time.time())
        rid = "resp_scripted_%d" % self.state.next_id()
        mid = "msg_scripted_%d" % self.state.next_id()
        usage = {"input_tokens": 100, "input_tokens_details": {"cached_tokens": 0},
                 "output_tokens": 20, "output_tokens_details": {"reasoning_tokens": 0}, "total_tokens": 120}
        if action[0] == "tool":
            arguments = json.dumps(action[2])
            item = {"type": "function_call", "id": "fc_" + mid, "status": "completed", "call_id": "call_s%d" % idx,
                    "name": action[1], "arguments": arguments}
        else:
            part = {"type": "output_text", "text": action[1], "annotations": []}
            item = {"type": "message", "id": mid, "status": "completed", "role": "assistant", "content": [part]}
        response = {"id": rid, "object": "response", "created_at": created, "status": "completed",
                    "model": reported, "output": [item], "usage": usage}
        headers = {"openai-model": reported} if sc.model_header else {}
        if not stream:
            self._send_json(200, response, headers)
            return
        event = self._responses_stream(headers)
        event("response.created", response=dict(response, status="in_progress", output=[], usage=None))
        event("response.in_progress", response=dict(response, status="in_progress", output=[], usage=None))
        if action[0] == "tool":
            event("response.output_item.added", output_index=0, item=dict(item, status="in_progress", arguments=""))
            event("response.function_call_arguments.delta", item_id=item["id"], output_index=0, delta=arguments)
            event("response.function_call_arguments.done", item_id=item["id"], output_index=0, arguments=arguments)
            event("response.output_item.done", output_index=0, item=item)
            event("response.completed", response=response)
            return
        text = action[1]
        event("response.output_item.added", output_index=0,
              item=dict(item, status="in_progress", content=[]))
        event("response.content_part.added", item_id=mid, output_index=0, content_index=0,
              part=dict(part, text=""))
        event("response.output_text.delta", item_id=mid, output_index=0, content_index=0, delta=text)
        event("response.output_text.done", item_id=mid, output_index=0, content_index=0, text=text)
        event("response.content_part.done", item_id=mid, output_index=0, content_index=0, part=part)
        event("response.output_item.done", output_index=0, item=item)
        event("response.completed", response=response)

    def _responses_stream(self, headers):
        """Start a Responses API event stream; the function that sends one event."""
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Cache-Control", "no-cache")
        self.send_header("Connection", "close")
        for k, v in headers.items():
            self.send_header(k, v)
        self.end_headers()
        self.close_connection = True
        seq = iter(range(1000))

        def event(kind, **fields):
            self._sse(dict({"type": kind, "sequence_number": next(seq)}, **fields), kind)

        return event

    def _handle_gemini(self, req, requested, method):
        sc = self.state.scenario
        if method == "countTokens":
            self.state.log({"method": "POST", "path": self.path, "flavor": "gemini", "kind": "count_tokens"})
            self._send_json(200, {"totalTokens": 100})
            return
        reported = sc.reported_model(requested)
        contents = req.get("contents") or []
        extra = {"stream": method == "streamGenerateContent", "headers": dict(self.headers), "contents": contents}
        _, action = self._next_action(req, "gemini", requested, reported, extra)
        rid = "gemini-scripted-%d" % self.state.next_id()
        usage = {"promptTokenCount": 100, "candidatesTokenCount": 20, "totalTokenCount": 120}
        if action[0] == "tool":
            call = {"content": {"role": "model", "parts": [{"functionCall": {"name": action[1], "args": action[2]}}]},
                    "index": 0, "finishReason": "STOP"}
            out = {"candidates": [call], "modelVersion": reported, "responseId": rid, "usageMetadata": usage}
            if method == "generateContent" or "alt=sse" not in (urlparse(self.path).query or ""):
                self._send_json(200, out if method == "generateContent" else [out])
                return
            self._start_sse()
            self._sse(out)
            return
        text = action[1]

        def answer(chunk, finish):
            candidate = {"content": {"role": "model", "parts": [{"text": chunk}]}, "index": 0}
            if finish:
                candidate["finishReason"] = "STOP"
            out = {"candidates": [candidate], "modelVersion": reported, "responseId": rid}
            if finish:
                out["usageMetadata"] = usage
            return out

        if method == "generateContent":
            self._send_json(200, answer(text, True))
            return
        # streamGenerateContent: SSE with ?alt=sse, otherwise a JSON array of chunks.
        half = len(text) // 2
        chunks = [answer(text[:half], False), answer(text[half:], True)]
        if "alt=sse" not in (urlparse(self.path).query or ""):
            self._send_json(200, chunks)
            return
        self._start_sse()
        for c in chunks:
            self._sse(c)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--scenario", required=True)
    ap.add_argument("--port", type=int, default=0)
    ap.add_argument("--port-file")
    ap.add_argument("--log")
    ap.add_argument("--var", action="append", default=[], help="name=value placeholder (repeatable)")
    ap.add_argument("--impostor", action="append", default=[],
                    help="REQUESTED=REPORTED: answer requests for a model as another (repeatable)")
    ap.add_argument("--no-model-header", action="store_true",
                    help="Responses API: do not send the openai-model header")
    args = ap.parse_args(argv)
    cli_vars = {}
    for kv in args.var:
        k, sep, v = kv.partition("=")
        if not sep:
            ap.error("--var needs name=value: %r" % kv)
        cli_vars[k] = v
    scenario = Scenario(args.scenario, cli_vars)
    for kv in args.impostor:
        k, sep, v = kv.partition("=")
        if not sep or not k or not v:
            ap.error("--impostor needs REQUESTED=REPORTED: %r" % kv)
        scenario.impostors[k] = v
    if args.no_model_header:
        scenario.model_header = False
    Handler.state = State(scenario, args.log)
    httpd = ThreadingHTTPServer(("127.0.0.1", args.port), Handler)
    httpd.daemon_threads = True
    port = httpd.server_address[1]
    if args.port_file:
        tmp = args.port_file + ".tmp"
        with open(tmp, "w") as f:
            f.write("%d\n" % port)
        os.replace(tmp, args.port_file)
    sys.stdout.write("%d\n" % port)
    sys.stdout.flush()
    try:
        httpd.serve_forever()
    except KeyboardInterrupt:
        pass
    finally:
        httpd.server_close()


if __name__ == "__main__":
    main()
