"""Kuhn poker: rules and the known game value -1/18 under a Nash equilibrium."""

from fractions import Fraction
from itertools import permutations

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from arena_core import IllegalActionError
from arena_games.kuhn import KuhnAction, KuhnPoker, KuhnState, nash_policy

P, B = KuhnAction.PASS, KuhnAction.BET


@pytest.mark.parametrize(
    "cards,history,expected",
    [
        ((2, 0), (P, P), (1, -1)),
        ((0, 2), (P, P), (-1, 1)),
        ((1, 0), (B, P), (1, -1)),  # player 1 folds
        ((0, 2), (B, P), (1, -1)),  # a fold loses whatever the cards
        ((2, 1), (B, B), (2, -2)),
        ((0, 1), (B, B), (-2, 2)),
        ((2, 0), (P, B, P), (-1, 1)),  # player 0 folds to the bet
        ((2, 0), (P, B, B), (2, -2)),
        ((1, 2), (P, B, B), (-2, 2)),
    ],
)
def test_terminal_returns(cards, history, expected):
    game = KuhnPoker()
    state = KuhnState(cards, history)
    assert game.is_terminal(state)
    assert game.returns(state) == expected


def test_nonterminal_histories():
    game = KuhnPoker()
    for h in [(), (P,), (B,), (P, B)]:
        assert not game.is_terminal(KuhnState((0, 1), h))


def _value(policy) -> Fraction:
    """Player 0's expected return: exhaustive expectation over the deal and both policies."""
    game = KuhnPoker()
    total = Fraction(0)
    deals = list(permutations(range(3), 2))

    def expand(state: KuhnState, prob: Fraction) -> Fraction:
        if game.is_terminal(state):
            return prob * Fraction(game.returns(state)[0])
        player = len(state.history) % 2
        p_bet = Fraction(policy(player, state.cards[player], state.history)).limit_denominator(10**6)
        value = Fraction(0)
        for action, p in ((B, p_bet), (P, 1 - p_bet)):
            if p:
                value += expand(KuhnState(state.cards, state.history + (action,)), prob * p)
        return value

    for cards in deals:
        total += expand(KuhnState(cards), Fraction(1, len(deals)))
    return total


@pytest.mark.parametrize("alpha", [0, Fraction(1, 6), Fraction(1, 3)])
def test_game_value_under_nash_is_minus_one_eighteenth(alpha):
    assert _value(nash_policy(float(alpha))) == Fraction(-1, 18)


def test_value_differs_for_a_non_equilibrium_policy():
    always_bet = lambda player, card, history: 1.0  # noqa: E731
    assert _value(always_bet) != Fraction(-1, 18)


def test_deal_uses_all_three_cards_over_seeds():
    game = KuhnPoker()
    deals = {game.start(seed).state.cards for seed in range(200)}
    assert deals == set(permutations(range(3), 2))


@given(st.integers(0, 2**31 - 1))
def test_same_seed_same_deal(seed):
    game = KuhnPoker()
    assert game.start(seed) == game.start(seed)


@given(st.integers(0, 2**31 - 1), st.sampled_from([0, 1]))
def test_sampled_hidden_state_keeps_own_card(seed, player):
    game = KuhnPoker()
    state = game.start(seed).state
    rng = np.random.default_rng(seed)
    sampled = game.sample_hidden_state(state, player, rng)
    assert sampled.cards[player] == state.cards[player]
    assert sampled.cards[0] != sampled.cards[1]
    assert game.observation(sampled, player) == game.observation(state, player)


def test_acting_with_a_foreign_object_is_illegal():
    game = KuhnPoker()
    with pytest.raises(IllegalActionError, match="not legal"):
        game.act(game.start(0), 0, "bet")
