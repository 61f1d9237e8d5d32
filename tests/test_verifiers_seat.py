"""The Arena side of the verifiers bridge (dists/verifiers, issue 33 point 2) end to end against a
local fake OpenAI-compatible server: seeded deals, the model's seat answering in text, unreadable
answers retried then forfeited and counted, Arena players in the other seats, the outcome as
reward. Needs the core, games and players only (the verifiers glue is tested where verifiers is
installed: dists/verifiers/tests). Cost: about 2 s."""

import json
import sys
import urllib.request
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "dists" / "verifiers" / "src"))
from arena_verifiers.seat import ModelSeatGame, SeatTask  # noqa: E402

from arena_games.matrix.fakellm import FakeChatServer  # noqa: E402


def chat(url: str, messages: list[dict[str, str]], seed: int) -> str:
    body = json.dumps({"model": "fake", "messages": messages, "temperature": 1.0, "seed": seed}).encode()
    req = urllib.request.Request(f"{url}/chat/completions", body, {"Content-Type": "application/json"})
    with urllib.request.urlopen(req, timeout=10) as resp:
        return str(json.load(resp)["choices"][0]["message"]["content"])


def rollout(url: str, task: SeatTask) -> tuple[ModelSeatGame, list[list[dict[str, str]]]]:
    game = ModelSeatGame(task)
    convo = game.messages()
    sent = []
    n = 0
    while True:
        sent.append(list(convo))
        answer = chat(url, convo, seed=task.seed * 100 + n)
        n += 1
        user = game.reply(answer)
        if user is None:
            return game, sent
        convo = convo + [{"role": "assistant", "content": answer}, {"role": "user", "content": user}]


@pytest.fixture(scope="module")
def server():
    with FakeChatServer(seed=7) as srv:
        yield srv


def test_rollouts_score_the_outcome_and_count_the_faults(server):
    games = [
        rollout(server.url, SeatTask("matrix", seed=s, seat=s % 2, opponents=("matrix_uniform",)))[0] for s in range(12)
    ]
    for g in games:
        end = g.match.end
        assert end is not None and g.reward == (end.returns[g.task.seat] if end.returns else 0.0)
        assert len(g.faults) == sum(1 for e in g.match.record.events if e.type == "policy")
    assert any(g.faults for g in games), "the fake server's malformed formats should cost some retries"
    assert {g.info["end_reason"] for g in games} <= {"natural", "forfeit"}


def test_an_unreadable_answer_is_retried_then_forfeited(server):
    game = ModelSeatGame(SeatTask("matrix", seed=1, seat=0, opponents=("matrix_uniform",), max_retries=1))
    feedback = game.reply("I cannot decide.")
    assert feedback is not None and "Reply with exactly one of" in feedback and game.faults == ["unparseable"]
    assert game.reply("still no idea") is None
    assert game.info["forfeit"] and game.info["end_reason"] == "forfeit" and game.faults == ["unparseable"] * 2
    assert game.reward == game.match.end.returns[0] == min(game.match.end.returns)  # the forfeit return


def test_the_same_task_replays_the_same_game(server):
    task = SeatTask("kuhn_poker", seed=4, seat=1, opponents=("random",))
    (a, sent_a), (b, sent_b) = rollout(server.url, task), rollout(server.url, task)
    moves = [[(e.type, e.ply, e.player, getattr(e, "action", None)) for e in g.match.record.events] for g in (a, b)]
    assert sent_a == sent_b and moves[0] == moves[1] and a.reward == b.reward  # (telemetry holds latencies)
