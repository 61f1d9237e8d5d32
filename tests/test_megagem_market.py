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
