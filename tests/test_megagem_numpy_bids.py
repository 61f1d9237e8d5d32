"""numpy integers are accepted wherever MegaGem takes an int (RL code holds np.int64)."""

from __future__ import annotations

import numpy as np
import pytest

from arena_core.registry import make_game
from arena_games.megagem.rules import Bid, Reveal


@pytest.mark.parametrize("kind", [np.int64, np.int32, np.uint8, int])
def test_a_numpy_bid_is_the_same_bid(kind):
    game = make_game("megagem")
    pos = game.start(3)
    seat = game.current_player(pos)
    bid = Bid(kind(2))
    assert bid == Bid(2) and hash(bid) == hash(Bid(2)) and type(bid.amount) is int
    assert game.is_legal(pos.state, seat, bid)
    after = game.act(pos, seat, bid)
    assert after.pending == ((seat, Bid(2)),)
    assert game.act_id(pos, seat, kind(2)).pending == after.pending


def test_a_numpy_reveal_colour_is_the_same_colour_and_bools_stay_refused():
    assert Reveal(np.int64(1)) == Reveal(1) and type(Reveal(np.int8(1)).colour) is int
    game = make_game("megagem")
    pos = game.start(3)
    seat = game.current_player(pos)
    assert not game.is_legal(pos.state, seat, Bid(True))  # a bool is not a bid
    assert not game.is_legal(pos.state, seat, Bid(2.0))  # nor a float
