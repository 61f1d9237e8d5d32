"""The MegaGem market model (price law) learned offline, and the expert's use of it."""

from __future__ import annotations

import numpy as np

from arena_core import play_episode
from arena_core.registry import make_game, make_player
from arena_games.megagem import market
from arena_games.megagem.bots import ExpertBidder


def test_the_shipped_model_fits_better_than_a_constant_on_held_out_games():
    table = market.load().table
    assert set(table["kinds"]) == set(market.KINDS) and table["features"] == list(market.FEATURES)
    t = table["kinds"]["treasure"]
    assert t["heldout_bids"] > 1000 and t["heldout_mae_fraction"] < t["heldout_mae_mean_only"] and t["heldout_r2"] > 0.1


def test_predicted_bids_are_ten_clamped_quantiles():
    model = market.load()
    for kind in market.KINDS:
        bids = model.bids(kind, [1.0, 0.5, 1.0, 1.0, 0.04], 20)
        assert len(bids) == 10 and all(0 <= b <= 20 for b in bids) and bids == sorted(bids)
    assert model.bids("treasure", [1.0, 0.5, 1.0, 1.0, 0.04], 0) == [0.0]


def test_fit_recovers_a_known_line():
    rng = np.random.default_rng(0)
    rows = []
    for g in range(200):
        x = [1.0, *rng.uniform(0, 1, 4)]
        rows.append((g, "treasure", x, 0.2 + 0.5 * x[1] - 0.1 * x[3] + rng.normal(0, 0.01)))
    coef = market.fit(rows)["kinds"]["treasure"]["coef"]
    assert np.allclose(coef, [0.2, 0.5, 0.0, -0.1, 0.0], atol=0.02)


def test_logged_bids_are_fractions_of_the_limit():
    rows = market.log_bids(2, 5, ("megagem_market", "megagem_fair_value"))
    assert rows and all(0.0 <= y <= 1.0 and len(x) == len(market.FEATURES) for _, _, x, y in rows)
    assert {k for _, k, _, _ in rows} <= set(market.KINDS)


def test_the_expert_with_the_learned_prior_plays_legally():
    game = make_game("megagem")
    players = [ExpertBidder(prior="learned"), make_player("megagem_expert"), make_player("megagem_market")]
    assert play_episode(game, players, 3).end.returns is not None


def test_at_cold_start_the_learned_law_bids_where_the_simple_prior_bids_nothing():
    """Issue 19's example: deal 8 opens on a 2-gem treasure worth about 21.9 to seat 0 on an empty
    chart-A display; with no bid history the simple prior (a third each on 0, 0.8 x the public value
    0, half the limit) makes any bid above 0 look wasted, while the learned law prices the lot."""
    from arena_core.players import Decision

    game = make_game("megagem")
    pos = game.start(8)
    obs = game.observe(pos, 0)
    assert obs["current_card"]["type"] == "treasure" and not obs["history"]
    assert not any(obs["display_counts"].values())
    value = ExpertBidder().lot_value(obs)
    assert 20 < value < 24
    decision = Decision.at(game, pos, 0, 8)
    assert ExpertBidder(prior="simple").act(decision).amount == 0
    for prior in ("cold", "learned"):
        assert 0 < ExpertBidder(prior=prior).act(decision).amount < value


def test_the_cold_prior_is_the_simple_one_once_there_is_history():
    from arena_core.players import Decision

    game = make_game("megagem")
    players = [make_player("megagem_expert", seed=p) for p in range(3)]
    pos = game.start(4)
    differs = same = 0
    while not game.is_over(pos) and differs + same < 40:
        p = game.current_player(pos)
        d = Decision.at(game, pos, p, 4)
        obs = d.observation
        if obs["phase"] == "bid" and obs["history"]:
            kind = obs["current_card"]["type"]
            if any(h["card"].startswith(kind) for h in obs["history"]):  # every seat has bid on this kind
                a, b = ExpertBidder(prior="cold").act(d), ExpertBidder(prior="simple").act(d)
                same += a == b
                differs += a != b
        pos = game.act(pos, p, players[p].act(d))
    assert same > 0 and differs == 0
