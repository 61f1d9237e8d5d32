"""The language model's self-play on Leduc (bench/leduc_lm_selfplay.py, issue 31 point 4) at a tiny
size: the snapshot average is arena_train.exact's realisation-weighted average, and a few GRPO
steps give finite exact exploitabilities whose first average is the initial model's own."""

from __future__ import annotations

import importlib.util
import json
import math
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("mlx.core")

from arena_core.registry import make_game  # noqa: E402
from arena_train.compiled import CompiledGame, ReachAverage  # noqa: E402
from arena_train.exact import average_policy, information_states  # noqa: E402

_spec = importlib.util.spec_from_file_location(
    "leduc_lm_selfplay", Path(__file__).resolve().parents[1] / "bench" / "leduc_lm_selfplay.py"
)
lm_bench = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(lm_bench)

UNIFORM = 2.3736111111  # the uniform policy's exploitability on Leduc (OpenSpiel's value too)
STAKE = 13  # the most a seat can put in: an exploitability is below it


@pytest.fixture(scope="module")
def tree():
    return CompiledGame(make_game("leduc_poker"))


def _random_policy(tree, seed: int, sharpness: float) -> np.ndarray:
    logits = sharpness * np.random.default_rng(seed).standard_normal(tree.mask.shape)
    p = np.where(tree.mask > 0, np.exp(logits), 0.0)
    return p / p.sum(axis=1, keepdims=True)


def test_snapshot_average_is_the_exact_realisation_weighted_average(tree):
    a, b = _random_policy(tree, 1, 2.0), _random_policy(tree, 2, 2.0)
    avg = ReachAverage(tree)
    avg.add(a)
    assert np.allclose(avg.policy(), a)  # one snapshot: the average is that policy
    avg.add(b)
    exact = tree.probs_from_table(average_policy(tree.game, [tree.table(a), tree.table(b)]))
    assert np.allclose(avg.policy(), exact, atol=1e-12)
    assert not np.allclose(exact, (a + b) / 2, atol=1e-3)  # the plain mean is another policy
    assert tree.exploitability(avg.policy()) == pytest.approx(tree.exploitability(exact), abs=1e-12)


def test_the_step_weighted_average_is_the_exact_average_with_those_weights(tree):
    a, b, c = (_random_policy(tree, k, 2.0) for k in (3, 4, 5))
    avg = ReachAverage(tree, "linear")
    avg.add(a, 0)
    assert np.allclose(avg.policy(), a)  # only the initial model (weight 0): it alone
    avg.add(b, 50)
    assert np.allclose(avg.policy(), b, atol=1e-12)  # the initial model now weighs nothing
    avg.add(c, 150)
    tables = [tree.table(p) for p in (a, b, c)]
    exact = tree.probs_from_table(average_policy(tree.game, tables, [0.0, 50.0, 150.0]))
    assert np.allclose(avg.policy(), exact, atol=1e-12)
    uniform = tree.probs_from_table(average_policy(tree.game, tables))
    assert not np.allclose(exact, uniform, atol=1e-3)
    with pytest.raises(ValueError, match="uniform' or 'linear"):
        ReachAverage(tree, "last")
    again = ReachAverage.from_json(tree, json.loads(json.dumps(avg.to_json())))  # as a checkpoint keeps it
    assert np.array_equal(again.policy(), avg.policy()) and again.count == 3


def test_the_kuhn_floor_changes_are_the_chosen_configs_training_changes():
    changes = lm_bench.kuhn_floor_changes()
    assert "eval" not in changes and changes  # the average is the run's weighting, not a config key
    assert set(changes) <= set(lm_bench.CONFIG) | {"entropy_final", "magnet_every"}


def test_eval_marks_are_log_spaced_and_on_snapshots():
    assert lm_bench.eval_marks(1000, 5) == [1, 6, 32, 200, 1000]
    assert lm_bench.eval_marks(3, 10) == [1, 2, 3]


def test_a_few_grpo_steps_on_leduc_give_finite_exploitabilities(tree, tmp_path):
    from arena_train import grpo
    from arena_train.grpo_eval import lm_policy_table
    from arena_train.run import RunDir
    from arena_train.trainer import Parts

    rows = []
    lm_bench.run(
        7, 24, 3, lambda n, v, **extra: rows.append((n, v, extra)), changes={"deals_per_step": 4, "group_size": 2}
    )
    assert [n for n, _, _ in rows] == [8, 16, 24]
    for _, avg, extra in rows:
        assert 0 < avg <= UNIFORM and 0 < extra["last_iterate"] < STAKE and math.isfinite(extra["last_iterate"])
        assert extra["snapshots"] == 1  # before the first snapshot step: the initial model only
    # that single snapshot is the initial model: its exploitability is the average's at every mark
    game = tree.game
    config = grpo.TRAINER.parse(
        {**lm_bench.CONFIG, "seed": 7, "steps": 1, "model": {"path": lm_bench.leduc_model_path()}}
    )
    initial = grpo.start(config, RunDir.claim(tmp_path / "run"), Parts())
    p0 = tree.probs_from_table(lm_policy_table(game, initial.policy(), information_states(game)))
    assert rows[0][1] == pytest.approx(tree.exploitability(p0), abs=1e-9)
    assert rows[-1][1] == rows[0][1] and rows[-1][2]["last_iterate"] != rows[-1][1]  # the model moved


def test_the_command_writes_the_leduc_bench_format_and_skips_a_finished_file(tmp_path, capsys):
    """The LM methods run through bench/leduc_bench.py's own command and writer (the LM file no
    longer imports the bench: no import circle)."""
    _bench = importlib.util.spec_from_file_location(
        "leduc_bench", Path(__file__).resolve().parents[1] / "bench" / "leduc_bench.py"
    )
    bench = importlib.util.module_from_spec(_bench)
    _bench.loader.exec_module(bench)
    command = [
        "run",
        "--method",
        "lm_selfplay",
        "--seed",
        "3",
        "--episodes",
        "128",
        "--evals",
        "2",
        "--out",
        str(tmp_path),
    ]
    assert bench.main(command) == 0
    path = tmp_path / "lm_selfplay" / "seed_3.jsonl"
    rows = [json.loads(x) for x in path.read_text().splitlines()]
    assert [r["episodes"] for r in rows[:-1]] == [64, 128]
    assert {"exploitability", "last_iterate", "wall_s"} <= rows[0].keys()
    assert rows[-1] == {"done": True, "method": "lm_selfplay", "seed": 3, "episodes": 128}
    before = path.read_text()
    assert bench.main(command) == 0
    assert path.read_text() == before and "finished already" in capsys.readouterr().out
    assert (
        bench.main(["run", "--method", "lm_selfplay", "--seed", "3", "--episodes", "10", "--out", str(tmp_path)]) == 2
    )


def test_a_kept_run_cut_off_continues_exactly(tmp_path, monkeypatch):
    """The long LM runs keep their run directory: one killed after step 3 (checkpoints every 2
    steps) and started again emits what the uninterrupted run emits, on the fast engine."""
    from arena_train import grpo

    changes = {"deals_per_step": 4, "group_size": 2, "engine": "fast"}

    def emitted(run_dir):
        rows = []
        lm_bench.run(
            9,
            48,
            3,
            lambda n, v, **extra: rows.append((n, v, extra.pop("wall_s") >= 0, extra)),
            changes=changes,
            run_dir=run_dir,
            checkpoint_every=2,
        )
        return rows

    straight = emitted(tmp_path / "straight")
    real_step = grpo.train_step

    def dies_after_3(session, step):
        if step > 3:
            raise KeyboardInterrupt
        return real_step(session, step)

    monkeypatch.setattr(grpo, "train_step", dies_after_3)
    with pytest.raises(KeyboardInterrupt):
        emitted(tmp_path / "cut")
    monkeypatch.setattr(grpo, "train_step", real_step)
    assert (tmp_path / "cut" / "checkpoints" / "step_000002").exists()
    assert emitted(tmp_path / "cut") == straight and len(straight) == 3


def test_the_speed_report_gives_medians_and_the_ratios_against_the_old_code():
    spec = importlib.util.spec_from_file_location(
        "leduc_lm_speed", Path(__file__).resolve().parents[1] / "bench" / "leduc_lm_speed.py"
    )
    speed = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(speed)
    rates = {
        ("fast", "openblas"): (900, 1000, 1100),
        ("before", "mlx"): (90, 100, 400),
        ("before", "openblas"): (300,) * 3,
    }
    rows = [
        {
            "engine": e,
            "blas": b,
            "episodes_per_s": r,
            "steps": 200,
            "load_1min": 5.0,
            "round": k,
            "avg_exploitability": 1.0,
        }
        for (e, b), rs in rates.items()
        for k, r in enumerate(rs)
    ]
    text = speed.report(rows)
    assert "| fast | openblas | 1,000 | 900-1,100 |" in text  # the median, not the mean
    assert "as its figures were made (MLX's own matmul): **10.0x**" in text
    assert "on OpenBLAS: **3.3x**" in text and "recorded for `lm_selfplay`: **5.7x**" in text
