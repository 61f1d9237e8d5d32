"""A streaming (server-sent events) face on Arena's fake OpenAI-compatible chat server: verifiers'
harnesses ask with ``stream: true``. For a matrix prompt the answer is the fake server's (a label,
in one of its well- or ill-formed formats); for any other game's prompt (its last "Legal actions:
a, b" line) a legal action picked from a seeded hash of the conversation, ill-formed one time in
four ("a or b"), so other games get retries too."""

from __future__ import annotations

import hashlib
import json
import re
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from arena_games.matrix.fakellm import _OPTIONS, FakeChatServer

_LEGAL = re.compile(r"^Legal actions: (.+)$", re.M)


def answer(fake: FakeChatServer, body: dict[str, Any]) -> str:
    convo = "\n".join(str(m.get("content", "")) for m in body.get("messages", []))
    legal = _LEGAL.findall(convo)
    if _OPTIONS.search(convo) or not legal:
        return fake.answer(body)
    labels = [x.strip() for x in legal[-1].split(",")]
    key = hashlib.sha256(f"{fake.seed}|{convo}".encode()).digest()
    pick, other, hedge = labels[key[0] % len(labels)], labels[key[1] % len(labels)], key[2] % 4 == 0
    return f"{pick} or {other}" if hedge else f"Thinking it over.\n{pick}"


class StreamingFakeServer:
    def __init__(self, seed: int = 0) -> None:
        self.fake = FakeChatServer(seed=seed)  # used for its answer() only; never started
        self.requests: list[dict[str, Any]] = []
        outer = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, format: str, *args: Any) -> None:
                pass

            def do_POST(self) -> None:
                body = json.loads(self.rfile.read(int(self.headers.get("Content-Length") or 0)) or b"{}")
                outer.requests.append(body)
                text = answer(outer.fake, body)
                usage = {"prompt_tokens": 10, "completion_tokens": 3, "total_tokens": 13}
                base = {"id": "fake-1", "created": 0, "model": body.get("model", "fake")}
                if not body.get("stream"):
                    data = json.dumps(
                        {
                            **base,
                            "object": "chat.completion",
                            "choices": [
                                {"index": 0, "message": {"role": "assistant", "content": text}, "finish_reason": "stop"}
                            ],
                            "usage": usage,
                        }
                    ).encode()
                    self.send_response(200)
                    self.send_header("Content-Type", "application/json")
                    self.send_header("Content-Length", str(len(data)))
                    self.end_headers()
                    self.wfile.write(data)
                    return
                chunks = [
                    {"index": 0, "delta": {"role": "assistant", "content": text}, "finish_reason": None},
                    {"index": 0, "delta": {}, "finish_reason": "stop"},
                ]
                events = [{**base, "object": "chat.completion.chunk", "choices": [c]} for c in chunks]
                events.append({**base, "object": "chat.completion.chunk", "choices": [], "usage": usage})
                payload = "".join(f"data: {json.dumps(e)}\n\n" for e in events) + "data: [DONE]\n\n"
                data = payload.encode()
                self.send_response(200)
                self.send_header("Content-Type", "text/event-stream")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

        self._httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._thread = threading.Thread(target=self._httpd.serve_forever, daemon=True)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self._httpd.server_address[1]}/v1"

    def __enter__(self) -> StreamingFakeServer:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._httpd.shutdown()
        self._httpd.server_close()
