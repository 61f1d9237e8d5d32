"""``search{tree = "ismcts"}`` (issue 42 point 4): information-set MCTS, every seat choosing at its
own nodes, the budget spent on few moves by progressive widening in the game's order."""

from __future__ import annotations

import numpy as np
import pytest

from arena_core.errors import ConfigError
from arena_core.game import Position
from arena_core.players import Decision, Move
from arena_core.registry import make_game
from arena_core.runner import play_episode
from arena_players.random_player import RandomPlayer
from arena_players.search import SearchPlayer
from toy_games import CountState, CountToTwenty


def _move(player, game, pos, seat, seed=0) -> Move:
    move = player.act(Decision.at(game, pos, seat, seed))
    assert isinstance(move, Move)
    return move


def test_the_tree_plays_the_opponent_and_finds_the_winning_line():
    # two seats add 1-3 in turn, 20 wins: from 13, only +3 (to 16) wins against every reply; the
    # replies are the opponent's own tree nodes: the tree values the forced win near its 2 points,
    # where flat search, whose rollouts answer at random, values it near 1.0 (seeds 0-4: 0.89-1.01)
    game = CountToTwenty(num_players=2)
    tree = SearchPlayer(seed=1, simulations=600, tree="ismcts", widening=2.0)
    move = _move(tree, game, Position(CountState(13, 0)), 0)
    assert move.action == 3 and move.telemetry["value"] > 1.7
    flat = _move(SearchPlayer(seed=1, simulations=600), game, Position(CountState(13, 0)), 0)
    assert flat.telemetry["value"] < 1.2


def test_widening_spends_the_budget_on_the_first_moves_in_order():
    game = make_game("liars_dice")
    pos = game.act(game.start(3), 0, "[Bid: 1, 2]")
    legal = game.legal(pos, 1)
    narrow = SearchPlayer(seed=2, simulations=50, tree="ismcts", widening=0.5)
    move = _move(narrow, game, pos, 1, seed=3)
    assert move.action in legal[: int(np.ceil(0.5 * np.sqrt(51)))]  # the root never widened past 4 moves


def test_same_seed_same_moves_and_other_seeds_differ():
    game = make_game("liars_dice")
    pos = game.start(5)
    make = lambda: SearchPlayer(seed=7, simulations=40, tree="ismcts")  # noqa: E731
    a = [_move(make(), game, pos, 0, s).telemetry for s in range(4)]
    b = [_move(make(), game, pos, 0, s).telemetry for s in range(4)]
    assert a == b and len({str(t) for t in a}) > 1


def test_it_plays_imperfect_information_games_to_the_end_and_beats_random_at_liars_dice():
    game = make_game("liars_dice")
    tree, rnd = SearchPlayer(seed=1, simulations=60, tree="ismcts", widening=0.5), RandomPlayer(seed=2)
    wins = sum(
        play_episode(game, [tree, rnd] if s % 2 == 0 else [rnd, tree], s).end.returns[s % 2] > 0 for s in range(6)
    )
    assert wins >= 5 and tree.stats["truncated"] == 0
    kuhn = make_game("kuhn_poker")
    assert play_episode(kuhn, [SearchPlayer(seed=3, simulations=20, tree="ismcts"), rnd], 0).end.returns is not None


def test_the_tree_refuses_options_it_replaces():
    with pytest.raises(ConfigError, match="drop opponents and candidates"):
        SearchPlayer(tree="ismcts", candidates=3)
    with pytest.raises(ConfigError, match="drop opponents and candidates"):
        SearchPlayer(tree="ismcts", opponents="learned")
