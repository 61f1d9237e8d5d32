"""Exact evaluation of Kuhn poker: deals, information states, exploitability, the average
policy and CFR, against answers computed by hand."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from arena_core.errors import ConfigError
from arena_core.registry import make_game
from arena_games.kuhn import nash_policy
from arena_train.exact import (
    CFR,
    average_policy,
    best_response_value,
    deals_of,
    expected_values,
    exploitability,
    information_states,
    table_from,
)

GAME = make_game("kuhn_poker")
INFOS = information_states(GAME)


def bet_table(f):
    """A policy table from ``f(seat, card, history) -> probability of bet``."""
    return table_from(
        GAME,
        lambda i: (
            1 - f(i.seat, i.pos.state.cards[i.seat], tuple(int(a) for a in i.pos.state.history)),
            f(i.seat, i.pos.state.cards[i.seat], tuple(int(a) for a in i.pos.state.history)),
        ),
    )


def test_six_equally_likely_deals_each_card_pair_once():
    deals = deals_of(GAME)
    assert len(deals) == 6 and all(p == pytest.approx(1 / 6) for _, p in deals)
    pairs = {GAME.start(s).state.cards for s, _ in deals}
    assert pairs == {(a, b) for a in range(3) for b in range(3) if a != b}


def test_twelve_information_states_six_per_seat():
    assert len(INFOS) == 12
    assert sorted(i.seat for i in INFOS) == [0] * 6 + [1] * 6


@pytest.mark.parametrize("alpha", [0.0, 1 / 12, 1 / 6, 0.25, 1 / 3])
def test_the_nash_family_has_zero_exploitability_and_value_minus_one_eighteenth(alpha):
    e = exploitability(GAME, bet_table(nash_policy(alpha)))
    assert e.exploitability == pytest.approx(0.0, abs=1e-12)
    assert e.policy_values[0] == pytest.approx(-1 / 18, abs=1e-12)


# hand computations (see the comments) for pure and uniform policies
@pytest.mark.parametrize(
    "name, f, expected",
    [
        # every hand bets and calls: the best response folds/checks the jack (-1), wins 2 with the
        # king, breaks even with the queen: 1/3 per seat, nash_conv 2/3
        ("always bet", lambda s, c, h: 1.0, 1 / 3),
        # every hand checks and folds: betting always wins the ante: 1 per seat
        ("always pass", lambda s, c, h: 0.0, 1.0),
        # OpenSpiel's value for the uniform policy: nash_conv 11/12
        ("uniform", lambda s, c, h: 0.5, 11 / 24),
    ],
)
def test_known_exploitabilities(name, f, expected):
    assert exploitability(GAME, bet_table(f)).exploitability == pytest.approx(expected, abs=1e-12)


def test_king_only_is_exploited_for_the_known_best_response():
    king_only = bet_table(lambda s, c, h: 1.0 if c == 2 else 0.0)
    # first to act: bluff the jack, check the queen (bettor wins 1 per fold)...
    br0, choice = best_response_value(GAME, king_only, 0)
    br1, _ = best_response_value(GAME, king_only, 1)
    on = expected_values(GAME, king_only)
    assert on == pytest.approx((0.0, 0.0))
    # seat values against king-only: the seat-averaged best response earns 1/4 (docs/training.md)
    assert (br0 + br1) / 2 == pytest.approx(0.25)
    assert choice['{"card": "J", "history": [], "player": 0, "pot": 2}'] == "bet"


def test_a_perturbed_nash_policy_is_exploitable():
    base = nash_policy(1 / 6)
    bent = bet_table(lambda s, c, h: min(1.0, base(s, c, h) + 0.1) if (s, c, h) == (1, 1, (1,)) else base(s, c, h))
    assert exploitability(GAME, bent).exploitability > 1e-3


probs = st.floats(0.0, 1.0, allow_nan=False)


@settings(max_examples=25, deadline=None)
@given(st.lists(probs, min_size=12, max_size=12))
def test_best_response_never_below_the_policy_value(ps):
    table = {i.key: {0: 1 - p, 1: p} for i, p in zip(INFOS, ps)}
    e = exploitability(GAME, table)
    assert e.nash_conv >= -1e-12
    assert all(b >= v - 1e-12 for b, v in zip(e.best_response_values, e.policy_values))


@settings(max_examples=15, deadline=None)
@given(
    st.lists(st.lists(probs, min_size=12, max_size=12), min_size=1, max_size=4),
    st.lists(probs, min_size=12, max_size=12),
)
def test_average_policy_is_the_mixture_drawn_once_per_game(tables, other):
    """Realisation equivalence: against any fixed opponent, the average policy's value equals
    the mean of the mixed policies' values (one drawn per game)."""
    mixed = [{i.key: {0: 1 - p, 1: p} for i, p in zip(INFOS, ps)} for ps in tables]
    opp = {i.key: {0: 1 - p, 1: p} for i, p in zip(INFOS, other)}
    avg = average_policy(GAME, mixed)
    for seat in (0, 1):

        def with_opp(t, seat=seat):
            return {i.key: (t[i.key] if i.seat == seat else opp[i.key]) for i in INFOS}

        direct = np.mean([expected_values(GAME, with_opp(t))[seat] for t in mixed])
        assert expected_values(GAME, with_opp(avg))[seat] == pytest.approx(direct, abs=1e-9)


def test_average_of_one_policy_is_itself_and_naive_averaging_differs():
    a = bet_table(lambda s, c, h: 1.0 if c == 2 else 0.0)
    b = bet_table(lambda s, c, h: 0.0 if c == 2 else 1.0)
    assert average_policy(GAME, [a]) == a
    avg = average_policy(GAME, [a, b])
    # player 0 with the king facing a bet after checking: a never checks the king, so only b
    # reaches this state, and b folds there; the naive mean of the two tables would say 0.5
    key = '{"card": "K", "history": ["pass", "bet"], "player": 0, "pot": 3}'
    assert (a[key][1] + b[key][1]) / 2 == pytest.approx(0.5)
    assert avg[key][1] == pytest.approx(0.0)


def test_cfr_converges_and_counts_traversals():
    cfr = CFR(GAME)
    assert cfr.traversals_per_iteration == 12
    cfr.iterate(300)
    assert exploitability(GAME, cfr.average()).exploitability < 0.015


def test_a_game_without_deal_enumeration_is_refused_with_the_fix():
    game = make_game("megagem")
    with pytest.raises(ConfigError, match="enumerate_deals"):
        deals_of(game)


def test_a_table_missing_a_state_or_not_summing_to_one_is_refused():
    table = bet_table(lambda s, c, h: 0.5)
    del table[INFOS[0].key]
    with pytest.raises(ConfigError, match="no entry"):
        exploitability(GAME, table)
    bad = bet_table(lambda s, c, h: 0.5)
    bad[INFOS[0].key] = {0: 0.7, 1: 0.7}
    with pytest.raises(ConfigError, match="sums to"):
        exploitability(GAME, bad)


def test_best_response_where_the_reach_underflows_to_zero():
    """A history reached through probabilities whose product underflows to 0 (the opponent bets
    with the smallest positive double) is still a history: the best response is defined there and
    the exploitability equals the one with that bet removed (found by the property test above)."""
    tiny = 5e-324
    seat1_after_pass = [i for i in INFOS if i.seat == 1 and "pass" in i.key]
    assert seat1_after_pass

    def table(p_bet):
        return {i.key: ({0: 1 - p_bet, 1: p_bet} if i in seat1_after_pass else {0: 0.5, 1: 0.5}) for i in INFOS}

    e_tiny = exploitability(GAME, table(tiny)).exploitability
    assert e_tiny == pytest.approx(exploitability(GAME, table(0.0)).exploitability, abs=1e-12)
