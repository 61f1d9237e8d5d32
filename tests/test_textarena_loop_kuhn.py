"""KuhnPoker-v0 as our adapter plays it: the exact model agrees with the real title, the
equilibrium bot is unexploitable there, and the standard Kuhn equilibrium is not."""

from __future__ import annotations

import pytest

pytest.importorskip("textarena")

from hypothesis import assume, example, given, settings
from hypothesis import strategies as st

from arena_core.players import Decision
from arena_core.registry import make_game, make_player
from arena_core.runner import play_episode
from arena_core.views import get_view
from arena_games.textarena import kuhn_v0 as K

STATES = [(c, h) for c in K.CARDS for h in K.HISTORIES]


def _standard_kuhn_nash(card: str, history: str, round_no: int, lead: int) -> dict[str, float]:
    """Kuhn poker's textbook equilibrium (alpha = 0), where bets do reach the pot: it folds the
    jack and mostly the queen to a bet."""
    if history == "":
        return {K.CHECK: 1.0}
    if history == "x":
        return {K.BET: 1.0} if card == "K" else ({K.BET: 1 / 3, K.CHECK: 2 / 3} if card == "J" else {K.CHECK: 1.0})
    call = {"J": 0.0, "Q": 1 / 3, "K": 1.0}[card]
    return {K.CALL: call, K.FOLD: 1 - call}


def test_equilibrium_bot_is_unexploitable_in_the_game_as_played():
    e = K.exploitability(K.equilibrium_policy)
    assert e.br_win_vs_seat0 == pytest.approx(0.5, abs=1e-12)
    assert e.br_win_vs_seat1 == pytest.approx(0.5, abs=1e-12)
    assert e.exploitability == pytest.approx(0.0, abs=1e-12)


def test_standard_kuhn_equilibrium_is_exploitable_here():
    # folding the queen to a bet gives away rounds that calling wins half the time
    assert K.exploitability(_standard_kuhn_nash).exploitability > 0.2


def test_equilibrium_bot_is_also_the_best_response_to_random():
    # two code paths: the fixed-policy recursion and the best-response recursion
    best = 0.5 * (K.best_response_value(K.uniform_policy, 0) + K.best_response_value(K.uniform_policy, 1))
    assert K.seat_mean_win(K.equilibrium_policy, K.uniform_policy) == pytest.approx(best, abs=1e-12)
    assert best == pytest.approx(197 / 256, abs=1e-12)  # = 0.76953125 (the exact model's value)
    assert K.seat_mean_win(K.uniform_policy, K.uniform_policy) == pytest.approx(0.5, abs=1e-12)


_prob = st.floats(0.0, 1.0, allow_nan=False)


def _table(probs):
    table = {}
    for (card, h), p in zip(STATES, probs):
        a, b = K.legal_at(h)
        table[card, h] = {a: p, b: 1.0 - p}
    return K.table_policy(table)


@settings(max_examples=25, deadline=None)
@given(st.lists(_prob, min_size=12, max_size=12), st.lists(_prob, min_size=12, max_size=12))
def test_best_response_bounds_every_policy(p, q):
    """No policy beats a best response, in either seat; values are probabilities."""
    pol, opp = _table(p), _table(q)
    v = K.match_value(pol, opp)
    assert 0.0 <= v <= 1.0
    assert v <= K.best_response_value(opp, 0) + 1e-12
    assert 1.0 - v <= K.best_response_value(pol, 1) + 1e-12


@settings(max_examples=20, deadline=None)
@given(st.lists(_prob, min_size=6, max_size=6), st.integers(0, 5), st.floats(0.01, 1.0))
@example(bets=[0.0, 0.0, 0.0, 0.0, 0.99999, 0.0], which=3, fold=1.0)  # found by hypothesis in CI-size runs
def test_never_folding_is_exactly_an_equilibrium_and_folding_q_or_k_is_not(bets, which, fold):
    """Any betting pattern that never folds is unexploitable; folding the queen or the king
    to a bet with any positive probability, at a decision the policy can reach, is exploitable
    (a fold after checking first is unreachable when the policy always bets that card first:
    hypothesis found bets=[0, 0, 1, 0, 0, 0], which=1, where it costs nothing), in proportion to
    how often it is reached and taken."""
    table = {}
    openers = [(c, h) for c in K.CARDS for h in ("", "x")]
    for (card, h), b in zip(openers, bets):
        table[card, h] = {K.BET: b, K.CHECK: 1.0 - b}
    for card in K.CARDS:
        for h in ("r", "xr"):
            table[card, h] = {K.CALL: 1.0, K.FOLD: 0.0}
    assert K.exploitability(K.table_policy(table)).exploitability == pytest.approx(0.0, abs=1e-12)
    card, h = [(c, h) for c in ("Q", "K") for h in ("r", "xr")][which % 4]
    reach = 1.0 if h == "r" else table[card, ""][K.CHECK]  # how often the policy comes to this fold
    assume(reach > 0)  # the fold must be at a reachable decision
    table[card, h] = {K.CALL: 1.0 - fold, K.FOLD: fold}
    # the loss scales with how often the fold is reached and taken (hypothesis found a check
    # probability of 1e-5 before the fold: exploitability 5e-6, positive but below a flat 1e-4)
    assert K.exploitability(K.table_policy(table)).exploitability > 1e-2 * reach * fold


def test_exact_model_matches_the_real_title():
    """Random games through the adapter: who opens each round, the legal set at each betting
    line, and the match result all follow the exact model's rules."""
    game = make_game(K.TITLE)
    for seed in range(12):
        players = [make_player("random", seed=seed * 2 + s) for s in range(2)]
        pos = game.start(seed)
        wins = [0, 0]
        while not game.is_over(pos):
            mover = game.current_player(pos)
            info = K.read_observation(game.observe(pos, mover), mover)
            other = K.read_observation(game.observe(pos, 1 - mover), 1 - mover)
            assert set(game.legal(pos, mover)) == set(K.legal_at(info.history))
            if info.history == "":
                assert mover == K.starter(info.round_no)
            assert info.lead == 2 * (wins[mover] - wins[1 - mover])
            action = players[mover].act(Decision.at(game, pos, mover, seed))
            if K._after(info.history, action) is None:  # the round ends: the model names its winner
                cards = {mover: K.CARDS.index(info.card), 1 - mover: K.CARDS.index(other.card)}
                s = K.starter(info.round_no)
                starter_wins = K._round_winner_is_starter(info.history, action, cards[s], cards[1 - s])
                wins[s if starter_wins else 1 - s] += 1
            pos = game.act(pos, mover, action)
        assert sum(wins) == K.ROUNDS
        expected = (1.0, -1.0) if wins[0] > wins[1] else (-1.0, 1.0)
        assert game.final_returns(pos) == expected, (seed, wins)


def test_equilibrium_bot_and_compact_view_on_real_games():
    game = make_game(K.TITLE)
    view = get_view(game, "compact")
    bot = make_player("textarena_kuhn_equilibrium", seed=0)
    for seed in range(4):
        ep = play_episode(game, [bot, make_player("random", seed=seed)], seed)
        assert ep.end.returns in ([1.0, -1.0], [-1.0, 1.0])
        # the bot never folds and bets whenever it may
        for step in ep.events:
            if step.player == 0:
                assert step.action in (K.BET, K.CALL)
    pos = game.start(3)
    menu = view.menu(game, pos, game.current_player(pos))
    assert menu.text.startswith("tkuhn - ") and menu.labels == ("p", "b")
    assert menu.actions == (K.CHECK, K.BET)
