"""Several model seats in one Arena game (``ModelSeatGame`` with ``"model"`` opponents: self-play
or a second model), without verifiers: on MegaGem (3 players: two model seats and an Arena bot)
and Kuhn poker (both seats). The answers come from a seeded script that picks a legal label and
sometimes answers junk, so retries and forfeits happen; every check is re-derived from the
game's own record."""

import numpy as np
import pytest
from arena_verifiers.seat import MODEL, ModelSeatGame, SeatTask

from arena_core.players import Decision


def play(game: ModelSeatGame, seed: int, junk: float = 0.2) -> list[tuple[int, str]]:
    """Answer for whichever model seat the game waits for until it ends; (seat, answer) in order."""
    rng = np.random.default_rng(seed)
    said: list[tuple[int, str]] = []
    seat = game.to_answer
    while seat is not None:
        assert seat in game.model_seats
        user = game.messages(seat)[-1]["content"]
        assert user  # the prompt: a snapshot of the state
        labels = game_labels(game, seat)
        text = "no idea" if rng.random() < junk else labels[int(rng.integers(len(labels)))]
        said.append((seat, text))
        game.reply(text, seat)
        seat = game.to_answer
    return said


def game_labels(game: ModelSeatGame, seat: int) -> list[str]:
    return list(Decision.at(game.game, game.match.position, seat, game.task.seed).prompt().legal)


def test_two_model_seats_and_a_bot_in_megagem():
    task = SeatTask("megagem", seed=5, seat=2, opponents=(MODEL, "random"), num_players=3, max_retries=1)
    game = ModelSeatGame(task)
    assert game.model_seats == (0, 2) and set(game.players) == {1}
    said = play(game, seed=1)
    assert game.done and {s for s, _ in said} == {0, 2}
    end = game.match.end
    policy = [e for e in game.match.record.events if e.type == "policy"]
    for seat in (0, 2):
        assert game.reward_of(seat) == end.returns[seat]
        assert len(game.info_of(seat)["faults"]) == sum(1 for e in policy if e.player == seat)
        assert game.info_of(seat)["forfeit"] == (end.offender == seat)
    assert not any(e.player == 1 for e in policy), "the bot never errs; faults belong to model seats"
    assert game.info["seat"] == 2 and game.info["model_seats"] == [0, 2]


@pytest.mark.parametrize("seed", range(6))
def test_kuhn_self_play_is_zero_sum_and_replays(seed):
    task = SeatTask("kuhn_poker", seed=seed, seat=seed % 2, opponents=(MODEL,))
    a, b = ModelSeatGame(task), ModelSeatGame(task)
    said = play(a, seed=seed, junk=0.3)
    for seat, text in said:  # the same answers give the same game
        assert b.to_answer == seat
        b.reply(text, seat)
    assert a.done and b.done and a.match.end.returns == b.match.end.returns
    assert a.faults_by_seat == b.faults_by_seat
    if a.match.end.reason.value == "natural":
        assert a.reward_of(0) + a.reward_of(1) == 0


def test_only_the_seat_to_act_may_answer():
    game = ModelSeatGame(SeatTask("kuhn_poker", seed=0, seat=0, opponents=(MODEL,)))
    waiting = game.to_answer
    other = 1 - waiting
    with pytest.raises(ValueError, match="not to act"):
        game.reply("pass", other)
    with pytest.raises(ValueError, match="not a model seat"):
        ModelSeatGame(SeatTask("kuhn_poker", seed=0, seat=0, opponents=("random",))).messages(1)


def test_a_failed_answer_gets_feedback_for_the_same_seat():
    game = ModelSeatGame(SeatTask("kuhn_poker", seed=3, seat=1, opponents=(MODEL,), max_retries=1))
    seat = game.to_answer
    feedback = game.reply("I fold my arms", seat)
    assert game.to_answer == seat and feedback is not None and "Reply with exactly one of" in feedback
    assert game.faults_by_seat[seat] == ["unparseable"] and game.faults_by_seat[1 - seat] == []
    assert game.reply("still thinking", seat) is None  # the second failure forfeits
    assert game.info_of(seat)["forfeit"] and not game.info_of(1 - seat)["forfeit"]
    assert game.reward_of(seat) == min(game.match.end.returns)


@pytest.mark.parametrize("opponents", [("example_last_legal",), (MODEL,)])
def test_a_third_party_plugin_game(opponents):
    """examples/plugin_example (installed beside the bridge by scripts/check_verifiers.sh): its
    Nim against its own player, and in self-play; entry points only, nothing of Arena's own."""
    game = ModelSeatGame(SeatTask("example_nim", seed=2, seat=1, opponents=opponents, max_retries=1))
    assert game.model_seats == ((1,) if opponents != (MODEL,) else (0, 1))
    said = play(game, seed=4, junk=0.25)
    assert game.done and said and game.match.end.returns is not None
    for seat in game.model_seats:
        assert game.reward_of(seat) == game.match.end.returns[seat]
    assert sum(len(f) for f in game.faults_by_seat.values()) == sum(
        1 for e in game.match.record.events if e.type == "policy"
    )
