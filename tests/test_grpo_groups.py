"""GRPO groups that carry signal (issue 42 point 1): a peaked learner against a peaked pool still
sees different games within a group, so its update is not zero."""

from __future__ import annotations

import pytest

pytest.importorskip("mlx.core")

from arena_train import grpo  # noqa: E402

#: the tiny random model at temperature 0.5 is peaked (menu entropy 0.0001-0.09 nats on Kuhn), and so
#: are its pool: 'bet or call with the king' and frozen snapshots of itself at the same temperature
PEAKED = dict(
    game="kuhn_poker",
    seed=0,
    steps=3,
    deals_per_step=2,
    group_size=4,
    temperature=0.5,
    kl_beta=0.0,
    optim=dict(learning_rate=1e-3),
    pool=dict(players=["kuhn_king_only"], snapshot_every=1, snapshot_temperature=0.5),
    eval=dict(anchor="kuhn_king_only", every=0, deals=2, bootstrap=100),
    plot=False,
)


def test_a_peaked_learner_against_a_peaked_pool_still_gets_an_update(tmp_path):
    """With one deal and one set of opponent draws per group, every play of a group was the same
    game once the learner was peaked: zero advantage, gradient norm exactly 0 at every step."""
    rows = grpo.TRAINER(dict(PEAKED), tmp_path / "run").metrics[1:]
    norms = [r["grad_norm"] for r in rows]
    assert all(n > 0 for n in norms), f"gradient norms {norms}: the groups carried no signal"
