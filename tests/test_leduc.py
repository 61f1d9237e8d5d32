"""Leduc poker, the native game (issue 31, point 3): hand-computed outcomes, the betting rules,
the conformance kit, and exact exploitability (uniform policy, CFR's average and last iterate)."""

from __future__ import annotations

import pytest

from arena_core import IllegalActionError
from arena_core.game import Position
from arena_core.registry import load
from arena_core.testing import assert_conformance
from arena_games.leduc import LeducAction, LeducPoker, LeducState
from arena_train import exact

F, C, R = LeducAction.FOLD, LeducAction.CALL, LeducAction.RAISE
J1, J2, Q1, Q2, K1, K2 = range(6)


@pytest.mark.parametrize(
    "cards,rounds,expected",
    [
        ((K1, J1, Q1), ((R, F),), (1.0, -1.0)),  # player 1 folds to the bet: loses the ante
        ((J1, K1, Q1), ((C, R, F),), (-1.0, 1.0)),  # player 0 folds to a bet after checking
        ((J1, K1, Q1), ((R, R, F),), (-3.0, 3.0)),  # player 0 folds to the re-raise: 1 + 2 lost
        ((J1, K1, J2), ((C, C), (C, C)), (1.0, -1.0)),  # a pair with the public card beats a king
        ((Q1, K1, J2), ((C, C), (C, C)), (-1.0, 1.0)),  # no pair: the higher rank wins
        ((Q1, Q2, K1), ((R, C), (R, C)), (0.0, 0.0)),  # equal ranks split
        ((K1, Q1, J1), ((R, R, C), (R, R, C)), (13.0, -13.0)),  # the largest pot: 1 + 4 + 8
        ((K1, Q1, J1), ((C, R, C), (C, R, F)), (-3.0, 3.0)),  # player 0 folds in round 2
    ],
)
def test_terminal_returns(cards, rounds, expected):
    game = LeducPoker()
    state = LeducState(cards, rounds)
    assert game.is_terminal(state)
    assert game.returns(state) == expected


def _play(game, seed, actions):
    pos = game.start(seed)
    for a in actions:
        pos = game.act(pos, game.current_player(pos), a)
    return pos


def test_fold_only_facing_a_bet_and_at_most_two_raises_a_round():
    game = LeducPoker()
    assert game.legal(game.start(0), 0) == (C, R)
    assert game.legal(_play(game, 0, [R]), 1) == (F, C, R)
    assert game.legal(_play(game, 0, [R, R]), 0) == (F, C)  # the cap: no third raise
    assert game.legal(_play(game, 0, [C, R, R]), 1) == (F, C)
    with pytest.raises(IllegalActionError):
        game.act(game.start(0), 0, F)


def test_player_zero_opens_each_round_and_the_public_card_shows_only_in_round_two():
    game = LeducPoker()
    pos = _play(game, 3, [C, R])
    assert game.current_player(pos) == 0 and game.observe(pos, 0)["public"] is None
    pos = _play(game, 3, [C, R, C])
    assert game.current_player(pos) == 0
    assert pos.state.rounds == ((C, R, C), ())
    assert game.observe(pos, 1)["public"] in ("J", "Q", "K")
    assert game.observe(pos, 0)["pot"] == [3, 3]
    assert not game.is_over(_play(game, 3, [C, R, C, C]))
    assert game.is_over(_play(game, 3, [C, R, C, C, C]))


def test_deals_enumerate_every_card_triple_once():
    game = LeducPoker()
    deals = game.enumerate_deals()
    assert len(deals) == 120 and abs(sum(p for _, p in deals) - 1) < 1e-12
    assert len({game.start(s).state.cards for s, _ in deals}) == 120


def test_registered_and_conforms():
    cls = load("games", "leduc_poker")
    assert cls is LeducPoker
    assert_conformance(cls(), max_examples=5)  # tests/test_conformance_registered.py runs it at 10 too


def test_the_observation_never_shows_the_other_card():
    game = LeducPoker()
    a = Position(LeducState((K1, J1, Q1), ((C,),)))
    b = Position(LeducState((K1, Q2, J2), ((C,),)))
    assert game.observe(a, 0) == game.observe(b, 0)
    assert game.observe(a, 1) != game.observe(b, 1)


def test_exact_exploitability_of_the_uniform_policy_is_openspiels_number():
    """2.3736111 (NashConv 4.7472222): the value OpenSpiel gives its own leduc_poker (checked
    against pyspiel in tests/test_openspiel_export.py)."""
    game = LeducPoker()
    uniform = exact.table_from(game, lambda info: [1 / len(info.actions)] * len(info.actions))
    assert len(uniform) == 288  # information states, suits not told apart
    assert exact.exploitability(game, uniform).exploitability == pytest.approx(2.3736111111111111, abs=1e-9)


def test_exact_exploitability_of_cfr_average_and_last_iterate():
    game = LeducPoker()
    cfr = exact.CFR(game)
    cfr.iterate(3)
    avg = exact.exploitability(game, cfr.average()).exploitability
    last = exact.exploitability(game, cfr.current()).exploitability
    assert 0 < avg < 2.3736  # the average already beats uniform play
    assert last > 0 and abs(avg - last) > 1e-3  # the last iterate is its own policy (not monotone in CFR)
