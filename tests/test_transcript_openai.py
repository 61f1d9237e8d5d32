"""The OpenAI-compatible player in the transcript view (issue 20), against a local fake server
with a prefix cache: growing per-seat message lists, the server's cached prompt tokens in
telemetry, spend and cost, retries as extra turns, and the view in the entrant's identity.
(The real ``mlx_lm.server`` check is in tests/test_players_openai.py, next to its server.)"""

from __future__ import annotations

import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from arena_core.policy import IllegalActionPolicy
from arena_core.registry import make_game
from arena_core.runner import play_episode
from arena_players.openai_player import OpenAIPlayer
from arena_tournament.identity import entrant_identity
from arena_tournament.schedule import Entrant

DEFAULT = IllegalActionPolicy(mode="default")


class PrefixCacheServer:
    """A chat endpoint that answers from a script (by the text of the last user message) and
    reports, as a prefix-caching server does, how much of each prompt (in characters, standing
    for tokens) extends a prompt it has already seen."""

    def __init__(self, answer):
        self.answer = answer
        self.requests: list[list[dict]] = []
        self.seen: list[str] = []
        self.lock = threading.Lock()
        owner = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args):
                pass

            def do_POST(self):
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                messages = body["messages"]
                flat = "".join(m["role"] + ":" + m["content"] + "\n" for m in messages)
                with owner.lock:
                    owner.requests.append(messages)
                    cached = max((len(s) for s in owner.seen if flat.startswith(s)), default=0)
                    owner.seen.append(flat)
                    text = owner.answer(messages, len(owner.requests))
                reply = {
                    "choices": [{"message": {"role": "assistant", "content": text}, "finish_reason": "stop"}],
                    "usage": {
                        "prompt_tokens": len(flat),
                        "completion_tokens": 3,
                        "prompt_tokens_details": {"cached_tokens": cached},
                    },
                }
                payload = json.dumps(reply).encode()
                self.send_response(200)
                self.send_header("Content-Length", str(len(payload)))
                self.end_headers()
                self.wfile.write(payload)

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        threading.Thread(target=self.server.serve_forever, daemon=True).start()
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/v1"

    def close(self):
        self.server.shutdown()
        self.server.server_close()


@pytest.fixture
def serve():
    servers = []

    def start(answer):
        servers.append(PrefixCacheServer(answer))
        return servers[-1]

    yield start
    for s in servers:
        s.close()


def player(url, **options):
    return OpenAIPlayer(base_url=url, model="m", api_key_env="", **options)


def seat_requests(requests, system_by_seat):
    """The requests of each seat, in order (a seat's conversation starts with its own system text)."""
    out: dict[int, list] = {}
    for msgs in requests:
        seat = system_by_seat(msgs[0]["content"])
        out.setdefault(seat, []).append(msgs)
    return out


def test_megagem_transcript_requests_grow_and_the_cached_tokens_are_recorded(serve):
    server = serve(lambda messages, n: '{"bid": 1}' if "bid" in messages[-1]["content"] else '{"reveal": "Red"}')
    game = make_game("megagem", num_players=3)
    p = player(server.url, view="transcript", price_prompt=2.0, price_cached_prompt=0.5, price_completion=8.0)
    record = play_episode(game, [p, p, p], 11, policy=DEFAULT)
    tels = [e.telemetry for e in record.events if e.telemetry]
    assert len(tels) == len(server.requests) > 30
    # each seat's requests: the first is the snapshot prompt, each later one extends the previous
    # request by the answer given and exactly one user message
    by_seat: dict[int, list] = {}
    for msgs in server.requests:
        seat = json.loads(msgs[1]["content"].split("\n")[0])["turn_context"]["your_player_id"]
        by_seat.setdefault(seat, []).append(msgs)
    assert sorted(by_seat) == [0, 1, 2]
    for reqs in by_seat.values():
        for before, after in zip(reqs, reqs[1:]):
            assert after[: len(before)] == before
            assert after[len(before)]["role"] == "assistant" and after[len(before)]["content"].startswith("{")
            assert [m["role"] for m in after[len(before) :]] == ["assistant", "user"]
    # the server's cached tokens reach the telemetry and the spend; after a seat's first turn
    # the whole previous request is cached (it is a prefix of this one)
    later = [t for t in tels if t["conversation_turn"] > 0]
    assert later and all(t["view"] == "transcript" and t["cached_tokens"] > 0 for t in later)
    assert sum(t["cached_tokens"] for t in later) / sum(t["tokens_in"] for t in later) > 0.8
    assert p.spend.cached_prompt_tokens == sum(t["cached_tokens"] for t in tels) > 0
    assert p.spend.uncached_prompt_tokens == p.spend.prompt_tokens - p.spend.cached_prompt_tokens
    want = (
        p.spend.uncached_prompt_tokens * 2.0 + p.spend.cached_prompt_tokens * 0.5 + p.spend.completion_tokens * 8
    ) / 1e6
    assert p.spend.cost(p.settings) == pytest.approx(want)
    assert sum(t["cost"] for t in tels) == pytest.approx(want, rel=1e-6)
    # recorded prompts are the messages each decision added, not the whole conversation again
    assert all(len(json.loads(t["prompt"])) == (1 if t["conversation_turn"] else 2) for t in tels if "prompt" in t)


def test_snapshot_view_is_unchanged_and_gets_no_conversation(serve):
    server = serve(lambda messages, n: '{"bid": 0}')
    game = make_game("megagem", num_players=3)
    p = player(server.url, record_prompt="full")
    record = play_episode(game, [p, p, p], 11, policy=DEFAULT, turn_cap=6)
    assert all(len(m) == 2 for m in server.requests)  # system + the whole state, every turn
    tel = record.events[0].telemetry
    assert tel["view"] == "snapshot" and "conversation_turn" not in tel
    assert json.loads(tel["prompt"]) == server.requests[0]
    assert p.spend.cost(p.settings) is None and "cost" not in tel


def test_a_retry_with_feedback_is_an_extra_turn_of_the_conversation(serve):
    # Kuhn: seat 0's first answer is unreadable ("hmm"), its retry says pass; seat 1 bets; seat 0 calls
    answers = iter(["hmm", "pass", "bet", "bet"])
    server = serve(lambda messages, n: next(answers))
    game = make_game("kuhn_poker")
    p = player(server.url, view="transcript", retries=1)
    record = play_episode(game, [p, p], 0, policy=DEFAULT)
    assert [str(s.action) for s in record.steps] == ["pass", "bet", "bet"]
    first, retry, _, second = server.requests
    assert retry[:2] == first and [m["role"] for m in retry[2:]] == ["assistant", "user"]
    assert retry[2]["content"] == "hmm" and "pass, bet" in retry[3]["content"]
    # the next turn of seat 0 extends the retry by the final answer and one user message
    assert second[: len(retry)] == retry and second[len(retry)] == {"role": "assistant", "content": "pass"}
    assert len(second) == len(retry) + 2 and 'history (new): ["pass", "bet"]' in second[-1]["content"]
    assert record.steps[0].telemetry["retries"] == 1


def test_a_repeated_evaluation_in_transcript_view_comes_from_the_response_cache(serve, tmp_path):
    server = serve(lambda messages, n: '{"bid": 2}')
    game = make_game("megagem", num_players=3)
    first = player(server.url, view="transcript", cache_dir=str(tmp_path))
    a = play_episode(game, [first, first, first], 5, policy=DEFAULT, turn_cap=12)
    sent = len(server.requests)
    again = player(server.url, view="transcript", cache_dir=str(tmp_path))
    b = play_episode(game, [again, again, again], 5, policy=DEFAULT, turn_cap=12)
    assert len(server.requests) == sent and again.spend.calls == 0 and again.spend.cache_hits == sent
    assert [s.action for s in a.steps] == [s.action for s in b.steps] and len(a.steps) > 3


def test_the_view_is_part_of_the_entrants_resolved_identity():
    snap = entrant_identity(Entrant(name="a", player="openai"), OpenAIPlayer(api_key_env=""))
    trans = entrant_identity(Entrant(name="a", player="openai"), OpenAIPlayer(api_key_env="", view="transcript"))
    assert snap["params"]["view"] == "snapshot" and trans["params"]["view"] == "transcript"
    assert snap["digest"] != trans["digest"]
    with pytest.raises(Exception, match="view"):
        OpenAIPlayer(api_key_env="", view="transcripts")


def test_batched_play_keeps_one_growing_conversation_per_game_and_seat(serve):
    """Many games at once (concurrent requests): every conversation, named by its first user
    message (the deal and the seat), still grows by its own answers and one user message."""
    from arena_players.batched import play_batch

    server = serve(lambda messages, n: '{"bid": 1}' if "bid" in messages[-1]["content"] else '{"reveal": "Red"}')
    game = make_game("megagem", num_players=3)
    p = player(server.url, view="transcript", concurrency=4)
    records = play_batch(game, [p, p, p], [1, 2, 3, 4], policy=DEFAULT, turn_cap=24)
    assert len(records) == 4
    conversations: dict[str, list] = {}
    for msgs in server.requests:
        conversations.setdefault(msgs[1]["content"], []).append(msgs)
    assert len(conversations) == 12  # 4 deals x 3 seats
    for reqs in conversations.values():
        assert len(reqs) >= 4
        for before, after in zip(reqs, reqs[1:]):
            assert after[: len(before)] == before and [m["role"] for m in after[len(before) :]] == ["assistant", "user"]
    assert len(p.prompts.conversations) == 12
