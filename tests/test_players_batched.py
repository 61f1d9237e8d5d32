"""The batched runner: same records as the one-game runner, batching by player object, and
every kind of player failure recorded as data."""

from __future__ import annotations

import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from arena_core.errors import ConfigError
from arena_core.policy import IllegalActionPolicy
from arena_core.registry import make_game
from arena_core.runner import play_episode
from arena_players.batched import BatchStats, play_batch
from arena_players.random_player import RandomPlayer


def stable(record) -> list:
    out = []
    for line in record.lines():
        data = json.loads(line)
        if isinstance(data.get("telemetry"), dict):
            data["telemetry"].pop("latency_s", None)
        out.append(data)
    return out


class CountingBatcher(RandomPlayer):
    """Random play, answered through act_batch; remembers batch sizes."""

    name = "random"  # same header as RandomPlayer, so records compare equal

    def __init__(self, seed=0):
        super().__init__(seed)
        self.batches: list[int] = []

    def act_batch(self, decisions):
        self.batches.append(len(decisions))
        return [self.act(d) for d in decisions]


@settings(max_examples=10, deadline=None)
@given(
    st.lists(st.integers(0, 10_000), min_size=1, max_size=6, unique=True), st.sampled_from(["kuhn_poker", "megagem"])
)
def test_batched_records_equal_one_game_records(seeds, game_id):
    game = make_game(game_id)
    n = game.num_players
    batched = play_batch(game, [CountingBatcher(seed=s) for s in range(n)], seeds, turn_cap=12)
    single = [play_episode(game, [RandomPlayer(seed=s) for s in range(n)], seed, turn_cap=12) for seed in seeds]
    assert [stable(r) for r in batched] == [stable(r) for r in single]


def test_one_player_object_gets_all_games_in_one_call():
    game = make_game("kuhn_poker")
    p = CountingBatcher()
    stats = BatchStats()
    records = play_batch(game, [p, p], list(range(8)), stats=stats)
    assert all(r.end.reason.value == "natural" for r in records)
    assert p.batches[0] == 8  # the first round: every game's first decision at once
    assert sum(p.batches) == stats.decisions == sum(len(r.steps) for r in records)
    seq = CountingBatcher()
    play_batch(game, [seq, seq], list(range(8)), batched=False)
    assert seq.batches == []  # batched=False never calls act_batch


def test_players_per_game_factory():
    game = make_game("kuhn_poker")
    made = []

    def lineup(i):
        made.append(i)
        return [RandomPlayer(seed=i), RandomPlayer(seed=100 + i)]

    records = play_batch(game, lineup, [3, 4, 5])
    assert made == [0, 1, 2] and len(records) == 3
    with pytest.raises(ConfigError, match="needs 2 players"):
        play_batch(game, [RandomPlayer()], [1])


class Misbehaving(RandomPlayer):
    """Answers per seed: raise, return None, return garbage text, or an exception object."""

    name = "misbehaving"

    def act_batch(self, decisions):
        out = []
        for d in decisions:
            kind = d.episode_seed % 4
            out.append([RuntimeError("boom"), None, "no idea", ValueError("row failed")][kind])
        return out


def test_failures_are_recorded_and_the_policy_decides():
    game = make_game("kuhn_poker")
    bad, good = Misbehaving(), RandomPlayer()
    records = play_batch(game, [bad, good], [0, 1, 2, 3], policy=IllegalActionPolicy(mode="penalize"))
    reasons = [r.end.reason.value for r in records]
    assert reasons == ["player_error", "forfeit", "forfeit", "player_error"]
    events = [r.events[0] for r in records]
    assert events[0].telemetry == {"error_type": "RuntimeError"} and "boom" in events[0].detail
    assert events[2].telemetry["parse_method"] == "unparseable" and events[2].attempted == "'no idea'"
    assert events[3].telemetry == {"error_type": "ValueError"}
    assert all(r.end.offender == 0 for r in records)


def test_a_whole_batch_crash_or_wrong_length_is_recorded():
    game = make_game("kuhn_poker")

    class Crash(RandomPlayer):
        def act_batch(self, decisions):
            raise MemoryError("out of memory")

    class Short(RandomPlayer):
        def act_batch(self, decisions):
            return []

    for player, error in ((Crash(), "MemoryError"), (Short(), "TypeError")):
        records = play_batch(game, [player, RandomPlayer()], [1, 2], policy=IllegalActionPolicy(mode="default"))
        for r in records:
            assert r.events[0].type == "policy" and r.events[0].telemetry["error_type"] == error
            assert r.events[1].substituted and r.end.reason.value == "natural"


def test_log_path_holds_every_episode_contiguously(tmp_path):
    game = make_game("kuhn_poker")
    path = tmp_path / "runs.jsonl"
    records = play_batch(game, [RandomPlayer(), RandomPlayer(seed=1)], [5, 6, 7], log_path=str(path))
    lines = [json.loads(x) for x in path.read_text().splitlines()]
    headers = [i for i, x in enumerate(lines) if x["type"] == "header"]
    ends = [i for i, x in enumerate(lines) if x["type"] == "end"]
    assert len(headers) == len(ends) == 3
    assert all(h < e for h, e in zip(headers, ends)) and all(e < h for e, h in zip(ends, headers[1:]))
    assert sorted(lines[h]["seed"] for h in headers) == [5, 6, 7]
    assert sum(len(r.steps) for r in records) == sum(1 for x in lines if x["type"] == "step")


def test_mlx_players_play_concurrent_games():
    pytest.importorskip("mlx.core")
    from arena_players.mlx_player import MLXPlayer

    game = make_game("kuhn_poker")
    p = MLXPlayer(temperature=1.0, seed=4)
    batched = play_batch(game, [p, p], list(range(6)))
    sequential = play_batch(game, [p, p], list(range(6)), batched=False)
    assert [stable(r) for r in batched] == [stable(r) for r in sequential]
    assert all(s.telemetry["parse_method"] == "constrained" for r in batched for s in r.steps)
