"""GRPO trainer: short seeded runs on Kuhn poker with the tiny offline model."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest

pytest.importorskip("mlx.core")

import mlx.core as mx  # noqa: E402

from arena_core.errors import ConfigError  # noqa: E402
from arena_core.registry import make_game, make_player  # noqa: E402
from arena_train import grpo  # noqa: E402
from arena_train.config import parse_config  # noqa: E402
from arena_train.grpo_eval import evaluate, silent_status  # noqa: E402
from arena_train.lm import trainables  # noqa: E402
from arena_train.rollout import Choice, distinct_deals, expected_return  # noqa: E402
from arena_train.run import RunDir  # noqa: E402
from arena_train.trainer import Parts, RunSummary, SilentPlayerError  # noqa: E402

BASE = dict(
    game="kuhn_poker",
    seed=3,
    steps=2,
    deals_per_step=2,
    group_size=4,
    temperature=3.0,
    kl_beta=0.05,
    optim=dict(learning_rate=1e-4, grad_accum=2),
    pool=dict(players=["kuhn_king_only"]),
    eval=dict(anchor="kuhn_king_only", every=0, deals=8, bootstrap=200),
    plot=False,
)


def config(**over):
    cfg = json.loads(json.dumps(BASE))
    for key, value in over.items():
        if isinstance(value, dict) and isinstance(cfg.get(key), dict):
            cfg[key].update(value)
        else:
            cfg[key] = value
    return cfg


def start(cfg, run_dir, parts=None):
    """The run directory and the session (parts and state) grpo.train builds, to look inside."""
    config = grpo.TRAINER.parse(cfg)
    run = RunDir.claim(run_dir, resume=config.resume_from)
    return run, grpo.start(config, run, parts or Parts())


def run_all(started) -> RunSummary:
    return grpo.run_steps(*started, Parts())


def kuhn_value(session: grpo.GRPOSession, *, greedy: bool = True) -> float:
    """Exact value of the learner against kuhn_king_only over all six deals, both seats."""
    game = session.game
    policy = session.policy(temperature=0.0 if greedy else 1.0)
    opponent = make_player("kuhn_king_only")

    def dist(g, pos, seat):
        menu = policy.view.menu(g, pos, seat)
        lp = policy.distributions([menu])[0]
        p = np.eye(len(lp))[int(np.argmax(lp))] if greedy else np.exp(lp)
        return list(zip(menu.actions, p))

    return float(
        np.mean([expected_return(game, d, s, dist, {1 - s: opponent}) for d in distinct_deals(game, 6) for s in (0, 1)])
    )


def metric_rows(run_dir):
    return [json.loads(line) for line in (run_dir / "metrics.jsonl").read_text().splitlines()]


def test_short_run_changes_weights_and_records_finite_metrics(tmp_path):
    run, session = start(config(plot=True, checkpoint_every=1), tmp_path / "run")
    before = trainables(session.model)
    summary = grpo.run_steps(run, session, Parts())
    after = trainables(session.model)
    changed = [k for k in before if not np.array_equal(np.array(before[k]), np.array(after[k]))]
    assert len(changed) == len(before), "full fine-tuning updates every weight"
    rows = metric_rows(tmp_path / "run")
    assert [r["step"] for r in rows] == [0, 1, 2]
    for row in rows[1:]:
        for key in ("loss", "kl", "clip_frac", "grad_norm", "reward_mean"):
            assert math.isfinite(row[key]), key
        assert row["kl"] >= -1e-6
        assert row["episodes"] == 2 * 2 * 4  # deals x seats x group
    assert rows[1]["kl"] == pytest.approx(0.0, abs=1e-6)  # the first update starts at the reference
    assert rows[2]["kl"] > 1e-6  # ... and then moves away from it
    manifest = json.loads((tmp_path / "run" / "manifest.json").read_text())
    for key in ("run_id", "parent_run", "config", "config_diff_from_parent", "seeds", "packages", "git", "status"):
        assert key in manifest
    assert manifest["packages"]["mlx"] and manifest["status"] == "ok"
    assert (tmp_path / "run" / "metrics.png").stat().st_size > 1000
    assert sorted(p.name for p in (tmp_path / "run" / "checkpoints").iterdir()) == ["step_000001", "step_000002"]
    assert summary.to_json()["steps"] == 2


def test_same_seed_same_metrics_and_other_seed_differs(tmp_path):
    a = grpo.TRAINER(config(), tmp_path / "a").metrics
    b = grpo.TRAINER(config(), tmp_path / "b").metrics
    c = grpo.TRAINER(config(seed=4), tmp_path / "c").metrics
    assert a == b
    assert a != c


def test_resume_continues_exactly(tmp_path):
    straight = start(config(steps=3, checkpoint_every=1), tmp_path / "straight")
    full = run_all(straight).metrics
    resumed_run = start(
        config(steps=3, resume_from=str(tmp_path / "straight" / "checkpoints" / "step_000001")), tmp_path / "resumed"
    )
    assert resumed_run[1].state.step == 1
    resumed = run_all(resumed_run)
    assert resumed.metrics == full
    w1, w2 = trainables(straight[1].model), trainables(resumed_run[1].model)
    assert all(np.array_equal(np.array(w1[k]), np.array(w2[k])) for k in w1)
    manifest = json.loads((tmp_path / "resumed" / "manifest.json").read_text())
    parent = json.loads((tmp_path / "straight" / "manifest.json").read_text())
    assert manifest["parent_run"] == parent["run_id"]
    assert manifest["config_diff_from_parent"]["resume_from"]["run"].endswith("step_000001")
    assert manifest["resumed_at_step"] == 1


def test_lora_and_snapshot_pool(tmp_path):
    started = start(
        config(
            model=dict(finetune="lora", lora_layers=2, lora_rank=4),
            pool=dict(players=[], snapshot_every=1, max_snapshots=1),
        ),
        tmp_path / "lora",
    )
    session = started[1]
    names = set(trainables(session.model))
    assert names and all("lora" in n for n in names), "only adapters train"
    base_before = np.array(session.model.model.embed_tokens.weight)
    before = trainables(session.model)
    run_all(started)
    assert np.array_equal(base_before, np.array(session.model.model.embed_tokens.weight))
    after = trainables(session.model)
    assert any(not np.array_equal(np.array(before[k]), np.array(after[k])) for k in before)
    assert [step for step, _ in session.state.pool.snapshots] == [2]  # refreshed every step, one kept


def test_kuhn_grpo_learns_beyond_the_card_blind_value(tmp_path):
    """The issue's evidence, as a short seeded run with a loose threshold: from random weights,
    against 'bet or call with the king', the greedy policy's exact value over all deals must
    clear the best card-blind value 1/6 (the best response earns 1/4). Seeds 0-5 of this config
    reach 1/4 in 5 of 6 runs with the fast engine (seed 0 stays at 1/6) and 6 of 6 with the
    reference engine (both with group_draws = 'distinct'; 'shared': 3 and 4 of 6)."""
    cfg = config(
        seed=1,
        steps=20,
        deals_per_step=8,
        group_size=8,
        kl_beta=0.0,
        entropy_beta=0.3,
        optim=dict(learning_rate=1e-4, grad_accum=1, schedule="linear"),
        eval=dict(deals=8),
    )
    started = start(cfg, tmp_path / "kuhn")
    first = kuhn_value(started[1])
    run_all(started)
    end = kuhn_value(started[1])
    assert first < 1 / 6
    assert end > 1 / 6 + 0.04, f"greedy value {end:.3f} after 20 steps"


# ---------------------------------------------------------------------- guards and configs
class SilentLearner:
    """A learner whose every answer is unreadable."""

    def decide(self, requests):
        return [Choice(None, unparseable=True) for _ in requests]


def test_silent_player_is_detected_and_refused(tmp_path):
    game = make_game("kuhn_poker")
    res = evaluate(
        game, SilentLearner(), lambda seat, learner_seat: make_player("kuhn_king_only"), [1, 2, 3], key_seed=0
    )
    assert res.bad_answer_rate == 1.0
    status = silent_status(res.bad_answer_rate, 0.2)
    assert status.startswith("rejected")
    with pytest.raises(SilentPlayerError, match="silent player"):
        RunSummary(tmp_path, "r", 1, [], status).to_json()
    assert silent_status(0.1, 0.2) == "ok"


def test_config_errors_name_the_field():
    with pytest.raises(ConfigError, match="group_size"):
        parse_config({"trainer": "grpo", **config(group_size=1)})
    with pytest.raises(ConfigError, match="learning_rat"):
        parse_config({"trainer": "grpo", **config(optim=dict(learning_rat=1.0))})
    with pytest.raises(ConfigError, match="opponent pool is empty"):
        parse_config({"trainer": "grpo", **config(pool=dict(players=[]))})
    with pytest.raises(ConfigError, match="'trainer' key"):
        parse_config({"game": "kuhn_poker"})


def test_an_injected_model_needs_its_tokenizer(tmp_path):
    from arena_train.lm import load_lm

    model, _ = load_lm("tiny")
    with pytest.raises(ConfigError, match="tokenizer together with an injected model"):
        grpo.TRAINER(config(steps=1), tmp_path, Parts(model=model))


def test_resume_with_another_seed_is_refused(tmp_path):
    grpo.TRAINER(config(steps=1), tmp_path / "a")
    with pytest.raises(ConfigError, match="same seed"):
        start(config(seed=9, resume_from=str(tmp_path / "a")), tmp_path / "b")


def test_reference_weights_stay_frozen(tmp_path):
    started = start(config(steps=1), tmp_path / "r")
    state = started[1].state
    ref = {k: np.array(v) for k, v in state.reference.items()}
    run_all(started)
    assert all(np.array_equal(ref[k], np.array(state.reference[k])) for k in ref)
    assert isinstance(state.reference[next(iter(ref))], mx.array)


def test_lora_runs_are_reproducible(tmp_path):
    """mlx-lm draws LoRA matrices from MLX's clock-seeded global state; we redraw them from the seed."""
    cfg = config(steps=1, model=dict(finetune="lora", lora_layers=1, lora_rank=2))
    a = start(cfg, tmp_path / "a")
    b = start(cfg, tmp_path / "b")
    wa, wb = trainables(a[1].model), trainables(b[1].model)
    assert all(np.array_equal(np.array(wa[k]), np.array(wb[k])) for k in wa)
    assert run_all(a).metrics == run_all(b).metrics


def test_megagem_step_with_the_full_menu_and_margin_reward(tmp_path):
    """MegaGem through the compact view: illegal grid bids may be chosen (and are penalised),
    per-decision advantages, margin reward."""
    cfg = dict(
        game="megagem",
        seed=1,
        steps=1,
        deals_per_step=1,
        seats="rotate",
        group_size=2,
        action_space="all",
        advantage="per_decision",
        reward=dict(kind="margin", margin_scale=20.0, illegal_penalty=0.5),
        pool=dict(players=["megagem_heuristic"]),
        eval=dict(anchor="megagem_heuristic", deals=1, bootstrap=100),
        plot=False,
    )
    _, session = start(cfg, tmp_path / "mg")
    row = grpo.train_step(session, 1)
    assert row["episodes"] == 2 and row["decisions"] > 10
    assert math.isfinite(row["loss"]) and math.isfinite(row["kl"])
    assert -2.0 - 0.5 * row["decisions"] <= row["reward_mean"] <= 1.1


def test_gradient_accumulation_matches_one_big_batch(tmp_path):
    """Micro-batch gradients weighted by size and summed equal the full-batch gradient (SGD, so
    the update is linear in the gradient)."""
    import mlx.optimizers as optim

    from arena_train.grpo_loss import grpo_update
    from arena_train.grpo_rollout import advantages, episode_specs
    from arena_train.lm import load_trainables
    from arena_train.rollout import play_episodes

    _, session = start(config(), tmp_path / "acc")
    cfg, state = session.config, session.state
    grouped = episode_specs(cfg, session.game, state.pool, session.opponent, 1)
    results = play_episodes(session.game, [s for _, s in grouped], session.policy())
    adv = advantages(cfg, [g for g, _ in grouped], results, session.reward, state.baselines)
    samples = grpo.samples(session, adv)
    initial = trainables(session.model)
    order = np.arange(len(samples))
    after = []
    for accum in (1, 3):
        load_trainables(session.model, initial)
        grpo_update(
            session.model,
            optim.SGD(learning_rate=0.1),
            samples,
            order=order,
            grad_accum=accum,
            max_grad_norm=1e9,
            clip_eps=0.2,
            kl_beta=0.05,
            temperature=3.0,
        )
        after.append(trainables(session.model))
    moved = max(float(np.abs(np.array(after[0][k]) - np.array(initial[k])).max()) for k in initial)
    assert moved > 1e-4
    for k in initial:
        np.testing.assert_allclose(np.array(after[0][k]), np.array(after[1][k]), atol=1e-5, rtol=1e-4)


def test_initial_anchor_and_ppo_epochs(tmp_path):
    """Against its own frozen initial weights, in a zero-sum game with both seats of every deal,
    the initial policy scores exactly 0; several PPO epochs on the same rollouts clip."""
    cfg = config(steps=1, ppo_epochs=3, optim=dict(learning_rate=1e-3), eval=dict(anchor="initial"))
    summary = grpo.TRAINER(cfg, tmp_path / "self")
    first, last = summary.metrics[0], summary.metrics[-1]
    assert first["eval_mean"] == 0.0 and first["eval_improvement"] == 0.0
    assert last["clip_frac"] > 0.0


def test_an_improvement_equal_on_every_sampled_deal_gets_an_interval_inside_the_reward_range(tmp_path, monkeypatch):
    """Deals sampled rather than enumerated, and the first evaluation measures the initial policy
    against itself (every deal's difference 0): the interval lies inside the range a difference of
    returns can take (Kuhn's bounds: +-2 a deal), never zero width, never (-inf, inf)."""
    monkeypatch.setattr(grpo, "evaluation_deals", lambda game, sampled: (list(sampled), None))
    first = grpo.TRAINER(config(steps=1, eval=dict(anchor="random", deals=8)), tmp_path / "s").metrics[0]
    assert first["eval_exact"] is False and first["eval_improvement"] == 0.0
    assert -2.0 <= first["eval_improvement_low"] < 0.0 < first["eval_improvement_high"] <= 2.0
