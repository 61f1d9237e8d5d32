"""The OpenAI-compatible player against a real ``mlx_lm.server`` with the tiny model, and
against a local server that misbehaves on purpose (errors, garbage, hangs)."""

from __future__ import annotations

import json
import socket
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from arena_core.errors import ConfigError
from arena_core.policy import IllegalActionPolicy
from arena_core.registry import make_game, make_player
from arena_core.runner import play_episode
from arena_players.batched import play_batch
from arena_players.openai_player import BudgetExceededError, OpenAIPlayer, ProviderError
from arena_players.scripted import FirstLegalPlayer

SECRET = "sk-test-DO-NOT-LEAK-1234567890"
DEFAULT = IllegalActionPolicy(mode="default")


# ---------------------------------------------------------------- a scripted server
class Script:
    """What the fake server answers, one entry per request (the last one repeats)."""

    def __init__(self, *replies):
        self.replies = list(replies)
        self.requests: list[dict] = []
        self.auth: list[str | None] = []
        self.in_flight = 0
        self.max_in_flight = 0
        self.lock = threading.Lock()

    def next(self):
        with self.lock:
            return self.replies.pop(0) if len(self.replies) > 1 else self.replies[0]


def ok(text: str, delay: float = 0.0):
    return ("ok", text, delay)


def make_handler(script: Script):
    class Handler(BaseHTTPRequestHandler):
        def log_message(self, *args):  # keep test output quiet
            pass

        def do_POST(self):
            body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
            with script.lock:
                script.requests.append(body)
                script.auth.append(self.headers.get("Authorization"))
                script.in_flight += 1
                script.max_in_flight = max(script.max_in_flight, script.in_flight)
            left = []

            def leave():  # counted out before the reply is written: once the client has it, this request is over
                if not left:
                    left.append(True)
                    with script.lock:
                        script.in_flight -= 1

            self._leave = leave
            try:
                kind, *args = script.next()
                if kind == "ok":
                    text, delay = args
                    time.sleep(delay)
                    reply = {
                        "choices": [{"message": {"role": "assistant", "content": text}, "finish_reason": "stop"}],
                        "usage": {"prompt_tokens": 100, "completion_tokens": 5},
                    }
                    self._send(200, json.dumps(reply).encode())
                elif kind == "status":
                    code, headers = args
                    # echo the Authorization header back, as a careless proxy might
                    self._send(code, f"error; you sent {self.headers.get('Authorization')}".encode(), headers)
                elif kind == "garbage":
                    self._send(200, b"<html>not json</html>")
                elif kind == "hang":
                    time.sleep(args[0])
                    self._send(200, b"{}")
                elif kind == "trickle":  # headers at once, then one byte of the body at a time
                    body, every = args
                    self._leave()
                    self.send_response(200)
                    self.send_header("Content-Length", str(len(body)))
                    self.end_headers()
                    try:
                        for i in range(len(body)):
                            self.wfile.write(body[i : i + 1])
                            self.wfile.flush()
                            time.sleep(every)
                    except (BrokenPipeError, ConnectionResetError):
                        pass
            finally:
                leave()

        def _send(self, code, payload, headers=None):
            self._leave()
            try:
                self.send_response(code)
                for k, v in (headers or {}).items():
                    self.send_header(k, v)
                self.send_header("Content-Length", str(len(payload)))
                self.end_headers()
                self.wfile.write(payload)
            except (BrokenPipeError, ConnectionResetError):
                pass

    return Handler


@pytest.fixture
def fake():
    servers = []

    def start(*replies):
        script = Script(*replies)
        server = ThreadingHTTPServer(("127.0.0.1", 0), make_handler(script))
        server.daemon_threads = True
        threading.Thread(target=server.serve_forever, daemon=True).start()
        servers.append(server)
        return script, f"http://127.0.0.1:{server.server_address[1]}/v1"

    yield start
    for server in servers:
        server.shutdown()
        server.server_close()


@pytest.fixture
def api_key(monkeypatch):
    monkeypatch.setenv("ARENA_TEST_KEY", SECRET)
    return "ARENA_TEST_KEY"


def player(url, api_key_env, sleeps=None, **options):
    recorder = sleeps if sleeps is not None else []
    return OpenAIPlayer(
        base_url=url, model="m", api_key_env=api_key_env, backoff_s=0.01, sleep=recorder.append, **options
    )


# ---------------------------------------------------------------- behaviour
def test_answers_are_parsed_and_telemetry_recorded(fake, api_key):
    script, url = fake(ok("I will check.\npass"))
    p = player(url, api_key)
    record = play_episode(make_game("kuhn_poker"), [p, FirstLegalPlayer()], 0)
    step = record.steps[0]
    assert step.action == "pass"
    tel = step.telemetry
    assert tel["parse_method"] == "last_line" and tel["legal"] and not tel["default_used"]
    assert tel["tokens_in"] == 100 and tel["tokens_out"] == 5 and tel["http_attempts"] == 1 and not tel["cached"]
    assert tel["response"] == "I will check.\npass" and "prompt_sha256" not in tel  # kept in full by default
    assert json.loads(tel["prompt"]) == script.requests[0]["messages"] and tel["prompt_chars"] == len(tel["prompt"])
    body = script.requests[0]
    assert body["model"] == "m" and body["messages"][0]["role"] == "system" and isinstance(body["seed"], int)
    assert script.auth[0] == f"Bearer {SECRET}"


def test_retries_with_exponential_backoff_then_success(fake, api_key):
    script, url = fake(("status", 503, {}), ("status", 429, {}), ("status", 500, {}), ok("bet"))
    sleeps: list[float] = []
    p = player(url, api_key, sleeps, max_retries=3)
    record = play_episode(make_game("kuhn_poker"), [p, FirstLegalPlayer()], 0)
    assert record.steps[0].action == "bet" and record.steps[0].telemetry["http_attempts"] == 4
    assert sleeps == [0.01, 0.02, 0.04]


def test_retry_after_header_is_honoured_within_the_cap(fake, api_key):
    _, url = fake(("status", 429, {"Retry-After": "5"}), ok("bet"))
    sleeps: list[float] = []
    p = player(url, api_key, sleeps, backoff_max_s=2.0)
    play_episode(make_game("kuhn_poker"), [p, FirstLegalPlayer()], 0)
    assert sleeps == [2.0]


def test_errors_degrade_through_the_policy_and_never_leak_the_key(fake, api_key, tmp_path):
    game = make_game("kuhn_poker")
    cases = {
        "status": ("status", 500, {}),
        "client": ("status", 401, {}),
        "garbage": ("garbage",),
    }
    for name, reply in cases.items():
        script, url = fake(reply)
        log = tmp_path / f"{name}.jsonl"
        record = play_episode(
            game, [player(url, api_key, max_retries=2), FirstLegalPlayer()], 0, policy=DEFAULT, log_path=str(log)
        )
        event = record.events[0]
        assert event.type == "policy" and event.telemetry == {"error_type": "ProviderError"}, name
        assert record.steps[0].substituted and record.end.reason.value == "natural"
        assert SECRET not in log.read_text() and SECRET not in event.detail
        expected_calls = {"status": 3, "client": 1, "garbage": 1}[name]  # 401 and garbage are not retried
        assert len(script.requests) == expected_calls, name


def test_error_messages_scrub_the_key(fake, api_key):
    _, url = fake(("status", 400, {}))
    with pytest.raises(ProviderError) as info:
        player(url, api_key).complete([{"role": "user", "content": "hi"}])
    assert SECRET not in str(info.value) and "Bearer ***" in str(info.value) and info.value.status == 400


def test_a_hanging_server_times_out(fake, api_key):
    script, url = fake(("hang", 3.0))
    p = player(url, api_key, timeout_s=0.3, max_retries=1)
    started = time.perf_counter()
    record = play_episode(
        make_game("kuhn_poker"), [p, FirstLegalPlayer()], 0, policy=IllegalActionPolicy(mode="penalize")
    )
    assert time.perf_counter() - started < 2.5  # two attempts of 0.3 s, not the 3 s hang
    assert record.end.reason.value == "player_error" and record.end.offender == 0
    assert "timed out" in record.end.detail and len(script.requests) == 2


def test_the_timeout_bounds_the_whole_request_not_each_read(fake, api_key):
    """A server that trickles its reply a byte at a time, each byte well within the timeout,
    is still cut off when the request as a whole runs past ``timeout_s``."""
    reply = json.dumps(
        {"choices": [{"message": {"role": "assistant", "content": "pass"}, "finish_reason": "stop"}]}
    ).encode()
    _, url = fake(("trickle", reply, 0.05))  # about 4 s for the whole body
    p = player(url, api_key, timeout_s=0.5, max_retries=0)
    started = time.perf_counter()
    with pytest.raises(ProviderError, match="timed out after 0.5 s"):
        p.complete([{"role": "user", "content": "hi"}])
    assert time.perf_counter() - started < 3.0  # the whole body would take about 4 s
    _, url = fake(("trickle", reply, 0.001))  # the same reply, fast enough: it arrives whole
    assert player(url, api_key, timeout_s=5, max_retries=0).complete([{"role": "user", "content": "hi"}]).text == "pass"


def test_connection_refused_is_retried_then_recorded(api_key):
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    sleeps: list[float] = []
    p = player(f"http://127.0.0.1:{port}/v1", api_key, sleeps, max_retries=2)
    with pytest.raises(ProviderError, match="cannot reach"):
        p.complete([{"role": "user", "content": "hi"}])
    assert len(sleeps) == 2


def test_cache_makes_a_repeated_evaluation_free(fake, api_key, tmp_path):
    script, url = fake(ok("bet"))
    game = make_game("kuhn_poker")
    first = play_episode(game, [player(url, api_key, cache_dir=str(tmp_path)), FirstLegalPlayer()], 3)
    calls = len(script.requests)
    again = player(url, api_key, cache_dir=str(tmp_path))  # a new process would see the same files
    second = play_episode(game, [again, FirstLegalPlayer()], 3)
    assert len(script.requests) == calls and again.spend.calls == 0 and again.spend.cache_hits == calls
    assert [s.action for s in first.steps] == [s.action for s in second.steps]
    assert second.steps[0].telemetry["cached"] is True
    assert SECRET not in "".join(p.read_text() for p in tmp_path.iterdir())
    third = play_episode(game, [again, FirstLegalPlayer()], 4)  # a different seed is a different request
    assert len(script.requests) > calls and third.steps


def test_spending_caps(fake, api_key):
    game = make_game("kuhn_poker")
    _, url = fake(ok("pass"))
    p = player(url, api_key, max_calls=1)
    records = [play_episode(game, [p, FirstLegalPlayer()], s, policy=DEFAULT) for s in (1, 2)]
    assert records[0].steps[0].telemetry["parse_method"] == "exact"
    assert records[1].events[0].telemetry == {"error_type": "BudgetExceededError"}
    with pytest.raises(BudgetExceededError, match="max_calls=1"):
        p.complete([{"role": "user", "content": "x"}])
    q = player(url, api_key, max_total_tokens=150)  # each reply costs 105 tokens
    q.complete([{"role": "user", "content": "a"}])
    q.complete([{"role": "user", "content": "b"}])
    with pytest.raises(BudgetExceededError, match="max_total_tokens=150"):
        q.complete([{"role": "user", "content": "c"}])


def test_concurrency_limit_in_batched_play(fake, api_key):
    script, url = fake(ok("pass", delay=0.3))
    p = player(url, api_key, concurrency=3)
    records = play_batch(make_game("kuhn_poker"), [p, FirstLegalPlayer()], list(range(8)))
    assert all(r.steps[0].telemetry["parse_method"] == "exact" for r in records)
    assert script.max_in_flight == 3


def test_free_text_retry_sends_feedback(fake, api_key):
    script, url = fake(ok("hmm"), ok("bet"))
    p = player(url, api_key, retries=1)
    record = play_episode(make_game("kuhn_poker"), [p, FirstLegalPlayer()], 0)
    tel = record.steps[0].telemetry
    assert record.steps[0].action == "bet" and tel["retries"] == 1 and tel["earlier_responses"] == ["hmm"]
    feedback = script.requests[1]["messages"]
    assert feedback[-2] == {"role": "assistant", "content": "hmm"} and "pass, bet" in feedback[-1]["content"]


def test_missing_key_and_bad_options_name_the_fix(fake, monkeypatch):
    monkeypatch.delenv("ARENA_MISSING_KEY", raising=False)
    _, url = fake(ok("pass"))
    with pytest.raises(ConfigError, match="ARENA_MISSING_KEY is not set"):
        player(url, "ARENA_MISSING_KEY").complete([{"role": "user", "content": "x"}])
    with pytest.raises(ConfigError, match="known options"):
        OpenAIPlayer(temprature=0.3)
    assert make_player(f"openai:base_url={url},model=m,api_key_env=").settings.api_key_env == ""


# ---------------------------------------------------------------- a real mlx_lm.server
@pytest.fixture(scope="module")
def mlx_server():
    pytest.importorskip("mlx_lm")
    from arena_players.mlx_server import mlx_server as start_server

    with start_server() as (url, model):
        yield url, model


def test_real_mlx_server_plays_a_seeded_game_that_replays(mlx_server):
    url, model = mlx_server
    game = make_game("kuhn_poker")

    def run():
        p = OpenAIPlayer(base_url=url, model=model, api_key_env="", max_tokens=6, temperature=1.0, timeout_s=60)
        return p, play_episode(game, [p, FirstLegalPlayer()], 5, policy=DEFAULT)

    p, first = run()
    _, second = run()
    assert p.spend.calls >= 1 and p.spend.prompt_tokens > 50
    events = first.events
    tel = events[0].telemetry
    assert tel["tokens_in"] > 50 and 1 <= tel["tokens_out"] <= 6 and tel["http_attempts"] == 1
    assert first.end.reason.value == "natural"
    # the random-weight model is read by the parser or goes to the default policy; either way the
    # seeded sampling repeats exactly
    assert [e.model_dump(exclude={"telemetry"}) for e in first.events] == [
        e.model_dump(exclude={"telemetry"}) for e in second.events
    ]
    assert [e.telemetry.get("response") for e in first.events] == [e.telemetry.get("response") for e in second.events]


def test_real_mlx_server_caches_the_growing_transcript(mlx_server):
    """Transcript view against the real server: each seat's request extends its last one, and
    the server reports (``usage.prompt_tokens_details.cached_tokens``) that it read that earlier
    request from its prompt cache; in the snapshot view the same decisions reuse only the shared
    rules, so they prefill more new tokens."""
    from arena_core.players import Decision

    url, model = mlx_server
    game = make_game("megagem", num_players=3)

    def run(view):
        p = OpenAIPlayer(base_url=url, model=model, api_key_env="", max_tokens=4, temperature=0.0, view=view)
        pos, seen = game.start(7), []
        for seat in range(3):
            p.begin_episode(game, seat, 7)
        for _ in range(9):
            seat = game.current_player(pos)
            seen.append((seat, p.act(Decision.at(game, pos, seat, 7)).telemetry))
            pos = game.act(pos, seat, game.legal(pos, seat)[0])
        return p, seen

    trans, t_seen = run("transcript")
    _, s_seen = run("snapshot")
    last: dict[int, dict] = {}
    later = []
    for seat, tel in t_seen:
        if seat in last:  # a seat's later turn: its previous request was read from the cache
            assert tel["conversation_turn"] > 0 and tel["tokens_in"] > last[seat]["tokens_in"]
            assert tel["cached_tokens"] >= 0.95 * last[seat]["tokens_in"], (tel, last[seat])
            later.append(tel)
        last[seat] = tel
    assert len(later) >= 5
    assert trans.spend.cached_prompt_tokens == sum(t["cached_tokens"] for _, t in t_seen)
    new_t = sum(t["tokens_in"] - t["cached_tokens"] for t in later) / len(later)
    new_s = sum(t["tokens_in"] - t["cached_tokens"] for _, t in s_seen[3:]) / len(s_seen[3:])
    assert new_t < 0.75 * new_s, (new_t, new_s)


def test_transcript_example_runs_against_the_server(mlx_server):
    """examples/transcript_play.py, pointed at this module's server (it starts its own without
    ARENA_OPENAI_BASE_URL): both views play, and the transcript view leaves fewer tokens uncached
    (a seed no other test plays, so the server's cache holds none of these prompts yet)."""
    import os
    import re
    import subprocess
    import sys
    from pathlib import Path

    url, model = mlx_server
    example = Path(__file__).resolve().parents[1] / "examples" / "transcript_play.py"
    env = {**os.environ, "ARENA_OPENAI_BASE_URL": url, "ARENA_OPENAI_MODEL": model}
    out = subprocess.run(
        [sys.executable, str(example), "--turns", "7", "--seed", "23"],
        capture_output=True,
        text=True,
        timeout=300,
        env=env,
    )
    assert out.returncode == 0, out.stderr[-3000:]
    new = dict(
        re.findall(r"(snapshot|transcript): .*uncached tokens per decision after the first round: (\d+)", out.stdout)
    )
    assert int(new["transcript"]) < int(new["snapshot"]), out.stdout
    assert "seat 0's conversation" in out.stdout and "--- turn 1 adds" in out.stdout
    bad = subprocess.run([sys.executable, str(example), "--turns", "0"], capture_output=True, text=True, env=env)
    assert bad.returncode == 2 and "Traceback" not in bad.stderr and "--turns" in bad.stderr


# ---------------------------------------------------------------- the cache key
from hypothesis import given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

from arena_players.openai_player import ResponseCache  # noqa: E402

bodies = st.dictionaries(
    st.sampled_from(["model", "seed", "temperature", "max_tokens", "messages"]),
    st.one_of(st.integers(), st.text(max_size=5)),
    min_size=1,
)


@settings(max_examples=80, deadline=None)
@given(bodies, bodies)
def test_cache_key_is_the_full_request(a, b):
    assert ResponseCache.key("u", a) == ResponseCache.key("u", dict(reversed(list(a.items()))))  # order-free
    assert (ResponseCache.key("u", a) == ResponseCache.key("u", b)) == (a == b)
    assert ResponseCache.key("u", a) != ResponseCache.key("v", a)
