"""Kuhn poker and the matrix games under the public strategies (the project's own properties,
written the way a game author writes theirs)."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from arena_core.game import Position
from arena_core.testing.strategies import apply_joint, illegal_actions, joint_actions, playthroughs, positions
from arena_games.kuhn import KuhnAction, KuhnPoker, nash_policy
from arena_games.matrix import ARCHETYPE_NAMES, MatrixGame

KUHN = KuhnPoker()
SETTINGS = settings(max_examples=60, deadline=None, database=None)


def nash_seat(decision):
    """Seat 0 plays the Nash strategy (alpha = 1/6), drawing from the decision's own seeded rng."""
    obs = decision.observation
    history = tuple(KuhnAction.BET if a == "bet" else KuhnAction.PASS for a in obs["history"])
    p_bet = nash_policy()(decision.seat, "JQK".index(obs["card"]), history)
    return KuhnAction.BET if decision.rng().random() < p_bet else KuhnAction.PASS


@SETTINGS
@given(playthroughs(KUHN, complete=True))
def test_kuhn_pays_the_pot_to_the_better_card_unless_someone_folds(pt):
    history = tuple(int(a) for _, a in pt.moves)
    cards = pt.final.state.cards
    stake = 2 if history.count(1) == 2 else 1
    folded = history[-2:] == (1, 0)
    winner = len(history) % 2 if folded else (0 if cards[0] > cards[1] else 1)  # the bettor wins a fold
    assert pt.returns == ((stake, -stake) if winner == 0 else (-stake, stake))


@SETTINGS
@given(playthroughs(KUHN))
def test_kuhn_observations_show_the_pot_and_never_the_other_card(pt):
    for pos in pt.positions:
        for p in (0, 1):
            obs = KUHN.observe(pos, p)
            assert obs["pot"] == 2 + sum(int(a) for a in pos.state.history)
            assert set(obs) == {"player", "card", "history", "pot"} and obs["card"] == "JQK"[pos.state.cards[p]]


@SETTINGS
@given(playthroughs(KUHN, policies={0: nash_seat}, complete=True))
def test_a_nash_seat_never_bets_a_queen_first_and_always_calls_with_the_king(pt):
    card, history = pt.final.state.cards[0], [int(a) for _, a in pt.moves]
    if card == 1:
        assert history[0] == 0
    if card == 2 and history[:2] == [0, 1]:
        assert history[2] == 1


matrix_games = st.builds(
    lambda archetype, k, independent, rotation: MatrixGame(
        {"archetype": archetype, "k": k, "independent_order": independent, "rotation": rotation % k}
    ),
    st.sampled_from(ARCHETYPE_NAMES),
    st.integers(2, 10),
    st.booleans(),
    st.integers(0, 9),
)


@settings(max_examples=80, deadline=None, database=None)
@given(
    matrix_games.flatmap(
        lambda g: st.tuples(st.just(g), positions(g, where=lambda g, p: not g.is_over(p) and not p.pending))
    ),
    st.data(),
)
def test_matrix_joint_actions_pay_the_payoff_matrices_at_the_underlying_actions(game_and_start, data):
    game, start = game_and_start
    joint = data.draw(joint_actions(game, start))
    end = apply_joint(game, start, joint)
    assert game.is_over(end) and end.ply == 2
    i, j = ((joint[0] + game.params.rotation) % game.k, (joint[1] + game.params.rotation) % game.k)
    assert game.final_returns(end) == (float(game.payoffs.A[i, j]), float(game.payoffs.B[i, j]))
    for p in (0, 1):  # each sees the labels chosen, in its own listing
        obs = game.observe(end, p)
        assert obs["own_choice"] == game.labels[joint[p]] and obs["other_choice"] == game.labels[joint[1 - p]]


@settings(max_examples=40, deadline=None, database=None)
@given(
    matrix_games.flatmap(lambda g: st.tuples(st.just(g), positions(g, where=lambda g, p: bool(p.pending)))), st.data()
)
def test_matrix_commitments_stay_hidden_until_the_reveal(game_and_pos, data):
    game, pos = game_and_pos
    ((committed, _),) = pos.pending
    waiting = game.players_to_act(pos)
    assert waiting == (1 - committed,)
    uncommitted = Position(pos.state, (), pos.ply - 1)
    assert game.observe(pos, waiting[0]) == game.observe(uncommitted, waiting[0])  # nothing of the commitment shows
    bad = illegal_actions(game, pos, committed)  # the committed seat may not act again
    assert not bad.is_empty
