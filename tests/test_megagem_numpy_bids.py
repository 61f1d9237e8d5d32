"""numpy integers are accepted wherever MegaGem takes an int (RL code holds np.int64)."""

from __future__ import annotations

import numpy as np
import pytest

from arena_core.registry import make_game, make_player
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


@pytest.mark.parametrize("kind", [np.int64, np.int16, np.uint16])
def test_every_entry_point_that_takes_an_int_takes_a_numpy_int(kind):
    game = make_game("megagem")
    pos = game.start(5)
    seat = game.current_player(pos)
    state = pos.state
    assert game.action_from_id(kind(3)) == Bid(3)  # ids
    assert game.action_id(game.action_from_id(kind(3))) == 3
    assert game.coerce_bid(state, seat, kind(4)) == (Bid(4), True)  # the text parser's path
    assert game.coerce_bid(state, seat, kind(10_000)) == (Bid(0), False)
    assert game.legal_mask(state, seat)[kind(2)] == 1
    assert game.action_from_str(pos, seat, "bid 2") == Bid(kind(2))


def test_a_player_answering_with_numpy_bids_plays_a_whole_game():
    from arena_core.players import BasePlayer
    from arena_core.runner import play_episode

    class NumpyBidder(BasePlayer):
        def act(self, decision):
            legal = decision.legal_actions
            if isinstance(legal[0], Bid):
                return Bid(np.int64(min(1, len(legal) - 1)))
            return Reveal(np.int64(legal[0].colour))

    game = make_game("megagem")
    rec = play_episode(game, [NumpyBidder(), NumpyBidder(), make_player("megagem_expert")], 2)
    assert rec.end.returns is not None and not any(getattr(e, "verdict", None) for e in rec.events)
