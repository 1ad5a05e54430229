"""A scripted LLM served through the real `openai` client: an OpenAI-compatible HTTP stub on
loopback. Replies are scripted per request (matched by a substring of the prompt), every
request is recorded, and a request nothing was scripted for is answered with HTTP 400 and
recorded in `unexpected`, which the fixture turns into a test failure."""

from __future__ import annotations

import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


class ScriptedLLM:
    def __init__(self) -> None:
        self.script: list[tuple[str, str, bool, str]] = []  # (substring, reply, reusable, finish reason)
        self.requests: list[dict] = []
        self.unexpected: list[str] = []
        self._lock = threading.Lock()
        handler = self._handler()
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)
        self._thread.start()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self._server.server_address[1]}/v1"

    def expect(self, contains: str, reply: str | dict, reusable: bool = False, finish: str = "stop") -> None:
        """Answer the next request whose prompt contains `contains` with `reply`; `finish` is the
        reply's finish reason ("length" for a reply cut at the token cap)."""
        text = reply if isinstance(reply, str) else json.dumps(reply)
        self.script.append((contains, text, reusable, finish))

    def close(self) -> None:
        self._server.shutdown()
        self._server.server_close()

    def _reply_for(self, body: dict) -> tuple[str, str] | None:
        prompt = "\n".join(str(m.get("content", "")) for m in body.get("messages", []))
        with self._lock:
            self.requests.append(body)
            for n, (needle, reply, reusable, finish) in enumerate(self.script):
                if needle in prompt:
                    if not reusable:
                        del self.script[n]
                    return reply, finish
            self.unexpected.append(prompt[-300:])
            return None

    def _handler(self):
        llm = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args):  # keep test output clean
                pass

            def do_POST(self):
                body = json.loads(self.rfile.read(int(self.headers.get("Content-Length", 0))))
                scripted = llm._reply_for(body) if self.path.endswith("/chat/completions") else None
                if scripted is None:
                    self._send(400, {"error": {"message": "unexpected request", "type": "invalid_request_error"}})
                    return
                reply, finish = scripted
                self._send(200, {
                    "id": f"chatcmpl-{len(llm.requests)}", "object": "chat.completion", "created": 0,
                    "model": body.get("model", "scripted"),
                    "choices": [{"index": 0, "finish_reason": finish,
                                 "message": {"role": "assistant", "content": reply}}],
                    "usage": {"prompt_tokens": len(json.dumps(body["messages"])) // 4,
                              "completion_tokens": max(1, len(reply) // 4),
                              "total_tokens": len(json.dumps(body["messages"])) // 4 + max(1, len(reply) // 4)},
                })

            def _send(self, status: int, obj: dict) -> None:
                data = json.dumps(obj).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

        return Handler
