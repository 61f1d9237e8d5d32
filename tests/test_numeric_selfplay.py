"""Numeric self-play (issue 42 point 5a): batched play over any two-player encoding, the
learner's metrics, the pool and the average, resume, the best-response mode and the example."""

from __future__ import annotations

import json

import numpy as np
import pytest

from arena_core.errors import ConfigError
from arena_core.players import Decision
from arena_core.registry import make_game, make_player
from arena_train.numeric_play import LEARNER, Mixture, evaluate, play
from arena_train.numeric_selfplay import TRAINER
from arena_train.pg import NumericPolicy
from arena_train.trainer import Parts

SMALL = {
    "game": "kuhn_poker",
    "games": 600,
    "batch_games": 50,
    "hidden": 8,
    "eval_every": 0,
    "pool_every": 3,
    "average_every": 3,
}


def train(config, run_dir, progress=None):
    """The registered trainer on ``run_dir``, continuing its latest checkpoint when it has one."""
    resume = {"resume_from": str(run_dir)} if (run_dir / "checkpoints").exists() else {}
    step_progress = (lambda step, row: progress(row)) if progress else None
    return TRAINER({**config, **resume}, run_dir, Parts(progress=step_progress))


def test_self_play_logs_what_shows_it_learns_and_keeps_the_average(tmp_path):
    summary = train({**SMALL, "games": 3000, "learning_rate": 0.01}, tmp_path / "r")
    rows = [json.loads(line) for line in (tmp_path / "r" / "metrics.jsonl").read_text().splitlines()]
    assert len(rows) == summary.steps == 60
    assert all(r["grad_norm"] > 0 and r["zero_advantage_share"] < 0.5 and r["entropy"] > 0 for r in rows)
    assert rows[-1]["entropy"] < rows[0]["entropy"]  # it stops playing uniformly
    average = Mixture.load(summary.files["average"])
    manifest = json.loads((tmp_path / "r" / "manifest.json").read_text())
    assert len(average.members) == manifest["average_members"] == 11  # every 3 updates from update 30 on
    assert manifest["trainer"] == "numeric_selfplay" and manifest["status"] == "ok"


def test_a_learner_against_a_fixed_policy_finds_a_better_response(tmp_path):
    game = make_game("kuhn_poker")
    uniform = NumericPolicy.init(game.observation_size, game.num_actions, 8, 0)
    uniform.params = {k: np.zeros_like(v) for k, v in uniform.params.items()}
    uniform.save(tmp_path / "uniform.npz")
    config = {
        **SMALL,
        "games": 6000,
        "learning_rate": 0.01,
        "respond_to": str(tmp_path / "uniform.npz"),
        "self_share": 0.0,
    }
    learned = NumericPolicy.load(train(config, tmp_path / "br").files["policy"])
    # against uniform random play: the uniform policy's mean return is about 0, this one's measured 0.36
    assert (
        evaluate(game, learned, ["random"], 1000, seed=5)["random"]
        > 0.2
        > evaluate(game, uniform, ["random"], 1000, seed=5)["random"]
    )


def test_a_resumed_run_ends_exactly_where_an_uninterrupted_one_does(tmp_path):
    whole = train({**SMALL, "checkpoint_every": 4}, tmp_path / "whole")
    train({**SMALL, "games": 250, "checkpoint_every": 4}, tmp_path / "cut")  # 5 updates, checkpoint at 4 and 5
    resumed = train({**SMALL, "checkpoint_every": 4}, tmp_path / "cut")
    assert resumed.steps == whole.steps
    a, b = NumericPolicy.load(whole.files["policy"]).params, NumericPolicy.load(resumed.files["policy"]).params
    assert all(np.array_equal(a[k], b[k]) for k in a)
    rows = (tmp_path / "cut" / "metrics.jsonl").read_text().splitlines()
    assert [json.loads(r)["step"] for r in rows] == list(range(1, 13))


def test_a_run_killed_between_checkpoints_resumes_without_repeating_rows(tmp_path):
    def killed_at_6(row):
        if row["step"] == 6:
            raise KeyboardInterrupt  # after step 6's row was written, before its checkpoint

    with pytest.raises(KeyboardInterrupt):
        train({**SMALL, "checkpoint_every": 4}, tmp_path / "run", progress=killed_at_6)
    whole = train({**SMALL, "checkpoint_every": 4}, tmp_path / "whole")
    resumed = train({**SMALL, "checkpoint_every": 4}, tmp_path / "run")
    rows = [json.loads(r) for r in (tmp_path / "run" / "metrics.jsonl").read_text().splitlines()]
    assert [r["step"] for r in rows] == list(range(1, 13))
    a, b = NumericPolicy.load(whole.files["policy"]).params, NumericPolicy.load(resumed.files["policy"]).params
    assert all(np.array_equal(a[k], b[k]) for k in a)


def test_play_records_only_the_learning_seats():
    game = make_game("kuhn_poker")
    pol = NumericPolicy.init(game.observation_size, game.num_actions, 4, 0)
    results = play(
        game, {LEARNER: pol, 0: pol}, [(s, (LEARNER, 0), (0,)) for s in range(20)], 7, np.random.default_rng(0)
    )
    assert len(results) == 20 and all({r[3] for r in rows} == {0} for _, rows in results)


def test_the_policy_plays_the_textarena_title_through_the_shared_encoding(tmp_path):
    pytest.importorskip("textarena")
    native = make_game("liars_dice")
    policy = NumericPolicy.init(native.observation_size, native.num_actions, 8, 3)
    policy.save(tmp_path / "p.npz")
    title = make_game("textarena/LiarsDice-v0")
    assert title.observation_size == native.observation_size and title.num_actions == native.num_actions
    player = make_player(f'numeric_mixture{{weights = "{tmp_path / "p.npz"}"}}', seed=0)
    pos = title.start(2)
    move = player.act(Decision.at(title, pos, 0, 2))
    assert move in title.legal(pos, 0)
    assert evaluate(native, policy, ["random"], 4, seed=0)["random"] >= 0.0


def test_bad_configs_say_what_to_fix(tmp_path):
    with pytest.raises(ConfigError, match="3-5 players, not 2"):
        train({**SMALL, "game": "megagem"}, tmp_path / "m")
    with pytest.raises(ConfigError, match="weights=PATH"):
        make_player("numeric_mixture")
    with pytest.raises(ConfigError, match="cannot read"):
        make_player('numeric_mixture{weights = "no/such.npz"}')


def test_gae_advantages_telescope_to_the_outcome_and_credit_the_last_step_at_lambda_zero():
    from arena_train.numeric_selfplay import _advantages

    v = np.array([0.1, 0.4, -0.2, 0.3, 0.0])
    g = np.array([1.0, 1.0, 1.0, -1.0, -1.0])
    seqs = [[0, 1, 2], [3, 4]]  # one seat's three decisions (won), another's two (lost)
    adv, target = _advantages(v, g, seqs, 1.0)
    assert np.allclose(adv, g - v) and np.allclose(target, g)
    adv0, target0 = _advantages(v, g, seqs, 0.0)
    assert np.allclose(adv0, [0.4 - 0.1, -0.2 - 0.4, 1.0 + 0.2, 0.0 - 0.3, -1.0 - 0.0])
    assert np.allclose(target0, [0.4, -0.2, 1.0, 0.0, -1.0])


def test_the_gradient_matches_the_policy_gradient_and_the_magnet_term_its_finite_differences():
    from arena_train.numeric_selfplay import _gradients

    rng = np.random.default_rng(0)
    policy = NumericPolicy.init(5, 4, 3, 1)
    policy.params = {k: v + 0.3 * rng.standard_normal(v.shape) for k, v in policy.params.items()}
    magnet = NumericPolicy({k: v + 0.5 * rng.standard_normal(v.shape) for k, v in policy.params.items()})
    x, mask = rng.standard_normal((6, 5)), np.array([[1, 1, 0, 1]] * 3 + [[1, 1, 1, 1]] * 3, dtype=float)
    actions, adv = np.array([0, 1, 3, 2, 0, 1]), rng.standard_normal(6)
    ours, _ = _gradients(policy, x, mask, actions, adv, 0.05, None, 0.0)
    theirs, _ = policy.gradients(x, mask, actions, adv, 0.05)
    assert all(np.allclose(ours[k], theirs[k]) for k in ours)

    def objective(params):
        p, q = NumericPolicy(params).probabilities(x, mask), magnet.probabilities(x, mask)
        ratio = np.where(p > 0, np.log(np.where(p > 0, p, 1)) - np.log(np.where(q > 0, q, 1)), 0)
        return -0.7 * (p * ratio).sum(axis=1).mean()

    grads, _ = _gradients(policy, x, mask, actions, np.zeros(6), 0.0, magnet, 0.7)
    k, i = "W1", (2, 1)
    up, down = {n: v.copy() for n, v in policy.params.items()}, {n: v.copy() for n, v in policy.params.items()}
    up[k][i] += 1e-6
    down[k][i] -= 1e-6
    assert np.isclose(grads[k][i], (objective(up) - objective(down)) / 2e-6, rtol=1e-4, atol=1e-8)
