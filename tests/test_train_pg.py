"""The non-LLM policy-gradient trainer over the numeric observation encoding."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from arena_core.errors import ConfigError
from arena_core.registry import make_game, make_player
from arena_core.runner import play_episode
from arena_train import pg
from arena_train.pg import NumericLearner, NumericPolicy
from arena_train.rollout import Request, distinct_deals, expected_return
from arena_train.run import RunDir
from arena_train.trainer import Parts

CFG = dict(
    game="kuhn_poker",
    seed=0,
    steps=30,
    episodes_per_step=64,
    learning_rate=0.05,
    opponents=["kuhn_king_only"],
    eval_deals=64,
    bootstrap=200,
)


def exact_greedy_value(policy: NumericPolicy) -> float:
    game = make_game("kuhn_poker")
    opp = make_player("kuhn_king_only")
    learner = NumericLearner(policy, greedy=True)

    def dist(g, pos, seat):
        return [(learner.decide([Request(g, pos, seat, 0, 0)])[0].action, 1.0)]

    return float(
        np.mean([expected_return(game, d, s, dist, {1 - s: opp}) for d in distinct_deals(game, 6) for s in (0, 1)])
    )


def start(cfg, run_dir):
    """The run directory and the session pg.train builds, to look inside."""
    run = RunDir.claim(run_dir)
    return run, pg.start(pg.TRAINER.parse(cfg), run, Parts())


def test_pg_reaches_the_best_response_to_king_only(tmp_path):
    run, trainer = start(CFG, tmp_path / "pg")
    assert exact_greedy_value(trainer.policy) < 1 / 6
    out = pg.run_steps(run, trainer, Parts())
    assert exact_greedy_value(trainer.policy) == pytest.approx(0.25)
    assert out.final_eval["eval_improvement_low"] > 0
    assert (tmp_path / "pg" / "policy.npz").exists() and (tmp_path / "pg" / "manifest.json").exists()


def test_pg_same_seed_same_metrics(tmp_path):
    cfg = dict(CFG, steps=3)
    a = pg.TRAINER(cfg, tmp_path / "a").metrics
    b = pg.TRAINER(cfg, tmp_path / "b").metrics
    c = pg.TRAINER(dict(cfg, seed=1), tmp_path / "c").metrics
    assert a == b and a != c


def test_saved_policy_plays_as_a_registered_player(tmp_path):
    run, trainer = start(dict(CFG, steps=2, hidden=8), tmp_path / "pg")
    pg.run_steps(run, trainer, Parts())
    player = make_player(f"numeric_policy:weights={tmp_path / 'pg' / 'policy.npz'}")
    game = make_game("kuhn_poker")
    record = play_episode(game, [player, make_player("kuhn_king_only")], 7)
    assert record.end.reason.value == "natural"
    first = game.start(7)
    expected = NumericLearner(trainer.policy, greedy=True).decide([Request(game, first, 0, 0, 0)])[0].action
    assert record.steps[0].action_id == game.action_id(expected)
    with pytest.raises(ConfigError, match="weights=PATH"):
        make_player("numeric_policy")


@settings(max_examples=20, deadline=None)
@given(st.integers(0, 10_000), st.sampled_from([0, 5]))
def test_policy_gradient_matches_finite_differences(seed, hidden):
    rng = np.random.default_rng(seed)  # test data only
    policy = NumericPolicy.init(6, 4, hidden, seed)
    for k in policy.params:
        policy.params[k] = rng.standard_normal(policy.params[k].shape)
    x = rng.standard_normal((5, 6))
    mask = (rng.random((5, 4)) < 0.7).astype(float)
    mask[:, 0] = 1.0
    actions = np.array([int(rng.choice(np.flatnonzero(m))) for m in mask])
    w = rng.standard_normal(5)

    def objective() -> float:
        p = policy.probabilities(x, mask)
        return float(np.mean(w * np.log(p[np.arange(5), actions])))

    grads, _ = policy.gradients(x, mask, actions, w)
    for name, g in grads.items():
        flat = policy.params[name].reshape(-1)
        i = int(rng.integers(flat.size))
        old = flat[i]
        flat[i] = old + 1e-6
        up = objective()
        flat[i] = old - 1e-6
        down = objective()
        flat[i] = old
        assert g.reshape(-1)[i] == pytest.approx((up - down) / 2e-6, rel=1e-3, abs=1e-6)


def test_pg_needs_a_numeric_encoding_and_valid_config(tmp_path):
    with pytest.raises(ConfigError, match="opponents"):
        pg.TRAINER(dict(CFG, opponents=[]), tmp_path / "x")


def test_kuhn_evaluation_is_exact_over_the_six_deals(tmp_path):
    run, trainer = start(dict(CFG, steps=2), tmp_path / "pg")
    assert len(trainer.eval_deals) == 6  # every deal once, not 64 draws with replacement
    final = pg.run_steps(run, trainer, Parts()).final_eval
    assert final["eval_exact"] is True
    assert final["eval_improvement_low"] == final["eval_improvement"] == final["eval_improvement_high"]
    # the value is a multiple of 1/12 (6 deals x 2 seats, integer chip outcomes, deterministic players)
    assert abs(final["eval_mean"] * 12 - round(final["eval_mean"] * 12)) < 1e-9


def test_a_used_run_directory_is_refused(tmp_path):
    from arena_core.errors import ConfigError

    pg.TRAINER(dict(CFG, steps=1), tmp_path / "pg")
    with pytest.raises(ConfigError, match="already holds a run"):
        pg.TRAINER(dict(CFG, steps=1), tmp_path / "pg")
