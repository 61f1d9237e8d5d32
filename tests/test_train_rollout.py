"""Shared training parts: advantages, rewards, paired bootstrap, exact evaluation, views."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from arena_core.errors import ConfigError
from arena_core.registry import make_game, make_player
from arena_core.views import Menu, MenuView
from arena_games.kuhn.rules import KuhnAction
from arena_games.kuhn.views import KuhnCompactView
from arena_games.megagem.views import MegaGemCompactView
from arena_train.manifest import config_diff, run_id
from arena_train.rollout import (
    Choice,
    EpisodeResult,
    PlayerLearner,
    RewardSpec,
    StepRecord,
    centred_advantages,
    decision_returns,
    distinct_deals,
    episode_return,
    expected_return,
    paired_bootstrap,
    play_episodes,
    rotated_specs,
)

returns_and_groups = st.lists(st.tuples(st.integers(-5, 5).map(float), st.integers(0, 3)), min_size=2, max_size=40)


@settings(max_examples=60, deadline=None)
@given(returns_and_groups, st.sampled_from(["batch_std", "group_std", "none"]))
def test_advantages_are_centred_within_each_group(pairs, scale):
    r = [p[0] for p in pairs]
    g = [p[1] for p in pairs]
    adv = centred_advantages(r, g, scale)
    for key in set(g):
        members = [a for a, gi in zip(adv, g) if gi == key]
        assert abs(np.mean(members)) < 1e-6
    assert np.all(np.isfinite(adv))


@settings(max_examples=40, deadline=None)
@given(returns_and_groups, st.floats(0.1, 10))
def test_batch_std_advantages_ignore_reward_scale(pairs, factor):
    r = np.array([p[0] for p in pairs])
    g = [p[1] for p in pairs]
    np.testing.assert_allclose(
        centred_advantages(r, g), centred_advantages(r * factor, g), rtol=1e-4, atol=1e-4
    )  # up to eps


def test_batch_std_keeps_stakes_that_group_std_erases():
    # two groups: one deal where the choice swings 1 chip, another where it swings 3
    r = [0, 1, 0, 3]
    g = [0, 0, 1, 1]
    grp = centred_advantages(r, g, "group_std")
    bat = centred_advantages(r, g, "batch_std")
    assert grp[1] == pytest.approx(grp[3], rel=1e-5)  # group std makes the stakes equal
    assert bat[3] == pytest.approx(3 * bat[1], rel=1e-5)  # the batch scale keeps them


def _result(returns, seat=0, penalties=()):
    steps = [StepRecord(seat, i, Choice("x"), p) for i, p in enumerate(penalties)]
    return EpisodeResult(1, seat, tuple(returns), steps)


def test_rewards_known_answers():
    res = _result((5.0, 1.0, 3.0), penalties=(0.0, -1.0))
    assert episode_return(res, RewardSpec("outcome")) == 4.0
    assert episode_return(res, RewardSpec("win")) == 0.0  # +1 win, -1 penalty
    m = RewardSpec("margin", margin_scale=2.0, first_bonus=0.1)
    assert episode_return(res, m) == pytest.approx(np.tanh(3 / 2) + 0.1 - 1.0)
    assert decision_returns(res, RewardSpec("outcome")) == [4.0, 4.0]
    tied = _result((2.0, 2.0))
    assert episode_return(tied, RewardSpec("win")) == 0.0
    lost = _result((1.0, 2.0), seat=0)
    assert episode_return(lost, RewardSpec("win")) == -1.0
    truncated = EpisodeResult(1, 0, (0.0, 0.0), [], truncated=True)
    assert episode_return(truncated, RewardSpec("margin")) == 0.0


@settings(max_examples=40, deadline=None)
@given(st.lists(st.floats(-3, 3, allow_nan=False), min_size=1, max_size=30), st.floats(-1, 1))
def test_paired_bootstrap_brackets_the_mean(values, shift):
    a = np.array(values) + shift
    iv = paired_bootstrap(a, values, seed=1, resamples=200)
    assert iv.low - 1e-9 <= iv.mean <= iv.high + 1e-9
    assert iv.mean == pytest.approx(shift, abs=1e-9)
    # a constant difference has no spread to judge by: no interval, never a zero-width one
    assert (iv.low, iv.high) == (-math.inf, math.inf)


def test_paired_bootstrap_is_seeded():
    a, b = [1.0, 0.0, 2.0, -1.0], [0.0, 0.0, 1.0, 1.0]
    assert paired_bootstrap(a, b, seed=5) == paired_bootstrap(a, b, seed=5)
    with pytest.raises(ValueError):
        paired_bootstrap([], [], seed=0)


# ---------------------------------------------------------------------- Kuhn known answers
def _kuhn_value(choose):
    game = make_game("kuhn_poker")
    opp = make_player("kuhn_king_only")

    def dist(g, pos, seat):
        obs = g.observe(pos, seat)
        bet = choose(seat, obs["card"], "".join(h[0] for h in obs["history"]))
        return [(KuhnAction.BET, bet), (KuhnAction.PASS, 1 - bet)]

    deals = distinct_deals(game, 6)
    assert len(deals) == 6
    return np.mean([expected_return(game, d, s, dist, {1 - s: opp}) for d in deals for s in (0, 1)])


def test_best_response_to_king_only_is_worth_a_quarter():
    def best(seat, card, hist):
        if seat == 0 and hist == "":
            return float(card == "J")  # bluff the jack, check the queen (the king wins either way)
        if hist in ("b", "pb"):
            return 0.0  # a bet means the king: fold
        return 1.0  # checked to: bet, everything folds

    assert _kuhn_value(best) == pytest.approx(0.25)


def test_best_card_blind_policy_against_king_only_is_worth_a_sixth():
    values = []
    for first in (0.0, 1.0):
        for facing in (0.0, 1.0):
            for checked in (0.0, 1.0):
                values.append(
                    _kuhn_value(
                        lambda seat, card, h, first=first, facing=facing, checked=checked: (
                            first if h == "" else (facing if h in ("b", "pb") else checked)
                        )
                    )
                )
    assert max(values) == pytest.approx(1 / 6)


def test_rollout_plays_bots_against_each_other_with_seat_rotation():
    game = make_game("kuhn_poker")
    deals = distinct_deals(game, 6)
    specs = rotated_specs(game, deals, lambda seat: {1 - seat: make_player("kuhn_king_only")}, key_seed=0)
    results = play_episodes(game, specs, PlayerLearner(make_player("kuhn_king_only")))
    assert [r.learner_seat for r in results] == [0, 1] * 6
    assert all(len(r.steps) >= 1 for r in results)
    # the same bot on both sides: each deal's two seatings cancel out
    assert sum(r.returns[r.learner_seat] for r in results) == pytest.approx(0.0)


# ---------------------------------------------------------------------- views
def test_kuhn_view_puts_the_card_last():
    game = make_game("kuhn_poker")
    pos = game.start(1)
    menu = KuhnCompactView().menu(game, pos, 0)
    card = game.observe(pos, 0)["card"]
    assert menu.text.endswith(card) and menu.labels == ("p", "b")
    pos = game.act(pos, 0, KuhnAction.PASS)
    assert KuhnCompactView().menu(game, pos, 1).text.startswith("kuhn 1 c ")  # history tokens differ from answers


def test_megagem_view_is_short_and_offers_grid_bids():
    pytest.importorskip("mlx_lm")
    from arena_train.lm import load_lm
    from arena_train.views import ActionTokens

    _, tok = load_lm("tiny")
    tokens = ActionTokens(tok)
    game = make_game("megagem")
    pos = game.start(2)
    seat = game.current_player(pos)
    menu = MegaGemCompactView().menu(game, pos, seat)
    assert len(tokens.encode_text(menu.text)) <= 64
    assert len(set(tokens.tokens(menu.labels))) == len(menu.labels)
    assert all(game.is_legal(pos.state, seat, a) for a in menu.actions)
    wide = MegaGemCompactView().menu(game, pos, seat, include_illegal=True)
    assert len(wide.actions) >= len(menu.actions)
    with pytest.raises(ConfigError, match="one token"):
        tokens.token("definitely not one token")


def test_menu_view_letters_any_game():
    game = make_game("kuhn_poker")
    menu = MenuView().menu(game, game.start(0), 0)
    assert menu.labels == ("A", "B") and "A) pass" in menu.text


def test_menu_rejects_bad_shapes():
    with pytest.raises(ConfigError):
        Menu("x", (1, 2), ("a", "a"), (True, True))
    with pytest.raises(ConfigError):
        Menu("x", (1,), ("a",), (False,))


def test_manifest_ids_and_diffs():
    a = {"name": "r", "seed": 1, "optim": {"lr": 1}}
    b = {"name": "r", "seed": 1, "optim": {"lr": 2}}
    assert config_diff(a, b) == {"optim.lr": {"parent": 1, "run": 2}}
    assert config_diff(None, b) == {}
    assert run_id(a, None) == run_id(a, None) != run_id(b, None)
    assert run_id(a, "p") != run_id(a, None)


class IllegalLearner:
    """Always names an illegal action."""

    def decide(self, requests):
        return [Choice(None, illegal=True) for _ in requests]


def test_illegal_learner_answers_are_penalised_and_replaced_by_the_default():
    game = make_game("kuhn_poker")
    specs = rotated_specs(game, [11, 12], lambda seat: {1 - seat: make_player("kuhn_king_only")}, key_seed=0)
    results = play_episodes(game, specs, IllegalLearner(), illegal_penalty=0.5)
    for r in results:
        assert r.steps and all(s.penalty == -0.5 for s in r.steps)
        assert episode_return(r, RewardSpec("outcome")) == r.returns[r.learner_seat] - 0.5 * len(r.steps)
    # the default action (pass) was played for the learner: as first player it checks
    first = [r for r in results if r.learner_seat == 0]
    assert all(len(r.steps) in (1, 2) for r in first)


def test_crashing_opponent_is_recorded_not_raised():
    class Crasher:
        def act(self, decision):
            raise RuntimeError("boom")

    game = make_game("kuhn_poker")
    specs = rotated_specs(game, [3], lambda seat: {1 - seat: Crasher()}, key_seed=0)
    results = play_episodes(game, specs, PlayerLearner(make_player("kuhn_king_only")))
    assert all(r.opponent_errors >= 1 for r in results)
