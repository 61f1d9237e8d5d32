"""LiarsDice-v0's sampler of hidden worlds (issue 32): a world keeps what the seat saw, redraws
the other seats' current dice uniformly and the future afresh, plays by its own dice, and is
data (it survives the live-env cache, pickling and JSON); the kit's hidden-information checks
pass; the generic search player plays the title."""

from __future__ import annotations

import json
import pickle
from collections import Counter

import numpy as np
import pytest

pytest.importorskip("textarena")

from arena_core.game import Position
from arena_core.players import Decision
from arena_core.registry import make_game, make_player
from arena_core.runner import play_episode
from arena_core.testing import run_conformance
from arena_games.textarena.liars_dice import (
    LiarsDiceWorld,
    patches_of,
    read_observation,
)

GAME = "textarena/LiarsDice-v0"


def _dice(game, state):
    rolls = game._live_at(state, take=False).env.state.game_state["dice_rolls"]
    return {q: tuple(d) for q, d in rolls.items()}


def _play(game, pos, moves, seed=0):
    players = [make_player("random", seed=seed + p) for p in range(game.num_players)]
    for _ in range(moves):
        if game.is_over(pos):
            break
        p = game.current_player(pos)
        move = players[p].act(Decision.at(game, pos, p, seed))
        pos = game.act(pos, p, getattr(move, "action", move))
    return pos


def _first_call(game, seed):
    """A position just before the first [Call] of a random game, and that game's next position."""
    pos = game.start(seed)
    players = [make_player("random", seed=seed + p) for p in range(2)]
    while not game.is_over(pos):
        p = game.current_player(pos)
        move = players[p].act(Decision.at(game, pos, p, seed))
        action = getattr(move, "action", move)
        if action == "[Call]":
            return pos, p
        pos = game.act(pos, p, action)
    raise AssertionError("no call")


def test_a_world_keeps_the_seat_view_and_redraws_the_others_dice():
    game = make_game(GAME)
    pos = _play(game, game.start(3), 3)
    real = _dice(game, pos.state)
    other_changed = 0
    for k in range(20):
        world = game.sample_hidden_state(pos.state, 0, np.random.default_rng(k))
        assert isinstance(world, LiarsDiceWorld) and patches_of(world)
        wpos = Position(world, (), pos.ply)
        assert game.observe(wpos, 0) == game.observe(pos, 0)
        assert game.legal(wpos, 0) == game.legal(pos, 0)
        dice = _dice(game, world)
        assert dice[0] == real[0] and len(dice[1]) == len(real[1])
        # the other seat's own view shows its world dice (its inbox is rewritten with them)
        assert read_observation(game.observe(wpos, 1), 2).dice == dice[1]
        other_changed += dice[1] != real[1]
    assert other_changed >= 18  # 5 dice: a redraw equals the real roll with probability 1/7776


def test_the_other_seats_dice_are_uniform():
    game = make_game(GAME)
    pos = _play(game, game.start(5), 2)
    faces: Counter[int] = Counter()
    rng = np.random.default_rng(0)
    for _ in range(240):
        faces.update(_dice(game, game.sample_hidden_state(pos.state, 1, rng))[0])
    n = sum(faces.values())  # 1200 dice: 200 expected per face, sd about 12.9
    assert set(faces) == {1, 2, 3, 4, 5, 6}
    assert all(abs(faces[f] - n / 6) < 5 * (n * (1 / 6) * (5 / 6)) ** 0.5 for f in faces)


def test_a_call_in_a_world_is_decided_by_the_world_dice_and_the_future_is_redrawn():
    game = make_game(GAME)
    pos, caller = _first_call(game, 11)
    bid = game._live_at(pos.state, take=False).env.state.game_state["current_bid"]
    real_after = game.act(pos, caller, "[Call]")
    next_real = _dice(game, real_after.state)
    differs = 0
    for k in range(10):
        world = game.sample_hidden_state(pos.state, caller, np.random.default_rng(100 + k))
        count = sum(d.count(bid["face_value"]) for d in _dice(game, world).values())
        after = game.act(Position(world, (), pos.ply), caller, "[Call]")
        assert isinstance(after.state, LiarsDiceWorld)  # the patches travel with the world
        said = next(m.text for m in reversed(game.observe(after, caller)["messages"]) if "actual count" in m.text)
        assert f"is {count}," in said
        differs += _dice(game, after.state) != next_real
    assert differs >= 9  # the next round is rolled from the world's own seed, not the real episode's


def test_a_world_is_data_it_replays_after_eviction_pickling_and_json():
    game = make_game(GAME)
    pos = _play(game, game.start(7), 4)
    world = game.sample_hidden_state(pos.state, 1, np.random.default_rng(3))
    fresh = pickle.loads(pickle.dumps(game))  # no live envs: the world is rebuilt by replay
    again = pickle.loads(pickle.dumps(world))
    assert again == world and isinstance(again, LiarsDiceWorld)
    assert _dice(fresh, again) == _dice(game, world)
    assert game.state_from_json(json.loads(json.dumps(game.state_to_json(world)))) == world
    end_a = _play(game, Position(world, (), pos.ply), 400, seed=9)
    end_b = _play(fresh, Position(again, (), pos.ply), 400, seed=9)
    assert game.is_over(end_a) and end_a.state.actions == end_b.state.actions
    assert game.returns(end_a.state) == fresh.returns(end_b.state)
    assert world != pos.state  # the same moves, other dice


def test_the_kit_hidden_information_checks_pass_and_are_not_exempt():
    game = make_game(GAME)
    assert "hidden_state_sampling" not in game.spec.exempt_checks
    assert "no_private_leak" not in game.spec.exempt_checks
    results = run_conformance(game, max_examples=4, checks=["no_private_leak", "hidden_state_sampling"])
    assert [r.status for r in results] == ["passed", "passed"], results


def test_search_plays_liars_dice_to_the_end():
    game = make_game(GAME)
    search = make_player('search{simulations = 8, rollout = "random"}', seed=1)
    record = play_episode(game, [search, make_player("random", seed=2)], 0)
    assert record.end.returns is not None
    assert search.stats["decisions"] > 0 and search.stats["rollout_faults"] == 0 and search.stats["truncated"] == 0


def test_the_compact_view_states_own_dice_per_face_every_seats_dice_and_the_standing_bid():
    from arena_core.views import get_view

    game = make_game(GAME)
    pos = _play(game, game.start(2), 1)
    p = game.current_player(pos)
    menu = get_view(game, "compact").menu(game, pos, p)
    dice = _dice(game, pos.state)[p]
    counts = "".join(str(list(dice).count(f)) for f in range(1, 7))
    bid = game._live_at(pos.state, take=False).env.state.game_state["current_bid"]
    have = list(dice).count(bid["face_value"])
    assert menu.text == f"tld {counts} | 5 5 | {bid['quantity']} {bid['face_value']} {have}"
    assert menu.labels[0] == "c" and len(set(menu.labels)) == len(menu.labels)
    assert all(len(label) == 1 for label in menu.labels)  # one token each for the tiny model
