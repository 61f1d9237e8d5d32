"""A local fake OpenAI-compatible chat server that plays matrix games at random, for tests and
benchmarks of the study's LLM path (parser, sampling, concurrency, outages).

It reads the labels from the matrix prompt ("The options are: A, B, C."), picks one uniformly
at random (from its seed, the request's seed and the prompt, so concurrent requests stay
reproducible; at temperature 0 the request seed is ignored, like greedy decoding; with
``pick="first"`` it always answers the option listed first, a position-driven player), answers in
one of :data:`FORMATS` and logs the pick, the format and the text. It counts requests in
flight (in all, and per model), so a test can assert concurrency without timing anything; with
``fail_rate`` it answers that share of requests with HTTP 500 (drawn from its seed and the
request count: an outage that a client's retries get through).

    with FakeChatServer(latency_s=0.2, seed=1) as server:
        spec = f"openai:base_url={server.url},model=fake,api_key_env=,temperature=1"
"""

from __future__ import annotations

import hashlib
import json
import re
import threading
import time
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import numpy as np

_OPTIONS = re.compile(r"The options are: (.+?)\. Which one do you choose\?")

#: (name, well_formed, template): ``{x}`` is the pick, ``{y}`` another label
FORMATS: tuple[tuple[str, bool, str], ...] = (
    ("bare", True, "{x}"),
    ("bold", True, "**{x}**"),
    ("answer_line", True, "Answer: {x}"),
    (
        "prose_then_answer",
        True,
        "A copy of me sees the same table, so I pick a label I think it picks too.\nAnswer: {x}.",
    ),
    ("final_answer_bold", True, "Let me weigh the options.\n\n**Final answer:** {x}"),
    ("json", True, '{{"action": "{x}"}}'),
    ("fenced_json", True, 'Thinking it over.\n```json\n{{"label": "{x}"}}\n```'),
    ("think_then_answer", True, "<think>Maybe {y}? I could also go with {x}.</think>\nAnswer: {x}"),
    ("answer_then_prose", True, "Answer: {x}\nI hope the other copy agrees."),
    ("last_line", True, "I considered {y} and the others.\n{x}"),
    ("hedge", False, "{x} or {y}"),
    ("answer_hedge", False, "Answer: {x} or {y}"),
    ("answer_with_reason", False, "Answer: {x} (My choice is a focal one.)"),
    ("prose_mention", False, "I will go with {x} because it feels focal."),
    ("think_only", False, "<think>Answer: {x}</think>"),
    ("two_answers", False, "Answer: {y}\nAnswer: {x}"),
)


class _Server(ThreadingHTTPServer):
    request_queue_size = 512  # many concurrent clients: no connection resets from a full backlog
    daemon_threads = True


class FakeChatServer:
    """``/v1/chat/completions`` (and ``/v1/models``) on 127.0.0.1 at a free port."""

    def __init__(
        self,
        *,
        latency_s: float = 0.0,
        seed: int = 0,
        formats: tuple[tuple[str, bool, str], ...] = FORMATS,
        fail_status: int | None = None,
        clock: Callable[[float], None] = time.sleep,
        pick: str = "uniform",
        fail_rate: float = 0.0,
    ):
        if not 0.0 <= fail_rate < 1.0:
            raise ValueError(f"fail_rate must be in [0, 1), got {fail_rate}")
        if pick not in ("uniform", "first"):
            raise ValueError(f"pick must be 'uniform' or 'first', got {pick!r}")
        self.pick = pick
        self.latency_s = float(latency_s)
        self.seed = int(seed)
        self.formats = formats
        self.fail_status = fail_status
        self.fail_rate = float(fail_rate)
        self._fails = np.random.default_rng([self.seed, 500])
        self.log: list[dict[str, Any]] = []
        self.in_flight = 0
        self.max_in_flight = 0
        self.in_flight_by_model: dict[str, int] = {}
        self.max_in_flight_by_model: dict[str, int] = {}
        self.requests = 0
        self.failed = 0
        self._lock = threading.Lock()
        self._sleep = clock
        server = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, format: str, *args: Any) -> None:  # quiet
                pass

            def _send(self, status: int, obj: dict[str, Any]) -> None:
                data = json.dumps(obj).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def do_GET(self) -> None:
                if self.path.rstrip("/").endswith("/models"):
                    self._send(200, {"object": "list", "data": [{"id": "fake", "object": "model"}]})
                else:
                    self._send(404, {"error": "not found"})

            def do_POST(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                body = json.loads(self.rfile.read(length) or b"{}")
                model = str(body.get("model", ""))
                with server._lock:
                    server.requests += 1
                    server.in_flight += 1
                    server.max_in_flight = max(server.max_in_flight, server.in_flight)
                    now = server.in_flight_by_model.get(model, 0) + 1
                    server.in_flight_by_model[model] = now
                    server.max_in_flight_by_model[model] = max(server.max_in_flight_by_model.get(model, 0), now)
                    fail = server.fail_status
                    if fail is None and server.fail_rate and server._fails.random() < server.fail_rate:
                        fail = 500
                    server.failed += fail is not None
                try:
                    if server.latency_s:
                        server._sleep(server.latency_s)
                    text = None if fail is not None else server.answer(body)
                finally:
                    with server._lock:  # before the reply goes out: a client's next request cannot overlap this one
                        server.in_flight -= 1
                        server.in_flight_by_model[model] -= 1
                if fail is not None:
                    self._send(fail, {"error": {"message": "the fake server is down"}})
                    return
                self._send(
                    200,
                    {
                        "id": "fake",
                        "object": "chat.completion",
                        "model": body.get("model", "fake"),
                        "choices": [
                            {"index": 0, "message": {"role": "assistant", "content": text}, "finish_reason": "stop"}
                        ],
                        "usage": {"prompt_tokens": 100, "completion_tokens": 10, "total_tokens": 110},
                    },
                )

        self._httpd = _Server(("127.0.0.1", 0), Handler)
        self._httpd.daemon_threads = True
        self._thread: threading.Thread | None = None

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self._httpd.server_address[1]}/v1"

    def answer(self, body: dict[str, Any]) -> str:
        """Pick a label uniformly and write it in a random format; log both."""
        prompt = "\n".join(str(m.get("content", "")) for m in body.get("messages", []))
        m = _OPTIONS.search(prompt)
        labels = [x.strip() for x in m.group(1).split(",")] if m else []
        greedy = float(body.get("temperature", 1.0)) == 0.0
        key = hashlib.sha256(f"{self.seed}|{'' if greedy else body.get('seed')}|{prompt}".encode()).digest()
        rng = np.random.default_rng(int.from_bytes(key[:8], "little"))
        if not labels:
            text = "I do not see any options."
            with self._lock:
                self.log.append({"labels": [], "pick": None, "format": "none", "well_formed": False, "text": text})
            return text
        drawn = int(rng.integers(len(labels)))
        pick = labels[0] if self.pick == "first" else labels[drawn]  # "first": the option listed first
        others = [x for x in labels if x != pick] or [pick]
        other = others[int(rng.integers(len(others)))]
        name, ok, template = self.formats[int(rng.integers(len(self.formats)))]
        text = template.format(x=pick, y=other)
        with self._lock:
            self.log.append({"labels": labels, "pick": pick, "format": name, "well_formed": ok, "text": text})
        return text

    def start(self) -> FakeChatServer:
        self._thread = threading.Thread(target=self._httpd.serve_forever, name="fake-chat-server", daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        self._httpd.shutdown()
        self._httpd.server_close()
        if self._thread is not None:
            self._thread.join(timeout=5)

    def __enter__(self) -> FakeChatServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()
